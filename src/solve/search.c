/* search.c: the solver for the largest batch under the SLO at each
 * micro-batch count, and the best count (solve.h).  Feasibility comes from
 * plan_eval_at with early exit (eval.c).  A probe that fits runs every
 * sample, except a partial one (a guess from the worst few, with
 * --microbatches auto after the first count), so the answer's evaluation
 * is its last probe's; a probe just below a failure, which is the answer
 * if it fits, prices the energy too, and the answer is evaluated again
 * only where another probe was its last (price_answer).  With auto, a
 * count whose GPU work alone bounds its throughput below the best so far
 * is not searched (gpu_bound, below the least batch whose caches failed),
 * and a count's search stops once its bracket shows it cannot win
 * (cannot_beat). */
#include "solve/plan.h"

#include <math.h>

/* Whether batch fits and meets the SLO (-1 on error); when it does, its
 * result (every sample; with PLAN_ENERGY in `how`, the energy too) into
 * ok.  With PLAN_PARTIAL, 2 where the worst few samples fit: likely, and
 * only their floors in ok (a guess to aim by, never an answer). */
static int feasible_at(const struct plan *p, struct plan_ws *w, double batch, int m,
		       int how, struct result *ok, struct kerr *err)
{
	if (p->d.progress)
		p->d.progress(p->d.progress_ctx, m, batch);
	if (plan_work(p, w, batch, m) > PLAN_MAX_WORK) { /* the search stays within */
		w->work_stop = fmin(w->work_stop, batch);
		w->fail_bound = PB_WORK;
		return 0;
	}
	struct result r;
	int rc = plan_eval_at(p, w, batch, m, &r, PLAN_EARLY | how, 1, err);
	if (rc < 0)
		return -1;
	if (rc == 2 || (rc == 0 && r.feasible))
		*ok = r;
	else
		w->fail_bound = r.bound; /* what the batch failed: the answer's bound */
	return rc == 2 ? 2 : rc == 0 && r.feasible;
}

/* Whether no batch in [lo, hi) can reach a throughput of `beat`: none has
 * more tokens than hi - 1, and none a lower mean step time than lo's (the
 * mean grows with the batch; SEARCH_MEAN_SLACK allows for the small dips
 * a sampled mean can take).  Like the search, this takes feasibility
 * to be monotone in the batch. */
#define SEARCH_MEAN_SLACK 0.01 /* the largest dip measured: 0.36% (docs/notes/solver-history.md) */
static int cannot_beat(const struct plan *p, const struct result *at_lo, double hi,
		       double beat)
{
	double tok = 1 + p->d.accept * p->d.mtp;
	return beat > 0 && hi > 0 &&
	       tok * (hi - 1) / (at_lo->tbt_mean * (1 - SEARCH_MEAN_SLACK)) <= beat;
}

#define BOUND_MAX_N 4096 /* past this many requests per GPU: no bound */

/* The largest batch the GPU's work alone lets meet the SLO at m: the
 * busiest GPU holds c >= ceil(B / G) requests and runs min(c, m)
 * micro-batches of at least max(1, floor(c / m)) each (gpu_bound below),
 * so B <= G c for the largest such c (found by bisection: the work is
 * non-decreasing in the count).  INFINITY past BOUND_MAX_N per GPU; NaN
 * when a step cannot be built. */
static double gpu_batch_cap(const struct plan *p, struct plan_ws *w, int m)
{
	double slo = p->d.slo, t1 = plan_gpu_work(p, w, 1), tn = plan_gpu_work(p, w, BOUND_MAX_N);
	if (isnan(t1) || isnan(tn))
		return NAN;
	if (m * t1 > slo) /* under m requests per GPU: each micro-batch one request */
		return p->gpus * fmin(m - 1, floor(slo / t1));
	if (m * tn <= slo)
		return INFINITY;
	long lo = 1, hi = BOUND_MAX_N; /* m gpu(lo) <= slo < m gpu(hi) */
	while (hi - lo > 1) {
		long mid = (lo + hi) / 2;
		double t = plan_gpu_work(p, w, mid);
		if (isnan(t))
			return NAN;
		if (m * t <= slo)
			lo = mid;
		else
			hi = mid;
	}
	return p->gpus * (m * (lo + 1.0) - 1);
}

