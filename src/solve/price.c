/* price.c: what a plan's pieces cost.  The GPU side: each kind of layer's
 * phases (before attention, after it, dispatch, experts, combine) and the
 * tail, for n requests per GPU in a micro-batch, memoised per n in the
 * workspace, with their activity energy and all-to-all bytes.  The cache
 * side: a bucket's seconds and energy from its packed sums, slot by slot
 * on the roofline of the device that runs it. */
#include "solve/plan.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/roofline.h"
#include "cost/tp.h"

const unsigned char phase_of[OP_N] = {
	[OP_ATTN_NORM] = PH_PRE, [OP_QKV_PROJ] = PH_PRE, [OP_Q_PROJ] = PH_PRE,
	[OP_Q_DOWN] = PH_PRE, [OP_Q_NORM] = PH_PRE, [OP_Q_UP] = PH_PRE,
	[OP_KV_DOWN] = PH_PRE, [OP_KV_NORM] = PH_PRE, [OP_Q_ABSORB] = PH_PRE,
	[OP_INDEX_Q_PROJ] = PH_PRE, [OP_INDEX_K_PROJ] = PH_PRE,
	[OP_INDEX_W_PROJ] = PH_PRE, [OP_ROPE] = PH_PRE,
	[OP_CACHE_WRITE] = PH_CACHE, [OP_INDEX_SCAN] = PH_CACHE, [OP_TOPK] = PH_CACHE,
	[OP_GATHER] = PH_CACHE, [OP_ATTENTION] = PH_CACHE,
	[OP_V_ABSORB] = PH_POST, [OP_O_PROJ] = PH_POST, [OP_FFN_NORM] = PH_POST,
	[OP_DENSE_FFN] = PH_POST, [OP_ROUTER] = PH_POST, [OP_SHARED_EXPERT] = PH_POST,
	[OP_DISPATCH] = PH_DISP, [OP_EXPERTS] = PH_EXP, [OP_COMBINE] = PH_COMB,
	[OP_FINAL_NORM] = PH_TAIL, [OP_LM_HEAD] = PH_TAIL, [OP_SAMPLING] = PH_TAIL,
	[OP_MTP] = PH_TAIL,
};

/* ---- the GPU side ---- */

/* All-to-all time of `bytes` leaving one unit: scale-up inside the node,
 * scale-out across nodes, GPU by GPU (a unit of tp GPUs sends a tp-th
 * from each, to every other GPU, its own unit's too). */
static double a2a_time(const struct plan *p, double bytes, int dispatch)
{
	const struct design *d = &p->d;
	return roofline_a2a_nodes(p->up1, p->out1, p->gpus * p->tp,
				  d->sys->gpus_per_node * p->tp, p->a2a_cross, bytes / p->tp, dispatch);
}

/* Tensor-parallel attention's all-reduces in one layer of kind k (the
 * tail at k = nkinds: the MTP module's layer per draft token, and the
 * gather of each rank's best tokens after the LM head at the floor) for
 * n requests per unit, into its row: time after attention, energy. */
static void tp_part(const struct plan *p, long n, int k, double *row)
{
	const struct design *d = &p->d;
	double x = n * dtype_bytes((enum dtype)d->m->act_dt) * d->m->hidden;
	double ar, t;
	if (k < p->nkinds) {
		ar = tp_allreduces(p->kinds[k].moe);
		t = ar * tp_allreduce_time(p->up1, p->tp, x * p->q);
		row[PH_POST] += t;
		x *= p->q;
	} else {
		ar = d->mtp * design_mtp_layers(d);
		t = ar * tp_allreduce_time(p->up1, p->tp, x) + p->up1->allreduce_floor;
		row[PH_TAIL] += t;
	}
	row[PLAN_PH_ENERGY] += ar * p->tp * tp_allreduce_bytes(p->tp, x) * 8 * p->up1->energy_bit;
}

