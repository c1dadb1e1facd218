/* search.c: the solver for the largest batch under the SLO at each
 * micro-batch count, and the best count (solve.h).  Feasibility comes from
 * plan_eval_at with early exit (eval.c).  A feasible probe runs every
 * sample, so its result is the answer's but for the energy; with
 * --microbatches auto only the winning count is evaluated again, in
 * full. */
#include "solve/plan.h"

#include <math.h>

/* Whether batch fits and meets the SLO (-1 on error); when it does, its
 * result (every sample, no energy) into ok. */
static int feasible_at(struct plan *p, double batch, int m, struct result *ok,
		       struct kerr *err)
{
	if (p->d.progress)
		p->d.progress(p->d.progress_ctx, m, batch);
	struct result r;
	int rc = plan_eval_at(p, batch, m, &r, 1, err);
	if (rc < 0)
		return -1;
	if (rc == 0 && r.feasible)
		*ok = r;
	return rc == 0 && r.feasible;
}

/* Largest feasible batch at m: galloping search from `hint` (a batch to
 * try first, e.g. the answer at another m), then bisection.  Feasibility
 * is decided with early exit.  Into best: with `full`, the answer
 * evaluated in full (energy too); else its feasible probe's result. */
static int solve_m(struct plan *p, int m, double hint, int full, struct result *best,
		   struct kerr *err)
{
	struct result at_lo;
	int f = feasible_at(p, 1, m, &at_lo, err);
	if (f < 0)
		return -1;
	if (!f) /* nothing fits: report batch 1 and why */
		return plan_eval(p, 1, m, best, err);
	/* Galloping from the hint: steps of hint/32 doubling outwards, so an
	 * answer near the hint is bracketed tightly (from 1: steps 1, 2, 4...). */
	double lo = 1, hi = 0;
	double b = hint > 1 ? fmin(floor(hint), PLAN_MAX_BATCH) : 1;
	double step = fmax(1, floor(b / 32));
	if (b > 1 && (f = feasible_at(p, b, m, &at_lo, err)) < 0)
		return -1;
	if (b == 1 || f) {
		lo = b;
		while (!hi && lo < PLAN_MAX_BATCH) {
			b = fmin(lo + step, PLAN_MAX_BATCH);
			if ((f = feasible_at(p, b, m, &at_lo, err)) < 0)
				return -1;
			if (f)
				lo = b, step *= 2;
			else
				hi = b;
		}
	} else {
		hi = b;
		for (;;) {
			b = hi - step;
			if (b <= 1) { /* batch 1 is known to be feasible */
				lo = 1;
				break;
			}
			if ((f = feasible_at(p, b, m, &at_lo, err)) < 0)
				return -1;
			if (f) {
				lo = b;
				break;
			}
			hi = b, step *= 2;
		}
	}
	while (hi && hi - lo > 1) {
		double mid = floor((lo + hi) / 2);
		if ((f = feasible_at(p, mid, m, &at_lo, err)) < 0)
			return -1;
		if (f)
			lo = mid;
		else
			hi = mid;
	}
	if (!full) {
		*best = at_lo; /* the last feasible probe was at lo */
		return 0;
	}
	return plan_eval(p, lo, m, best, err);
}

int plan_solve(struct plan *p, int m, struct result *r, struct kerr *err)
{
	if (m < 0 || m > PIPE_MAX_MB)
		return kerr_set(err, 0, 0, "micro-batches must be in 1..%d or auto (got %d)", PIPE_MAX_MB, m);
	if (m > 0)
		return solve_m(p, m, 0, 1, r, err);
	double hint = 0;
	for (int k = 1; k <= PIPE_MAX_MB; k++) {
		struct result x;
		if (solve_m(p, k, hint, 0, &x, err) != 0)
			return -1;
		if (k == 1 || (x.feasible && (!r->feasible || x.throughput > r->throughput)))
			*r = x;
		if (x.feasible)
			hint = x.batch;
	}
	if (!r->feasible)
		return 0; /* batch 1 at m = 1, evaluated in full */
	return plan_eval(p, r->batch, r->mb, r, err);
}