/* The batch whose mean cache bytes fill the memory that holds them: the
 * devices' (or the GPUs' without devices) and the GPUs' for index keys
 * kept in HBM.  Not a bound (the requests vary), a place to start. */
static double memory_batch(const struct plan *p)
{
	double dev = p->mean_store, gpu = p->mean_store_gpu;
	if (!p->has_mem)
		return p->gpus * p->free_gpu / (dev + gpu);
	double b = p->devs * p->cap_mem / dev;
	return gpu > 0 ? fmin(b, p->gpus * p->free_gpu / gpu) : b;
}

/* The bracket's lower end: lo, taken to fit (batch 1 without a probe,
 * or a partial probe's guess) until an evaluation in full confirms it,
 * and the largest batch so confirmed. */
struct lower {
	double lo, conf;             /* conf: 0 before any is confirmed */
	int full;                    /* at_lo is lo's result in full */
	struct result at_lo, at_conf;
};

/* lo fit at probe f (1: in full, 2: partial) with its result in at_lo. */
static void took(struct lower *L, double lo, int f)
{
	L->lo = lo, L->full = f == 1;
	if (f == 1)
		L->conf = lo, L->at_conf = L->at_lo;
}

/* lo evaluated in full, its energy priced where lo + 1 = hi (the answer
 * if it fits: *priced).  Returns 0 when it fits; 1 when it does not, with
 * the bracket moved down to (the last confirmed batch, or 1, lo); 2 when
 * lo is batch 1 and does not fit, with it evaluated in full into best as
 * an answer where nothing fits; -1 on error. */
static int confirm(const struct plan *p, struct plan_ws *w, int m, struct lower *L,
		   double *hi, struct result *best, int *priced, struct kerr *err)
{
	int last = *hi && L->lo + 1 == *hi;
	int f = feasible_at(p, w, L->lo, m, last ? PLAN_ENERGY : 0, &L->at_lo, err);
	if (f < 0)
		return -1;
	if (f) {
		took(L, L->lo, 1);
		*priced = last;
		return 0;
	}
	if (L->lo == 1) {
		*priced = 1; /* in full */
		return plan_eval_ws(p, w, 1, m, best, err) < 0 ? -1 : 2;
	}
	*hi = L->lo, *priced = 0; /* an answer at conf is evaluated again */
	L->lo = L->conf > 0 ? L->conf : 1, L->full = L->conf > 0;
	if (L->full)
		L->at_lo = L->at_conf;
	return 1;
}

/* Where the crossing likely is, from the probes that fit: the least
 * batch at which one of the three limits is reached, each on a line of
 * its own (one margin with all three in it would follow whichever is
 * largest, and a use that hardly moves, such as an HBM full of weights,
 * would aim its line far past the answer):
 *   - the P99 over the SLO, on the line through the last two probes, or
 *     with one, through it and the origin (which falls short where a
 *     step has a fixed part, so that probe fits and runs every sample:
 *     DeepSeek-V3.2 on gpu-karat at m = 1 aims 174 from 128, answer 220;
 *     a line from the GPU's own work at one request fell short too);
 *   - the fullest GPU's P99 bytes over its capacity, on the line from its
 *     weights' share at batch 0 (w0) through the last probe;
 *   - the fullest device's, on the line from the origin (its caches only).
 * A guess only: the search probes every batch it names. */
struct aim {
	double b[2], t[2]; /* the last two probes' batches and P99 over the SLO */
	double gpu, mem;   /* the last probe's uses (0: none) */
	double w0;         /* the weights' share of a GPU's capacity */
	int n;
};

static void aim_add(struct aim *a, const struct result *r, double slo)
{
	a->b[0] = a->b[1], a->t[0] = a->t[1];
	a->b[1] = r->batch, a->t[1] = r->tbt_p99 / slo;
	a->gpu = r->gpu_use;
	a->mem = isfinite(r->mem_use) ? r->mem_use : 0;
	a->n += a->n < 2;
}

