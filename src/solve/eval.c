/* eval.c: a design point at one batch, sampled over many batches: mean
 * and P99 step time, throughput, capacity, and the reason when it fails
 * (solve.h). */
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
	for (int s = 0; s < p->layout.n; s++)
		if (!isfinite(p->slot_dev[s].ic))
			return op_table[p->layout.s[s].kind].name;
	return NULL;
}

/* How many of n samples a partial evaluation runs: a sixteenth, and four
 * times those that fix the P99 (assumed: enough to hold the worst few);
 * it guesses that the batch fits where their floors are within
 * GUESS_MARGIN of every limit, and otherwise runs them all. */
#define GUESS_MARGIN 0.95 /* assumed: the floors' error near a crossing */
static int partial_n(int n)
{
	int k = 4 * plan_p99_top(n);
	return n / 16 > k ? n / 16 : k < n ? k : n;
}

/* A lower bound on a P99 while samples are still to run: the quantile
 * gsl_stats_quantile_from_sorted_data gives when every sample not yet
 * run is 0 (none is below), kept from the k = n - lhs largest values so
 * far (top, largest first, zeros at the start).  The quantile is
 * non-decreasing in every value, in floating point too, so once this
 * bound exceeds a limit the P99 does. */
struct p99_floor {
	double *top; /* k values (plan: w->p99_top) */
	int k;
	double delta; /* the quantile's weight on the value above lhs */
};

static void floor_init(struct p99_floor *q, int n, double *top)
{
	q->k = plan_p99_top(n), q->top = top;
	q->delta = 0.99 * (double)(n - 1) - (n - q->k); /* as GSL's index - lhs */
	memset(top, 0, sizeof(double) * (size_t)q->k);
}

static double floor_add(struct p99_floor *q, double v)
{
	int k = q->k;
	if (v > q->top[k - 1]) {
		int i = k - 1;
		for (; i > 0 && q->top[i - 1] < v; i--)
			q->top[i] = q->top[i - 1];
		q->top[i] = v;
	}
	return k == 1 ? q->top[0] : (1 - q->delta) * q->top[k - 1] + q->delta * q->top[k - 2];
}

/* Batch B's caches alone failed.  Where every count evaluates B request
 * by request (not even one micro-batch takes the fluid path), its
 * placement and so its memory are the same at every count: the search's
 * bounds may take B as failing at all of them (w->mem_fail). */
static void note_mem_fail(const struct plan *p, struct plan_ws *w, long B)
{
	if (B < w->mem_fail && !plan_fluid_ok(p, w, B, 1) && !plan_fluid_edge(p, w, B, 1))
		w->mem_fail = (double)B;
}

double plan_work(const struct plan *p, struct plan_ws *w, double batch, int m)
{
	int fluid = plan_fluid_ok(p, w, (long)batch, m);
	double layers = p->d.m->layers + p->d.m->mtp_layers;
	return (double)p->d.samples * ((fluid ? 0 : batch) + p->gpus + p->devs + m * layers);
}

/* plan_check_work on a workspace. */
static int check_work(const struct plan *p, struct plan_ws *w, double batch, int m,
		      struct kerr *err)
{
	if (!(batch >= 1) || batch != floor(batch) || batch > PLAN_MAX_BATCH)
		return kerr_set(err, 0, 0, "batch must be a whole number in [1, %g] (got %g)",
				PLAN_MAX_BATCH, batch);
	int m_hi = m == 0 ? PIPE_MAX_MB : m; /* auto: the count with the most work */
	double work = 0;
	for (int k = m == 0 ? 1 : m; k <= m_hi; k++)
		work = fmax(work, plan_work(p, w, batch, k));
	if (work <= PLAN_MAX_WORK)
		return 0;
	long B = (long)batch;
	return kerr_set(err, 0, 0, "a batch of %.0f on %d GPUs and %d memory devices with %d "
			"samples%s is %.3g units of work per evaluation (samples x (requests "
			"placed + devices + layers x micro-batches)), over the limit of %.3g "
			"(about a second): use fewer samples, a smaller batch, fewer "
			"micro-batches or fewer devices%s", batch, p->gpus, p->has_mem ? p->devs : 0,
			p->d.samples, m == 0 ? " at up to 16 micro-batches" : "", work, PLAN_MAX_WORK,
			plan_fluid_edge(p, w, B, m_hi)
				? " (it is placed request by request because a GEMM tile "
				  "edge lies just above a GPU's share; a batch a few "
				  "requests per GPU away from it is evaluated from its sums)"
			: p->d.sys->admission == ADMIT_MEMORY && p->d.sys->placement == PLACE_ONLINE
				? " (online placement places every request here; with CMR "
				  "or one micro-batch and at least 512 requests per device "
				  "and micro-batch, or with --set system.placement=offline-lpt, "
				  "a batch this large is evaluated from its sums)"
				: "");
}

