/* assign.c: stage 3 of a sampled batch, its placed requests to
 * micro-batches: per GPU in arrival order, in equal chunks; or by CMR,
 * longest context first to the micro-batch whose load on the request's
 * device is lowest, with the counts within one of each other, where that
 * balances no worse than arrival order. */
#include "solve/plan.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

_Static_assert(PIPE_MAX_MB <= 16, "CMR's key holds a micro-batch index in 4 bits");

/* Arrival order into mb: each GPU's requests, w->by_gpu[gpu_start[g] ..
 * gpu_start[g + 1]) in the order it received them, in m equal chunks. */
static void assign_arrival(const struct plan *p, struct plan_ws *w, int m, int *mb)
{
	for (int g = 0; g < p->gpus; g++) {
		long n = w->gpu_start[g + 1] - w->gpu_start[g], acc = 0;
		int i = 0;
		for (long t = 0; t < n; t++) { /* i = floor(t * m / n), incrementally */
			mb[w->by_gpu[w->gpu_start[g] + t]] = i;
			for (acc += m; acc >= n; acc -= n)
				i++;
		}
	}
}

/* The largest context sum of any (micro-batch, device): what sets the pace
 * of the attention stage. */
static double peak_load(const struct plan *p, struct plan_ws *w, long B, int m, const int *mb)
{
	int D = p->devs;
	memset(w->mb_load, 0, sizeof(double) * (size_t)m * D);
	double peak = 0;
	for (long j = 0; j < B; j++) {
		double *l = &w->mb_load[w->req_dev[j] * m + mb[j]];
		*l += p->ctx[w->req_pool[j]];
		peak = *l > peak ? *l : peak;
	}
	return peak;
}

/* The peak of arrival order's assignment (assign_arrival's, as
 * peak_load would sum it) without writing it: with whole tokens the sums
 * are exact in any order, so each GPU's requests are summed as grouped. */
static double arrival_peak_whole(const struct plan *p, struct plan_ws *w, int m)
{
	int64_t *il = w->mb_iload, peak = 0;
	memset(il, 0, sizeof(int64_t) * (size_t)m * p->devs);
	for (int g = 0; g < p->gpus; g++) {
		long n = w->gpu_start[g + 1] - w->gpu_start[g], acc = 0;
		const int *by = w->by_gpu + w->gpu_start[g];
		int i = 0;
		for (long t = 0; t < n; t++) {
			int j = by[t];
			int64_t *l = &il[w->req_dev[j] * m + i];
			*l += (int64_t)p->ctx[w->req_pool[j]];
			peak = *l > peak ? *l : peak;
			for (acc += m; acc >= n; acc -= n)
				i++;
		}
	}
	return (double)peak;
}

/* CMR's choice for a request on a device with these loads, on a GPU
 * with these counts: (load, count, index) one integer key, the least of
 * a micro-batch whose count is below cap (its share) taken. */
static inline int cmr_pick(const int64_t *load, const int *cnt, int cap, int m)
{
	uint64_t top = UINT64_MAX;
	for (uint64_t i = 0; i < (uint64_t)m; i++) {
		uint64_t k = (uint64_t)load[i] << 21 | (uint64_t)cnt[i] << 4 | i;
		top = cnt[i] < cap && k < top ? k : top;
	}
	assert(top != UINT64_MAX); /* some micro-batch is below its share */
	return (int)(top & 15);
}

/* CMR's greedy pass in whole tokens (cmr_pick), the requests in the order
 * src gives.  Returns the fullest (device, micro-batch). */
static double cmr_whole(const struct plan *p, struct plan_ws *w, long B, int m, const int *src)
{
	const int *share = w->gpu_share;
	int64_t *il = w->mb_iload, peak = 0;
	memset(il, 0, sizeof(int64_t) * (size_t)m * p->devs);
	for (long t = 0; t < B; t++) {
		long j = src[t];
		int g = w->req_gpu[j], lo = share[2 * g], extra = share[2 * g + 1];
		int *big = &w->gpu_big[g], *cnt = &w->mb_count[g * m];
		int64_t *load = &il[w->req_dev[j] * m];
		int best = cmr_pick(load, cnt, lo + (extra > 0 && *big < extra), m);
		*big += cnt[best] == lo;
		w->req_mb[j] = best;
		cnt[best]++;
		load[best] += (int64_t)p->ctx[w->req_pool[j]];
		peak = load[best] > peak ? load[best] : peak;
	}
	return (double)peak;
}