static double aim_at(const struct aim *a)
{
	if (a->n == 0)
		return NAN;
	double b = a->b[1], t = a->t[1], c = INFINITY;
	if (t > 0)
		c = a->n == 1 || !(t > a->t[0]) /* the batches only grow */
			    ? b / t
			    : b + (1 - t) * (b - a->b[0]) / (t - a->t[0]);
	if (a->gpu > a->w0)
		c = fmin(c, b * (1 - a->w0) / (a->gpu - a->w0));
	if (a->mem > 0)
		c = fmin(c, b / a->mem);
	return isfinite(c) ? c : NAN;
}

/* The next batch to probe in the bracket (lo, hi), hi > lo + 1, aimed at
 * the guess c: first c + 1, whose failure is cheap (early exit) and
 * bounds the answer, then c, whose success ends the search.  Where the
 * guess has missed (or there is none), down from hi in steps that double
 * with each failure since the last success (*run), to the midpoint at
 * most: the failures near hi are cheap.  After two probes that fit
 * without halving the bracket since its last halving (bisect), the
 * midpoint, so the search takes at most about three times the probes
 * that fit of a bisection. */
static double aim_next(double lo, double hi, double c, int *run, int bisect)
{
	double mid = floor((lo + hi) / 2);
	if (bisect)
		return mid;
	c = floor(c);
	if (c + 1 > lo && c + 1 < hi)
		return c + 1;
	if (c > lo && c < hi)
		return c;
	return fmax(hi - ldexp(1, ++*run), mid);
}

/* How narrow a bracket (lo, hi) is stepped down one batch at a time from
 * hi - 1: a probe past the crossing stops once its P99, the samples not
 * yet run taken as zero, is over a limit, which with the worst samples
 * first takes 3-4 samples (the P99 of 256 lets 2 exceed it), while a
 * probe that fits runs them all.  Within samples / 4 batches, stepping
 * down costs at most about one probe that fits, and takes exactly one
 * such probe (the first that fits is the answer), or none when every
 * batch above lo fails. */
static double linear_width(const struct plan *p)
{
	return p->d.samples / 4.0;
}

/* Largest feasible batch at m.  A bracket first: from `hint` (a batch to
 * try first, e.g. the answer at another m) down in steps of hint/32 that
 * double until one fits; without one, from the largest power of two
 * within what the GPU's work allows, the memory holds on average and the
 * work limit, halving down to one that fits.  Then probes aimed at the
 * crossing (struct aim), which take fewer that fit than doubling and
 * bisection (docs/solver.md): a probe that fails mostly stops within a
 * few samples, and one that fits runs every sample, or with a hint, only
 * the worst few where they fit well (partial: a guess), except just
 * below a failure; and once the bracket is within linear_width, down
 * from its failing end, above a lower end confirmed in full (where it
 * fails, the search goes on below it).  So the answer is a batch that
 * fits in full just below one that fails, as without the guesses.
 * Into best: the answer's result (batch 1 when nothing fits: evaluated
 * in full), and into *priced whether its probe priced the energy (one
 * just below a failure does).  With beat > 0, gives up (returns 1) once
 * the bracket shows that no batch at m can have a throughput above beat
 * (cannot_beat, from the largest batch confirmed in full). */