int plan_ensure_memo(const struct plan *p, struct plan_ws *w, long n)
{
	if (n < w->memo_cap)
		return 0;
	long c = w->memo_cap ? w->memo_cap : 64;
	while (c <= n)
		c *= 2;
	double *m = realloc(w->memo, (size_t)c * (size_t)(p->nkinds + 1) * PLAN_PH_STRIDE * sizeof *m);
	if (!m)
		return -1;
	w->memo = m;
	unsigned char *ok = realloc(w->memo_ok, (size_t)c);
	if (!ok)
		return -1;
	memset(ok + w->memo_cap, 0, (size_t)(c - w->memo_cap));
	w->memo_ok = ok;
	w->memo_cap = c;
	return 0;
}

/* The GPU-side operators of one layer of kind k (the tail at k = nkinds)
 * for n requests per GPU into w->step: every GPU's copy of the
 * micro-batch routes together, so one GPU's n requests are a step of
 * n G requests over G GPUs.  -1 when the step cannot be built (w->fail). */
static int gpu_part(const struct plan *p, struct plan_ws *w, long n, int k)
{
	struct kbatch kb = {.requests = (double)n * p->gpus, .gpus = p->gpus, .context = 1,
			    .mtp = p->d.mtp, .sp = p->d.sp, .gpu_only = 1, .tp = p->tp,
			    .imbalance = system_moe_imbalance(p->d.sys), .a2a_per_gpu = p->a2a_per_gpu,
			    .part = k < p->nkinds ? STEP_LAYER : STEP_TAIL};
	if (k < p->nkinds)
		kb.kind = p->kinds[k];
	return step_build(p->d.m, &kb, &w->step, &w->fail) != 0 ? -1 : 0;
}

/* Each kind of layer's GPU phases at n requests per GPU, memoised. */
const double *plan_gpu_phases(const struct plan *p, struct plan_ws *w, long n)
{
	/* a GPU may hold more than the even share an evaluation sized the
	 * memo for (online placement fills the roomiest unit first) */
	if (plan_ensure_memo(p, w, n + 1) != 0) {
		kerr_set(&w->fail, 0, 0, "out of memory pricing %ld requests on a GPU", n);
		return NULL;
	}
	size_t per = (size_t)(p->nkinds + 1) * PLAN_PH_STRIDE;
	const struct kdevice *gpu = p->d.gpu;
	double *ph = w->memo + (size_t)n * per;
	if (w->memo_ok[n])
		return ph;
	memset(ph, 0, sizeof(double) * per);
	for (int k = 0; n > 0 && k <= p->nkinds; k++) {
		if (gpu_part(p, w, n, k) != 0)
			return NULL; /* not memoised: the caller reports w->fail */
		for (int i = 0; i < w->step.n; i++) {
			struct op_cost *o = &w->step.op[i];
			assert(o->side != SIDE_CACHE); /* priced per request from the pool */
			double t, *row = ph + k * PLAN_PH_STRIDE;
			if (o->side == SIDE_LINK) {
				t = a2a_time(p, o->bytes, o->kind == OP_DISPATCH);
				row[PLAN_PH_A2A] += o->count * o->bytes;
			} else {
				roofline_op(o, gpu, p->d.up);
				t = o->time;
				row[PLAN_PH_ENERGY] += o->count * (o->flops * device_energy_flop(gpu, o->dt) +
								   o->bytes * 8 * gpu->e_bit);
				if (device_op_fitted(gpu, op_table[o->kind].cls, op_table[o->kind].selects))
					row[PLAN_PH_FIT] += o->count * t;
			}
			row[phase_of[o->kind]] += o->count * t;
		}
		if (p->tp > 1)
			tp_part(p, n, k, ph + k * PLAN_PH_STRIDE);
	}
	w->memo_ok[n] = 1;
	return ph;
}