int plan_check_work(struct plan *p, double batch, int m, struct kerr *err)
{
	return check_work(p, p->ws, batch, m, err);
}

/* Power counted whole and the cost of a token (docs/solver.md, "Energy
 * two ways"):
 * the node view is the drawn (activity) power plus each device's share of
 * its node or enclosure ([node] share_power); a host that serves as the
 * memory device is the node's own, so its static power is in the GPUs'
 * share and not counted twice.  The cost spreads every device's price and
 * share of its node's over system.amortisation_years and adds the node
 * view's electricity.  NaN where a file gives no [node] or [energy], or
 * the system no prices.  With system.prefill_energy = on, each output
 * token also carries its request's prefill: its energy with the nodes'
 * share, and its electricity and GPU time in the cost. */
static void account(const struct plan *p, const double pre[3], struct result *r)
{
	const struct design *d = &p->d;
	int mem = p->has_mem && !p->in_hbm; /* memory devices outside the GPUs */
	const struct kdevice *g = d->gpu, *v = mem ? d->mem : NULL;
	r->power_node = r->tok_per_w_node = r->capex = r->usd_per_mtok = NAN;
	r->probed = 0, r->grow = -1, r->grow_margin = NAN; /* the caller's probe */
	if (!g->has_node || (v && !v->has_node))
		return;
	r->capex = p->gpus * (g->price + g->node_price) +
		   (v ? p->devs * (v->price + v->node_price) : 0);
	r->power_node = r->power_act + p->gpus * g->node_power +
			(v ? p->devs * (v->node_power - (v->kind == DEV_CPU ? v->e_static : 0)) : 0);
	r->tok_per_w_node = r->throughput / r->power_node;
	const struct ksystem *sy = d->sys;
	int with_pre = sy->prefill_energy == PREFILL_ON;
	if (with_pre) /* each token's prefill with its nodes' share */
		r->tok_per_w_node = 1 / (r->power_node / r->throughput + pre[1]);
	if (!(sy->usd_per_kwh > 0 && sy->amortise_years > 0))
		return;
	double life = sy->amortise_years * 365.25 * 86400;
	double usd_s = r->capex / life + r->power_node * sy->usd_per_kwh / 3.6e6;
	r->usd_per_mtok = usd_s / r->throughput * 1e6;
	if (with_pre) /* and its electricity and GPU time, on GPUs like these */
		r->usd_per_mtok += 1e6 * (pre[1] * sy->usd_per_kwh / 3.6e6 +
					  pre[2] * (g->price + g->node_price) / life);
}

