/* point.c: a design point sampled over many batches (mean and P99 step
 * time, throughput, capacity, the reason when it fails) and the solver for
 * the largest batch under the SLO (see point.h). */
#include "solve/plan.h"

#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void fmt_bytes(double b, char *buf, size_t n)
{
	if (b >= 1e12)
		snprintf(buf, n, "%.3f TB", b / 1e12);
	else
		snprintf(buf, n, "%.3f GB", b / 1e9);
}

/* The first unsupported cache-side stage, for the reason text. */
static const char *unsupported(const struct plan *p)
{
	for (int s = 0; s < p->lay.n; s++)
		if (!isfinite(p->sd[s].ic))
			return op_table[p->lay.s[s].kind].name;
	return "an operator";
}

/* Samples one design point.  With `early`, stops as soon as the outcome
 * is known to be infeasible (enough samples over the SLO or capacity for
 * the P99 to be over) and returns 1; the result is then incomplete. */
static int eval_core(struct plan *p, double batch, int m, struct result *r,
		     int early, struct kerr *err)
{
	const struct design *d = &p->d;
	if (!(batch >= 1) || batch != floor(batch) || batch > PLAN_MAX_BATCH)
		return kerr_set(err, 0, 0, "batch must be a whole number in [1, %g] (got %g)",
				PLAN_MAX_BATCH, batch);
	if (m < 1 || m > MB)
		return kerr_set(err, 0, 0, "micro-batches must be in 1..%d (got %d)", MB, m);
	double work = (double)d->samples * (batch + p->G + p->D);
	if (work > PLAN_MAX_WORK)
		return kerr_set(err, 0, 0, "a batch of %.0f on %d GPUs and %d memory devices "
				"with %d samples is %.3g request placements per evaluation, over "
				"the limit of %.3g: use fewer samples, a smaller "
				"batch or fewer devices", batch, p->G, p->has_mem ? p->D : 0,
				d->samples, work, PLAN_MAX_WORK);
	long B = (long)batch;
	if (ensure_batch(p, 2 * B) != 0 || ensure_memo(p, B / p->G + 2) != 0)
		return kerr_set(err, 0, 0, "out of memory for a batch of %ld", B);
	memset(r, 0, sizeof *r);
	r->batch = batch, r->mb = m;
	int ns = d->samples;
	/* p99 = s[k] + f (s[k+1] - s[k]), k = floor(0.99 (n - 1)): once n - k
	 * samples exceed a limit, so does the P99. */
	int over = 0, enough = ns - (int)floor(0.99 * (ns - 1));
	if (early && p->weights > p->cap_g + SLACK_BYTES)
		return 1;
	double busy[RES_N] = {0}, bubble[RES_N] = {0}, ctx_sum = 0, shards = 0;
	for (int s = 0; s < ns; s++) {
		struct pipe_out po;
		p->tbt[s] = plan_sample(p, B, m, s, &po, &p->use_g[s], &p->use_m[s]);
		if (isnan(p->tbt[s]))
			return kerr_set(err, 0, 0, "batch %.0f: %s", batch, p->fail.msg);
		if (early && (!(p->tbt[s] <= d->slo) ||
			      p->use_g[s] > p->cap_g + SLACK_BYTES ||
			      (p->has_mem && p->use_m[s] > p->cap_m + SLACK_BYTES)) &&
		    ++over >= enough) {
			r->feasible = 0;
			snprintf(r->reason, sizeof r->reason, "infeasible (early exit)");
			return 1;
		}
		for (int x = 0; x < RES_N; x++)
			busy[x] += po.busy[x], bubble[x] += po.bubble[x];
		shards += (double)p->nsharded;
		for (int k = 0; k < m * p->D; k++) /* every request is on one device */
			ctx_sum += p->sm.suml[k];
	}
	double tokens = batch * (1 + d->accept * d->mtp);
	r->tbt_mean = gsl_stats_mean(p->tbt, 1, (size_t)ns);
	gsl_sort(p->tbt, 1, (size_t)ns);
	r->tbt_p99 = gsl_stats_quantile_from_sorted_data(p->tbt, 1, (size_t)ns, 0.99);
	gsl_sort(p->use_g, 1, (size_t)ns);
	gsl_sort(p->use_m, 1, (size_t)ns);
	double ug = gsl_stats_quantile_from_sorted_data(p->use_g, 1, (size_t)ns, 0.99);
	double um = gsl_stats_quantile_from_sorted_data(p->use_m, 1, (size_t)ns, 0.99);
	r->gpu_use = ug / p->cap_g;
	r->mem_use = p->has_mem ? um / p->cap_m : 0;
	for (int x = 0; x < RES_N; x++)
		r->busy[x] = busy[x] / ns, r->bubble[x] = bubble[x] / ns;
	r->ctx_mean = ctx_sum / ((double)ns * B);
	r->clipped = p->clipped;
	r->sharded = shards / ((double)ns * B);
	r->ingest = plan_ingest_bytes(p, B);
	r->tdp = p->G * d->gpu->tdp + (p->has_mem ? p->D * d->mem->tdp : 0);
	r->throughput = tokens / r->tbt_mean;
	r->tok_per_w = r->throughput / r->tdp;
	r->j_per_tok = r->tdp * r->tbt_mean / tokens;
	if (isnan(r->tbt_mean) || isnan(r->tbt_p99) || isnan(r->throughput) ||
	    isnan(r->tok_per_w) || isnan(r->j_per_tok) || isnan(r->gpu_use) ||
	    isnan(r->mem_use))
		return kerr_set(err, 0, 0, "the step time is not a number at batch %.0f "
				"(a device or model value out of any meaningful range?)", batch);
	char a[32], b[32];
	r->feasible = 0;
	if (p->weights > p->cap_g + SLACK_BYTES) {
		fmt_bytes(p->weights, a, sizeof a), fmt_bytes(p->cap_g, b, sizeof b);
		snprintf(r->reason, sizeof r->reason, "weights %s per GPU exceed %s%s", a, b,
			 p->cap_g < d->gpu->mem_capacity ? " (capacity less reserve)" : "");
	} else if (ug > p->cap_g + SLACK_BYTES) {
		fmt_bytes(ug, a, sizeof a), fmt_bytes(p->cap_g, b, sizeof b);
		snprintf(r->reason, sizeof r->reason, "GPU memory: %s needed (P99) of %s%s", a,
			 b, p->cap_g < d->gpu->mem_capacity ? " (capacity less reserve)" : "");
	} else if (p->has_mem && um > p->cap_m + SLACK_BYTES) {
		fmt_bytes(um, a, sizeof a), fmt_bytes(p->cap_m, b, sizeof b);
		snprintf(r->reason, sizeof r->reason, "memdev memory: %s needed (P99) of %s%s",
			 a, b, p->cap_m < d->mem->mem_capacity ? " (capacity less reserve)" : "");
	} else if (!isfinite(r->tbt_p99)) {
		snprintf(r->reason, sizeof r->reason, "%s cannot run %s",
			 p->has_mem ? d->mem->name : d->gpu->name, unsupported(p));
	} else if (r->tbt_p99 > d->slo) {
		snprintf(r->reason, sizeof r->reason, "P99 TBT %.1f ms exceeds the %.0f ms SLO",
			 1e3 * r->tbt_p99, 1e3 * d->slo);
	} else {
		r->feasible = 1;
	}
	return 0;
}