double plan_gpu_work(const struct plan *p, struct plan_ws *w, long n)
{
	const double *ph = plan_gpu_phases(p, w, n);
	if (!ph)
		return NAN;
	double t = ph[p->nkinds * PLAN_PH_STRIDE + PH_TAIL];
	for (int k = 0; k < p->nkinds; k++) {
		const double *pk = ph + k * PLAN_PH_STRIDE;
		t += p->kind_layers[k] * (pk[PH_PRE] + pk[PH_POST] + pk[PH_EXP]);
	}
	return t;
}

double plan_gpu_fitted_share(const struct plan *p, struct plan_ws *w, long n, int m,
			     double gpu_busy)
{
	const struct kdevice *gpu = p->d.gpu;
	const double *ph = plan_gpu_phases(p, w, n);
	if (!ph)
		return NAN;
	double all = plan_gpu_work(p, w, n), fitted = ph[p->nkinds * PLAN_PH_STRIDE + PLAN_PH_FIT];
	for (int k = 0; k < p->nkinds; k++)
		fitted += p->kind_layers[k] * ph[k * PLAN_PH_STRIDE + PLAN_PH_FIT];
	/* the cache side the GPU runs (all of it without memory devices):
	 * fitted only where every class it uses is */
	double cache = fmax(gpu_busy - m * all, 0);
	int cache_fit = device_op_fitted(gpu, OC_ATTENTION, 0) && device_op_fitted(gpu, OC_SCAN, 1) &&
			device_op_fitted(gpu, OC_GATHER, 0) && device_op_fitted(gpu, OC_ELEMENTWISE, 0);
	for (int s = 0; s < p->layout.n; s++) /* a pass count its file assumes, where the GPU selects */
		if (p->slot_dev[s].on_gpu && op_table[p->layout.s[s].kind].selects &&
		    device_select_scale(gpu, p->layout.s[s].passes) < 1)
			cache_fit = 0;
	double total = m * all + cache;
	return total > 0 ? fmin((m * fitted + (cache_fit ? cache : 0)) / total, 1) : NAN;
}

double plan_gpu_energy(const struct plan *p, struct plan_ws *w, long n, double e_a2a)
{
	const double *ph = plan_gpu_phases(p, w, n);
	if (!ph)
		return NAN;
	double e = 0;
	for (int k = 0; k <= p->nkinds; k++) {
		const double *row = ph + k * PLAN_PH_STRIDE;
		e += (k < p->nkinds ? p->kind_layers[k] : 1) *
		     (row[PLAN_PH_ENERGY] + row[PLAN_PH_A2A] * e_a2a);
	}
	return e;
}

/* Little's law: B x idle_rate calls finish a second, and each leaves its
 * cache idle for the workload's mean idle time at the keep-alive chosen,
 * so bytes of room allow a mean idle time of room / (B idle_rate
 * idle_req) seconds (workload_reuse_within turns it into reuse). */
void plan_reuse(const struct plan *p, long B, struct plan_reuse *u)
{
	const struct kworkload *wl = p->d.wl;
	double per_s = (double)B * p->idle_rate * p->idle_req; /* bytes per idle second */
	double room = fmax(p->idle_cap - (double)B * p->idle_used, 0);
	u->near = workload_reuse_within(wl, per_s > 0 ? room / per_s : INFINITY, &u->keep_near);
	u->host = u->near, u->keep_host = u->keep_near;
	if (p->idle_host > 0)
		u->host = workload_reuse_within(wl, per_s > 0 ? (room + p->idle_host) / per_s
							      : INFINITY, &u->keep_host);
	u->reuse = u->host, u->keep_s = u->keep_host;
	if (p->idle_ssd > 0)
		u->reuse = workload_reuse_within(wl, per_s > 0 ? (room + p->idle_host + p->idle_ssd) /
							       per_s : INFINITY, &u->keep_s);
	u->ingest = (double)B * p->adm_rate * (1 - u->reuse) * p->cache_in;
	double adm = (double)B * p->adm_rate * p->cache_in; /* the admissions' caches */
	u->reload = adm * (u->reuse - u->near), u->from_ssd = adm * (u->reuse - u->host);
}

