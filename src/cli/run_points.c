/* run_points.c: a study's points on the thread pool (cli/run_points.h):
 * the spec of each point, the pool run, the check that a study's [steps]
 * load, and a saturating study's rounds (study/grow.c decides). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/run_points.h"

const char *run_algo_name(const struct study_def *sd, const struct study_point *p)
{
	return strcmp(sd->algos.v[p->algo], "native") ? sd->algos.v[p->algo] : NULL;
}

static void make(const void *ctx, long idx, struct point_spec *ps,
		 char sets[][POOL_SET_LEN])
{
	const struct run_points *g = ctx;
	const struct study_point *p = &g->g->pt[idx];
	memset(ps, 0, sizeof *ps);
	ps->model = g->sd->models.v[p->model], ps->algo = run_algo_name(g->sd, p);
	ps->system = g->sd->systems.v[p->system], ps->workload = g->sd->workloads.v[p->workload];
	ps->schedule = DESIGN_DEFAULT_SCHED_NAME, ps->mb = "auto";
	snprintf(sets[0], POOL_SET_LEN, "system.gpus=%d", p->gpus);
	ps->sets[ps->nsets] = sets[ps->nsets], ps->nsets++;
	if (p->memdevs > 0) {
		snprintf(sets[ps->nsets], POOL_SET_LEN, "system.memdevs=%d", p->memdevs);
		ps->sets[ps->nsets] = sets[ps->nsets], ps->nsets++;
	}
	if (p->tp > 1) {
		snprintf(sets[ps->nsets], POOL_SET_LEN, "system.attention_tp=%d", p->tp);
		ps->sets[ps->nsets] = sets[ps->nsets], ps->nsets++;
	}
	if (g->sd->gpu_types.n > 0) { /* both sides on the same GPU */
		snprintf(sets[ps->nsets], POOL_SET_LEN, "system.gpu=%s", g->sd->gpu_types.v[p->gpu]);
		ps->sets[ps->nsets] = sets[ps->nsets], ps->nsets++;
	}
	/* the SLO's and the sample count's text, in storage no override uses */
	if (g->sd->slos.n > 0) {
		snprintf(sets[ARGS_MAX_MANY - 1], POOL_SET_LEN, "%d", g->sd->slos.v[p->slo]);
		ps->slo_ms = sets[ARGS_MAX_MANY - 1];
	}
	if (g->sd->samples > 0) {
		snprintf(sets[ARGS_MAX_MANY - 2], POOL_SET_LEN, "%.0f", g->sd->samples);
		ps->samples = sets[ARGS_MAX_MANY - 2];
	}
	if (g->unc && p->step > 0) { /* draw step - 1 (step 0: the files' own figures) */
		study_unc_sets(g->unc, p->step - 1, p->system, sets[ps->nsets], POOL_SET_LEN);
		for (int i = 0; i < g->unc->nset[p->system]; i++, ps->nsets++)
			ps->sets[ps->nsets] = sets[ps->nsets];
	}
	for (int k = 0; k <= p->step && k < g->sd->nsteps; k++) /* every step so far */
		for (int i = 0; i < g->sd->step_nset[k]; i++)
			ps->sets[ps->nsets++] = g->sd->step_set[k][i];
	for (int i = 0; i < g->nuser; i++) /* run_study bounds nuser */
		ps->sets[ps->nsets++] = g->user_sets[i];
}

/* Heaviest first (more devices per GPU, more GPUs) so threads finish
 * together; results stay by index. */
static long *order_of(const struct study_grid *g)
{
	long *o = malloc(sizeof *o * (size_t)(g->n ? g->n : 1));
	if (!o)
		return NULL;
	for (long i = 0; i < g->n; i++)
		o[i] = i;
	for (long i = 1; i < g->n; i++)
		for (long j = i; j > 0; j--) {
			const struct study_point *x = &g->pt[o[j - 1]], *y = &g->pt[o[j]];
			long wx = (long)x->gpus + 8L * x->memdevs, wy = (long)y->gpus + 8L * y->memdevs;
			if (wx >= wy)
				break;
			long t = o[j];
			o[j] = o[j - 1], o[j - 1] = t;
		}
	return o;
}

