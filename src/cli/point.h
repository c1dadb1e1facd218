/* point.h (cli): one design point as the command line or a sweep names it
 * (strings), loaded into a solve/ design, and its CSV row.  Shared by
 * query, solve, sweep and run. */
#ifndef KARAT_CLI_POINT_H
#define KARAT_CLI_POINT_H

#include "cli/cli.h"
#include "karat.h"

#define POINT_LABEL 600   /* an --algo specification is at most 511 */
#define POINT_SET_LEN 320 /* one section.key=value override */

struct point_spec {
	const char *model, *algo, *system, *workload, *context, *batch, *mb,
		*schedule, *mtp, *accept, *slo_ms, *samples, *seed;
	const char *sets[ARGS_MAX_MANY]; /* section.key=value overrides */
	int nsets;
	int force, exact;
	int skip_memdev_sets; /* memdev.*, memdev_link.* and system.memdevs on a
				 system without memory devices: skip (sweeps)
				 instead of an error */
};

struct loaded {
	struct design_parts p; /* the design and all it points into */
	int mb;          /* 0 = auto */
	double batch;    /* 0 when not given */
	char label[4][POINT_LABEL]; /* model, algo, system, workload */
	char sets[ARGS_MAX_MANY * POINT_SET_LEN]; /* the overrides, ';'-separated, for the CSV */
};

/* Parses the options, then assembles the design (zoo/design.h) and words
 * its errors for the command line.  Returns 0, 1 (bad file or value) or 2
 * (usage: unknown name or option value); err says why.  Free with
 * point_free, also after a failure. */
int point_load(const struct point_spec *ps, struct loaded *ld, struct kerr *err);
/* For a solved answer r of ld (p: the plan that solved it, or NULL): what
 * to grow first (plan_probe), into r's probed, grow and grow_margin; left
 * unprobed where nothing is. */
void point_probe(const struct loaded *ld, struct plan *p, struct result *r);
void point_free(struct loaded *ld);

/* The CSV header (stable; the first 15 columns are fixed by issue 5). */
extern const char *const point_head[];
extern const int point_ncols;
/* The resource busiest over r's step (gpu, memdev, link or net; a
 * system's own only) and its busy share of the mean step. */
const char *point_busiest(const struct loaded *ld, const struct result *r, double *share);
/* What bounds r (solve.h enum point_bound) in words: slo:RESOURCE,
 * capacity:hbm|memdev|host, unsupported, work-limit, search-cap, or "";
 * busiest is point_busiest's answer for r. */
void point_bound(const struct loaded *ld, const struct result *r, const char *busiest,
		 char *buf, size_t n);
/* One line per column of point_head: what it holds. */
extern const char *const point_help[];

/* Formats r of ld: out[i] is the text of column i, either one of the
 * number buffers cells (OUT_CELL each) or a label or the overrides of ld,
 * which are never cut. */
void point_cells(const struct loaded *ld, const struct result *r,
		 char cells[][OUT_CELL], const char **out);

/* The row of a point that could not be evaluated: its names as the spec
 * gives them, feasible false and msg as the reason, the rest empty. */
void point_fail_cells(const struct point_spec *ps, const char *msg,
		      char cells[][OUT_CELL], const char **out);

#endif