int plan_eval_at(const struct plan *p, struct plan_ws *w, double batch, int m,
		 struct result *r, int how, double limit, struct kerr *err)
{
	const struct design *d = &p->d;
	if (!(batch >= 1) || batch != floor(batch) || batch > PLAN_MAX_BATCH)
		return kerr_set(err, 0, 0, "batch must be a whole number in [1, %g] (got %g)",
				PLAN_MAX_BATCH, batch);
	if (m < 1 || m > PIPE_MAX_MB)
		return kerr_set(err, 0, 0, "micro-batches must be in 1..%d (got %d)", PIPE_MAX_MB, m);
	long B = (long)batch;
	int fluid = plan_fluid_ok(p, w, B, m); /* its cost does not grow with the batch */
	if (check_work(p, w, batch, m, err) != 0)
		return -1;
	if ((!fluid && plan_ensure_batch(p, w, 2 * B) != 0) || plan_ensure_memo(p, w, B / p->gpus + 2) != 0)
		return kerr_set(err, 0, 0, "out of memory for a batch of %ld", B);
	memset(r, 0, sizeof *r);
	r->batch = batch, r->mb = m;
	r->fluid = fluid;
	int ns = d->samples;
	/* Early exit: once the P99 of the samples run, every other taken as
	 * 0, is over a limit, so is the P99 of them all (p99_floor). */
	struct p99_floor qt, qg, qm;
	int nk = plan_p99_top(ns);
	floor_init(&qt, ns, w->p99_top), floor_init(&qg, ns, w->p99_top + nk);
	floor_init(&qm, ns, w->p99_top + 2 * nk);
	int early = how & PLAN_EARLY, want_energy = p->has_energy && (how & PLAN_ENERGY);
	if (early && p->weights > p->cap_gpu + PLAN_SLACK_BYTES) {
		r->bound = PB_HBM;
		return 1;
	}
	/* An alike pool draws the same batch every time: sample 0 stands for
	 * all (plan_sample leaves its energy, context and shards in w).  On
	 * the fluid path too: there the samples differ in their strata's
	 * counts, but alike strata make every sum the same, up to rounding. */
	int same = p->pool_alike;
	/* Early exit: the samples worst when last evaluated run first, so a
	 * failing batch shows its failures within the first few (sample s
	 * at batch B + 1 holds sample s at B, so a bad sample stays bad).
	 * The decision and every mean are what sample order gives. */
	int permute = early && !same && w->scored;
	/* Partial: a guess from the first of the samples, worst first, where
	 * their floors are well within every limit */
	int nguess = early && !same && w->ranked && (how & PLAN_PARTIAL) ? partial_n(ns) : 0;
	int guess = 0;
	/* Energy is priced only for a batch that fits, and an early exit
	 * needs at least the P99's top count of samples: the first that many
	 * run without it, and are priced again with it once the batch fits
	 * (the same step times: both walks of plan_side_peak agree) */
	int deferred = want_energy && early && !same ? (nk < ns ? nk : ns) : 0;
	if (permute) { /* w->tbt as scratch: every entry is written below */
		for (int s = 0; s < ns; s++)
			w->tbt[s] = -w->score[s];
		gsl_sort_index(w->order, w->tbt, 1, (size_t)ns);
	}
	/* The samples run in blocks, each spread over the team's workspaces
	 * (one per thread), and are then taken in order: an early exit stops
	 * at the sample one thread would stop at, and a sample run past it is
	 * neither scored nor kept, so every result is the same for any
	 * number of threads.  Early, a block is one sample per thread. */
	struct plan_ws *team[PLAN_MAX_THREADS];
	int T = 1;
	team[0] = w;
	for (int i = 0; w == p->ws && i < p->nhelper; i++) {
		struct plan_ws *h = p->helper[i];
		if ((!fluid && plan_ensure_batch(p, h, 2 * B) != 0) ||
		    plan_ensure_memo(p, h, B / p->gpus + 2) != 0)
			return kerr_set(err, 0, 0, "out of memory for a batch of %ld", B);
		if (fluid)
			plan_fluid_ok(p, h, B, m); /* its strata, built once */
		team[T++] = h;
	}
	int block = early ? T : ns;
	double ft = 0, fg = 0, fm = 0; /* the floors so far */
	for (int k0 = 0; k0 < ns && !guess; k0 += block) {
		int kn = ns - k0 < block ? ns - k0 : block;
#pragma omp parallel for num_threads(T) schedule(static, 1) if (T > 1)
		for (int t = 0; t < T; t++) /* worker t: the block's samples t, t + T, ... */
			for (int k = k0 + t; k < k0 + kn; k += T) {
				int s = permute ? (int)w->order[k] : k;
				if (same && s > 0)
					continue;
				struct pipe_out po;
				struct plan_ws *x = team[t];
				w->tbt[s] = plan_sample(p, x, B, m, s, fluid, want_energy && k >= deferred,
							&po, &w->use_gpu[s], &w->use_mem[s]);
				if (isnan(w->tbt[s]))
					break; /* x->fail says why */
				struct plan_sampled *ps = &w->per[s];
				memcpy(ps->busy, po.busy, sizeof ps->busy);
				memcpy(ps->bubble, po.bubble, sizeof ps->bubble);
				ps->energy = x->energy_last, ps->mb = x->pin.m;
				ps->shards = (double)x->nsharded; /* none from the fluid path */
				ps->ctx = x->ctx_last;
			}
		for (int k = k0; k < k0 + kn; k++) {
			int s = permute ? (int)w->order[k] : k;
			if (same && s > 0) {
				w->tbt[s] = w->tbt[0], w->use_gpu[s] = w->use_gpu[0];
				w->use_mem[s] = w->use_mem[0];
				w->per[s] = w->per[0];
			} else {
				if (isnan(w->tbt[s]))
					return kerr_set(err, 0, 0, "batch %.0f: %s", batch,
							team[(k - k0) % T]->fail.msg);
				double worst = fmax(w->tbt[s] / d->slo, w->use_gpu[s] / p->cap_gpu);
				w->score[s] = p->has_mem ? fmax(worst, w->use_mem[s] / p->cap_mem) : worst;
			}
			if (!early)
				continue;
			fg = floor_add(&qg, w->use_gpu[s]);
			fm = p->has_mem ? floor_add(&qm, w->use_mem[s]) : 0;
			ft = floor_add(&qt, w->tbt[s]);
			int full_g = fg > limit * p->cap_gpu + PLAN_SLACK_BYTES;
			int full_m = p->has_mem && fm > limit * p->cap_mem + PLAN_SLACK_BYTES;
			if ((ft > limit * d->slo) | full_g | full_m) {
				if ((full_g || full_m) && limit >= 1) /* the caches alone fail */
					note_mem_fail(p, w, B);
				w->scored = !same;
				r->feasible = 0;
				r->bound = full_g ? PB_HBM : full_m ? PB_MEMDEV : PB_SLO;
				snprintf(r->reason, sizeof r->reason, "infeasible (early exit)");
				return 1;
			}
			double in = GUESS_MARGIN * limit;
			if (k + 1 == nguess && ft <= in * d->slo && fg <= in * p->cap_gpu &&
			    (!p->has_mem || fm <= in * p->cap_mem)) {
				guess = 1;
				break;
			}
		}
	}
	w->scored = !same, w->ranked |= !same && !guess;
	if (guess) { /* partial: the samples run fit well; their floors */
		r->tbt_p99 = ft, r->gpu_use = fg / p->cap_gpu;
		r->mem_use = !p->has_mem ? 0 : p->cap_mem > 0 ? fm / p->cap_mem : NAN;
		return 2;
	}
	for (int k = 0; k < deferred; k++) { /* the batch fits: their energy now */
		int s = permute ? (int)w->order[k] : k;
		struct pipe_out po;
		double ug, um;
		if (isnan(plan_sample(p, w, B, m, s, fluid, 1, &po, &ug, &um)))
			return kerr_set(err, 0, 0, "batch %.0f: %s", batch, w->fail.msg);
		w->per[s].energy = w->energy_last;
	}
	double busy[RES_N] = {0}, bubble[RES_N] = {0}, ctx_sum = 0, shards = 0, energy = 0;
	double pre[3];
	for (int s = 0; s < ns; s++) { /* in sample order */
		const struct plan_sampled *ps = &w->per[s];
		for (int x = 0; x < RES_N; x++)
			busy[x] += ps->busy[x], bubble[x] += ps->bubble[x];
		energy += ps->energy;
		r->mb_ran = ps->mb > r->mb_ran ? ps->mb : r->mb_ran;
		shards += ps->shards;
		ctx_sum += ps->ctx;
	}
	double tokens = batch * (1 + d->accept * d->mtp);
	r->tbt_mean = gsl_stats_mean(w->tbt, 1, (size_t)ns);
	gsl_sort(w->tbt, 1, (size_t)ns);
	r->tbt_p99 = gsl_stats_quantile_from_sorted_data(w->tbt, 1, (size_t)ns, 0.99);
	gsl_sort(w->use_gpu, 1, (size_t)ns);
	gsl_sort(w->use_mem, 1, (size_t)ns);
	double ug = gsl_stats_quantile_from_sorted_data(w->use_gpu, 1, (size_t)ns, 0.99);
	double um = gsl_stats_quantile_from_sorted_data(w->use_mem, 1, (size_t)ns, 0.99);
	r->gpu_use = ug / p->cap_gpu;
	/* in HBM that the weights fill, the device has no capacity: no share */
	r->mem_use = !p->has_mem ? 0 : p->cap_mem > 0 ? um / p->cap_mem : NAN;
	for (int x = 0; x < RES_N; x++)
		r->busy[x] = busy[x] / ns, r->bubble[x] = bubble[x] / ns;
	r->gpu_fitted = NAN; /* a full evaluation's (the answer's, a query's) */
	if (how & PLAN_ENERGY) {
		int mr = r->mb_ran > 0 ? r->mb_ran : m;
		long n = lround(batch / ((double)p->gpus * mr));
		r->gpu_fitted = plan_gpu_fitted_share(p, w, n > 1 ? n : 1, mr, r->busy[RES_GPU]);
	}
	r->ctx_mean = ctx_sum / ((double)ns * B);
	r->clipped = p->clipped;
	r->sharded = shards / ((double)ns * B);
	{ /* the reuse this batch leaves room for, and each admission's prefill at it */
		struct plan_reuse u;
		plan_reuse(p, B, &u);
		r->reuse = u.reuse, r->keepalive_s = u.keep_s;
		r->ingest = u.ingest, r->reload = u.reload;
		pre[0] = p->pre_j, pre[1] = p->pre_j_node, pre[2] = p->pre_gpu_s;
		if (u.reuse != d->wl->prefix_reuse)
			plan_prefill_at(p, u.reuse, pre);
	}
	r->tdp = p->gpus * d->gpu->tdp + (p->has_mem && !p->in_hbm ? p->devs * d->mem->tdp : 0);
	r->throughput = tokens / r->tbt_mean;
	r->tok_per_w = r->throughput / r->tdp;
	r->j_per_tok = r->tdp * r->tbt_mean / tokens;
	r->energy_act = energy / ns; /* NaN without the devices' figures */
	r->power_act = r->energy_act / r->tbt_mean;
	r->j_per_tok_act = r->energy_act / tokens;
	r->tok_per_w_act = r->throughput / r->power_act;
	r->prefill_j_tok = pre[0], r->prefill_node_j_tok = pre[1];
	r->prefill_on = d->sys->prefill_energy == PREFILL_ON;
	if (r->prefill_on) { /* the whole request's energy */
		r->j_per_tok_act += pre[0];
		r->tok_per_w_act = 1 / r->j_per_tok_act;
	}
	account(p, pre, r);
	if (isnan(r->tbt_mean) || isnan(r->tbt_p99) || isnan(r->throughput) ||
	    isnan(r->tok_per_w) || isnan(r->j_per_tok) || isnan(r->gpu_use) ||
	    (isnan(r->mem_use) && p->cap_mem > 0))
		return kerr_set(err, 0, 0, "the step time is not a number at batch %.0f "
				"(a device or model value out of any meaningful range?)", batch);
	char a[32], b[32];
	r->feasible = 0;
	if (p->weights > p->cap_gpu + PLAN_SLACK_BYTES) {
		fmt_bytes(p->weights, a, sizeof a), fmt_bytes(p->cap_gpu, b, sizeof b);
		r->bound = PB_HBM;
		snprintf(r->reason, sizeof r->reason, "weights %s per GPU exceed %s%s", a, b,
			 p->cap_gpu < d->gpu->mem_capacity ? " (capacity less reserve)" : "");
	} else if (ug > p->cap_gpu + PLAN_SLACK_BYTES) {
		note_mem_fail(p, w, B);
		fmt_bytes(ug, a, sizeof a), fmt_bytes(p->cap_gpu, b, sizeof b);
		r->bound = PB_HBM;
		snprintf(r->reason, sizeof r->reason, "GPU memory: %s needed (P99) of %s%s", a,
			 b, p->cap_gpu < d->gpu->mem_capacity ? " (capacity less reserve)" : "");
	} else if (p->has_mem && um > p->cap_mem + PLAN_SLACK_BYTES) {
		note_mem_fail(p, w, B);
		fmt_bytes(um, a, sizeof a), fmt_bytes(p->cap_mem, b, sizeof b);
		r->bound = PB_MEMDEV;
		snprintf(r->reason, sizeof r->reason, "memdev memory: %s needed (P99) of %s%s",
			 a, b, p->in_hbm ? " (the GPU's HBM less reserve and weights)"
			 : p->cap_mem < d->mem->mem_capacity ? " (capacity less reserve)" : "");
	} else if (!isfinite(r->tbt_p99) && !unsupported(p)) {
		return kerr_set(err, 0, 0, "the step time overflows at batch %.0f: a rate, "
				"bandwidth or efficiency of %s%s%s is too small for any time to "
				"be finite", batch, d->gpu->name, p->has_mem ? " or " : "",
				p->has_mem ? d->mem->name : "");
	} else if (!isfinite(r->tbt_p99)) {
		r->bound = PB_UNSUPPORTED;
		snprintf(r->reason, sizeof r->reason, "%s cannot run %s",
			 p->has_mem ? d->mem->name : d->gpu->name, unsupported(p));
	} else if (r->tbt_p99 > d->slo) {
		r->bound = PB_SLO;
		snprintf(r->reason, sizeof r->reason, r->tbt_p99 < 1e4 ? "P99 TBT %.1f ms exceeds "
			 "the %.0f ms SLO" : "P99 TBT %.3g ms exceeds the %.0f ms SLO",
			 1e3 * r->tbt_p99, 1e3 * d->slo);
	} else {
		r->feasible = 1;
	}
	return 0;
}

