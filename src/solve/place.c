/* place.c: placing a sampled batch's requests on GPUs and memory devices:
 * memory-aware (in arrival order, or longest first, onto the device with
 * the most free room, split over a node's devices when no one device
 * holds a request) or round-robin, and grouping each GPU's requests in the
 * order it received them.  Part of solve/ (plan.h). */
#include "solve/plan.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void plan_order_longest(struct plan_ws *w, long B, int *out)
{
	/* a stable radix sort on the key, two passes of PLAN_RADIX_BITS: the
	 * low digit (from arrival order) into scratch, the high one into out;
	 * both digits are counted in one read */
	_Static_assert(2 * PLAN_RADIX_BITS == PLAN_POOL_BITS, "two radix passes cover the key");
	enum { R = 1 << PLAN_RADIX_BITS };
	const int *key = w->req_key;
	int *mid = w->scratch;
	long lo[R + 1] = {0}, hi[R + 1] = {0};
	for (long j = 0; j < B; j++) {
		lo[(key[j] & (R - 1)) + 1]++;
		hi[(key[j] >> PLAN_RADIX_BITS) + 1]++;
	}
	for (int k = 0; k < R; k++)
		lo[k + 1] += lo[k], hi[k + 1] += hi[k];
	for (long j = 0; j < B; j++)
		mid[lo[key[j] & (R - 1)]++] = (int)j;
	for (long t = 0; t < B; t++) {
		int j = mid[t];
		out[hi[key[j] >> PLAN_RADIX_BITS]++] = j;
	}
}

static void place_reset(const struct plan *p, struct plan_ws *w, long B)
{
	memset(w->nshard, 0, sizeof(int) * (size_t)B);
	w->nsharded = 0;
	memset(w->dev_load, 0, sizeof(double) * (size_t)p->devs);
	memset(w->dev_store, 0, sizeof(double) * (size_t)p->devs);
	memset(w->gpu_store, 0, sizeof(double) * (size_t)p->gpus);
}

/* A share of pool entry r (1: all of it, 1/n: one of n slices) on device
 * dev and GPU g. */
static void add_share(const struct plan *p, struct plan_ws *w, int r, int g, int dev, double share)
{
	w->dev_load[dev] += p->ctx[r] * share;
	w->dev_store[dev] += p->store[r] * share;
	w->gpu_store[g] += p->store_gpu[r] * share;
}

/* GPU by arrival; the least loaded of the GPU's devices.  Each unit's
 * summed context, cache bytes and the GPUs' index-key bytes into load,
 * store and gstore; each request's GPU and device into rgpu and rdev
 * unless they are NULL (a trial: does it fit?). */
static void round_robin(const struct plan *p, struct plan_ws *w, long B, double *load, double *store, double *gstore,
			int *rgpu, int *rdev)
{
	memset(load, 0, sizeof(double) * (size_t)p->devs);
	memset(store, 0, sizeof(double) * (size_t)p->devs);
	memset(gstore, 0, sizeof(double) * (size_t)p->gpus);
	for (long j = 0, g = 0; j < B; j++, g = g + 1 == p->gpus ? 0 : g + 1) {
		int dev;
		if (p->devs >= p->gpus) {
			dev = (int)g * p->devs_per_gpu;
			for (int k = 1; k < p->devs_per_gpu; k++)
				if (load[g * p->devs_per_gpu + k] < load[dev])
					dev = (int)g * p->devs_per_gpu + k;
		} else {
			dev = (int)g / p->gpus_per_dev;
		}
		if (rgpu)
			rgpu[j] = (int)g, rdev[j] = dev;
		int r = w->req_pool[j];
		load[dev] += p->ctx[r], store[dev] += p->store[r], gstore[g] += p->store_gpu[r];
	}
}

static void place_round_robin(const struct plan *p, struct plan_ws *w, long B)
{
	place_reset(p, w, B);
	round_robin(p, w, B, w->dev_load, w->dev_store, w->gpu_store, w->req_gpu, w->req_dev);
}