/* A GPU's requests r[0 .. n), in arrival order, sorted by key in place,
 * stably (tmp: room for n): by insertion where there are few, else by
 * the key's two digits, least significant first. */
static void sort_by_key(struct plan_cmr_req *r, int n, struct plan_cmr_req *tmp)
{
	enum { R = 1 << PLAN_RADIX_BITS };
	if (n <= 32) {
		for (int t = 1; t < n; t++) {
			struct plan_cmr_req x = r[t];
			int u = t;
			for (; u > 0 && r[u - 1].key > x.key; u--)
				r[u] = r[u - 1];
			r[u] = x;
		}
		return;
	}
	int lo[R + 1] = {0}, hi[R + 1] = {0};
	for (int t = 0; t < n; t++)
		lo[(r[t].key & (R - 1)) + 1]++, hi[(r[t].key >> PLAN_RADIX_BITS) + 1]++;
	for (int k = 0; k < R; k++)
		lo[k + 1] += lo[k], hi[k + 1] += hi[k];
	for (int t = 0; t < n; t++)
		tmp[lo[r[t].key & (R - 1)]++] = r[t];
	for (int t = 0; t < n; t++)
		r[hi[tmp[t].key >> PLAN_RADIX_BITS]++] = tmp[t];
}

/* Arrival order's peak over one GPU's requests r[0 .. n) (as
 * arrival_peak_whole sums them; il: its devices' loads, zero on entry). */
static int64_t arrival_peak_of(const struct plan_cmr_req *r, int n, int m, int64_t *il)
{
	int64_t peak = 0;
	long acc = 0;
	int i = 0;
	for (int t = 0; t < n; t++) {
		int64_t *l = &il[(long)r[t].dev * m + i];
		*l += r[t].ctx;
		peak = *l > peak ? *l : peak;
		for (acc += m; acc >= n; acc -= n)
			i++;
	}
	return peak;
}

/* cmr_whole's pass over one GPU's requests r[0 .. n), longest first; its
 * peak (il: its devices' loads, zero on entry). */
static int64_t cmr_of(struct plan_ws *w, const struct plan_cmr_req *r, int n, int m,
		      int64_t *il)
{
	int lo = n / m, extra = n % m, big = 0, cnt[PIPE_MAX_MB] = {0};
	int64_t peak = 0;
	for (int t = 0; t < n; t++) {
		int64_t *load = &il[(long)r[t].dev * m];
		int best = cmr_pick(load, cnt, lo + (extra > 0 && big < extra), m);
		big += cnt[best] == lo;
		w->req_mb[r[t].j] = best;
		cnt[best]++;
		load[best] += r[t].ctx;
		peak = load[best] > peak ? load[best] : peak;
	}
	return peak;
}

/* CMR and arrival order's peaks (*arrival) with whole tokens, GPU by GPU,
 * where each device belongs to one GPU (D >= G): a request's choice reads
 * only its GPU's counts and its device's loads, so each GPU's requests
 * longest first make the same choices, and the same peaks, as the whole
 * batch in that order.  The requests are copied, in arrival order, into
 * w->cmr_req grouped by GPU (one pass that reads memory in order), and
 * each GPU's are sorted by key there, with what it touches in cache.
 * Where placement left them longest first (seq), that is arrival order
 * too, and grouping keeps it. */
static double cmr_by_gpu(const struct plan *p, struct plan_ws *w, long B, int m, const int *seq,
			 double *arrival)
{
	assert(2 * B <= w->cap_batch); /* every caller sizes for 2B: room for both */
	struct plan_cmr_req *a = w->cmr_req, *b = a + B;
	int G = p->gpus, *at = w->gpu_cursor;
	const int *dg = p->dev_gpu;
	memcpy(at, w->gpu_start, sizeof(int) * (size_t)G);
	for (long t = 0; t < B; t++) {
		int j = seq ? seq[t] : (int)t, dev = w->req_dev[j];
		assert(dg[dev] == w->req_gpu[j]); /* its device's GPU */
		a[at[dg[dev]]++] = (struct plan_cmr_req){j, dev, (int32_t)p->ctx[w->req_pool[j]],
							 w->req_key[j]};
	}
	int64_t *il = w->mb_iload, peak = 0, arr = 0;
	size_t rows = sizeof(int64_t) * (size_t)m * (size_t)p->devs_per_gpu; /* a GPU's
										 * devices' */
	for (int g = 0; g < G; g++) {
		int s = w->gpu_start[g], n = w->gpu_start[g + 1] - s;
		int64_t *mine = il + (size_t)g * p->devs_per_gpu * m; /* GPU g's devices */
		memset(mine, 0, rows);
		int64_t x = arrival_peak_of(a + s, n, m, il);
		arr = x > arr ? x : arr;
		memset(mine, 0, rows);
		if (!seq) /* longest first */
			sort_by_key(a + s, n, b);
		x = cmr_of(w, a + s, n, m, il);
		peak = x > peak ? x : peak;
	}
	*arrival = (double)arr;
	return (double)peak;
}

