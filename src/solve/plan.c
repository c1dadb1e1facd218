/* plan.c: building a design point's plan: checks, the roofline of each
 * cache-side slot on the device that runs it, the pool of sampled
 * requests and their packed costs, and the memoised GPU phase times. */
#include "solve/plan.h"

#include <gsl/gsl_sort.h>
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/roofline.h"

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

double plan_slot_time(const struct plan_slot_rate *sd, const struct attn_slot *s, double f, double b)
{
	if (f <= 0 && b <= 0)
		return 0;
	double t = roofline_join(sd->dev, f * sd->ic, b * sd->im) + sd->ovh;
	return s->layers * (t > sd->floor ? t : sd->floor);
}

static void slot_rates(const struct kdevice *dv, const struct attn_slot *s,
		       struct plan_slot_rate *sd)
{
	roofline_op_rates(dv, s->kind, s->cls, s->dt, &sd->ic, &sd->im); /* as karat ops prices it */
	sd->ovh = roofline_fixed(dv, s->kind);
	sd->floor = roofline_floor(dv, s->kind);
	sd->dev = dv;
	sd->ef = device_energy_flop(dv, s->dt);
	sd->eb = 8 * dv->e_bit;
}

/* Slot s of a layout (each layer class has ATTN_SLOTS_PER_CLASS, in
 * attn_layout's order: KV write, index write, scan, top-k, gather,
 * attention). */
enum { SL_KV_WRITE, SL_INDEX_WRITE, SL_SCAN, SL_TOPK, SL_GATHER, SL_ATTENTION };

static void place_slots(struct plan *p, const struct attn_layout *lay,
			struct plan_slot_rate *sd)
{
	const struct design *d = &p->d;
	int gather_only = p->has_mem && d->sys->memdev_role == ROLE_GATHER;
	for (int s = 0; s < lay->n; s++) {
		struct plan_slot_rate own;
		int k = s % ATTN_SLOTS_PER_CLASS;
		slot_rates(p->has_mem ? d->mem : d->gpu, &lay->s[s], &own);
		int mine = isfinite(own.ic) && (!gather_only || k == SL_KV_WRITE || k == SL_GATHER);
		if (mine || !p->has_mem) {
			sd[s] = own;
			sd[s].on_gpu = !p->has_mem;
		} else { /* a fixed-function device, or its role: the GPU runs it */
			slot_rates(d->gpu, &lay->s[s], &sd[s]);
			sd[s].on_gpu = 1;
		}
		/* attention over rows the device gathered: after the link back */
		sd[s].after = sd[s].on_gpu && p->has_mem && k == SL_ATTENTION && s > 0 &&
			      !sd[s - 1].on_gpu;
	}
}

/* Whether the device that runs lay's attention is a GPU whose sparse
 * kernel attends to all top-k slots (kernel.sparse_fixed_topk). */
static int pads_topk(const struct attn_layout *lay, const struct plan_slot_rate *sd)
{
	for (int s = 0; s < lay->n; s++)
		if (lay->s[s].kind == OP_ATTENTION)
			return sd[s].dev->kind == DEV_GPU && sd[s].dev->fixed_topk > 0;
	return 0;
}

/* All-to-all time of `bytes` leaving one GPU: scale-up inside the node,
 * scale-out across nodes. */
