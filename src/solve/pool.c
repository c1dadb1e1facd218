/* pool.c: the pool of a plan: PLAN_POOL contexts drawn from the workload,
 * each request's cache bytes and cache-side FLOPs and bytes per slot,
 * packed into the values its memory device and its GPU sum over the
 * requests they hold (affine in the context where they can be, summed
 * request by request where not), and the pool's longest-first order. */
#include "solve/plan.h"

#include <gsl/gsl_sort.h>
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether every slot's time grows with its FLOPs and bytes: no rate,
 * floor or layer count below zero (checked, not assumed). */
static int rates_monotone(const struct plan *p)
{
	const struct attn_layout *lay[2] = {&p->layout, &p->layout_mtp};
	const struct plan_slot_rate *sr[2] = {p->slot_dev, p->slot_dev_mtp};
	int ok = 1;
	for (int l = 0; l < 2; l++)
		for (int s = 0; s < lay[l]->n; s++) {
			const struct plan_slot_rate *r = &sr[l][s];
			ok &= r->ic >= 0 && r->im >= 0 && r->ovh >= 0 && r->ovh_split >= 0 &&
			      r->row >= 0 && r->floor >= 0 && lay[l]->s[s].layers >= 0 &&
			      lay[l]->s[s].rows >= 0;
		}
	return ok;
}

/* Splits a side's values into affine-in-context ones and summed ones, and
 * keeps the pool's summed values (v: PLAN_POOL x side->k; entry i's in row
 * src[i]). */
static int side_fill(struct plan *p, struct plan_side *sd, const double *v, const int *src)
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
	double big[PLAN_MAX_VALUES] = {0}, off[PLAN_MAX_VALUES] = {0}, low[PLAN_MAX_VALUES] = {0};
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
			low[k] = x < low[k] ? x : low[k];
			nan[k] |= e != e;
		}
	}
	sd->nres = 0;
	for (int k = 0; k < K; k++)
		sd->pos[k] = !nan[k] && off[k] <= 1e-12 * big[k] ? -1 : sd->nres++;
	/* a bucket's values grow with its summed context and sums at a fixed
	 * count where no affine one falls with the context and no summed one
	 * is negative (plan_side_peak; and the rates: rates_monotone) */
	sd->monotone = rates_monotone(p);
	for (int k = 0; k < K; k++)
		sd->monotone &= sd->pos[k] < 0 ? sd->b[k] >= 0 : low[k] >= 0;
	sd->pool = malloc(sizeof(double) * PLAN_POOL * (size_t)(sd->nres ? sd->nres : 1));
	if (!sd->pool)
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

void plan_side_values(const struct plan_side *sd, const struct plan_buckets *bk, int unit_idx,
		      int cnt, double *v)
{
	plan_side_eval(sd, cnt, bk->suml[unit_idx], bk->acc + (size_t)unit_idx * sd->nres, v);
}