/* Free bytes of a placement unit: a GPU's HBM (no memory devices: every
 * cache there) or a memory device. */
static double room_of(const struct plan *p, struct plan_ws *w, int u)
{
	if (!p->has_mem)
		return p->free_gpu - w->dev_store[u] - w->gpu_store[u];
	return p->cap_mem - w->dev_store[u];
}


/* Room as an unsigned integer in the same order (more room: larger), so a
 * match on the critical path compares integers: the sign bit flipped for
 * non-negative values, every bit for negative ones (an overfull unit);
 * zero as +0.  Rooms are finite, or -infinity for the padding. */
static inline uint64_t room_bits(double room)
{
	uint64_t u;
	room = room == 0 ? 0.0 : room;
	memcpy(&u, &room, sizeof u);
	return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

/* Unit a (room bits ra) goes before unit b (rb): more room, then less
 * summed context, then the lower rank in the order that takes each GPU's
 * first device, then each GPU's second, ... (p->dev_rank: with equal
 * contexts requests are dealt to the GPUs in turn, as arrival order
 * does).  Equal rooms are rare past the first few placements, so the
 * tie-break reads the units' own sums; padding (-1) goes before none. */
static inline int key_before(const struct plan *p, const struct plan_ws *w, uint64_t ra, int a,
			     uint64_t rb, int b)
{
	if (ra != rb)
		return ra > rb;
	if (a < 0 || b < 0)
		return 0;
	double la = w->dev_load[a], lb = w->dev_load[b];
	return la < lb || (la == lb && p->dev_rank[a] < p->dev_rank[b]);
}

/* Device a goes before device b (the scan's form of key_before). */
static inline int before(const struct plan *p, struct plan_ws *w, int a, int b)
{
	return key_before(p, w, room_bits(room_of(p, w, a)), a, room_bits(room_of(p, w, b)), b);
}

/* Placement keeps the units in a tournament tree: leaf P + u holds unit u
 * (P = p->tour_p, a power of two >= D; leaves past D hold -1, whose room
 * of -infinity never wins) and every inner node the winner of its two
 * children by `key_before`, with the winner's room beside it
 * (w->tour_room), so the root w->tour[1] is the unit that goes first.
 * `key_before` is a strict order, so the root is the minimum a scan of
 * every unit would find.  A placement changes only the units it placed
 * on, and each change replays the log2 P matches on that unit's path: the
 * winner so far against the sibling. */
static void tour_update(const struct plan *p, struct plan_ws *w, int u)
{
	int *t = w->tour;
	uint64_t *room = w->tour_room, rw = room_bits(room_of(p, w, u));
	int i = p->tour_p + u, win = u;
	t[i] = win, room[i] = rw;
	for (; i > 1; i >>= 1) {
		uint64_t rs = room[i ^ 1];
		int s = t[i ^ 1], take = key_before(p, w, rs, s, rw, win);
		win = take ? s : win;
		rw = take ? rs : rw;
		t[i >> 1] = win, room[i >> 1] = rw;
	}
}

/* The whole tree from the units' keys: the leaves, then each inner node
 * from its children, bottom up (P - 1 matches). */
static void tour_build(const struct plan *p, struct plan_ws *w, int D)
{
	int P = p->tour_p, *t = w->tour;
	uint64_t *room = w->tour_room;
	for (int u = 0; u < P; u++) {
		t[P + u] = u < D ? u : -1;
		room[P + u] = room_bits(u < D ? room_of(p, w, u) : -INFINITY);
	}
	for (int i = P - 1; i >= 1; i--) {
		int c = key_before(p, w, room[2 * i + 1], t[2 * i + 1], room[2 * i], t[2 * i])
				? 2 * i + 1
				: 2 * i;
		t[i] = t[c], room[i] = room[c];
	}
}

/* The GPU a request on device dev goes to: the device's own GPU, or
 * where several GPUs share the device, the one with the fewest requests
 * so far (cnt). */
static inline int gpu_for(const struct plan *p, int dev, const int *cnt)
{
	int g = plan_gpu_of(p, dev);
	if (!p->has_mem || p->devs >= p->gpus)
		return g;
	for (int k = 1; k < p->gpus_per_dev; k++)
		if (cnt[dev * p->gpus_per_dev + k] < cnt[g])
			g = dev * p->gpus_per_dev + k;
	return g;
}

/* Whether caches of s bytes (device) and sg bytes (index keys in HBM)
 * fit on device dev and GPU g. */
static inline int fits_bytes(const struct plan *p, struct plan_ws *w, int dev, int g, double s, double sg)
{
	if (!p->has_mem)
		return s + sg <= room_of(p, w, dev) + PLAN_SLACK_BYTES;
	return s <= room_of(p, w, dev) + PLAN_SLACK_BYTES &&
	       sg <= p->free_gpu - w->gpu_store[g] + PLAN_SLACK_BYTES;
}

/* Splits request j (pool entry r), which no device holds whole, into n
 * equal slices on n devices of one node (decode context parallelism: each
 * slice holds and scans its share of the context), the fewest n of any
 * node, ties to the node with the most room in those devices.  Returns
 * 0 when no node can hold it in PLAN_MAX_SHARDS slices. */
static int shard(const struct plan *p, struct plan_ws *w, long j, int r, int *cnt)
{
	if (p->has_mem && p->devs < p->gpus)
		return 0; /* a device shared by GPUs: not split */
	int gpn = (int)p->d.sys->gpus_per_node < p->gpus ? (int)p->d.sys->gpus_per_node : p->gpus;
	int per_node = gpn * (p->has_mem ? p->devs_per_gpu : 1), nodes = p->devs / per_node;
	int best_n = 0, best_node = -1, best_dev[PLAN_MAX_SHARDS];
	double best_room = 0;
	for (int nd = 0; nd < nodes; nd++) {
		int top[PLAN_MAX_SHARDS]; /* the node's roomiest devices, roomiest first */
		int nt = 0;
		for (int k = 0; k < per_node; k++) {
			int dev = nd * per_node + k, i;
			if (nt < PLAN_MAX_SHARDS)
				i = nt++;
			else if (room_of(p, w, dev) > room_of(p, w, top[PLAN_MAX_SHARDS - 1]))
				i = PLAN_MAX_SHARDS - 1;
			else
				continue;
			top[i] = dev;
			for (; i > 0 && room_of(p, w, top[i]) > room_of(p, w, top[i - 1]); i--) {
				int t = top[i];
				top[i] = top[i - 1], top[i - 1] = t;
			}
		}
		for (int n = 2; n <= nt; n++) {
			int ok = 1;
			for (int k = 0; k < n && ok; k++)
				ok = fits_bytes(p, w, top[k], plan_gpu_of(p, top[k]), p->store[r] / n,
						p->store_gpu[r] / n);
			if (!ok)
				continue;
			double room = 0;
			for (int k = 0; k < n; k++)
				room += room_of(p, w, top[k]);
			if (best_n == 0 || n < best_n || (n == best_n && room > best_room)) {
				best_n = n, best_node = nd, best_room = room;
				memcpy(best_dev, top, sizeof(int) * (size_t)n);
			}
			break;
		}
	}
	if (best_node < 0)
		return 0;
	int n = best_n, home = plan_gpu_of(p, best_dev[0]);
	w->req_gpu[j] = home, w->req_dev[j] = best_dev[0];
	w->nshard[j] = n;
	for (int k = 0; k < n; k++) {
		w->shard_dev[j * PLAN_MAX_SHARDS + k] = best_dev[k];
		add_share(p, w, r, plan_gpu_of(p, best_dev[k]), best_dev[k], 1.0 / n);
	}
	cnt[home]++;
	w->nsharded++;
	return 1;
}

/* In arrival order (online), or longest first (offline-lpt), onto the
 * device (the GPU itself without memory devices) with the most free room
 * that can hold the request, ties to the lowest summed context.  A
 * request no device can hold goes to the roomiest one, which it
 * overfills: the capacity check then fails this sample.  Places requests
 * t = from .. B - 1 of that order on the state w holds after the first
 * `from` (stores, requests per GPU, *fail_s and *fail_sg below); returns
 * the first t that did not fit, or B.  Devices are kept in a tournament
 * tree by room (a placement only shrinks its device's room); where index
 * keys also take HBM (the GPU runs the scan) or several GPUs share one
 * device, they are scanned instead. */
static long place_run(const struct plan *p, struct plan_ws *w, long from, long B, int lpt,
		      double *fail_s, double *fail_sg)
{
	int D = p->devs;
	long bad = B;
	int scan = p->has_mem && D < p->gpus;
	int *cnt = w->gpu_placed; /* requests per GPU so far */
	tour_build(p, w, D);
	/* Rooms only shrink during a placement, so a split that failed for
	 * caches of (s, sg) fails for any as large; and none succeeds when even
	 * the roomiest device cannot take one slice.  Both skip shard()'s scan
	 * of every node, which an overfull batch would pay per request.  The
	 * tree's root (w->tour[1]) is the device with the most room. */
	for (long t = from; t < B; t++) {
		long j = lpt ? w->req_order[t] : t;
		/* its context and cache bytes, read in key order (p->by_key) */
		const double *e = p->by_key + PLAN_BK_N * w->req_key[j];
		double need = e[PLAN_BK_STORE], need_g = e[PLAN_BK_GSTORE];
		int dev, root = w->tour[1];
		if (!scan &&
		    (!p->gpu_stores || fits_bytes(p, w, root, gpu_for(p, root, cnt), need, need_g))) {
			dev = root;
		} else { /* the best device that holds it, else the roomiest */
			int best = -1, roomy = -1;
			for (int k = 0; k < D; k++) {
				if (roomy < 0 || before(p, w, k, roomy))
					roomy = k;
				if (fits_bytes(p, w, k, gpu_for(p, k, cnt), need, need_g) &&
				    (best < 0 || before(p, w, k, best)))
					best = k;
			}
			dev = best >= 0 ? best : roomy;
		}
		int g = gpu_for(p, dev, cnt);
		int fit = fits_bytes(p, w, dev, g, need, need_g);
		if (!fit && p->d.sys->kv_shard == SHARD_ON &&
		    !(need >= *fail_s && need_g >= *fail_sg) &&
		    (scan || need / PLAN_MAX_SHARDS <= room_of(p, w, root) + PLAN_SLACK_BYTES)) {
			if (shard(p, w, j, w->req_pool[j], cnt)) {
				for (int k = 0; !scan && k < w->nshard[j]; k++) /* its slices'
									    * devices have less room */
					tour_update(p, w, w->shard_dev[j * PLAN_MAX_SHARDS + k]);
				continue;
			}
			*fail_s = need, *fail_sg = need_g;
		}
		if (!fit && bad == B)
			bad = t;
		w->req_gpu[j] = g, w->req_dev[j] = dev;
		w->dev_load[dev] += e[PLAN_BK_CTX], w->dev_store[dev] += need;
		w->gpu_store[g] += need_g;
		cnt[g]++;
		if (!scan) /* its room shrank (the root's, or another's where the GPU's
			    * room sent it elsewhere) */
			tour_update(p, w, dev);
	}
	return bad;
}

/* The whole batch placed afresh; whether every request fitted. */
static int place_memory(const struct plan *p, struct plan_ws *w, long B)
{
	place_reset(p, w, B);
	int lpt = p->d.sys->placement == PLACE_OFFLINE_LPT; /* else as they arrive */
	if (lpt)
		plan_order_longest(w, B, w->req_order);
	memset(w->gpu_placed, 0, sizeof(int) * (size_t)p->gpus);
	double fail_s = INFINITY, fail_sg = INFINITY;
	return place_run(p, w, 0, B, lpt, &fail_s, &fail_sg) == B;
}

/* The first n requests' devices, GPUs and slices from what sample c kept
 * into w. */
static void kept_copy(struct plan_ws *w, const struct plan_placed *c, long n)
{
	memcpy(w->req_dev, c->dev, sizeof(int) * (size_t)n);
	memcpy(w->req_gpu, c->gpu, sizeof(int) * (size_t)n);
	if (c->nsh_used == 0) { /* no request it kept was split */
		memset(w->nshard, 0, sizeof(int) * (size_t)n);
		return;
	}
	const int *sh = c->sh;
	for (long j = 0; j < n; j++) {
		int k = c->nsh[j];
		w->nshard[j] = k;
		if (k)
			memcpy(w->shard_dev + j * PLAN_MAX_SHARDS, sh, sizeof(int) * (size_t)k), sh += k;
	}
}

/* The stores of the first B requests c kept, added in the order and by
 * the operations the placement used, so every sum is the same bit for
 * bit (no tree: nothing is placed). */
static void kept_replay(const struct plan *p, struct plan_ws *w, long B)
{
	w->nsharded = 0;
	memset(w->dev_load, 0, sizeof(double) * (size_t)p->devs);
	memset(w->dev_store, 0, sizeof(double) * (size_t)p->devs);
	memset(w->gpu_store, 0, sizeof(double) * (size_t)p->gpus);
	for (long j = 0; j < B; j++) {
		int n = w->nshard[j];
		if (n) {
			for (int k = 0; k < n; k++) {
				int dev = w->shard_dev[j * PLAN_MAX_SHARDS + k];
				add_share(p, w, w->req_pool[j], plan_gpu_of(p, dev), dev, 1.0 / n);
			}
			w->nsharded++;
			continue;
		}
		const double *e = p->by_key + PLAN_BK_N * w->req_key[j];
		int dev = w->req_dev[j], g = w->req_gpu[j];
		w->dev_load[dev] += e[PLAN_BK_CTX], w->dev_store[dev] += e[PLAN_BK_STORE];
		w->gpu_store[g] += e[PLAN_BK_GSTORE];
	}
}

/* Grows what sample c keeps to the first B requests of w, with the state
 * after them; leaves c as it was where that would pass its share of
 * PLAN_KEEP_BYTES (the plan's, over its workspaces and samples) or memory
 * runs out (the next call places afresh). */
static void kept_save(const struct plan *p, struct plan_ws *w, struct plan_placed *c, long B,
		      long first_bad, double fail_s, double fail_sg)
{
	int D = p->devs, G = p->gpus;
	long sh_need = 0;
	for (long j = c->n; j < B; j++)
		sh_need += w->nshard[j];
	sh_need += c->nsh_used;
	double share = PLAN_KEEP_BYTES / p->d.samples / (1 + p->nhelper); /* one workspace's */
	if ((double)B * (3 * sizeof(int) + 1) + (double)sh_need * sizeof(int) +
		    (2.0 * D + G) * sizeof(double) + (double)G * sizeof(int) > share)
		return;
	if (B > c->cap) {
		long cap = B > 2 * c->cap ? B : 2 * c->cap;
		if ((double)cap * (3 * sizeof(int) + 1) > share / 2)
			cap = B;
		int *dev = realloc(c->dev, sizeof(int) * (size_t)cap);
		if (dev)
			c->dev = dev;
		int *gpu = realloc(c->gpu, sizeof(int) * (size_t)cap);
		if (gpu)
			c->gpu = gpu;
		int *pool = realloc(c->pool, sizeof(int) * (size_t)cap);
		if (pool)
			c->pool = pool;
		unsigned char *nsh = realloc(c->nsh, (size_t)cap);
		if (nsh)
			c->nsh = nsh;
		if (!dev || !gpu || !pool || !nsh)
			return;
		c->cap = cap;
	}
	if (sh_need > c->sh_cap) {
		long cap = sh_need > 2 * c->sh_cap ? sh_need : 2 * c->sh_cap;
		int *sh = realloc(c->sh, sizeof(int) * (size_t)cap);
		if (!sh)
			return;
		c->sh = sh, c->sh_cap = cap;
	}
	if (!c->state) {
		c->state = malloc(sizeof(double) * (2 * (size_t)D + (size_t)G));
		c->cnt = malloc(sizeof(int) * (size_t)G);
		if (!c->state || !c->cnt) {
			free(c->state), free(c->cnt);
			c->state = NULL, c->cnt = NULL;
			return;
		}
	}
	for (long j = c->n; j < B; j++) {
		int k = w->nshard[j];
		c->dev[j] = w->req_dev[j], c->gpu[j] = w->req_gpu[j], c->pool[j] = w->req_pool[j];
		c->nsh[j] = (unsigned char)k;
		if (k)
			memcpy(c->sh + c->nsh_used, w->shard_dev + j * PLAN_MAX_SHARDS,
			       sizeof(int) * (size_t)k), c->nsh_used += k;
	}
	memcpy(c->state, w->dev_load, sizeof(double) * (size_t)D);
	memcpy(c->state + D, w->dev_store, sizeof(double) * (size_t)D);
	memcpy(c->state + 2 * D, w->gpu_store, sizeof(double) * (size_t)G);
	memcpy(c->cnt, w->gpu_placed, sizeof(int) * (size_t)G);
	memcpy(c->rng, gsl_rng_state(w->rng), gsl_rng_size(w->rng)); /* after B draws */
	c->n = B, c->first_bad = first_bad, c->nsharded = w->nsharded;
	c->fail_s = fail_s, c->fail_sg = fail_sg;
}

/* Online placement from what sample c kept: its first min(B, c->n)
 * requests as they were, the rest placed on the state after them (and
 * kept).  The same placement, bit for bit, as place_memory's. */
static int place_kept(const struct plan *p, struct plan_ws *w, long B, struct plan_placed *c)
{
	if (c->n >= B) {
		kept_copy(w, c, B);
		kept_replay(p, w, B);
		return c->first_bad >= B;
	}
	long n = c->n;
	double fail_s = INFINITY, fail_sg = INFINITY;
	if (n > 0) {
		int D = p->devs, G = p->gpus;
		kept_copy(w, c, n);
		memset(w->nshard + n, 0, sizeof(int) * (size_t)(B - n));
		memcpy(w->dev_load, c->state, sizeof(double) * (size_t)D);
		memcpy(w->dev_store, c->state + D, sizeof(double) * (size_t)D);
		memcpy(w->gpu_store, c->state + 2 * D, sizeof(double) * (size_t)G);
		memcpy(w->gpu_placed, c->cnt, sizeof(int) * (size_t)G);
		w->nsharded = c->nsharded;
		fail_s = c->fail_s, fail_sg = c->fail_sg;
	} else {
		place_reset(p, w, B);
		memset(w->gpu_placed, 0, sizeof(int) * (size_t)p->gpus);
	}
	long bad = place_run(p, w, n, B, 0, &fail_s, &fail_sg);
	if (n > 0 && c->first_bad < n)
		bad = c->first_bad;
	kept_save(p, w, c, B, bad, fail_s, fail_sg);
	return bad >= B;
}

/* Whether unit totals store and gstore (round_robin's) hold every cache:
 * no GPU's HBM past its weights and reserve, no device past its capacity
 * less reserve. */
static int placement_fits(const struct plan *p, const double *store, const double *gstore)
{
	for (int g = 0; g < p->gpus; g++)
		if (gstore[g] + (p->has_mem ? 0 : store[g]) > p->free_gpu + PLAN_SLACK_BYTES)
			return 0;
	for (int dev = 0; p->has_mem && dev < p->devs; dev++)
		if (store[dev] > p->cap_mem + PLAN_SLACK_BYTES)
			return 0;
	return 1;
}

/* System hot_in_hbm: with every request's index keys already in its
 * GPU's HBM, the requests whose whole cache fits in what HBM has left move
 * it there from their device, shortest first (the most requests for the
 * room, which spares the link the most gathers: in the baseline's
 * favour).  order: the batch longest first, or NULL to sort it into
 * w->req_order. */
static void keep_hot(const struct plan *p, struct plan_ws *w, long B, const int *order)
{
	memset(w->req_hot, 0, (size_t)B);
	w->nhot = 0;
	if (!order) {
		plan_order_longest(w, B, w->req_order);
		order = w->req_order;
	}
	for (long t = B - 1; t >= 0; t--) {
		int j = order[t];
		if (w->nshard[j])
			continue;
		int r = w->req_pool[j], g = w->req_gpu[j], dev = w->req_dev[j];
		double s = p->store[r];
		if (s > p->free_gpu - w->gpu_store[g] + PLAN_SLACK_BYTES)
			continue;
		w->req_hot[j] = 1, w->nhot++;
		w->gpu_store[g] += s, w->dev_store[dev] -= s;
	}
}

int plan_kept_swap(struct plan *p, struct plan *base)
{
	const struct ksystem *a = p->d.sys, *b = base->d.sys;
	if (p->devs != base->devs || p->gpus != base->gpus || p->hot != base->hot ||
	    p->free_gpu != base->free_gpu || p->cap_mem != base->cap_mem ||
	    a->gpus_per_node != b->gpus_per_node || a->kv_shard != b->kv_shard ||
	    a->admission != b->admission || a->placement != b->placement ||
	    !plan_pool_same(p, base)) /* the same requests and cache bytes */
		return 0;
	struct plan_placed *k = p->ws->kept;
	int n = p->ws->nkept;
	p->ws->kept = base->ws->kept, p->ws->nkept = base->ws->nkept;
	base->ws->kept = k, base->ws->nkept = n;
	return 1;
}

/* Places the batch by the rule (plan_place, without keep_hot). */
static const int *place(const struct plan *p, struct plan_ws *w, long B, int sample)
{
	if (p->d.sys->admission == ADMIT_ROUND_ROBIN) {
		place_round_robin(p, w, B);
		return NULL;
	}
	/* online placement is in arrival order: NULL says so (CMR then sorts
	 * the batch itself) */
	int lpt = p->d.sys->placement == PLACE_OFFLINE_LPT;
	const int *order = lpt ? w->req_order : NULL;
	int kept = !lpt && !w->keep_off && w->kept && sample >= 0 && sample < w->nkept;
	if (kept ? place_kept(p, w, B, &w->kept[sample]) : place_memory(p, w, B))
		return order;
	round_robin(p, w, B, w->rr_load, w->rr_store, w->rr_gstore, NULL, NULL);
	if (!placement_fits(p, w->rr_store, w->rr_gstore))
		return order;
	place_round_robin(p, w, B);
	return NULL;
}

/* Places the batch by the system's rule; returns the order in which the
 * requests were placed (w->req_order), or NULL for arrival order.  Memory-aware
 * placement that cannot hold every request falls back to round-robin
 * where that holds them all (so it never admits fewer); where neither
 * does, the memory-aware placement is the one reported (round-robin is
 * tried on the side, so the placement stays in p).  With
 * system.hot_in_hbm, then keep_hot. */
const int *plan_place(const struct plan *p, struct plan_ws *w, long B, int sample)
{
	const int *order = place(p, w, B, sample);
	if (p->hot)
		keep_hot(p, w, B, order);
	return order;
}

/* w->by_gpu and gpu_start from req_gpu (a counting sort), each GPU's
 * requests in the order it received them: seq (the placement order), or
 * arrival order. */
void plan_group_by_gpu(const struct plan *p, struct plan_ws *w, long B, const int *seq)
{
	int G = p->gpus;
	memset(w->gpu_start, 0, sizeof(int) * (size_t)(G + 1));
	for (long j = 0; j < B; j++)
		w->gpu_start[w->req_gpu[j] + 1]++;
	for (int g = 0; g < G; g++)
		w->gpu_start[g + 1] += w->gpu_start[g];
	memcpy(w->gpu_cursor, w->gpu_start, sizeof(int) * (size_t)G);
	for (long t = 0; t < B; t++) {
		int j = seq ? seq[t] : (int)t;
		w->by_gpu[w->gpu_cursor[w->req_gpu[j]]++] = j;
	}
}

