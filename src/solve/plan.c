/* plan.c: the lifecycle of a plan and its workspaces.  plan_new checks
 * the design, places each cache-side slot on the device that runs it (its
 * roofline there), draws and packs the pool (pool.c), and derives the
 * link bytes, capacities and ingest rate; nothing writes the plan after.
 * plan_ws_new makes a workspace for its evaluations. */
#include "solve/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/prefill.h"
#include "cost/roofline.h"
#include "cost/tp.h"

static void slot_rates(const struct kdevice *dv, const struct attn_slot *s,
		       struct plan_slot_rate *sd)
{
	roofline_op_rates(dv, s->kind, s->cls, s->dt, &sd->ic, &sd->im); /* as karat ops prices it */
	sd->ovh = roofline_fixed(dv, s->kind);
	sd->row = op_table[s->kind].selects && dv->select_row_rate > 0 ? 1 / dv->select_row_rate : 0;
	sd->ovh_split = roofline_split_fixed(dv, s->kind);
	if (op_table[s->kind].selects) { /* fewer passes over the scores */
		double x = device_select_scale(dv, s->passes);
		sd->ic *= x, sd->row *= x;
	}
	sd->floor = roofline_floor(dv, s->kind);
	sd->dev = dv;
	sd->ef = device_energy_flop(dv, s->dt);
	sd->eb = 8 * dv->e_bit;
}