int plan_eval(struct plan *p, double batch, int m, struct result *r,
	      struct kerr *err)
{
	if (m != 0)
		return eval_core(p, batch, m, r, 0, err) < 0 ? -1 : 0;
	/* auto at a fixed batch: the lowest mean step time among the feasible
	 * counts, else among all */
	for (int k = 1; k <= MB; k++) {
		struct result x;
		if (eval_core(p, batch, k, &x, 0, err) < 0)
			return -1;
		if (k == 1 || (x.feasible && !r->feasible) ||
		    (x.feasible == r->feasible && x.tbt_mean < r->tbt_mean))
			*r = x;
	}
	return 0;
}

/* Whether batch fits and meets the SLO; -1 on error. */
static int feasible_at(struct plan *p, double batch, int m, struct kerr *err)
{
	if (p->d.progress)
		p->d.progress(p->d.progress_ctx, m, batch);
	struct result r;
	int rc = eval_core(p, batch, m, &r, 1, err);
	return rc < 0 ? -1 : rc == 1 ? 0 : r.feasible;
}

/* Largest feasible batch at m: galloping search from `hint` (a batch to
 * try first, e.g. the answer at another m), then bisection.  Feasibility
 * is decided with early exit; the answer is evaluated in full. */
static int solve_m(struct plan *p, int m, double hint, struct result *best,
		   struct kerr *err)
{
	int f = feasible_at(p, 1, m, err);
	if (f < 0)
		return -1;
	if (!f) /* nothing fits: report batch 1 and why */
		return plan_eval(p, 1, m, best, err);
	/* Galloping from the hint: steps of hint/32 doubling outwards, so an
	 * answer near the hint is bracketed tightly (from 1: steps 1, 2, 4...). */
	double lo = 1, hi = 0;
	double b = hint > 1 ? fmin(floor(hint), PLAN_MAX_BATCH) : 1;
	double step = fmax(1, floor(b / 32));
	if (b > 1 && (f = feasible_at(p, b, m, err)) < 0)
		return -1;
	if (b == 1 || f) {
		lo = b;
		while (!hi && lo < PLAN_MAX_BATCH) {
			b = fmin(lo + step, PLAN_MAX_BATCH);
			if ((f = feasible_at(p, b, m, err)) < 0)
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
			if ((f = feasible_at(p, b, m, err)) < 0)
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
		if ((f = feasible_at(p, mid, m, err)) < 0)
			return -1;
		if (f)
			lo = mid;
		else
			hi = mid;
	}
	return plan_eval(p, lo, m, best, err);
}

int plan_solve(struct plan *p, int m, struct result *r, struct kerr *err)
{
	if (m < 0 || m > MB)
		return kerr_set(err, 0, 0, "micro-batches must be in 1..%d or auto (got %d)", MB, m);
	if (m > 0)
		return solve_m(p, m, 0, r, err);
	double hint = 0;
	for (int k = 1; k <= MB; k++) {
		struct result x;
		if (solve_m(p, k, hint, &x, err) != 0)
			return -1;
		if (k == 1 || (x.feasible && (!r->feasible || x.throughput > r->throughput)))
			*r = x;
		if (x.feasible)
			hint = x.batch;
	}
	return 0;
}