int plan_eval_ws(const struct plan *p, struct plan_ws *w, double batch, int m,
		 struct result *r, struct kerr *err)
{
	if (m != 0)
		return plan_eval_at(p, w, batch, m, r, PLAN_ENERGY, 1, err) < 0 ? -1 : 0;
	if (check_work(p, w, batch, 0, err) != 0) /* every count's, before the first */
		return -1;
	/* auto at a fixed batch: the lowest mean step time among the feasible
	 * counts, else among all */
	for (int k = 1; k <= PIPE_MAX_MB; k++) {
		struct result x;
		if (p->d.progress)
			p->d.progress(p->d.progress_ctx, k, batch);
		if (plan_eval_at(p, w, batch, k, &x, PLAN_ENERGY, 1, err) < 0)
			return -1;
		if (k == 1 || (x.feasible && !r->feasible) ||
		    (x.feasible == r->feasible && x.tbt_mean < r->tbt_mean))
			*r = x;
	}
	return 0;
}

int plan_eval(struct plan *p, double batch, int m, struct result *r, struct kerr *err)
{
	return plan_eval_ws(p, p->ws, batch, m, r, err);
}

const double *plan_step_times(const struct plan *p, int *n)
{
	*n = p->d.samples;
	return p->ws->tbt;
}