/* ---- the cache side ---- */

double plan_slot_time(const struct plan_slot_rate *sd, const struct attn_slot *s, double f,
		      double b, double n)
{
	if (f <= 0 && b <= 0)
		return 0;
	double tc = f * sd->ic, t;
	if (sd->row > 0 && s->rows > 0 && n > 0) { /* the n requests' rows side by side */
		double fixed;
		t = roofline_select_time(sd->dev, tc, f / (n * s->rows) * sd->row, b * sd->im,
					 sd->ovh, sd->ovh_split, &fixed, &tc);
		t += fixed;
	} else
		t = roofline_join(sd->dev, tc, b * sd->im) + sd->ovh;
	return s->layers * (t > sd->floor ? t : sd->floor);
}

/* Where a slot runs (enum plan_where). */
static int where_of(const struct plan *p, const struct plan_slot_rate *sd)
{
	return !(sd->on_gpu && p->has_mem) ? W_DEVICE : sd->after ? W_GPU_POST : W_GPU_PRE;
}

/* Packed value i of a bucket (-1: zero for every request). */
static inline double val_at(const double *v, int i)
{
	return i >= 0 ? v[i] : 0;
}

/* Seconds of the scan slot s and the top-k slot s + 1 on a device that
 * pipelines them (select.pipelined), over a bucket of n requests: one
 * request's top-k runs on the selection cores while the next one's scan
 * runs on the matrix units, so the pair takes its longer stage, or the
 * two stages' memory traffic together where that is longer, plus one
 * request's share of the shorter stage to fill the pipe.  Requests of a
 * layer only (the next layer's query waits for this one's attention).
 * Never more than the two in series. */
static double piped_pair(const struct plan_slot_rate *sd, const struct attn_slot *s,
			 const double fb[4], double n)
{
	double ts = plan_slot_time(&sd[0], &s[0], fb[0], fb[1], n);
	double tk = plan_slot_time(&sd[1], &s[1], fb[2], fb[3], n);
	double mem = s[0].layers * (fb[1] * sd[0].im + fb[3] * sd[1].im);
	double hi = fmax(fmax(ts, tk), mem), lo = fmin(ts, tk);
	return fmin(ts + tk, hi + lo / (n > 1 ? n : 1));
}

/* plan_slots_piped, inlined where every bucket is priced. */
static inline int slots_piped(const struct plan_slot_rate *sd, const struct attn_layout *lay,
			      int s)
{
	return s % ATTN_SLOTS_PER_CLASS == SL_SCAN && s + 1 < lay->n && !sd[s].on_gpu &&
	       !sd[s + 1].on_gpu && sd[s].dev == sd[s + 1].dev && sd[s].dev->select_pipelined > 0;
}

int plan_slots_piped(const struct plan_slot_rate *sd, const struct attn_layout *lay, int s)
{
	return slots_piped(sd, lay, s);
}

double plan_bucket_time(const struct plan *p, const struct attn_layout *lay,
			const struct plan_slot_rate *sd, const struct plan_vmap *map,
			const double *v, double n, int where, double *per_class)
{
	double t = 0;
	if (per_class)
		memset(per_class, 0, sizeof(double) * LC_N);
	for (int s = 0; s < lay->n; s++)
		if (where_of(p, &sd[s]) == where) {
			double x;
			if (slots_piped(sd, lay, s)) {
				const double fb[4] = {val_at(v, map[s].f), val_at(v, map[s].b),
						      val_at(v, map[s + 1].f), val_at(v, map[s + 1].b)};
				x = piped_pair(&sd[s], &lay->s[s], fb, n);
				s++;
			} else
				x = plan_slot_time(&sd[s], &lay->s[s], val_at(v, map[s].f),
						   val_at(v, map[s].b), n);
			t += x;
			if (per_class)
				per_class[lay->s[s].lc] += x;
		}
	return t;
}

