/* run_points.h (cli): a study's points on the thread pool: each point's
 * spec from the grid, the pool run, and a saturating study's rounds. */
#ifndef KARAT_CLI_RUN_POINTS_H
#define KARAT_CLI_RUN_POINTS_H

#include "cli/cli.h"
#include "cli/pool.h"
#include "study/study.h"

/* The points of one pool run: a grid's, with the study's names and the
 * user's --set options. */
struct run_points {
	const struct study_def *sd;
	const struct study_grid *g;
	const char *const *user_sets; /* --set, applied to every point */
	int nuser;
	const struct study_unc *unc;  /* an uncertainty study's draws, or NULL */
	const struct pool *from;      /* points solved in an earlier round, and */
	const long *from_idx;         /* where each point is there (pool.h) */
};

/* The algorithm a point names, or NULL for the model's own (native). */
const char *run_algo_name(const struct study_def *sd, const struct study_point *p);
/* Solves every point of g->g into pl (heaviest first); 0, or the pool's
 * status, said. */
int run_pool(const struct run_points *g, struct pool *pl, int jobs, const char *what,
	     int quiet);
/* Lays out g->sd's grid into *grid (g->g must point at it), checks its
 * [steps] load, and solves it into pl; a saturating study grows its
 * systems' counts and solves again, round by round, keeping what it has
 * solved, until none grows.  0, or 1 (2: a usage error), said. */
int run_grid(struct run_points *g, struct study_grid *grid, struct pool *pl, int jobs,
	     const char *what, int quiet);

#endif
