/* run_unc.h (cli): what `karat run` prints and writes for an uncertainty
 * study (one with study.draws): the table, DIR/STUDY.csv,
 * DIR/STUDY-drivers.csv, DIR/STUDY.md and DIR/STUDY.png. */
#ifndef KARAT_CLI_RUN_UNC_H
#define KARAT_CLI_RUN_UNC_H

#include "cli/run_summary.h"

/* From the solved grid (res[i] for g->pt[i]): 0, or 1 said. */
int run_unc_report(const struct study_def *sd, const struct study_unc *u,
		   const struct study_grid *g, const struct result *res, const char *dir,
		   struct run_summary *sum);

#endif