double plan_bucket_energy(const struct plan *p, const struct attn_layout *lay,
			  const struct plan_slot_rate *sd, const struct plan_vmap *map,
			  const double *v, int want_gpu)
{
	double e = 0;
	for (int s = 0; s < lay->n; s++)
		if ((sd[s].on_gpu && p->has_mem) == want_gpu) /* the GPU's, before and after */
			e += lay->s[s].layers * (val_at(v, map[s].f) * sd[s].ef +
						 val_at(v, map[s].b) * sd[s].eb);
	return e;
}

/* The non-empty buckets of one side in micro-batch i, unit by unit: each
 * one's packed sums into v, and whether they differ from the last one's
 * (alike requests give many equal buckets, priced once). */
struct bucket_walk {
	const struct plan_side *sd;
	const struct plan_buckets *bk;
	const int *cnt;
	int i, units, u, seen, n, prev_n; /* n: the bucket's requests */
	double v[PLAN_MAX_VALUES], prev[PLAN_MAX_VALUES];
};

/* The next bucket, or 0 when there is none; *fresh: its sums are new. */
static int next_bucket(struct bucket_walk *w, int *fresh)
{
	size_t vb = sizeof(double) * (size_t)w->sd->k;
	for (; w->u < w->units; w->u++) {
		int idx = w->i * w->units + w->u, c = w->cnt[idx];
		if (!c)
			continue;
		plan_side_values(w->sd, w->bk, idx, c, w->v);
		w->n = c;
		*fresh = !w->seen || c != w->prev_n || memcmp(w->v, w->prev, vb) != 0;
		if (*fresh)
			memcpy(w->prev, w->v, vb), w->seen = 1, w->prev_n = c;
		w->u++;
		return 1;
	}
	return 0;
}

/* A bucket's times (v: its packed sums over n requests) of the slots that
 * run where: by class into a (LC_N); returns the MTP layer's. */
static double bucket_times(const struct plan *p, const double *v, int n, int where, double *a)
{
	plan_bucket_time(p, &p->layout, p->slot_dev, p->slot_map, v, n, where, a);
	return plan_bucket_time(p, &p->layout_mtp, p->slot_dev_mtp, p->slot_map_mtp, v, n, where,
				NULL);
}

/* Keeps a bucket's times (a, b) where they are the slowest so far. */
static void keep_slowest(double *t, double *tm, const double *a, double b)
{
	for (int k = 0; k < LC_N; k++)
		t[k] = a[k] > t[k] ? a[k] : t[k];
	*tm = b > *tm ? b : *tm;
}

/* plan_side_peak without energy, where a bucket's time grows with each
 * of its sums at a fixed request count (sd->monotone).  Of the units with
 * each count c < PEAK_COUNTS, the one with the most summed context (top[c])
 * is priced, and another only where one of its sums exceeds top[c]'s:
 * every unit skipped takes at most top[c]'s time in every class, so the
 * slowest times are those of the full walk, bit for bit. */