/* The same pass on real contexts: the least (load, count), lower index
 * first. */
static void cmr_real(const struct plan *p, struct plan_ws *w, long B, int m, const int *src)
{
	const int *share = w->gpu_share;
	memset(w->mb_load, 0, sizeof(double) * (size_t)m * p->devs);
	for (long t = 0; t < B; t++) {
		long j = src[t];
		int g = w->req_gpu[j], best = -1, bc = 0;
		int lo = share[2 * g], extra = share[2 * g + 1];
		int *big = &w->gpu_big[g];
		int at_lo_ok = extra > 0 && *big < extra; /* may one at lo take one more */
		int *cnt = &w->mb_count[g * m]; /* this GPU's and this device's rows */
		double *load = &w->mb_load[w->req_dev[j] * m], bl = 0;
		for (int i = 0; i < m; i++) { /* without branches: */
			int c = cnt[i];
			double li = load[i];
			int ok = (c < lo) | ((c == lo) & at_lo_ok); /* below its share */
			int take = ok & ((best < 0) | (li < bl) | ((li == bl) & (c < bc)));
			best = take ? i : best;
			bl = take ? li : bl;
			bc = take ? c : bc;
		}
		assert(best >= 0); /* some micro-batch is below its share of the count */
		if (bc == lo)
			(*big)++;
		w->req_mb[j] = best;
		cnt[best]++;
		load[best] += p->ctx[w->req_pool[j]];
	}
}

void plan_assign_mb(const struct plan *p, struct plan_ws *w, long B, int m)
{
	int G = p->gpus;
	if (m == 1) { /* one micro-batch: nothing to balance */
		memset(w->req_mb, 0, sizeof(int) * (size_t)B);
		return;
	}
	if (!sched_uses_cmr(p->d.sched)) {
		assign_arrival(p, w, m, w->req_mb);
		return;
	}
	/* Greedy longest-first is a heuristic: where arrival order balances
	 * better, keep it, so CMR is never worse balanced than naive.  Each
	 * peak is the fullest (device, micro-batch); with whole tokens (exact
	 * integer sums) both are summed as they are made. */
	int whole = p->ctx_top >= 0 && (double)B * p->ctx_top < 0x1p43 && B < (1L << 17);
	if (whole && B >= PLAN_CMR_BY_GPU_MIN && w->cmr_req && p->ctx_top < 0x1p31 &&
	    (!p->has_mem || p->devs >= G)) {
		double arrival, cmr = cmr_by_gpu(p, w, B, m, w->placed, &arrival);
		if (arrival < cmr)
			assign_arrival(p, w, m, w->req_mb);
		return;
	}
	int *src = w->req_order;
	if (w->placed != w->req_order) /* else placement left it in that order */
		plan_order_longest(w, B, src);
	memset(w->mb_count, 0, sizeof(int) * (size_t)m * G);
	memset(w->gpu_big, 0, sizeof(int) * (size_t)G);
	/* counts stay within one of each other: of a GPU's n requests, n % m
	 * micro-batches take ceil(n / m), the others floor(n / m) (per GPU:
	 * the floor, then the remainder) */
	int *share = w->gpu_share;
	for (int g = 0; g < G; g++) {
		int n = w->gpu_start[g + 1] - w->gpu_start[g];
		share[2 * g] = n / m, share[2 * g + 1] = n % m;
	}
	double cmr, arrival;
	if (whole) {
		cmr = cmr_whole(p, w, B, m, src);
		arrival = arrival_peak_whole(p, w, m);
	} else {
		cmr_real(p, w, B, m, src);
		cmr = peak_load(p, w, B, m, w->req_mb);
		assign_arrival(p, w, m, w->scratch);
		arrival = peak_load(p, w, B, m, w->scratch);
	}
	if (arrival < cmr)
		assign_arrival(p, w, m, w->req_mb);
}