static double a2a_time(const struct plan *p, double bytes)
{
	if (bytes <= 0)
		return 0;
	const struct design *d = &p->d;
	double G = p->gpus, gpn = d->sys->gpus_per_node;
	if (G <= gpn)
		return roofline_a2a(d->up, bytes);
	/* the shares for GPUs inside and outside the node move at once */
	double t_up = roofline_a2a(d->up, bytes * (gpn - 1) / (G - 1));
	double t_out = roofline_a2a(d->out, bytes * (G - gpn) / (G - 1));
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

/* grab without clearing, for arrays written in full before they are read
 * (the pool's: clearing them was a fifth of a plan's cost) */
static void *grab_raw(size_t n, size_t size, int *fail)
{
	void *x = malloc((n ? n : 1) * size);
	if (!x)
		*fail = 1;
	return x;
}

int plan_ensure_batch(struct plan *p, long B)
{
	if (B <= p->cap_batch)
		return 0;
	long c = p->cap_batch ? p->cap_batch : 256;
	while (c < B)
		c *= 2;
	free(p->req_pool), free(p->req_key), free(p->req_gpu), free(p->req_dev), free(p->req_mb);
	free(p->req_order), free(p->scratch), free(p->by_gpu), free(p->nshard), free(p->shard_dev);
	int fail = 0;
	p->by_gpu = grab((size_t)c, sizeof(int), &fail);
	p->nshard = grab((size_t)c, sizeof(int), &fail);
	p->shard_dev = grab((size_t)c * PLAN_MAX_SHARDS, sizeof(int), &fail);
	p->req_pool = grab((size_t)c, sizeof(int), &fail);
	p->req_key = grab((size_t)c, sizeof(int), &fail);
	p->req_gpu = grab((size_t)c, sizeof(int), &fail);
	p->req_dev = grab((size_t)c, sizeof(int), &fail);
	p->req_mb = grab((size_t)c, sizeof(int), &fail);
	p->req_order = grab((size_t)c, sizeof(int), &fail);
	p->scratch = grab((size_t)c, sizeof(int), &fail);
	free(p->lctx_view);
	p->lctx_view = grab((size_t)c, sizeof(double), &fail);
	p->cap_batch = fail ? 0 : c;
	return fail ? -1 : 0;
}

int plan_ensure_memo(struct plan *p, long n)
{
	if (n < p->memo_cap)
		return 0;
	long c = p->memo_cap ? p->memo_cap : 64;
	while (c <= n)
		c *= 2;
	double *m = realloc(p->memo, (size_t)c * (size_t)(p->nkinds + 1) * PLAN_PH_STRIDE * sizeof *m);
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
const double *plan_gpu_phases(struct plan *p, long n)
{
	size_t per = (size_t)(p->nkinds + 1) * PLAN_PH_STRIDE;
	const struct kdevice *gpu = p->d.gpu;
	double *ph = p->memo + (size_t)n * per;
	if (p->memo_ok[n])
		return ph;
	memset(ph, 0, sizeof(double) * per);
	for (int k = 0; n > 0 && k <= p->nkinds; k++) {
		struct kbatch kb = {.requests = (double)n * p->gpus, .gpus = p->gpus,
				    .context = 1, .mtp = p->d.mtp, .sp = p->d.sp,
				    .gpu_only = 1, .part = k < p->nkinds ? STEP_LAYER : STEP_TAIL};
		if (k < p->nkinds)
			kb.kind = p->kinds[k];
		if (step_build(p->d.m, &kb, &p->step, &p->fail) != 0)
			return NULL; /* not memoised: the caller reports p->fail */
		for (int i = 0; i < p->step.n; i++) {
			struct op_cost *o = &p->step.op[i];
			assert(o->side != SIDE_CACHE); /* priced per request from the pool */
			double t, *row = ph + k * PLAN_PH_STRIDE;
			if (o->side == SIDE_LINK) {
				t = a2a_time(p, o->bytes);
				row[PLAN_PH_A2A] += o->count * o->bytes;
			} else {
				roofline_op(o, gpu, p->d.up);
				t = o->time;
				row[PLAN_PH_ENERGY] += o->count * (o->flops * device_energy_flop(gpu, o->dt) +
								   o->bytes * 8 * gpu->e_bit);
			}
			row[phase_of[o->kind]] += o->count * t;
		}
	}
	p->memo_ok[n] = 1;
	return ph;
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	free(p->ctx), free(p->rank), free(p->pool_key), free(p->req_key), free(p->by_key);
	free(p->mem_side.pool), free(p->mem_side.acc), free(p->mem_side.suml);
	free(p->gpu_side.pool), free(p->gpu_side.acc), free(p->gpu_side.suml);
	free(p->store), free(p->store_gpu), free(p->memo), free(p->memo_ok);
	free(p->req_pool), free(p->req_gpu), free(p->req_dev), free(p->req_mb), free(p->req_order), free(p->scratch);
	free(p->by_gpu), free(p->gpu_start), free(p->tour), free(p->tour_key);
	free(p->dev_rank), free(p->dev_gpu);
	free(p->nshard), free(p->shard_dev);
	free(p->lctx_view);
	free(p->dev_load), free(p->dev_store), free(p->gpu_store);
	free(p->rr_load), free(p->rr_store), free(p->rr_gstore);
	free(p->mb_load);
	free(p->gpu_count), free(p->dev_count), free(p->link_count), free(p->mb_count);
	free(p->n_big), free(p->gpu_share);
	free(p->tbt), free(p->use_gpu), free(p->use_mem), free(p->per);
	free(p->score), free(p->order), free(p->p99_top);
	free(p->fl.st);
	if (p->rng)
		gsl_rng_free(p->rng);
	free(p);
}

/* What the device links carry out per request (plan.h cls_out).  The
 * selected indices depend on the context only below the top-k size; they
 * are counted at the pool's mean context (approximation). */
static void link_bytes(struct plan *p)
{
	const struct design *d = &p->d;
	double mean = 0;
	for (int i = 0; i < PLAN_POOL; i++)
		mean += p->ctx[i] / PLAN_POOL;
	for (int c = 0; c < LC_N; c++) {
		p->cls_out[c] = p->layout.cls_out[c];
		p->cls_back[c] = p->layout.cls_back[c];
		if (p->keys_on_gpu && p->layout.cls_layers[c] > 0)
			p->cls_out[c] += attn_ids_bytes(d->m, d->sp, &p->layout, (enum lclass)c, mean,
							p->q) - p->layout.cls_index[c];
	}
	/* the GPU attends over rows the device gathered: the query stays, the
	 * rows come back instead of the output (their mean over the pool, as
	 * the indices above) */
	p->mtp_link = p->layout_mtp.out_bytes + p->layout_mtp.back_bytes;
	for (int s = 0; s < p->layout.n; s++)
		if (p->slot_dev[s].after) {
			int c = p->layout.s[s].lc;
			p->cls_out[c] -= p->layout.cls_query[c];
			p->cls_back[c] = p->post_b[s] * p->layout.s[s].layers;
		}
	for (int s = 0; s < p->layout_mtp.n; s++)
		if (p->slot_dev_mtp[s].after) {
			int c = p->layout_mtp.s[s].lc;
			p->mtp_link += p->post_bm[s] * p->layout_mtp.s[s].layers -
				       p->layout_mtp.cls_query[c] - p->layout_mtp.cls_back[c];
		}
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
	if (!(device_cache_capacity(d->gpu) > 0) ||
	    (system_has_memdev(d->sys) && !(device_cache_capacity(d->mem) > 0)))
		return kerr_set(err, 0, 0, "a memory reserve leaves no memory for caches");
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
	p->gpus = (int)d->sys->gpus;
	p->has_mem = system_has_memdev(d->sys);
	p->in_hbm = p->has_mem && d->sys->memdev_in_hbm == IN_HBM_YES;
	p->devs = p->has_mem ? (int)d->sys->memdevs : p->gpus;
	p->devs_per_gpu = p->devs >= p->gpus ? p->devs / p->gpus : 1;
	p->gpus_per_dev = p->devs >= p->gpus ? 1 : p->gpus / p->devs;
	p->link_units = p->devs >= p->gpus ? p->devs : p->gpus;
	p->q = 1 + d->mtp;
	p->layers = d->m->layers;
	p->nkinds = step_layer_kinds(d->m, d->sp, p->layer_kind, p->kinds, p->kind_layers);
	p->weights = model_weight_bytes(d->m, p->gpus);
	attn_layout(d->m, d->sp, d->m->layers, 0, p->q, &p->layout);
	attn_layout(d->m, d->sp, 1, 1, p->q, &p->layout_mtp);
	place_slots(p, &p->layout, p->slot_dev);
	place_slots(p, &p->layout_mtp, p->slot_dev_mtp);
	p->layout.pad_topk = pads_topk(&p->layout, p->slot_dev);
	p->layout_mtp.pad_topk = pads_topk(&p->layout_mtp, p->slot_dev_mtp);
	int S = p->layout.n, Sm = p->layout_mtp.n, D = p->devs, G = p->gpus;
	double *f = grab_raw((size_t)PLAN_POOL * (S + Sm), sizeof(double), &fail);
	double *b = grab_raw((size_t)PLAN_POOL * (S + Sm), sizeof(double), &fail);
	p->ctx = grab(PLAN_POOL, sizeof(double), &fail);
	p->rank = grab(PLAN_POOL, sizeof(int), &fail);
	p->pool_key = grab(PLAN_POOL, sizeof(int), &fail);
	p->by_key = grab_raw(PLAN_BK_N * (size_t)PLAN_POOL, sizeof(double), &fail);
	p->store = grab(PLAN_POOL, sizeof(double), &fail);
	p->store_gpu = grab(PLAN_POOL, sizeof(double), &fail);
	p->dev_load = grab((size_t)D, sizeof(double), &fail);
	p->dev_store = grab((size_t)D, sizeof(double), &fail);
	p->gpu_store = grab((size_t)G, sizeof(double), &fail);
	p->rr_load = grab((size_t)D, sizeof(double), &fail);
	p->rr_store = grab((size_t)D, sizeof(double), &fail);
	p->rr_gstore = grab((size_t)G, sizeof(double), &fail);
	p->mb_load = grab((size_t)D * PIPE_MAX_MB, sizeof(double), &fail);
	p->gpu_count = grab((size_t)G * PIPE_MAX_MB, sizeof(int), &fail);
	p->mb_count = grab((size_t)G * PIPE_MAX_MB, sizeof(int), &fail);
	p->n_big = grab((size_t)G, sizeof(int), &fail);
	p->gpu_share = grab(2 * (size_t)G, sizeof(int), &fail);
	p->gpu_start = grab((size_t)G + 1, sizeof(int), &fail);
	p->dev_rank = grab((size_t)D, sizeof(int), &fail);
	p->dev_gpu = grab((size_t)D, sizeof(int), &fail);
	for (int dev = 0; !fail && dev < D; dev++) {
		p->dev_rank[dev] = p->has_mem && D >= G ? (dev % p->devs_per_gpu) * G + dev / p->devs_per_gpu : dev;
		p->dev_gpu[dev] = !p->has_mem ? dev : D >= G ? dev / p->devs_per_gpu : dev * p->gpus_per_dev;
	}
	p->mem_fail = INFINITY;
	p->work_stop = INFINITY;
	for (p->tour_p = 1; p->tour_p < D; p->tour_p *= 2)
		;
	p->tour = grab(2 * (size_t)p->tour_p, sizeof(int), &fail);
	p->tour_key = grab(2 * (size_t)p->tour_p, sizeof(struct plan_tkey), &fail);
	p->cap_gpu = device_cache_capacity(d->gpu);
	p->free_gpu = p->cap_gpu - p->weights;
	/* a device in the GPU's own HBM holds what the weights leave */
	p->cap_mem = p->in_hbm ? fmax(p->free_gpu, 0) : p->has_mem ? device_cache_capacity(d->mem) : 0;
	{ /* a remote slice returns its partial output (the LSE beside it is
	   * H x 4 B, under 1% of it) and, with a token top-k, its k candidates
	   * (score and index, 8 B each) for the merge */
		double k = d->sp->p[SP_TOPK];
		p->merge_bytes = p->layout.back_bytes + (k > 0 ? d->m->layers * p->q * k * 8 : 0);
	}
	{ /* Little's law: a request stays for out / (1 + a d) steps, so a batch
	   * of B admits B (1 + a d) / out requests per step; each brings the
	   * caches of its input that its session does not already hold */
		double out = workload_mean_output(d->wl), in = workload_mean_input(d->wl);
		double kv, idx;
		attn_storage(d->m, d->sp, in > d->m->max_context ? d->m->max_context : in, &kv, &idx);
		p->adm_rate = out > 0 ? (1 + d->accept * d->mtp) / out : 0;
		p->ingest_req = (1 - d->wl->prefix_reuse) * (kv + idx);
	}
	p->dev_count = grab((size_t)D * PIPE_MAX_MB, sizeof(int), &fail);
	p->link_count = grab((size_t)p->link_units * PIPE_MAX_MB, sizeof(int), &fail);
	p->tbt = grab((size_t)d->samples, sizeof(double), &fail);
	p->per = grab_raw((size_t)d->samples, sizeof *p->per, &fail);
	/* cleared: after an early exit only the samples that ran get a score,
	 * and the next evaluation sorts them all */
	p->score = grab((size_t)d->samples, sizeof(double), &fail);
	p->order = grab_raw((size_t)d->samples, sizeof(size_t), &fail);
	p->p99_top = grab_raw(3 * (size_t)plan_p99_top(d->samples), sizeof(double), &fail);
	p->has_energy = device_has_energy(d->gpu) && (!p->has_mem || device_has_energy(d->mem));
	p->use_gpu = grab((size_t)d->samples, sizeof(double), &fail);
	p->use_mem = grab((size_t)d->samples, sizeof(double), &fail);
	p->rng = gsl_rng_alloc(gsl_rng_taus2); /* cheap to seed: one stream per sample */
	if (p->rng && (gsl_rng_min(p->rng) != 0 || gsl_rng_max(p->rng) != 0xffffffffUL))
		fail = 1; /* plan_sample takes pool indices from the top bits */
	int filled = fail || !p->rng || plan_ensure_memo(p, 64) != 0 ||
				     plan_ensure_batch(p, 256) != 0
			     ? -1 : pool_fill(p, f, b);
	free(f), free(b); /* the pool's costs are packed into p by now */
	if (filled == 0) {
		link_bytes(p);
		return p;
	}
	plan_free(p);
	if (filled == -2)
		kerr_set(err, 0, 0, "workload %s: a context length could not be drawn "
			 "(the distribution's inverse CDF failed); use a quantile table",
			 d->wl->name);

	else
		kerr_set(err, 0, 0, "out of memory");
	return NULL;
}

/* Packs slot s's FLOPs and bytes (arrays f, b over the pool, stride n) into
 * the values of the device that runs it; values zero for every request are
 * not stored. */
static void pack(struct plan *p, const double *f, const double *b, const int *src, int n,
		 int off, const struct plan_slot_rate *sd, int s, int *fi, int *bi)
{
	int gpu = sd[s].on_gpu && p->has_mem;
	int *k = gpu ? &p->gpu_side.k : &p->mem_side.k;
	int fz = 1, bz = 1;
	for (int i = 0; i < PLAN_POOL && (fz || bz); i++) {
		if (src[i] != i)
			continue; /* a row already read */
		fz &= f[(size_t)i * n + off + s] == 0;
		bz &= b[(size_t)i * n + off + s] == 0;
	}
	*fi = fz ? -1 : (*k)++;
	*bi = bz ? -1 : (*k)++;
}

/* Splits a side's values into affine-in-context ones and summed ones, and
 * keeps the pool's summed values (v: PLAN_POOL x side->k; entry i's in row
 * src[i]). */
static int side_fill(struct plan *p, struct plan_side *sd, const double *v, const int *src,
		     int units)
{
	int lo = 0, hi = 0;
	for (int i = 1; i < PLAN_POOL; i++) {
		lo = p->ctx[i] < p->ctx[lo] ? i : lo;
		hi = p->ctx[i] > p->ctx[hi] ? i : hi;
	}
	double dL = p->ctx[hi] - p->ctx[lo];
	int K = sd->k;
	assert(K <= PLAN_MAX_VALUES);
	/* each value's line through the shortest and longest entries, and
	 * the largest value and miss of it, row by row (one pass) */
	double big[PLAN_MAX_VALUES] = {0}, off[PLAN_MAX_VALUES] = {0};
	int nan[PLAN_MAX_VALUES] = {0};
	for (int k = 0; k < K; k++) {
		double vl = v[(size_t)src[lo] * K + k], vh = v[(size_t)src[hi] * K + k];
		sd->b[k] = dL > 0 ? (vh - vl) / dL : 0;
		sd->a[k] = vl - sd->b[k] * p->ctx[lo];
	}
	/* one context throughout: one row (pool_fill), so every finite value
	 * is a constant */
	for (int i = 0; i < (dL > 0 ? PLAN_POOL : 1); i++) {
		const double *row = v + (size_t)src[i] * K;
		double L = p->ctx[i];
		for (int k = 0; k < K; k++) { /* not fmax: a libm call per entry */
			double x = row[k], a = fabs(x), e = fabs(sd->a[k] + sd->b[k] * L - x);
			big[k] = a > big[k] ? a : big[k];
			off[k] = e > off[k] ? e : off[k];
			nan[k] |= e != e;
		}
	}
	sd->nres = 0;
	for (int k = 0; k < K; k++)
		sd->pos[k] = !nan[k] && off[k] <= 1e-12 * big[k] ? -1 : sd->nres++;
	int fail = 0;
	sd->pool = grab_raw((size_t)PLAN_POOL * sd->nres, sizeof(double), &fail);
	sd->acc = grab((size_t)PIPE_MAX_MB * units * sd->nres, sizeof(double), &fail);
	sd->suml = grab((size_t)PIPE_MAX_MB * units, sizeof(double), &fail);
	if (fail)
		return -1;
	for (int i = 0; i < PLAN_POOL; i++)
		for (int k = 0; k < sd->k; k++)
			if (sd->pos[k] >= 0)
				sd->pool[(size_t)i * sd->nres + sd->pos[k]] = v[(size_t)src[i] * sd->k + k];
	return 0;
}

void plan_side_eval(const struct plan_side *sd, double cnt, double L, const double *res,
		    double *v)
{
	assert(sd->k <= PLAN_MAX_VALUES);
	for (int k = 0; k < sd->k; k++)
		v[k] = sd->pos[k] < 0 ? sd->a[k] * cnt + sd->b[k] * L : res[sd->pos[k]];
}

/* A bucket's packed values from its count, summed context and sums. */
void plan_side_values(const struct plan_side *sd, int unit_idx, int cnt, double *v)
{
	plan_side_eval(sd, cnt, sd->suml[unit_idx], sd->acc + (size_t)unit_idx * sd->nres, v);
}

static int pool_fill(struct plan *p, double *f, double *b)
{
	const struct design *d = &p->d;
	int S = p->layout.n, Sm = p->layout_mtp.n, n = S + Sm;
	gsl_rng_set(p->rng, d->seed);
	long cut = 0;
	int scan_on_gpu = 0; /* index keys go with the stage that reads them */
	for (int s = 0; s < S; s++) /* in the GPU's own HBM they are one store */
		if (p->layout.s[s].kind == OP_INDEX_SCAN && p->slot_dev[s].on_gpu)
			scan_on_gpu = p->has_mem && !p->in_hbm;
	p->keys_on_gpu = scan_on_gpu;
	/* entry i's costs are in row src[i] of f, b and the packed values: a
	 * context equal to the one before shares its row (a fixed context
	 * prices and writes one row, not 4,096) */
	int src[PLAN_POOL];
	for (int i = 0; i < PLAN_POOL; i++) {
		double L = workload_draw_context(d->wl, p->rng);
		if (!isfinite(L))
			return -2; /* a distribution GSL could not invert here */
		if (L > d->m->max_context)
			L = d->m->max_context, cut++;
		p->ctx[i] = L;
		p->rank[i] = i;
		src[i] = i > 0 && L == p->ctx[i - 1] ? src[i - 1] : i;
		if (src[i] != i) { /* the same request again */
			p->store[i] = p->store[i - 1], p->store_gpu[i] = p->store_gpu[i - 1];
			continue;
		}
		attn_request(d->m, d->sp, &p->layout, 0, L, p->q, f + (size_t)i * n,
			     b + (size_t)i * n);
		attn_request(d->m, d->sp, &p->layout_mtp, 1, L, p->q, f + (size_t)i * n + S,
			     b + (size_t)i * n + S);
		double kv, idx;
		attn_storage(d->m, d->sp, L, &kv, &idx);
		p->store[i] = kv + (scan_on_gpu ? 0 : idx);
		p->store_gpu[i] = scan_on_gpu ? idx : 0;
	}
	p->clipped = (double)cut / PLAN_POOL;
	p->mean_store = p->mean_store_gpu = 0;
	for (int i = 0; i < PLAN_POOL; i++)
		p->mean_store += p->store[i] / PLAN_POOL, p->mean_store_gpu += p->store_gpu[i] / PLAN_POOL;
	p->has_post = 0;
	for (int s = 0; s < n; s++) { /* the rows the device gathered for an after
				       * slot (the slot before it) cross the link */
		int mtp = s >= S, k = mtp ? s - S : s;
		if (!(mtp ? p->slot_dev_mtp[k] : p->slot_dev[k]).after)
			continue;
		double sum = 0, own = 0;
		for (int i = 0; i < PLAN_POOL; i++)
			sum += b[(size_t)src[i] * n + s - 1], own += b[(size_t)src[i] * n + s];
		/* a dense attention gathers nothing: the whole cache it reads
		 * streams over (with its query and output, a small overcount) */
		*(mtp ? &p->post_bm[k] : &p->post_b[k]) = (sum > 0 ? sum : own) / PLAN_POOL;
		p->has_post = 1;
	}
	p->mem_side.k = p->gpu_side.k = 0;
	for (int s = 0; s < S; s++)
		pack(p, f, b, src, n, 0, p->slot_dev, s, &p->slot_map[s].f, &p->slot_map[s].b);
	for (int s = 0; s < Sm; s++)
		pack(p, f, b, src, n, S, p->slot_dev_mtp, s, &p->slot_map_mtp[s].f,
		     &p->slot_map_mtp[s].b);
	int fail = 0, rc = -1;
	size_t *order = NULL;
	double *vm = grab_raw((size_t)PLAN_POOL * p->mem_side.k, sizeof(double), &fail);
	double *vg = grab_raw((size_t)PLAN_POOL * p->gpu_side.k, sizeof(double), &fail);
	if (fail)
		goto done;
	/* where each slot's FLOPs and bytes go: a side (0 memory, 1 GPU) and
	 * an index among its values (-1: zero for every entry) */
	int side[2 * ATTN_MAX_SLOTS], at[2 * ATTN_MAX_SLOTS][2];
	for (int s = 0; s < n; s++) {
		int mtp = s >= S, k = mtp ? s - S : s;
		const struct plan_slot_rate *sd = mtp ? &p->slot_dev_mtp[k] : &p->slot_dev[k];
		side[s] = sd->on_gpu && p->has_mem;
		at[s][0] = mtp ? p->slot_map_mtp[k].f : p->slot_map[k].f;
		at[s][1] = mtp ? p->slot_map_mtp[k].b : p->slot_map[k].b;
	}
	for (int i = 0; i < PLAN_POOL; i++) {
		if (src[i] != i)
			continue;
		double *row[2] = {vm + (size_t)i * p->mem_side.k, vg + (size_t)i * p->gpu_side.k};
		const double *fr = f + (size_t)i * n, *br = b + (size_t)i * n;
		for (int s = 0; s < n; s++) {
			if (at[s][0] >= 0)
				row[side[s]][at[s][0]] = fr[s];
			if (at[s][1] >= 0)
				row[side[s]][at[s][1]] = br[s];
		}
	}
	if (side_fill(p, &p->mem_side, vm, src, p->devs) |
	    side_fill(p, &p->gpu_side, vg, src, p->gpus))
		goto done;
	/* rank of each pool entry by context, for CMR's longest-first order */
	if (!(order = malloc(sizeof(size_t) * PLAN_POOL)))
		goto done;
	gsl_sort_index(order, p->ctx, 1, PLAN_POOL);
	for (int i = 0; i < PLAN_POOL; i++)
		p->rank[order[i]] = i, p->pool_key[order[i]] = PLAN_POOL - 1 - i;
	/* One request throughout (a fixed context): every sample is the same
	 * batch, placed with its ties in arrival order (one key for all). */
	p->pool_alike = 1;
	for (int i = 1; i < PLAN_POOL && p->pool_alike; i++) {
		size_t km = (size_t)p->mem_side.k, kg = (size_t)p->gpu_side.k;
		p->pool_alike = p->ctx[i] == p->ctx[0] && p->store[i] == p->store[0] &&
				p->store_gpu[i] == p->store_gpu[0] &&
				(src[i] == src[0] ||
				 (!memcmp(vm + src[i] * km, vm, sizeof(double) * km) &&
				  !memcmp(vg + src[i] * kg, vg, sizeof(double) * kg)));
	}
	for (int i = 0; i < PLAN_POOL && p->pool_alike; i++)
		p->pool_key[i] = 0;
	for (int i = 0; i < (p->pool_alike ? 1 : PLAN_POOL); i++) { /* alike: one key, 0 */
		double *e = p->by_key + PLAN_BK_N * p->pool_key[i];
		e[PLAN_BK_CTX] = p->ctx[i], e[PLAN_BK_STORE] = p->store[i];
		e[PLAN_BK_GSTORE] = p->store_gpu[i];
	}
	rc = 0;
done:
	free(vm), free(vg), free(order);
	return rc;
}

double plan_ingest_bytes(const struct plan *p, long B)
{
	return (double)B * p->adm_rate * p->ingest_req;
}

/* Time of the slots of lay that run on the GPU (want_gpu) or the memory
 * device, from a bucket's packed sums v. */
/* Where slot s runs (enum plan_where). */
static int where_of(const struct plan *p, const struct plan_slot_rate *sd)
{
	return !(sd->on_gpu && p->has_mem) ? W_DEVICE : sd->after ? W_GPU_POST : W_GPU_PRE;
}

double plan_bucket_time(const struct plan *p, const struct attn_layout *lay,
			const struct plan_slot_rate *sd, const struct plan_vmap *map,
			const double *v, int where, double *per_class)
{
	double t = 0;
	if (per_class)
		memset(per_class, 0, sizeof(double) * LC_N);
	for (int s = 0; s < lay->n; s++)
		if (where_of(p, &sd[s]) == where) {
			double x = plan_slot_time(&sd[s], &lay->s[s], map[s].f >= 0 ? v[map[s].f] : 0,
						  map[s].b >= 0 ? v[map[s].b] : 0);
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
			e += lay->s[s].layers * ((map[s].f >= 0 ? v[map[s].f] : 0) * sd[s].ef +
						 (map[s].b >= 0 ? v[map[s].b] : 0) * sd[s].eb);
	return e;
}
