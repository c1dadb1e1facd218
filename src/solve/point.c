/* point.c: design-point evaluation and the SLO solver (see point.h). */
#include "solve/point.h"

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/attn.h"
#include "cost/roofline.h"
#include "cost/step.h"

#define POOL_BITS 12
#define POOL (1 << POOL_BITS) /* contexts drawn per plan: enough that the P99
				 of a small batch's fullest device does not hang
				 on a handful of pool entries */
#define RADIX_BITS (POOL_BITS / 2)
#define MB PIPE_MAX_MB
#define SLACK_BYTES 0.5  /* storage sums are whole bytes; "exactly full" fits */

/* Where each operator sits in a layer's chain (sched/pipeline.h). */
enum phase { PH_NONE, PH_PRE, PH_POST, PH_DISP, PH_EXP, PH_COMB, PH_TAIL, PH_CACHE, PH_N };

static const unsigned char phase_of[OP_N] = {
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

/* Roofline of one cache-side slot on the device that runs it. */
struct slotdev {
	double ic, im, ovh; /* s per FLOP, s per byte, s per instance */
	int on_gpu;         /* unsupported on the memory device: the GPU runs it */
};

struct vmap {
	int f, b; /* index of a slot's FLOPs and bytes among the packed values */
};

#define MAXV (4 * ATTN_MAX_SLOTS)

/* The packed values one device (a memory device, or a GPU's fallback
 * stages) sums over its requests.  Most are affine in the context over the
 * whole pool (a + b L: FLOPs and bytes of a scan grow with L, a top-k
 * selection of fixed size is constant), so a bucket needs only its count
 * and summed context for them; the rest are summed request by request. */
struct side {
	int k;             /* packed values */
	int nres;          /* of which summed per request */
	int pos[MAXV];     /* value -> index among the summed ones, -1: affine */
	double a[MAXV], b[MAXV];
	double *pool;      /* POOL x nres */
	double *acc;       /* (mb, unit) x nres */
	double *suml;      /* (mb, unit): summed contexts */
};

struct plan {
	struct design d;
	int G, D, per, share, has_mem, LB;
	double q, layers, weights;
	struct attn_layout lay, laym;
	struct slotdev sd[ATTN_MAX_SLOTS], sdm[ATTN_MAX_SLOTS];
	/* the pool: contexts, cache-side FLOPs and bytes of each request packed
	 * into the values its memory device (sm, per device) and its GPU (sg,
	 * fallback stages) accumulate; slot s of the layers reads value
	 * map[s].f and map[s].b (-1: zero for every request), mapm for the MTP
	 * layer */
	double *ctx, *store, *store_gpu;
	int *rank;                 /* order of each pool entry by context */
	struct side sm, sg;
	struct vmap map[ATTN_MAX_SLOTS], mapm[ATTN_MAX_SLOTS];
	double clipped;
	/* GPU phase seconds per step for n requests per GPU in a micro-batch */
	double (*memo)[PH_N];
	unsigned char *memo_ok;
	long memo_cap;
	/* scratch, sized for cap_b requests */
	long cap_b;
	int *rq, *rgpu, *rdev, *rmb, *ord, *tmp;
	double *lctx_view;  /* plan_inspect's contexts */
	double *dev_load, *dev_store, *gpu_store;
	double *mbload;
	int *gcnt, *dcnt, *lcnt, *ccnt, *nbig;
	double *tbt, *use_g, *use_m;
	gsl_rng *rng;
	struct step step;
};

static double slot_time(const struct slotdev *sd, const struct attn_slot *s,
			double f, double b)
{
	if (f <= 0 && b <= 0)
		return 0;
	double tc = f * sd->ic, tm = b * sd->im;
	return s->layers * ((tc > tm ? tc : tm) + sd->ovh);
}

static void slot_rates(const struct kdevice *dv, const struct attn_slot *s,
		       struct slotdev *sd)
{
	double peak = device_peak(dv, s->dt, 0);
	int ok = (dv->supports & (1u << s->cls)) && peak > 0;
	sd->ic = ok ? 1 / (peak * dv->eff_c[s->cls]) : INFINITY;
	sd->im = ok ? 1 / (dv->mem_bw * dv->eff_m[s->cls]) : INFINITY;
	sd->ovh = dv->overhead;
}

static void place_slots(struct plan *p, const struct attn_layout *lay,
			struct slotdev *sd)
{
	const struct design *d = &p->d;
	for (int s = 0; s < lay->n; s++) {
		struct slotdev own;
		slot_rates(p->has_mem ? d->mem : d->gpu, &lay->s[s], &own);
		if (isfinite(own.ic) || !p->has_mem) {
			sd[s] = own;
			sd[s].on_gpu = !p->has_mem;
		} else { /* a fixed-function device: the GPU runs this stage */
			slot_rates(d->gpu, &lay->s[s], &sd[s]);
			sd[s].on_gpu = 1;
		}
	}
}

/* All-to-all time of `bytes` leaving one GPU: scale-up inside the node,
 * scale-out across nodes. */
static double a2a_time(const struct plan *p, double bytes)
{
	if (bytes <= 0)
		return 0;
	const struct design *d = &p->d;
	double G = p->G, gpn = d->sys->gpus_per_node;
	double t_up = d->up->latency, t_out = 0;
	if (G <= gpn) {
		t_up += bytes / (d->up->bw * d->up->efficiency);
	} else {
		t_up += bytes * (gpn - 1) / (G - 1) / (d->up->bw * d->up->efficiency);
		t_out = d->out->latency +
			bytes * (G - gpn) / (G - 1) / (d->out->bw * d->out->efficiency);
	}
	return t_up > t_out ? t_up : t_out;
}

static int pool_fill(struct plan *p, double *f, double *b);

static void *grab(size_t n, size_t size, int *fail)
{
	void *x = calloc(n ? n : 1, size);
	if (!x)
		*fail = 1;
	return x;
}

static int ensure_batch(struct plan *p, long B)
{
	if (B <= p->cap_b)
		return 0;
	long c = p->cap_b ? p->cap_b : 256;
	while (c < B)
		c *= 2;
	free(p->rq), free(p->rgpu), free(p->rdev), free(p->rmb), free(p->ord), free(p->tmp);
	int fail = 0;
	p->rq = grab((size_t)c, sizeof(int), &fail);
	p->rgpu = grab((size_t)c, sizeof(int), &fail);
	p->rdev = grab((size_t)c, sizeof(int), &fail);
	p->rmb = grab((size_t)c, sizeof(int), &fail);
	p->ord = grab((size_t)c, sizeof(int), &fail);
	p->tmp = grab((size_t)c, sizeof(int), &fail);
	free(p->lctx_view);
	p->lctx_view = grab((size_t)c, sizeof(double), &fail);
	p->cap_b = fail ? 0 : c;
	return fail ? -1 : 0;
}

static int ensure_memo(struct plan *p, long n)
{
	if (n < p->memo_cap)
		return 0;
	long c = p->memo_cap ? p->memo_cap : 64;
	while (c <= n)
		c *= 2;
	double (*m)[PH_N] = realloc(p->memo, (size_t)c * sizeof *m);
	if (!m)
		return -1;
	p->memo = m;
	unsigned char *ok = realloc(p->memo_ok, (size_t)c);
	if (!ok)
		return -1;
	memset(ok + p->memo_cap, 0, (size_t)(c - p->memo_cap));
	p->memo_ok = ok;
	p->memo_cap = c;
	return 0;
}

/* GPU-side seconds per step, by phase, for n requests per GPU in one
 * micro-batch (every GPU's copy of the micro-batch routes together). */
static const double *gpu_phases(struct plan *p, long n)
{
	if (p->memo_ok[n])
		return p->memo[n];
	double *ph = p->memo[n];
	memset(ph, 0, sizeof(double) * PH_N);
	if (n > 0) {
		struct kbatch kb = {.requests = (double)n * p->G, .gpus = p->G,
				    .context = 1, .mtp = p->d.mtp, .sp = p->d.sp};
		struct kerr err;
		if (step_build(p->d.m, &kb, &p->step, &err) != 0) {
			for (int k = 0; k < PH_N; k++)
				ph[k] = INFINITY;
		} else {
			for (int i = 0; i < p->step.n; i++) {
				struct op_cost *o = &p->step.op[i];
				if (o->side == SIDE_CACHE)
					continue; /* priced per request from the pool */
				double t;
				if (o->side == SIDE_LINK) {
					t = a2a_time(p, o->bytes);
				} else {
					roofline_op(o, p->d.gpu, p->d.up);
					t = o->time;
				}
				ph[phase_of[o->kind]] += o->count * t;
			}
		}
	}
	p->memo_ok[n] = 1;
	return ph;
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	free(p->ctx), free(p->rank);
	free(p->sm.pool), free(p->sm.acc), free(p->sm.suml);
	free(p->sg.pool), free(p->sg.acc), free(p->sg.suml);
	free(p->store), free(p->store_gpu), free(p->memo), free(p->memo_ok);
	free(p->rq), free(p->rgpu), free(p->rdev), free(p->rmb), free(p->ord), free(p->tmp);
	free(p->lctx_view);
	free(p->dev_load), free(p->dev_store), free(p->gpu_store);
	free(p->mbload);
	free(p->gcnt), free(p->dcnt), free(p->lcnt), free(p->ccnt), free(p->nbig);
	free(p->tbt), free(p->use_g), free(p->use_m);
	if (p->rng)
		gsl_rng_free(p->rng);
	free(p);
}

static int check_design(const struct design *d, struct kerr *err)
{
	for (int k = 0; k < OP_N; k++)
		if (phase_of[k] == PH_NONE)
			return kerr_set(err, 0, 0, "internal: operator %s has no pipeline phase",
					op_table[k].name);
	if (!d->m || !d->sp || !d->sys || !d->gpu || !d->up || !d->out || !d->wl)
		return kerr_set(err, 0, 0, "internal: incomplete design");
	if (system_has_memdev(d->sys) && (!d->mem || !d->mlink))
		return kerr_set(err, 0, 0, "internal: memory device or its link not loaded");
	if (d->sched < 0 || d->sched >= SCHED_N)
		return kerr_set(err, 0, 0, "unknown schedule %d", d->sched);
	if (!(d->mtp >= 0) || d->mtp > 64 || d->mtp != floor(d->mtp))
		return kerr_set(err, 0, 0, "mtp must be a whole number in [0, 64] (got %g)", d->mtp);
	if (d->mtp > 0 && d->m->mtp_layers == 0)
		return kerr_set(err, 0, 0, "model %s has no MTP module (mtp_layers = 0)",
				d->m->name);
	if (!(d->accept >= 0 && d->accept <= 1))
		return kerr_set(err, 0, 0, "mtp acceptance must be in [0, 1] (got %g)", d->accept);
	if (!(d->slo > 0))
		return kerr_set(err, 0, 0, "the SLO must be > 0 (got %g s)", d->slo);
	if (d->samples < 1 || d->samples > 1000000)
		return kerr_set(err, 0, 0, "samples must be in [1, 1000000] (got %d)", d->samples);
	if (d->gpu->kind != DEV_GPU)
		return kerr_set(err, 0, 0, "system.gpu '%s' is not a GPU (kind %s)",
				d->gpu->name, dev_kind_names[d->gpu->kind]);
	return system_validate(d->sys, NULL, err);
}

struct plan *plan_new(const struct design *d, struct kerr *err)
{
	if (check_design(d, err) != 0)
		return NULL;
	int fail = 0;
	struct plan *p = grab(1, sizeof *p, &fail);
	if (!p) {
		kerr_set(err, 0, 0, "out of memory");
		return NULL;
	}
	p->d = *d;
	p->G = (int)d->sys->gpus;
	p->has_mem = system_has_memdev(d->sys);
	p->D = p->has_mem ? (int)d->sys->memdevs : p->G;
	p->per = p->D >= p->G ? p->D / p->G : 1;
	p->share = p->D >= p->G ? 1 : p->G / p->D;
	p->LB = p->D >= p->G ? p->D : p->G;
	p->q = 1 + d->mtp;
	p->layers = d->m->layers;
	p->weights = model_weight_bytes(d->m, p->G);
	attn_layout(d->m, d->sp, d->m->layers, 0, p->q, &p->lay);
	attn_layout(d->m, d->sp, 1, 1, p->q, &p->laym);
	place_slots(p, &p->lay, p->sd);
	place_slots(p, &p->laym, p->sdm);
	int S = p->lay.n, Sm = p->laym.n, D = p->D, G = p->G;
	double *f = grab((size_t)POOL * (S + Sm), sizeof(double), &fail);
	double *b = grab((size_t)POOL * (S + Sm), sizeof(double), &fail);
	p->ctx = grab(POOL, sizeof(double), &fail);
	p->rank = grab(POOL, sizeof(int), &fail);
	p->store = grab(POOL, sizeof(double), &fail);
	p->store_gpu = grab(POOL, sizeof(double), &fail);
	p->dev_load = grab((size_t)D, sizeof(double), &fail);
	p->dev_store = grab((size_t)D, sizeof(double), &fail);
	p->gpu_store = grab((size_t)G, sizeof(double), &fail);
	p->mbload = grab((size_t)D * MB, sizeof(double), &fail);
	p->gcnt = grab((size_t)G * MB, sizeof(int), &fail);
	p->ccnt = grab((size_t)G * MB, sizeof(int), &fail);
	p->nbig = grab((size_t)G, sizeof(int), &fail);
	p->dcnt = grab((size_t)D * MB, sizeof(int), &fail);
	p->lcnt = grab((size_t)p->LB * MB, sizeof(int), &fail);
	p->tbt = grab((size_t)d->samples, sizeof(double), &fail);
	p->use_g = grab((size_t)d->samples, sizeof(double), &fail);
	p->use_m = grab((size_t)d->samples, sizeof(double), &fail);
	p->rng = gsl_rng_alloc(gsl_rng_taus2); /* cheap to seed: one stream per sample */
	if (fail || !p->rng || ensure_memo(p, 64) != 0 || ensure_batch(p, 256) != 0 ||
	    pool_fill(p, f, b) != 0) {
		free(f), free(b);
		plan_free(p);
		kerr_set(err, 0, 0, "out of memory");
		return NULL;
	}
	free(f), free(b);
	return p;
}

/* Packs slot s's FLOPs and bytes (arrays f, b over the pool, stride n) into
 * the values of the device that runs it; values zero for every request are
 * not stored. */
static void pack(struct plan *p, const double *f, const double *b, int n, int off,
		 const struct slotdev *sd, int s, int *fi, int *bi)
{
	int gpu = sd[s].on_gpu && p->has_mem;
	int *k = gpu ? &p->sg.k : &p->sm.k;
	int fz = 1, bz = 1;
	for (int i = 0; i < POOL; i++) {
		fz &= f[(size_t)i * n + off + s] == 0;
		bz &= b[(size_t)i * n + off + s] == 0;
	}
	*fi = fz ? -1 : (*k)++;
	*bi = bz ? -1 : (*k)++;
}

/* Splits a side's values into affine-in-context ones and summed ones, and
 * keeps the pool's summed values (v: POOL x side->k). */
static int side_fill(struct plan *p, struct side *sd, const double *v, int units)
{
	int lo = 0, hi = 0;
	for (int i = 1; i < POOL; i++) {
		lo = p->ctx[i] < p->ctx[lo] ? i : lo;
		hi = p->ctx[i] > p->ctx[hi] ? i : hi;
	}
	double dL = p->ctx[hi] - p->ctx[lo];
	sd->nres = 0;
	for (int k = 0; k < sd->k; k++) {
		double vl = v[(size_t)lo * sd->k + k], vh = v[(size_t)hi * sd->k + k];
		double slope = dL > 0 ? (vh - vl) / dL : 0, icpt = vl - slope * p->ctx[lo];
		double big = 0;
		for (int i = 0; i < POOL; i++)
			big = fmax(big, fabs(v[(size_t)i * sd->k + k]));
		int affine = 1;
		for (int i = 0; i < POOL && affine; i++)
			affine = fabs(icpt + slope * p->ctx[i] - v[(size_t)i * sd->k + k]) <=
				 1e-12 * big;
		sd->a[k] = icpt, sd->b[k] = slope;
		sd->pos[k] = affine ? -1 : sd->nres++;
	}
	int fail = 0;
	sd->pool = grab((size_t)POOL * sd->nres, sizeof(double), &fail);
	sd->acc = grab((size_t)MB * units * sd->nres, sizeof(double), &fail);
	sd->suml = grab((size_t)MB * units, sizeof(double), &fail);
	if (fail)
		return -1;
	for (int i = 0; i < POOL; i++)
		for (int k = 0; k < sd->k; k++)
			if (sd->pos[k] >= 0)
				sd->pool[(size_t)i * sd->nres + sd->pos[k]] = v[(size_t)i * sd->k + k];
	return 0;
}

/* A bucket's packed values from its count, summed context and sums. */
static void side_values(const struct side *sd, int unit_idx, int cnt, double *v)
{
	const double *acc = sd->acc + (size_t)unit_idx * sd->nres;
	double L = sd->suml[unit_idx];
	for (int k = 0; k < sd->k; k++)
		v[k] = sd->pos[k] < 0 ? sd->a[k] * cnt + sd->b[k] * L : acc[sd->pos[k]];
}

static int pool_fill(struct plan *p, double *f, double *b)
{
	const struct design *d = &p->d;
	int S = p->lay.n, Sm = p->laym.n, n = S + Sm;
	gsl_rng_set(p->rng, d->seed);
	long cut = 0;
	int scan_on_gpu = 0; /* index keys go with the stage that reads them */
	for (int s = 0; s < S; s++)
		if (p->lay.s[s].kind == OP_INDEX_SCAN && p->sd[s].on_gpu)
			scan_on_gpu = p->has_mem;
	for (int i = 0; i < POOL; i++) {
		double L = workload_draw_context(d->wl, p->rng);
		if (L > d->m->max_context)
			L = d->m->max_context, cut++;
		p->ctx[i] = L;
		attn_request(d->m, d->sp, &p->lay, 0, L, p->q, f + (size_t)i * n,
			     b + (size_t)i * n);
		attn_request(d->m, d->sp, &p->laym, 1, L, p->q, f + (size_t)i * n + S,
			     b + (size_t)i * n + S);
		double kv, idx;
		attn_storage(d->m, d->sp, L, &kv, &idx);
		p->store[i] = kv + (scan_on_gpu ? 0 : idx);
		p->store_gpu[i] = scan_on_gpu ? idx : 0;
		p->rank[i] = i;
	}
	p->clipped = (double)cut / POOL;
	p->sm.k = p->sg.k = 0;
	for (int s = 0; s < S; s++)
		pack(p, f, b, n, 0, p->sd, s, &p->map[s].f, &p->map[s].b);
	for (int s = 0; s < Sm; s++)
		pack(p, f, b, n, S, p->sdm, s, &p->mapm[s].f, &p->mapm[s].b);
	int fail = 0;
	double *vm = grab((size_t)POOL * p->sm.k, sizeof(double), &fail);
	double *vg = grab((size_t)POOL * p->sg.k, sizeof(double), &fail);
	if (fail) {
		free(vm), free(vg);
		return -1;
	}
	for (int i = 0; i < POOL; i++)
		for (int s = 0; s < n; s++) {
			int mtp = s >= S, k = mtp ? s - S : s;
			const struct slotdev *sd = mtp ? &p->sdm[k] : &p->sd[k];
			int fi = mtp ? p->mapm[k].f : p->map[k].f;
			int bi = mtp ? p->mapm[k].b : p->map[k].b;
			double *v = sd->on_gpu && p->has_mem ? vg + (size_t)i * p->sg.k
							     : vm + (size_t)i * p->sm.k;
			if (fi >= 0)
				v[fi] = f[(size_t)i * n + s];
			if (bi >= 0)
				v[bi] = b[(size_t)i * n + s];
		}
	int rc = side_fill(p, &p->sm, vm, p->D) | side_fill(p, &p->sg, vg, p->G);
	free(vm), free(vg);
	if (rc)
		return -1;
	/* rank of each pool entry by context, for CMR's longest-first order */
	size_t *order = malloc(sizeof(size_t) * POOL);
	if (!order)
		return -1;
	gsl_sort_index(order, p->ctx, 1, POOL);
	for (int i = 0; i < POOL; i++)
		p->rank[order[i]] = i;
	free(order);
	return 0;
}

/* Time of the slots of lay that run on the GPU (want_gpu) or the memory
 * device, from a bucket's packed sums v. */
static double bucket_time(const struct plan *p, const struct attn_layout *lay,
			  const struct slotdev *sd, const struct vmap *map,
			  const double *v, int want_gpu)
{
	double t = 0;
	for (int s = 0; s < lay->n; s++)
		if ((sd[s].on_gpu && p->has_mem) == want_gpu)
			t += slot_time(&sd[s], &lay->s[s], map[s].f >= 0 ? v[map[s].f] : 0,
				       map[s].b >= 0 ? v[map[s].b] : 0);
	return t;
}

/* Requests to micro-batches, per GPU: arrival order in equal chunks; or
 * CMR: longest context first, to the micro-batch whose load on the
 * request's device is lowest, at most ceil(n/m) per micro-batch. */
static void assign_arrival(const struct plan *p, long B, int m, int *mb)
{
	int G = p->G;
	for (int g = 0; g < G && g < B; g++) {
		long n = (B - g + G - 1) / G, acc = 0;
		int i = 0;
		for (long j = g; j < B; j += G) { /* i = floor(t * m / n), incrementally */
			mb[j] = i;
			for (acc += m; acc >= n; acc -= n)
				i++;
		}
	}
}

/* The largest context sum of any (micro-batch, device): what sets the pace
 * of the attention stage. */
static double peak_load(struct plan *p, long B, int m, const int *mb)
{
	int D = p->D;
	memset(p->mbload, 0, sizeof(double) * (size_t)m * D);
	double peak = 0;
	for (long j = 0; j < B; j++) {
		double *l = &p->mbload[mb[j] * D + p->rdev[j]];
		*l += p->ctx[p->rq[j]];
		peak = *l > peak ? *l : peak;
	}
	return peak;
}

static void assign_mb(struct plan *p, long B, int m)
{
	int G = p->G, D = p->D;
	if (!sched_uses_cmr(p->d.sched)) {
		assign_arrival(p, B, m, p->rmb);
		return;
	}
	/* longest first: radix sort on the pool rank, two passes */
	_Static_assert(2 * RADIX_BITS == POOL_BITS, "two radix passes cover the rank");
	const int R = 1 << RADIX_BITS;
	int *src = p->ord, *dst = p->tmp;
	for (long j = 0; j < B; j++)
		src[j] = (int)j;
	for (int pass = 0; pass < 2; pass++) {
		long cnt[(1 << RADIX_BITS) + 1] = {0};
		int sh = RADIX_BITS * pass;
		for (long j = 0; j < B; j++)
			cnt[((POOL - 1 - p->rank[p->rq[src[j]]]) >> sh & (R - 1)) + 1]++;
		for (int k = 0; k < R; k++)
			cnt[k + 1] += cnt[k];
		for (long j = 0; j < B; j++)
			dst[cnt[(POOL - 1 - p->rank[p->rq[src[j]]]) >> sh & (R - 1)]++] = src[j];
		int *x = src;
		src = dst, dst = x;
	}
	memset(p->mbload, 0, sizeof(double) * (size_t)m * D);
	memset(p->ccnt, 0, sizeof(int) * (size_t)m * G);
	memset(p->nbig, 0, sizeof(int) * (size_t)G);
	for (long t = 0; t < B; t++) {
		long j = src[t];
		int g = p->rgpu[j], dev = p->rdev[j], best = -1;
		/* counts stay within one of each other: n % m micro-batches take
		 * ceil(n / m), the others floor(n / m) */
		long n = B / G + (g < B % G), lo = n / m, extra = n % m;
		int *big = &p->nbig[g];
		for (int i = 0; i < m; i++) {
			int c = p->ccnt[i * G + g];
			if (c > lo || (c == lo && (extra == 0 || *big >= extra)))
				continue;
			double li = p->mbload[i * D + dev];
			if (best < 0 || li < p->mbload[best * D + dev] ||
			    (li == p->mbload[best * D + dev] && c < p->ccnt[best * G + g]))
				best = i;
		}
		if (p->ccnt[best * G + g] == lo)
			(*big)++;
		p->rmb[j] = best;
		p->ccnt[best * G + g]++;
		p->mbload[best * D + dev] += p->ctx[p->rq[j]];
	}
	/* Greedy longest-first with equal counts is a heuristic; when the
	 * arrival order happens to balance better, keep it, so CMR is never
	 * worse balanced than naive. */
	double cmr = peak_load(p, B, m, p->rmb);
	assign_arrival(p, B, m, p->tmp);
	if (peak_load(p, B, m, p->tmp) < cmr)
		memcpy(p->rmb, p->tmp, sizeof(int) * (size_t)B);
}

/* One sampled batch: place, assign, price, schedule.  Returns the step time. */
static double one_sample(struct plan *p, long B, int m, int sample,
			 struct pipe_out *po, double *use_g, double *use_m)
{
	/* Sample s draws from its own stream, so the batch of B + 1 holds the
	 * batch of B plus one request (common random numbers across B, m). */
	gsl_rng_set(p->rng, p->d.seed * 1000003UL + (unsigned long)sample + 1);
	const struct design *d = &p->d;
	int G = p->G, D = p->D;
	for (long j = 0; j < B; j++)
		p->rq[j] = (int)gsl_rng_uniform_int(p->rng, POOL);
	memset(p->dev_load, 0, sizeof(double) * (size_t)D);
	memset(p->dev_store, 0, sizeof(double) * (size_t)D);
	memset(p->gpu_store, 0, sizeof(double) * (size_t)G);
	/* placement: GPU by arrival; the least loaded of the GPU's devices */
	for (long j = 0, g = 0; j < B; j++, g = g + 1 == G ? 0 : g + 1) {
		int dev;
		if (p->D >= p->G) {
			dev = g * p->per;
			for (int k = 1; k < p->per; k++)
				if (p->dev_load[g * p->per + k] < p->dev_load[dev])
					dev = g * p->per + k;
		} else {
			dev = g / p->share;
		}
		double L = p->ctx[p->rq[j]];
		p->rgpu[j] = (int)g, p->rdev[j] = dev;
		p->dev_load[dev] += L;
		p->dev_store[dev] += p->store[p->rq[j]];
		p->gpu_store[g] += p->store_gpu[p->rq[j]];
	}
	assign_mb(p, B, m);
	struct side *sm = &p->sm, *sg = &p->sg;
	memset(sm->acc, 0, sizeof(double) * (size_t)m * D * sm->nres);
	memset(sm->suml, 0, sizeof(double) * (size_t)m * D);
	memset(sg->acc, 0, sizeof(double) * (size_t)m * G * sg->nres);
	memset(sg->suml, 0, sizeof(double) * (size_t)m * G);
	memset(p->gcnt, 0, sizeof(int) * (size_t)m * G);
	memset(p->dcnt, 0, sizeof(int) * (size_t)m * D);
	memset(p->lcnt, 0, sizeof(int) * (size_t)m * p->LB);
	for (long j = 0; j < B; j++) {
		int g = p->rgpu[j], dev = p->rdev[j], i = p->rmb[j], r = p->rq[j];
		int um = i * D + dev, ug = i * G + g;
		double L = p->ctx[r];
		sm->suml[um] += L;
		const double *v = sm->pool + (size_t)r * sm->nres;
		double *acc = sm->acc + (size_t)um * sm->nres;
		for (int k = 0; k < sm->nres; k++)
			acc[k] += v[k];
		if (sg->k) {
			sg->suml[ug] += L;
			v = sg->pool + (size_t)r * sg->nres;
			acc = sg->acc + (size_t)ug * sg->nres;
			for (int k = 0; k < sg->nres; k++)
				acc[k] += v[k];
		}
		p->gcnt[ug]++;
		p->dcnt[um]++;
		p->lcnt[i * p->LB + (p->D >= p->G ? dev : g)]++;
	}
	/* price each micro-batch at the pace of its slowest device */
	struct pipe_in in = {.kind = d->sched, .m = m, .layers = (int)p->layers,
			     .attn_on_gpu = !p->has_mem};
	double L = p->layers;
	const struct klink *ml = d->mlink;
	in.m = 0; /* an empty micro-batch (more of them than requests) does not run */
	for (int i = 0; i < m; i++) {
		int n = 0, c = 0;
		for (int g = 0; g < G; g++)
			n = p->gcnt[i * G + g] > n ? p->gcnt[i * G + g] : n;
		if (n == 0)
			continue;
		for (int k = 0; k < p->LB; k++)
			c = p->lcnt[i * p->LB + k] > c ? p->lcnt[i * p->LB + k] : c;
		double attn = 0, attn_m = 0, fb = 0, fbm = 0;
		for (int dev = 0; dev < D; dev++) {
			if (!p->dcnt[i * D + dev])
				continue;
			double v[MAXV];
			side_values(sm, i * D + dev, p->dcnt[i * D + dev], v);
			double t = bucket_time(p, &p->lay, p->sd, p->map, v, 0);
			double tm = bucket_time(p, &p->laym, p->sdm, p->mapm, v, 0);
			attn = t > attn ? t : attn;
			attn_m = tm > attn_m ? tm : attn_m;
		}
		if (p->has_mem)
			for (int g = 0; g < G; g++) {
				if (!sg->k || !p->gcnt[i * G + g])
					continue;
				double v[MAXV];
				side_values(sg, i * G + g, p->gcnt[i * G + g], v);
				double t = bucket_time(p, &p->lay, p->sd, p->map, v, 1);
				double tm = bucket_time(p, &p->laym, p->sdm, p->mapm, v, 1);
				fb = t > fb ? t : fb;
				fbm = tm > fbm ? tm : fbm;
			}
		const double *ph = gpu_phases(p, n);
		double *du = in.dur[in.m++];
		du[T_PRE] = (ph[PH_PRE] + fb) / L;
		du[T_ATTN] = attn / L;
		du[T_POST] = ph[PH_POST] / L;
		du[T_DISP] = ph[PH_DISP] / L;
		du[T_EXP] = ph[PH_EXP] / L;
		du[T_COMB] = ph[PH_COMB] / L;
		du[T_TAIL_G] = ph[PH_TAIL] + fbm * d->mtp;
		du[T_TAIL_M] = attn_m * d->mtp;
		if (p->has_mem && c > 0) {
			double bw = ml->bw * ml->efficiency;
			du[T_OUT] = c * p->lay.out_bytes / L / bw + ml->latency;
			du[T_BACK] = c * p->lay.back_bytes / L / bw + ml->latency;
			du[T_TAIL_L] = d->mtp > 0 ? d->mtp * (c * (p->laym.out_bytes +
						     p->laym.back_bytes) / bw + 2 * ml->latency)
						  : 0;
		} else {
			du[T_OUT] = du[T_BACK] = du[T_TAIL_L] = 0;
		}
	}
	/* capacity: the fullest GPU and memory device of this batch */
	double ug = 0, um = 0;
	for (int g = 0; g < G; g++) {
		double u = p->weights + p->gpu_store[g];
		if (!p->has_mem)
			u += p->dev_store[g];
		ug = u > ug ? u : ug;
	}
	if (p->has_mem)
		for (int dev = 0; dev < D; dev++)
			um = p->dev_store[dev] > um ? p->dev_store[dev] : um;
	*use_g = ug, *use_m = um;
	for (int i = 0; i < in.m; i++)
		for (int t = 0; t < T_ALL; t++)
			if (!isfinite(in.dur[i][t])) {
				memset(po, 0, sizeof *po);
				return INFINITY;
			}
	if (d->exact ? pipe_list(&in, po, NULL, 0) : pipe_fast(&in, po))
		return NAN;
	return po->makespan;
}

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

int plan_inspect(struct plan *p, double batch, int m, int sample,
		 struct sample_view *v, struct kerr *err)
{
	if (!(batch >= 1) || batch != floor(batch) || batch > PLAN_MAX_BATCH || m < 1 ||
	    m > MB || sample < 0 || sample >= p->d.samples)
		return kerr_set(err, 0, 0, "plan_inspect: batch, m or sample out of range");
	long B = (long)batch;
	if (ensure_batch(p, 2 * B) != 0 || ensure_memo(p, B / p->G + 2) != 0)
		return kerr_set(err, 0, 0, "out of memory for a batch of %ld", B);
	struct pipe_out po;
	double ug, um;
	v->tbt = one_sample(p, B, m, sample, &po, &ug, &um);
	v->n = B;
	v->ctx = p->lctx_view;
	for (long j = 0; j < B; j++)
		p->lctx_view[j] = p->ctx[p->rq[j]];
	v->gpu = p->rgpu, v->dev = p->rdev, v->mb = p->rmb;
	v->use_gpu = ug, v->use_mem = um;
	return 0;
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
	long B = (long)batch;
	if (ensure_batch(p, 2 * B) != 0 || ensure_memo(p, B / p->G + 2) != 0)
		return kerr_set(err, 0, 0, "out of memory for a batch of %ld", B);
	memset(r, 0, sizeof *r);
	r->batch = batch, r->mb = m;
	int ns = d->samples;
	/* p99 = s[k] + f (s[k+1] - s[k]), k = floor(0.99 (n - 1)): once n - k
	 * samples exceed a limit, so does the P99. */
	int over = 0, enough = ns - (int)floor(0.99 * (ns - 1));
	if (early && p->weights > d->gpu->mem_capacity + SLACK_BYTES)
		return 1;
	double busy[RES_N] = {0}, bubble[RES_N] = {0}, ctx_sum = 0;
	for (int s = 0; s < ns; s++) {
		struct pipe_out po;
		p->tbt[s] = one_sample(p, B, m, s, &po, &p->use_g[s], &p->use_m[s]);
		if (early && (!(p->tbt[s] <= d->slo) ||
			      p->use_g[s] > d->gpu->mem_capacity + SLACK_BYTES ||
			      (p->has_mem && p->use_m[s] > d->mem->mem_capacity + SLACK_BYTES)) &&
		    ++over >= enough) {
			r->feasible = 0;
			snprintf(r->reason, sizeof r->reason, "infeasible (early exit)");
			return 1;
		}
		for (int x = 0; x < RES_N; x++)
			busy[x] += po.busy[x], bubble[x] += po.bubble[x];
		for (long j = 0; j < B; j++)
			ctx_sum += p->ctx[p->rq[j]];
	}
	double tokens = batch * (1 + d->accept * d->mtp);
	r->tbt_mean = gsl_stats_mean(p->tbt, 1, (size_t)ns);
	gsl_sort(p->tbt, 1, (size_t)ns);
	r->tbt_p99 = gsl_stats_quantile_from_sorted_data(p->tbt, 1, (size_t)ns, 0.99);
	gsl_sort(p->use_g, 1, (size_t)ns);
	gsl_sort(p->use_m, 1, (size_t)ns);
	double ug = gsl_stats_quantile_from_sorted_data(p->use_g, 1, (size_t)ns, 0.99);
	double um = gsl_stats_quantile_from_sorted_data(p->use_m, 1, (size_t)ns, 0.99);
	r->gpu_use = ug / d->gpu->mem_capacity;
	r->mem_use = p->has_mem ? um / d->mem->mem_capacity : 0;
	for (int x = 0; x < RES_N; x++)
		r->busy[x] = busy[x] / ns, r->bubble[x] = bubble[x] / ns;
	r->ctx_mean = ctx_sum / ((double)ns * B);
	r->clipped = p->clipped;
	r->tdp = p->G * d->gpu->tdp + (p->has_mem ? p->D * d->mem->tdp : 0);
	r->throughput = tokens / r->tbt_mean;
	r->tok_per_w = r->throughput / r->tdp;
	r->j_per_tok = r->tdp * r->tbt_mean / tokens;
	char a[32], b[32];
	r->feasible = 0;
	if (p->weights > d->gpu->mem_capacity + SLACK_BYTES) {
		fmt_bytes(p->weights, a, sizeof a), fmt_bytes(d->gpu->mem_capacity, b, sizeof b);
		snprintf(r->reason, sizeof r->reason, "weights %s per GPU exceed %s", a, b);
	} else if (ug > d->gpu->mem_capacity + SLACK_BYTES) {
		fmt_bytes(ug, a, sizeof a), fmt_bytes(d->gpu->mem_capacity, b, sizeof b);
		snprintf(r->reason, sizeof r->reason, "GPU memory: %s needed (P99) of %s", a, b);
	} else if (p->has_mem && um > d->mem->mem_capacity + SLACK_BYTES) {
		fmt_bytes(um, a, sizeof a), fmt_bytes(d->mem->mem_capacity, b, sizeof b);
		snprintf(r->reason, sizeof r->reason, "memdev memory: %s needed (P99) of %s", a, b);
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
	return eval_core(p, batch, m, r, 0, err) < 0 ? -1 : 0;
}

/* Whether batch fits and meets the SLO; -1 on error. */
static int feasible_at(struct plan *p, double batch, int m, struct kerr *err)
{
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