#define PEAK_COUNTS 64
static void peak_by_count(const struct plan *p, const struct plan_side *sd,
			  const struct plan_buckets *bk, int i, int units, const int *cnt, int where,
			  double *t, double *tm)
{
	int top[PEAK_COUNTS], R = sd->nres;
	for (int c = 0; c < PEAK_COUNTS; c++)
		top[c] = -1;
	const double *L = bk->suml + (size_t)i * units;
	const int *n = cnt + (size_t)i * units;
	for (int u = 0; u < units; u++) {
		int c = n[u];
		if (c > 0 && c < PEAK_COUNTS && (top[c] < 0 || L[u] > L[top[c]]))
			top[c] = u;
	}
	for (int u = 0; u < units; u++) {
		int c = n[u], b = c > 0 && c < PEAK_COUNTS ? top[c] : -1;
		if (!c)
			continue;
		if (b >= 0 && b != u && L[u] <= L[b]) { /* (false for a NaN sum) */
			const double *x = bk->acc + ((size_t)i * units + u) * R,
				     *y = bk->acc + ((size_t)i * units + b) * R;
			int r = 0;
			while (r < R && x[r] <= y[r])
				r++;
			if (r == R)
				continue; /* at most unit b's in every sum */
		}
		double v[PLAN_MAX_VALUES], a[LC_N];
		plan_side_values(sd, bk, i * units + u, c, v);
		keep_slowest(t, tm, a, bucket_times(p, v, c, where, a));
	}
}

void plan_side_peak(const struct plan *p, const struct plan_side *sd,
		    const struct plan_buckets *bk, int i, int units, const int *cnt, int where,
		    double *t, double *tm, double *energy, int want_gpu)
{
	const struct plan_slot_rate *sl = p->slot_dev, *slm = p->slot_dev_mtp;
	memset(t, 0, sizeof(double) * LC_N);
	*tm = 0;
	if (!energy && sd->monotone) {
		peak_by_count(p, sd, bk, i, units, cnt, where, t, tm);
		return;
	}
	struct bucket_walk w = {.sd = sd, .bk = bk, .cnt = cnt, .i = i, .units = units};
	double a[LC_N], b = 0, e = 0, last = 0;
	int fresh;
	while (next_bucket(&w, &fresh)) {
		if (fresh) {
			b = bucket_times(p, w.v, w.n, where, a);
			if (energy)
				last = plan_bucket_energy(p, &p->layout, sl, p->slot_map, w.v, want_gpu) +
				       p->d.mtp * plan_bucket_energy(p, &p->layout_mtp, slm,
								     p->slot_map_mtp, w.v, want_gpu);
		}
		keep_slowest(t, tm, a, b);
		e += last;
	}
	if (energy)
		*energy += e;
}

void plan_hot_post_peak(const struct plan *p, const struct plan_ws *w, int i, double *fbp,
			double *fbpm, double *energy)
{
	memset(fbp, 0, sizeof(double) * LC_N);
	*fbpm = 0;
	for (int g = 0; g < p->gpus; g++) {
		int u = i * p->gpus + g, nc = w->gpu_count[u], nh = w->hot_count[u];
		double v[PLAN_MAX_VALUES], a[LC_N] = {0}, h[LC_N] = {0}, tm = 0;
		if (nc && p->has_post) {
			plan_side_values(&p->gpu_side, &w->gpu_bk, u, nc, v);
			plan_bucket_time(p, &p->layout, p->slot_dev, p->slot_map, v, nc, W_GPU_POST, a);
			tm += plan_bucket_time(p, &p->layout_mtp, p->slot_dev_mtp, p->slot_map_mtp, v, nc,
					       W_GPU_POST, NULL);
		}
		if (nh) {
			plan_side_values(&p->mem_side, &w->hot_bk, u, nh, v);
			plan_bucket_time(p, &p->layout, p->slot_hot, p->slot_map, v, nh, W_DEVICE, h);
			tm += plan_bucket_time(p, &p->layout_mtp, p->slot_hot_mtp, p->slot_map_mtp, v, nh,
					       W_DEVICE, NULL);
			if (energy)
				*energy += plan_bucket_energy(p, &p->layout, p->slot_hot, p->slot_map, v, 0) +
					   p->d.mtp * plan_bucket_energy(p, &p->layout_mtp, p->slot_hot_mtp,
									 p->slot_map_mtp, v, 0);
		}
		for (int k = 0; k < LC_N; k++)
			fbp[k] = fmax(fbp[k], a[k] + h[k]);
		*fbpm = fmax(*fbpm, tm);
	}
}