static void place_slots(struct plan *p, const struct attn_layout *lay,
			struct plan_slot_rate *sd)
{
	const struct design *d = &p->d;
	int gather_only = p->has_mem && d->sys->memdev_role == ROLE_GATHER;
	for (int s = 0; s < lay->n; s++) {
		struct plan_slot_rate own;
		int k = s % ATTN_SLOTS_PER_CLASS;
		slot_rates(p->has_mem ? d->mem : d->gpu, &lay->s[s], &own);
		/* in the gather role the dense-attention layers' caches stay in
		 * HBM: the GPU writes and reads them there, over no link */
		int role = !gather_only || ((k == SL_KV_WRITE || k == SL_GATHER) &&
					    lay->s[s].lc != LC_DENSE);
		int mine = isfinite(own.ic) && role;
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

/* The slots of a request whole in HBM (system.hot_in_hbm): the device's
 * (the cache write and the gather) at the GPU's rates, still priced
 * where the device's are (on_gpu clear), the rest as sd has them. */
static void hot_slots(const struct plan *p, const struct attn_layout *lay,
		      const struct plan_slot_rate *sd, struct plan_slot_rate *hot)
{
	for (int s = 0; s < lay->n; s++) {
		hot[s] = sd[s];
		if (!sd[s].on_gpu) {
			slot_rates(p->d.gpu, &lay->s[s], &hot[s]);
			hot[s].on_gpu = 0, hot[s].after = 0;
		}
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

int plan_ensure_batch(const struct plan *p, struct plan_ws *w, long B)
{
	(void)p;
	if (B <= w->cap_batch)
		return 0;
	long c = w->cap_batch ? w->cap_batch : 256;
	while (c < B)
		c *= 2;
	free(w->req_pool), free(w->req_key), free(w->req_gpu), free(w->req_dev), free(w->req_mb);
	free(w->req_order), free(w->scratch), free(w->by_gpu), free(w->nshard), free(w->shard_dev);
	free(w->lctx_view), free(w->req_hot), free(w->cmr_req);
	int fail = 0;
	w->by_gpu = grab((size_t)c, sizeof(int), &fail);
	w->nshard = grab((size_t)c, sizeof(int), &fail);
	w->req_hot = grab((size_t)c, 1, &fail);
	w->shard_dev = grab((size_t)c * PLAN_MAX_SHARDS, sizeof(int), &fail);
	w->req_pool = grab((size_t)c, sizeof(int), &fail);
	w->req_key = grab((size_t)c, sizeof(int), &fail);
	w->req_gpu = grab((size_t)c, sizeof(int), &fail);
	w->req_dev = grab((size_t)c, sizeof(int), &fail);
	w->req_mb = grab((size_t)c, sizeof(int), &fail);
	w->req_order = grab((size_t)c, sizeof(int), &fail);
	w->scratch = grab((size_t)c, sizeof(int), &fail);
	w->lctx_view = grab((size_t)c, sizeof(double), &fail);
	w->cmr_req = NULL; /* only batches CMR takes GPU by GPU use it (2B of them) */
	if (c >= 2 * PLAN_CMR_BY_GPU_MIN)
		w->cmr_req = grab((size_t)c, sizeof(struct plan_cmr_req), &fail);
	w->cap_batch = fail ? 0 : c;
	return fail ? -1 : 0;
}

void plan_ws_free(struct plan_ws *w)
{
	if (!w)
		return;
	free(w->memo), free(w->memo_ok);
	free(w->req_pool), free(w->req_key), free(w->req_gpu), free(w->req_dev), free(w->req_mb);
	free(w->req_order), free(w->scratch), free(w->by_gpu), free(w->nshard), free(w->shard_dev);
	free(w->lctx_view), free(w->req_hot), free(w->cmr_req);
	free(w->tour), free(w->tour_room);
	free(w->dev_load), free(w->dev_store), free(w->gpu_store);
	free(w->rr_load), free(w->rr_store), free(w->rr_gstore);
	free(w->gpu_placed), free(w->gpu_start), free(w->gpu_cursor);
	free(w->mb_load), free(w->mb_iload), free(w->mb_count), free(w->gpu_share);
	free(w->gpu_big), free(w->gpu_remote);
	free(w->gpu_count), free(w->dev_count), free(w->link_count);
	free(w->mem_bk.acc), free(w->mem_bk.suml), free(w->gpu_bk.acc), free(w->gpu_bk.suml);
	free(w->hot_bk.acc), free(w->hot_bk.suml), free(w->hot_count);
	free(w->tbt), free(w->use_gpu), free(w->use_mem), free(w->per);
	free(w->score), free(w->order), free(w->p99_top);
	free(w->fl.st);
	free(w->fl.unit);
	if (w->fl.olast)
		gsl_ran_discrete_free(w->fl.olast);
	for (int i = 0; w->kept && i < w->nkept; i++) {
		struct plan_placed *c = &w->kept[i];
		free(c->dev), free(c->gpu), free(c->pool), free(c->nsh), free(c->sh), free(c->state);
		free(c->cnt);
	}
	free(w->kept);
	if (w->rng)
		gsl_rng_free(w->rng);
	free(w);
}

struct plan_ws *plan_ws_new(const struct plan *p)
{
	int fail = 0, D = p->devs, G = p->gpus, ns = p->d.samples;
	struct plan_ws *w = grab(1, sizeof *w, &fail);
	if (!w)
		return NULL;
	w->tour = grab(2 * (size_t)p->tour_p, sizeof(int), &fail);
	w->tour_room = grab(2 * (size_t)p->tour_p, sizeof(uint64_t), &fail);
	w->dev_load = grab((size_t)D, sizeof(double), &fail);
	w->dev_store = grab((size_t)D, sizeof(double), &fail);
	w->gpu_store = grab((size_t)G, sizeof(double), &fail);
	w->rr_load = grab((size_t)D, sizeof(double), &fail);
	w->rr_store = grab((size_t)D, sizeof(double), &fail);
	w->rr_gstore = grab((size_t)G, sizeof(double), &fail);
	w->gpu_placed = grab((size_t)G, sizeof(int), &fail);
	w->gpu_start = grab((size_t)G + 1, sizeof(int), &fail);
	w->gpu_cursor = grab((size_t)G, sizeof(int), &fail);
	w->mb_load = grab((size_t)D * PIPE_MAX_MB, sizeof(double), &fail);
	w->mb_iload = grab((size_t)D * PIPE_MAX_MB, sizeof(int64_t), &fail);
	w->mb_count = grab((size_t)G * PIPE_MAX_MB, sizeof(int), &fail);
	w->gpu_share = grab(2 * (size_t)G, sizeof(int), &fail);
	w->gpu_big = grab((size_t)G, sizeof(int), &fail);
	w->gpu_remote = grab((size_t)G, sizeof(int), &fail);
	w->gpu_count = grab((size_t)G * PIPE_MAX_MB, sizeof(int), &fail);
	w->dev_count = grab((size_t)D * PIPE_MAX_MB, sizeof(int), &fail);
	w->link_count = grab((size_t)p->link_units * PIPE_MAX_MB, sizeof(int), &fail);
	w->mem_bk.acc = grab((size_t)PIPE_MAX_MB * D * p->mem_side.nres, sizeof(double), &fail);
	w->mem_bk.suml = grab((size_t)PIPE_MAX_MB * D, sizeof(double), &fail);
	w->gpu_bk.acc = grab((size_t)PIPE_MAX_MB * G * p->gpu_side.nres, sizeof(double), &fail);
	w->gpu_bk.suml = grab((size_t)PIPE_MAX_MB * G, sizeof(double), &fail);
	if (p->hot) {
		w->hot_bk.acc = grab((size_t)PIPE_MAX_MB * G * p->mem_side.nres, sizeof(double), &fail);
		w->hot_bk.suml = grab((size_t)PIPE_MAX_MB * G, sizeof(double), &fail);
		w->hot_count = grab((size_t)PIPE_MAX_MB * G, sizeof(int), &fail);
	}
	w->tbt = grab((size_t)ns, sizeof(double), &fail);
	w->use_gpu = grab((size_t)ns, sizeof(double), &fail);
	w->use_mem = grab((size_t)ns, sizeof(double), &fail);
	w->per = grab_raw((size_t)ns, sizeof *w->per, &fail);
	/* cleared: after an early exit only the samples that ran get a score,
	 * and the next evaluation sorts them all */
	w->score = grab((size_t)ns, sizeof(double), &fail);
	w->order = grab_raw((size_t)ns, sizeof(size_t), &fail);
	w->p99_top = grab_raw(3 * (size_t)plan_p99_top(ns), sizeof(double), &fail);
	w->kept = grab((size_t)ns, sizeof *w->kept, &fail);
	w->nkept = fail ? 0 : ns;
	w->rng = gsl_rng_alloc(gsl_rng_taus2); /* cheap to seed: one stream per sample */
	/* plan_sample takes pool indices from the top bits of 32, and a
	 * sample keeps its stream's state (struct plan_placed) */
	if (!w->rng || gsl_rng_min(w->rng) != 0 || gsl_rng_max(w->rng) != 0xffffffffUL ||
	    gsl_rng_size(w->rng) > sizeof w->kept->rng)
		fail = 1;
	w->memo_ok = grab(64, 1, &fail);
	w->memo = grab_raw(64 * (size_t)(p->nkinds + 1) * PLAN_PH_STRIDE, sizeof(double), &fail);
	w->memo_cap = fail ? 0 : 64;
	w->mem_fail = w->work_stop = INFINITY;
	if (fail || plan_ensure_batch(p, w, 256) != 0) {
		plan_ws_free(w);
		return NULL;
	}
	return w;
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	plan_ws_free(p->ws);
	for (int i = 0; i < p->nhelper; i++)
		plan_ws_free(p->helper[i]);
	free(p->helper);
	free(p->ctx), free(p->rank), free(p->pool_key), free(p->by_key);
	free(p->store), free(p->store_gpu);
	free(p->mem_side.pool), free(p->gpu_side.pool);
	free(p->dev_rank), free(p->dev_gpu);
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
	double query[LC_N];
	memcpy(query, p->layout.cls_query, sizeof query);
	for (int s = 0; s < p->layout.n; s++)
		if (p->slot_dev[s].after) {
			int c = p->layout.s[s].lc;
			p->cls_out[c] -= p->layout.cls_query[c];
			p->cls_back[c] = p->post_b[s] * p->layout.s[s].layers;
			query[c] = 0;
		}
	/* the dense layers of the gather role stay in HBM: nothing of theirs
	 * crosses the link */
	if (p->dense_in_hbm)
		p->cls_out[LC_DENSE] = p->cls_back[LC_DENSE] = query[LC_DENSE] = 0;
	/* a split request's remote slices attend with its query (sent once per
	 * slice from the request's GPU over the scale-up link) */
	p->bcast_bytes = 0;
	for (int c = 0; c < LC_N; c++)
		p->bcast_bytes += query[c];
	for (int s = 0; s < p->layout_mtp.n; s++)
		if (p->slot_dev_mtp[s].after) {
			int c = p->layout_mtp.s[s].lc;
			p->mtp_link += p->post_bm[s] * p->layout_mtp.s[s].layers -
				       p->layout_mtp.cls_query[c] - p->layout_mtp.cls_back[c];
		}
}

static int check_design(const struct design *d, struct kerr *err)
{
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
	if (system_validate(d->sys, NULL, err) != 0)
		return -1;
	return tp_check(d->m, d->sys, d->up, err);
}

double plan_a2a_energy(const struct plan *p)
{
	const struct design *d = &p->d;
	const struct klink *up = p->up1, *out = p->out1;
	double G = p->gpus * p->tp, gpn = d->sys->gpus_per_node * p->tp; /* GPUs */
	double inside = G > 1 ? fmin(gpn - 1, G - 1) / (G - 1) : 1;
	if (p->a2a_cross < 1) { /* hierarchical (price.c a2a_time) */
		double away = 1 - inside;
		return 8 * ((inside + away * (gpn - 1) / gpn) * up->energy_bit +
			    away * p->a2a_cross * out->energy_bit);
	}
	return 8 * (inside * up->energy_bit + (1 - inside) * out->energy_bit);
}

void plan_prefill_at(const struct plan *p, double reuse, double pre[3])
{
	const struct design *d = &p->d;
	double in = p->pre_in, out = p->pre_out;
	double c0 = round(in * reuse), n = round(in) - c0;
	struct prefill pf;
	struct kerr ignore; /* the window was checked with the contexts */
	pre[0] = pre[1] = pre[2] = NAN;
	if (!(out > 0) ||
	    prefill_cost(d->m, d->sp, d->gpu, p->gpus, p->a2a_per_gpu, c0, n, &pf, &ignore) != 0)
		return;
	const struct kdevice *g = d->gpu;
	double j = pf.joules + pf.a2a_bytes * plan_a2a_energy(p) + pf.gpu_s * g->e_static;
	pre[0] = j / out;
	pre[1] = (j + pf.gpu_s * (g->has_node ? g->node_power : NAN)) / out;
	pre[2] = pf.gpu_s / out;
}

/* Where idle sessions' caches wait (plan.h idle_cap ...): in HBM beside
 * the batch's caches on GPU-only, in the devices' capacity otherwise (an
 * idle session's index keys too), and in a GPU-only node's host DRAM
 * (system.host_cache) and NVMe past it (system.host_ssd).  Each is as
 * large as an active request's mean cache; their sessions come back at
 * the rate the batch finishes calls, taken at a step as long as the SLO
 * (which under-counts the calls, so over-states every system's reuse,
 * most where room is short). */
static void idle_room(struct plan *p)
{
	const struct design *d = &p->d;
	p->idle_req = p->mean_store + p->mean_store_gpu;
	p->idle_used = p->has_mem ? p->mean_store : p->idle_req;
	p->idle_cap = p->has_mem ? p->devs * p->cap_mem : p->gpus * fmax(p->free_gpu, 0);
	p->idle_host = d->host ? d->sys->host_cache * p->gpus / d->sys->gpus_per_node : 0;
	p->idle_ssd = d->host ? d->sys->host_ssd * p->gpus / d->sys->gpus_per_node : 0;
	p->ssd_read = d->host ? d->sys->host_ssd_read * p->gpus / d->sys->gpus_per_node : 0;
	p->idle_rate = p->adm_rate / d->slo;
}

/* With tensor-parallel attention the plan sees each group of tp GPUs as
 * one unit (cost/tp.h): its own copies of the GPU, links and system, the
 * design pointing at them; the all-to-all and the all-reduce keep one
 * GPU's links. */
static void units(struct plan *p)
{
	struct design *d = &p->d;
	p->tp = tp_degree(d->sys);
	p->up1 = d->up, p->out1 = d->out;
	if (p->tp <= 1)
		return;
	p->unit_gpu = *d->gpu, p->unit_sys = *d->sys;
	p->unit_up = *d->up, p->unit_out = *d->out;
	tp_unit_device(&p->unit_gpu, p->tp);
	tp_unit_system(&p->unit_sys, p->tp);
	tp_unit_link(&p->unit_up, p->tp);
	tp_unit_link(&p->unit_out, p->tp);
	d->gpu = &p->unit_gpu, d->sys = &p->unit_sys;
	d->up = &p->unit_up, d->out = &p->unit_out;
	if (d->host) {
		p->unit_host = *d->host;
		tp_unit_link(&p->unit_host, p->tp);
		d->host = &p->unit_host;
	}
}

struct plan *plan_new(const struct design *d, struct kerr *err)
{
	return plan_new_like(d, NULL, err);
}

struct plan *plan_new_like(const struct design *d, const struct plan *base, struct kerr *err)
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
	units(p);
	d = &p->d;
	p->gpus = (int)d->sys->gpus;
	p->has_mem = system_has_memdev(d->sys);
	p->in_hbm = p->has_mem && d->sys->memdev_in_hbm == IN_HBM_YES;
	p->devs = p->has_mem ? (int)d->sys->memdevs : p->gpus;
	p->devs_per_gpu = p->devs >= p->gpus ? p->devs / p->gpus : 1;
	p->gpus_per_dev = p->devs >= p->gpus ? 1 : p->gpus / p->devs;
	p->link_units = p->devs >= p->gpus ? p->devs : p->gpus;
	p->has_energy = device_has_energy(d->gpu) && (!p->has_mem || device_has_energy(d->mem));
	p->q = 1 + d->mtp;
	p->layers = d->m->layers;
	p->nkinds = step_layer_kinds(d->m, d->sp, p->layer_kind, p->kinds, p->kind_layers);
	/* the experts spread over every GPU, and each GPU's redundant copies */
	p->weights = model_weight_bytes(d->m, p->gpus) +
		     p->tp * system_moe_redundant(d->sys) * model_expert_bytes(d->m);
	attn_layout(d->m, d->sp, d->m->layers, 0, p->q, &p->layout);
	attn_layout(d->m, d->sp, 1, 1, p->q, &p->layout_mtp);
	place_slots(p, &p->layout, p->slot_dev);
	place_slots(p, &p->layout_mtp, p->slot_dev_mtp);
	p->layout.pad_topk = pads_topk(&p->layout, p->slot_dev);
	p->layout_mtp.pad_topk = pads_topk(&p->layout_mtp, p->slot_dev_mtp);
	p->hot = p->has_mem && d->sys->memdev_role == ROLE_GATHER && d->sys->hot_in_hbm == HOT_ON;
	if (p->hot) {
		hot_slots(p, &p->layout, p->slot_dev, p->slot_hot);
		hot_slots(p, &p->layout_mtp, p->slot_dev_mtp, p->slot_hot_mtp);
	}
	int S = p->layout.n, Sm = p->layout_mtp.n, D = p->devs, G = p->gpus;
	double *f = grab_raw((size_t)PLAN_POOL * (S + Sm), sizeof(double), &fail);
	double *b = grab_raw((size_t)PLAN_POOL * (S + Sm), sizeof(double), &fail);
	p->ctx = grab(PLAN_POOL, sizeof(double), &fail);
	p->rank = grab(PLAN_POOL, sizeof(int), &fail);
	p->pool_key = grab(PLAN_POOL, sizeof(int), &fail);
	p->by_key = grab_raw(PLAN_BK_N * (size_t)PLAN_POOL, sizeof(double), &fail);
	p->store = grab(PLAN_POOL, sizeof(double), &fail);
	p->store_gpu = grab(PLAN_POOL, sizeof(double), &fail);
	p->dev_rank = grab((size_t)D, sizeof(int), &fail);
	p->dev_gpu = grab((size_t)D, sizeof(int), &fail);
	for (int dev = 0; !fail && dev < D; dev++) {
		p->dev_rank[dev] = p->has_mem && D >= G ? (dev % p->devs_per_gpu) * G + dev / p->devs_per_gpu : dev;
		p->dev_gpu[dev] = !p->has_mem ? dev : D >= G ? dev / p->devs_per_gpu : dev * p->gpus_per_dev;
	}
	for (p->tour_p = 1; p->tour_p < D; p->tour_p *= 2)
		;
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
	{ /* the all-to-all's bytes to GPUs of other nodes leave through the
	   * NIC behind the GPU's port (when the port is not the scale-up link) */
		double gpn = d->sys->gpus_per_node;
		int via = d->port && strcmp(d->sys->gpu_port, d->sys->scaleup_link) != 0 &&
			  d->sys->scaleout_via_port == VIA_PORT_YES;
		/* hierarchical: a token's k copies land on N = G / gpn nodes at
		 * random; the N - 1 others each receive it once if any copy
		 * lands there: (N - 1)(1 - (1 - 1/N)^k) crossings for the
		 * k (N - 1) / N copies bound for them; roofline_a2a_cross
		 * counts GPUs instead where the kernels send a copy per GPU */
		p->a2a_per_gpu = roofline_a2a_per_gpu(d->up, d->out, G, gpn);
		p->a2a_cross = roofline_a2a_cross(G, gpn, d->m->experts, d->m->active_experts,
						  d->sys->a2a_route == A2A_HIER, p->a2a_per_gpu);
		p->a2a_port = via && G > gpn ? p->a2a_cross * (G - gpn) / (G - 1.0) : 0;
	}
	{ /* Little's law: a request stays for out / (1 + a d) steps, so a batch
	   * of B admits B (1 + a d) / out requests per step; each brings the
	   * caches of its input that its session does not already hold */
		double out = workload_mean_output(d->wl), in = workload_mean_input(d->wl);
		double kv, idx;
		attn_storage(d->m, d->sp, in > d->m->max_context ? d->m->max_context : in,
			     design_mtp_layers(d), &kv, &idx);
		p->adm_rate = out > 0 ? (1 + d->accept * d->mtp) / out : 0;
		p->cache_in = kv + idx;
		p->pre_in = fmin(in, d->m->max_context), p->pre_out = out;
		double pre[3];
		plan_prefill_at(p, d->wl->prefix_reuse, pre);
		p->pre_j = pre[0], p->pre_j_node = pre[1], p->pre_gpu_s = pre[2];
	}
	int filled = fail ? -1 : plan_pool_copy(p, base);
	if (filled == 1) /* nothing to borrow */
		filled = plan_pool_fill(p, f, b);
	free(f), free(b); /* the pool's costs are packed into p by now */
	if (filled == 0) {
		idle_room(p);
		link_bytes(p);
		int ok = (p->ws = plan_ws_new(p)) != NULL;
		int T = d->threads < PLAN_MAX_THREADS ? d->threads : PLAN_MAX_THREADS;
		if (ok && T > 1 && (p->helper = calloc((size_t)T - 1, sizeof *p->helper)))
			for (; p->nhelper < T - 1 && ok; p->nhelper++)
				ok = (p->helper[p->nhelper] = plan_ws_new(p)) != NULL;
		if (ok && (T <= 1 || p->helper))
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