static int solve_m(const struct plan *p, struct plan_ws *w, int m, double hint,
		   double beat, struct result *best, int *priced, struct kerr *err)
{
	struct lower L = {.lo = 1};
	struct aim aim = {.w0 = p->weights / p->cap_gpu};
	int f = 0, part = hint > 1 ? PLAN_PARTIAL : 0;
	*priced = 0;
	double hi = 0, b, step;
	if (hint <= 1) {
		double cap = gpu_batch_cap(p, w, m), mem = memory_batch(p);
		cap = fmin(isnan(cap) ? 1 : cap, isnan(mem) ? 1 : mem);
		cap = fmin(cap, PLAN_MAX_BATCH);
		for (b = 1; 2 * b <= cap; b *= 2)
			;
		for (; b > 1; hi = b, b /= 2)
			if ((f = feasible_at(p, w, b, m, part, &L.at_lo, err)) < 0)
				return -1;
			else if (f)
				break;
		step = b;
	} else {
		b = fmin(floor(hint), PLAN_MAX_BATCH);
		step = fmax(1, floor(b / 32));
		if ((f = feasible_at(p, w, b, m, part, &L.at_lo, err)) < 0)
			return -1;
		if (!f) {
			hi = b;
			for (;;) {
				b = hi - step;
				if (b <= 1)
					break;
				if ((f = feasible_at(p, w, b, m, part, &L.at_lo, err)) < 0)
					return -1;
				if (f)
					break;
				hi = b, step *= 2;
			}
		}
	}
	if (b > 1 && f) { /* b fits (f: the halving and the steps down stop at one) */
		took(&L, b, f);
		aim_add(&aim, &L.at_lo, p->d.slo);
	}
	/* lo fits: up until one does not, aimed just past the guess, and at
	 * least 1, 2, 4, ... past lo; doubling steps without a guess */
	for (double up = 1; !hi && L.lo < PLAN_MAX_BATCH; up *= 2) {
		double c = aim_at(&aim);
		b = fmin(isfinite(c) ? fmax(floor(c) + 1, L.lo + up) : L.lo + step, PLAN_MAX_BATCH);
		if ((f = feasible_at(p, w, b, m, part, &L.at_lo, err)) < 0)
			return -1;
		if (f)
			took(&L, b, f), step *= 2, aim_add(&aim, &L.at_lo, p->d.slo);
		else
			hi = b;
	}
	double width = hi - L.lo; /* the bracket at its last halving */
	int run = 0, since = 0;
	for (;;) {
		int open = hi && hi - L.lo > 1, narrow = hi - L.lo - 1 <= linear_width(p);
		/* lo in full: at the end; where the bound needs it (batch 1,
		 * taken to fit); or where the bracket is narrow above a guess,
		 * which ranks the samples for the failures down from hi */
		if (!L.full && (!open || (beat > 0 && L.lo == 1) || (L.lo > 1 && narrow))) {
			if ((f = confirm(p, w, m, &L, &hi, best, priced, err)) < 0)
				return -1;
			if (f == 2)
				return 0;
			continue; /* in full now, or the bracket moved down */
		}
		if (!open)
			break;
		if (beat > 0 && (L.full || L.conf) &&
		    cannot_beat(p, L.full ? &L.at_lo : &L.at_conf, hi, beat))
			return 1;
		double lo = L.lo;
		double x = narrow ? hi - 1 : aim_next(lo, hi, aim_at(&aim), &run, since >= 2);
		int last = x + 1 == hi; /* the answer if it fits: in full, with its energy */
		if ((f = feasible_at(p, w, x, m, last ? PLAN_ENERGY : part, &L.at_lo, err)) < 0)
			return -1;
		if (f)
			took(&L, x, f), run = 0, aim_add(&aim, &L.at_lo, p->d.slo), *priced = last;
		else
			hi = x;
		if (hi - L.lo <= width / 2)
			width = hi - L.lo, since = 0;
		else
			since += f != 0; /* failures are cheap, and their steps double */
	}
	*best = L.at_lo; /* lo's, in full */
	/* hi is the last probe that failed: what it failed bounds the answer */
	best->bound = hi ? w->fail_bound : PB_CAP;
	return 0;
}

/* An upper bound on the throughput of any batch that meets the SLO at m
 * micro-batches, from the GPU's work alone.  The busiest GPU holds
 * c >= ceil(B / G) requests, split within one of each other over its
 * micro-batches, and the GPU runs each micro-batch's tasks in turn, so a
 * step takes at least min(c, m) x gpu(max(1, floor(c / m))) with gpu
 * non-decreasing in its count (tests/test_solve.c checks it on the zoo).
 * A batch meets the SLO only if that is within it.  The batches with
 * floor(ceil(B / G) / m) = n are those up to G (m (n + 1) - 1), and
 * below w->mem_fail, whose caches alone fail at every count (placement
 * does not depend on m; like the search, this takes that failure to hold
 * for larger batches too).  INFINITY where the bound would need counts
 * past BOUND_MAX_N; NaN on error. */
