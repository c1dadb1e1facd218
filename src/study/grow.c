/* grow.c: a saturating study's search (study/study.h, study_grow_step).
 * A system's GPU count and devices per GPU grow past the study's lists,
 * doubling, group by group (a model, workload, ... of the grid), while its
 * best point there sits at the largest count tried and that count still
 * gained at least study.saturate over the one below;
 * a physical limit (study.gpus_limit, memdevs_per_gpu_limit) stops them
 * too.  The runner solves the grown grid again (the points it has solved
 * are kept) until no system grows. */
#include "study/study.h"

#include <math.h>
#include <stdlib.h>

/* A point's key: its GPU count, or (per) its devices per GPU. */
static int key_of(const struct study_point *p, int per)
{
	return !per ? p->gpus : p->gpus ? p->memdevs / p->gpus : 0;
}

/* The best metric among points [lo, hi) of g with key k (at `gpus` GPUs
 * when per); -1 when none is feasible. */
static double best_at(const struct study_grid *g, const struct result *res, int lo, int hi,
		      enum study_metric m, int per, int gpus, int k)
{
	double best = -1;
	for (int i = lo; i < hi; i++) {
		if (key_of(&g->pt[i], per) != k || (per && g->pt[i].gpus != gpus) || !res[i].feasible)
			continue;
		double v = study_metric(&res[i], m);
		if (isfinite(v) && v > best)
			best = v;
	}
	return best;
}

/* Whether a best of metric vb at key kb, among the keys of [lo, hi) (at
 * `gpus` GPUs when per), is at the top and gained at least `gain` over
 * the key below it (none below, or nothing feasible there: it did).
 * *top gets the top key. */
static int still_gaining(const struct study_grid *g, const struct result *res, int lo, int hi,
			 enum study_metric m, int per, int gpus, int kb, double vb, double gain,
			 int *top)
{
	int below = 0;
	*top = 0;
	for (int i = lo; i < hi; i++) {
		if (per && g->pt[i].gpus != gpus)
			continue;
		int k = key_of(&g->pt[i], per);
		if (k > *top)
			below = *top, *top = k;
		else if (k < *top && k > below)
			below = k;
	}
	if (kb != *top)
		return 0;
	double vp = below ? best_at(g, res, lo, hi, m, per, gpus, below) : -1;
	return !(vp > 0) || vb >= vp * (1 + gain);
}

void study_grow_free(struct study_grow *gr)
{
	free(gr->gpus), free(gr->per_gpu);
	gr->gpus = gr->per_gpu = NULL, gr->n = 0;
}

int study_grow_step(const struct study_def *s, const struct study_grid *g,
		    const struct result *res, struct study_grow *gr)
{
	int grew = 0, ns = g->nsystem;
	if (!gr->gpus) {
		gr->n = g->ngroup * ns;
		gr->gpus = calloc((size_t)gr->n, sizeof(int));
		gr->per_gpu = calloc((size_t)gr->n, sizeof(int));
		if (!gr->gpus || !gr->per_gpu) {
			study_grow_free(gr);
			return -1;
		}
	}
	enum study_metric m = (enum study_metric)s->power;
	for (int sys = 0; sys < ns; sys++) {
		if (!study_grows(s, s->systems.v[sys]))
			continue;
		int devs = g->ratio[sys] > 0 && !study_fixed(s, s->systems.v[sys]);
		for (int gi = 0; gi < g->ngroup; gi++) {
			int lo = g->start[gi * ns + sys], hi = g->start[gi * ns + sys + 1];
			int b = study_best_of(res, lo, hi, m), top;
			if (b < 0)
				continue;
			const struct study_point *p = &g->pt[b];
			double vb = study_metric(&res[b], m);
			int *G = &gr->gpus[gi * ns + sys], *P = &gr->per_gpu[gi * ns + sys];
			if (still_gaining(g, res, lo, hi, m, 0, 0, p->gpus, vb, s->saturate, &top) &&
			    2 * top <= s->gpus_limit && 2 * top > *G)
				*G = 2 * top, grew = 1;
			if (devs && still_gaining(g, res, lo, hi, m, 1, p->gpus, key_of(p, 1), vb,
						  s->saturate, &top) &&
			    2 * top <= s->per_gpu_limit && 2 * top > *P)
				*P = 2 * top, grew = 1;
		}
	}
	return grew;
}