int run_pool(const struct run_points *g, struct pool *pl, int jobs, const char *what,
	     int quiet)
{
	long *order = order_of(g->g);
	if (!order) {
		die_msg("out of memory");
		return 1;
	}
	*pl = (struct pool){.make = make, .ctx = g, .total = g->g->n, .quiet = quiet,
			    .what = what, .order = order, .from = g->from, .from_idx = g->from_idx};
	int rc = pool_run(pl, jobs);
	free(order);
	if (rc)
		die_msg("%s", pl->err.msg);
	return rc;
}

/* Each step's overrides load, before the long work: on a point of the
 * step on each system (the last system's has the most parts), the first
 * failure as FILE:LINE of its [steps] line.  0, or 1 said. */
static int check_steps(const struct run_points *all)
{
	struct run_points own = *all, *rp = &own;
	own.nuser = 0; /* the user's --set are checked with every point */
	const struct study_def *sd = rp->sd;
	const struct study_grid *g = rp->g;
	int nk = sd->nsteps ? sd->nsteps : rp->unc ? study_nstep(sd) : 0;
	for (int k = 0; k < nk; k++)
		for (int sy = 0; sy < g->nsystem; sy++) {
			long i = 0;
			while (i < g->n && (g->pt[i].step != k || g->pt[i].system != sy))
				i++;
			if (i == g->n)
				continue;
			struct point_spec ps;
			static char sets[ARGS_MAX_MANY][POOL_SET_LEN];
			make(rp, i, &ps, sets);
			ps.skip_memdev_sets = 1;
			static struct loaded ld;
			struct kerr err;
			int rc = point_load(&ps, &ld, &err);
			point_free(&ld);
			if (rc && sd->nsteps)
				die_msg("%s:%d: steps.%s on %s: %s", sd->path, sd->step_line[k],
					sd->step_name[k], sd->systems.v[sy], err.msg);
			else if (rc)
				die_msg("%s: draw %d on %s: %s", sd->path, k, sd->systems.v[sy], err.msg);
			if (rc)
				return 1;
		}
	return 0;
}

/* Where each point of grid was solved in the last round's old (-1: not). */
static long *carried(const struct study_grid *grid, const struct study_grid *old)
{
	long *from = malloc(sizeof *from * (size_t)(grid->n ? grid->n : 1));
	if (!from)
		return NULL;
	for (long i = 0; i < grid->n; i++) {
		from[i] = -1;
		for (long j = 0; old && j < old->n && from[i] < 0; j++)
			if (!memcmp(&grid->pt[i], &old->pt[j], sizeof grid->pt[i]))
				from[i] = j;
	}
	return from;
}

int run_grid(struct run_points *g, struct study_grid *grid, struct pool *pl, int jobs,
	     const char *what, int quiet)
{
	struct study_grow gr;
	struct study_grid old = {0};
	struct pool done = {0};
	struct kerr err;
	memset(&gr, 0, sizeof gr);
	int rc = 0;
	for (int round = 0;; round++) {
		if (study_grid_grown(g->sd, &gr, grid, &err) != 0) {
			rc = (die_msg("%s", err.msg), 1);
			break;
		}
		if (round == 0 && (rc = check_steps(g)) != 0)
			break;
		long *from = round ? carried(grid, &old) : NULL;
		if (round && !from) {
			rc = (die_msg("out of memory"), 1);
			break;
		}
		g->from = round ? &done : NULL, g->from_idx = from;
		rc = run_pool(g, pl, jobs, what, quiet);
		g->from = NULL, g->from_idx = NULL;
		free(from);
		if (done.res)
			pool_free(&done);
		study_grid_free(&old);
		int grew = rc || !(g->sd->saturate > 0) ? 0 : study_grow_step(g->sd, grid, pl->res, &gr);
		if (grew < 0)
			rc = (die_msg("out of memory"), 1);
		if (grew <= 0)
			break;
		/* this round's grid and results serve the next */
		old = *grid, done = *pl;
		memset(grid, 0, sizeof *grid);
		memset(pl, 0, sizeof *pl);
	}
	if (done.res)
		pool_free(&done);
	study_grid_free(&old);
	study_grow_free(&gr);
	return rc;
}