int plan_pool_fill(struct plan *p, double *f, double *b)
{
	const struct design *d = &p->d;
	int S = p->layout.n, Sm = p->layout_mtp.n, n = S + Sm;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
	if (!rng)
		return -1;
	gsl_rng_set(rng, d->seed);
	long cut = 0;
	int scan_on_gpu = 0; /* index keys go with the stage that reads them */
	for (int s = 0; s < S; s++) /* in the GPU's own HBM they are one store */
		if (p->layout.s[s].kind == OP_INDEX_SCAN && p->slot_dev[s].on_gpu)
			scan_on_gpu = p->has_mem && !p->in_hbm;
	p->keys_on_gpu = scan_on_gpu;
	/* the dense-attention layers' caches stay where the GPU attends over
	 * them (the gather role: plan.c's place_slots) */
	p->dense_in_hbm = p->has_mem && !p->in_hbm && d->sys->memdev_role == ROLE_GATHER &&
			  p->layout.cls_layers[LC_DENSE] > 0;
	p->gpu_stores = p->keys_on_gpu || p->dense_in_hbm;
	/* entry i's costs are in row src[i] of f, b and the packed values: a
	 * context drawn before shares its row (a fixed context prices and
	 * writes one row, not 4,096; whole-token draws repeat), found through
	 * a table of rows by the context's bits (seen: -1 where empty) */
	int src[PLAN_POOL], seen[2 * PLAN_POOL];
	memset(seen, -1, sizeof seen);
	p->ctx_top = 0;
	for (int i = 0; i < PLAN_POOL; i++) {
		double L = workload_draw_context(d->wl, rng);
		if (!isfinite(L)) {
			gsl_rng_free(rng);
			return -2; /* a distribution GSL could not invert here */
		}
		if (L > d->m->max_context)
			L = d->m->max_context, cut++;
		p->ctx[i] = L;
		if (p->ctx_top >= 0) /* whole tokens (a fixed context may not be) */
			p->ctx_top = L >= 0 && L == floor(L) && L < 0x1p40 ? fmax(p->ctx_top, L) : -1;
		p->rank[i] = i;
		uint64_t bits;
		memcpy(&bits, &L, sizeof bits);
		unsigned h = (unsigned)(bits * UINT64_C(0x9E3779B97F4A7C15) >> 40) & (2 * PLAN_POOL - 1);
		while (seen[h] >= 0 && p->ctx[seen[h]] != L)
			h = (h + 1) & (2 * PLAN_POOL - 1);
		if (seen[h] >= 0) { /* the same request again */
			src[i] = seen[h];
			p->store[i] = p->store[src[i]], p->store_gpu[i] = p->store_gpu[src[i]];
			continue;
		}
		seen[h] = src[i] = i;
		attn_request(d->m, d->sp, &p->layout, 0, L, p->q, f + (size_t)i * n,
			     b + (size_t)i * n);
		attn_request(d->m, d->sp, &p->layout_mtp, 1, L, p->q, f + (size_t)i * n + S,
			     b + (size_t)i * n + S);
		double kv, idx, kvd = 0, idxd = 0;
		attn_storage(d->m, d->sp, L, design_mtp_layers(d), &kv, &idx);
		if (p->dense_in_hbm)
			attn_storage_of(d->m, d->sp, L, design_mtp_layers(d), 1u << LC_DENSE, &kvd,
					&idxd);
		p->store[i] = kv - kvd + (scan_on_gpu ? 0 : idx - idxd);
		p->store_gpu[i] = kvd + idxd + (scan_on_gpu ? idx - idxd : 0);
	}
	gsl_rng_free(rng);
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
	int rc = -1;
	size_t *order = NULL;
	double *vm = malloc(sizeof(double) * PLAN_POOL * (size_t)(p->mem_side.k ? p->mem_side.k : 1));
	double *vg = malloc(sizeof(double) * PLAN_POOL * (size_t)(p->gpu_side.k ? p->gpu_side.k : 1));
	if (!vm || !vg)
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
	if (side_fill(p, &p->mem_side, vm, src) | side_fill(p, &p->gpu_side, vg, src))
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

int plan_pool_same(const struct plan *p, const struct plan *base)
{
	const struct design *d = &p->d, *e = &base->d;
	if (d->m != e->m || d->sp != e->sp || d->wl != e->wl || d->seed != e->seed ||
	    p->q != base->q || design_mtp_layers(d) != design_mtp_layers(e) ||
	    p->has_mem != base->has_mem || p->in_hbm != base->in_hbm ||
	    d->sys->memdev_role != e->sys->memdev_role ||
	    memcmp(&p->layout, &base->layout, sizeof p->layout) != 0 ||
	    memcmp(&p->layout_mtp, &base->layout_mtp, sizeof p->layout_mtp) != 0)
		return 0;
	for (int s = 0; s < p->layout.n; s++)
		if (p->slot_dev[s].on_gpu != base->slot_dev[s].on_gpu ||
		    p->slot_dev[s].after != base->slot_dev[s].after)
			return 0;
	for (int s = 0; s < p->layout_mtp.n; s++)
		if (p->slot_dev_mtp[s].on_gpu != base->slot_dev_mtp[s].on_gpu ||
		    p->slot_dev_mtp[s].after != base->slot_dev_mtp[s].after)
			return 0;
	return 1;
}

/* A copy of side sd's packed values (its own pool array); -1 when out of
 * memory. */
static int side_copy(struct plan_side *to, const struct plan_side *from)
{
	*to = *from;
	size_t n = sizeof(double) * PLAN_POOL * (size_t)(from->nres ? from->nres : 1);
	if (!(to->pool = malloc(n)))
		return -1;
	memcpy(to->pool, from->pool, n);
	return 0;
}

int plan_pool_copy(struct plan *p, const struct plan *base)
{
	if (!base || !plan_pool_same(p, base))
		return 1;
	size_t nd = sizeof(double) * PLAN_POOL, ni = sizeof(int) * PLAN_POOL;
	memcpy(p->ctx, base->ctx, nd);
	memcpy(p->store, base->store, nd);
	memcpy(p->store_gpu, base->store_gpu, nd);
	memcpy(p->rank, base->rank, ni);
	memcpy(p->pool_key, base->pool_key, ni);
	memcpy(p->by_key, base->by_key, nd * PLAN_BK_N);
	p->mean_store = base->mean_store, p->mean_store_gpu = base->mean_store_gpu;
	p->clipped = base->clipped, p->ctx_top = base->ctx_top;
	p->pool_alike = base->pool_alike;
	p->keys_on_gpu = base->keys_on_gpu, p->dense_in_hbm = base->dense_in_hbm;
	p->gpu_stores = base->gpu_stores, p->has_post = base->has_post;
	memcpy(p->post_b, base->post_b, sizeof p->post_b);
	memcpy(p->post_bm, base->post_bm, sizeof p->post_bm);
	memcpy(p->slot_map, base->slot_map, sizeof p->slot_map);
	memcpy(p->slot_map_mtp, base->slot_map_mtp, sizeof p->slot_map_mtp);
	if (side_copy(&p->mem_side, &base->mem_side) | side_copy(&p->gpu_side, &base->gpu_side))
		return -1;
	int rates = rates_monotone(p); /* p's own rates, not base's */
	p->mem_side.monotone &= rates, p->gpu_side.monotone &= rates;
	return 0;
}