static double gpu_bound(const struct plan *p, struct plan_ws *w, int m)
{
	double tok = 1 + p->d.accept * p->d.mtp, G = p->gpus, slo = p->d.slo, best = 0;
	double bmax = w->mem_fail - 1; /* INFINITY before any such failure */
	double t1 = plan_gpu_work(p, w, 1);
	if (isnan(t1))
		return NAN;
	if (m > 1 && t1 <= slo) /* c < m: c micro-batches of one request each */
		best = tok * G / t1;
	for (long n = 1; G * (m * n - 1.0) < bmax; n++) { /* some batch has this n */
		if (n > BOUND_MAX_N)
			return INFINITY;
		double t = plan_gpu_work(p, w, n);
		if (isnan(t))
			return NAN;
		if (m * t > slo)
			break;
		best = fmax(best, tok * fmin(G * (m * (n + 1.0) - 1), bmax) / (m * t));
	}
	return best;
}

/* A feasible answer that a limit of the search, not the SLO or a
 * capacity, stopped says so in its reason. */
static void note_limit(const struct plan_ws *w, struct result *r)
{
	if (!r->feasible)
		return;
	if (r->batch >= PLAN_MAX_BATCH)
		r->bound = PB_CAP,
		snprintf(r->reason, sizeof r->reason, "feasible at the search's cap of %.0f "
			 "requests: larger batches are not tried", PLAN_MAX_BATCH);
	else if (w->work_stop <= r->batch + 1)
		r->bound = PB_WORK,
		snprintf(r->reason, sizeof r->reason, "feasible; batch %.0f is past the work limit "
			 "(%.3g), so larger ones were not tried: use fewer samples", w->work_stop,
			 PLAN_MAX_WORK);
}

/* The answer evaluated again in full, its energy priced, where its probe
 * did not price it (the same result otherwise, bit for bit: every sample
 * ran); the search's bound kept, which a lone evaluation cannot know. */
static int price_answer(const struct plan *p, struct plan_ws *w, struct result *r,
			struct kerr *err)
{
	int bound = r->bound;
	int rc = plan_eval_ws(p, w, r->batch, r->mb, r, err);
	r->bound = bound;
	return rc;
}

static int solve(const struct plan *p, struct plan_ws *w, int m, struct result *r, struct kerr *err)
{
	if (m < 0 || m > PIPE_MAX_MB)
		return kerr_set(err, 0, 0, "micro-batches must be in 1..%d or auto (got %d)", PIPE_MAX_MB, m);
	int priced = 0, rc;
	if (m > 0) { /* the answer is its last feasible probe's result */
		if ((rc = solve_m(p, w, m, 0, 0, r, &priced, err)) != 0)
			return rc;
		return priced ? 0 : price_answer(p, w, r, err);
	}
	double hint = 0;
	int won_priced = 0;
	for (int k = 1; k <= PIPE_MAX_MB; k++) {
		struct result x;
		if (k > 1 && r->feasible && gpu_bound(p, w, k) <= r->throughput)
			continue; /* no batch at k can win (NaN: solve_m reports) */
		rc = solve_m(p, w, k, hint, k > 1 && r->feasible ? r->throughput : 0, &x, &priced, err);
		if (rc < 0)
			return -1;
		if (rc == 1)
			continue; /* its bracket showed it cannot win */
		if (k == 1 || (x.feasible && (!r->feasible || x.throughput > r->throughput)))
			*r = x, won_priced = priced;
		if (x.feasible)
			hint = x.batch;
	}
	return won_priced ? 0 : price_answer(p, w, r, err);
}

int plan_solve(struct plan *p, int m, struct result *r, struct kerr *err)
{
	struct plan_ws *w = p->ws;
	w->work_stop = INFINITY;
	int rc = solve(p, w, m, r, err);
	if (rc == 0)
		note_limit(w, r);
	return rc;
}
