/* run_summary.h (cli): the plain-language summary `karat run` ends with:
 * per model, the focus system against the baseline best against best, in
 * every power accounting and in cost, along the SLO and GPU axes where a
 * study has them, what bounds each side, and the paper's range. */
#ifndef KARAT_CLI_RUN_SUMMARY_H
#define KARAT_CLI_RUN_SUMMARY_H

#include <stdio.h>

#include "cli/pool.h"
#include "study/study.h"

#define RUN_SUMMARY_MAX 64 /* (focus, baseline, model) entries kept */

struct run_sum_entry {
	char focus[64], base[64], model[INI_VALUE];
	double lo[SM_N], hi[SM_N];   /* best against best, per metric */
	int have[SM_N];
	double plo, phi;             /* per drawn watt, the prefill counted */
	int phave;
	double alo, ahi;             /* along a study's SLO and GPU axes */
	int ahave;
	char axes[160];              /* which axes, in words */
	char bx[160], bb[160];       /* what bounds the focus and the baseline */
	double up10, up50, up90;     /* over an uncertainty study's draws */
	int uhave, udraws;
	char udrive[200];            /* the figures that drive it most */
	double paper_lo, paper_hi;
};

struct run_summary {
	struct run_sum_entry e[RUN_SUMMARY_MAX];
	int n;
};

/* Adds a solved study: a plain one (no axes, no steps, one algorithm
 * entry) gives each model's best-against-best ranges and bounds; one with
 * SLO or GPU axes gives the range along them; one with steps or several
 * algorithms gives nothing (its own lines say it per step or algorithm).
 * bound[i] is what bounds res[i]. */
void run_summary_add(struct run_summary *s, const struct study_def *sd,
		     const struct study_grid *g, const struct result *res,
		     const char (*bound)[POOL_BOUND_LEN]);

/* Adds an uncertainty study's rows (study_unc_rows): per model the
 * focus system's P10, P50 and P90 over the draws (the widest over its
 * workloads) and the figures that drive it. */
void run_summary_unc(struct run_summary *s, const struct study_def *sd,
		     const struct study_unc *u, const struct study_unc_row *rows, int nrows);

/* Appends to buf (n bytes) a study's lines along its axes (steps,
 * slos_ms, gpu_types): the focus system over the baseline per step, SLO
 * and GPU, best against best (and, with steps, at the same GPUs). */
void run_axes(const struct study_def *sd, const struct study_row *rows, int nrows, char *buf,
	      size_t n);

/* Prints the summary (nothing when no plain study was added). */
void run_summary_print(const struct run_summary *s, FILE *fp);

#endif
