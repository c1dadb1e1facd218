/* place.c: placing a sampled batch's requests on GPUs and memory devices:
 * memory-aware (longest first onto the device with the most free room,
 * split over a node's devices when no one device holds a request) or
 * round-robin, and grouping each GPU's requests in the order it received
 * them.  Part of solve/ (plan.h). */
#include "solve/plan.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

void plan_order_longest(struct plan *p, long B, int *out)
{
	/* a stable radix sort on the key, two passes of PLAN_RADIX_BITS: the
	 * low digit (from arrival order) into scratch, the high one into out;
	 * both digits are counted in one read */
	_Static_assert(2 * PLAN_RADIX_BITS == PLAN_POOL_BITS, "two radix passes cover the key");
	enum { R = 1 << PLAN_RADIX_BITS };
	const int *key = p->req_key;
	int *mid = p->scratch;
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

static void place_reset(struct plan *p, long B)
{
	memset(p->nshard, 0, sizeof(int) * (size_t)B);
	p->nsharded = 0;
	memset(p->dev_load, 0, sizeof(double) * (size_t)p->devs);
	memset(p->dev_store, 0, sizeof(double) * (size_t)p->devs);
	memset(p->gpu_store, 0, sizeof(double) * (size_t)p->gpus);
}

/* A share of pool entry r (1: all of it, 1/n: one of n slices) on device
 * dev and GPU g. */
static void add_share(struct plan *p, int r, int g, int dev, double share)
{
	p->dev_load[dev] += p->ctx[r] * share;
	p->dev_store[dev] += p->store[r] * share;
	p->gpu_store[g] += p->store_gpu[r] * share;
}

/* GPU by arrival; the least loaded of the GPU's devices.  Each unit's
 * summed context, cache bytes and the GPUs' index-key bytes into load,
 * store and gstore; each request's GPU and device into rgpu and rdev
 * unless they are NULL (a trial: does it fit?). */
static void round_robin(struct plan *p, long B, double *load, double *store, double *gstore,
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
		int r = p->req_pool[j];
		load[dev] += p->ctx[r], store[dev] += p->store[r], gstore[g] += p->store_gpu[r];
	}
}

static void place_round_robin(struct plan *p, long B)
{
	place_reset(p, B);
	round_robin(p, B, p->dev_load, p->dev_store, p->gpu_store, p->req_gpu, p->req_dev);
}

/* Free bytes of a placement unit: a GPU's HBM (no memory devices: every
 * cache there) or a memory device. */
static double room_of(const struct plan *p, int u)
{
	if (!p->has_mem)
		return p->free_gpu - p->dev_store[u] - p->gpu_store[u];
	return p->cap_mem - p->dev_store[u];
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

/* Unit u's key in placement order: its room, then summed context, then
 * rank. */
static inline struct plan_tkey key_of(const struct plan *p, int u)
{
	return (struct plan_tkey){room_bits(room_of(p, u)), p->dev_load[u], p->dev_rank[u]};
}

/* Key a goes before key b: more room, then less summed context, then the
 * lower rank in the order that takes each GPU's first device, then each
 * GPU's second, ... (p->dev_rank: with equal contexts requests are dealt
 * to the GPUs in turn, as arrival order does). */
static inline int key_before(const struct plan_tkey *a, const struct plan_tkey *b)
{
	if (a->room == b->room)
		return a->load < b->load || (a->load == b->load && a->rank < b->rank);
	return a->room > b->room;
}

/* Device a goes before device b (the scan's form of key_before). */
static inline int before(const struct plan *p, int a, int b)
{
	struct plan_tkey ka = key_of(p, a), kb = key_of(p, b);
	return key_before(&ka, &kb);
}

/* Placement keeps the units in a tournament tree: leaf P + u holds unit u
 * (P = p->tour_p, a power of two >= D; leaves past D hold -1, whose room
 * of -infinity never wins) and every inner node the winner of its two
 * children by `key_before`, with the winner's key beside it (p->tour_key),
 * so the root p->tour[1] is the unit that goes first.  `key_before` is a
 * strict order, so the root is the minimum a scan of every unit would
 * find.  A placement changes only the units it placed on, and each change
 * replays the log2 P matches on that unit's path: the winner so far
 * against the sibling. */
static void tour_update(struct plan *p, int u)
{
	int *t = p->tour;
	struct plan_tkey *key = p->tour_key, kw = key_of(p, u);
	int i = p->tour_p + u, w = u;
	t[i] = w, key[i] = kw;
	for (; i > 1; i >>= 1) {
		const struct plan_tkey *ks = &key[i ^ 1];
		int take = key_before(ks, &kw);
		w = take ? t[i ^ 1] : w;
		kw = take ? *ks : kw;
		t[i >> 1] = w, key[i >> 1] = kw;
	}
}

/* The whole tree from the units' keys: the leaves, then each inner node
 * from its children, bottom up (P - 1 matches). */
static void tour_build(struct plan *p, int D)
{
	int P = p->tour_p, *t = p->tour;
	struct plan_tkey *key = p->tour_key;
	for (int u = 0; u < P; u++) {
		t[P + u] = u < D ? u : -1;
		key[P + u] = u < D ? key_of(p, u) : (struct plan_tkey){room_bits(-INFINITY), 0, 0};
	}
	for (int i = P - 1; i >= 1; i--) {
		int c = key_before(&key[2 * i + 1], &key[2 * i]) ? 2 * i + 1 : 2 * i;
		t[i] = t[c], key[i] = key[c];
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
static inline int fits_bytes(const struct plan *p, int dev, int g, double s, double sg)
{
	if (!p->has_mem)
		return s + sg <= room_of(p, dev) + PLAN_SLACK_BYTES;
	return s <= room_of(p, dev) + PLAN_SLACK_BYTES &&
	       sg <= p->free_gpu - p->gpu_store[g] + PLAN_SLACK_BYTES;
}

/* Splits request j (pool entry r), which no device holds whole, into n
 * equal slices on n devices of one node (decode context parallelism: each
 * slice holds and scans its share of the context), the fewest n of any
 * node, ties to the node with the most room in those devices.  Returns
 * 0 when no node can hold it in PLAN_MAX_SHARDS slices. */
static int shard(struct plan *p, long j, int r, int *cnt)
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
			else if (room_of(p, dev) > room_of(p, top[PLAN_MAX_SHARDS - 1]))
				i = PLAN_MAX_SHARDS - 1;
			else
				continue;
			top[i] = dev;
			for (; i > 0 && room_of(p, top[i]) > room_of(p, top[i - 1]); i--) {
				int t = top[i];
				top[i] = top[i - 1], top[i - 1] = t;
			}
		}
		for (int n = 2; n <= nt; n++) {
			int ok = 1;
			for (int k = 0; k < n && ok; k++)
				ok = fits_bytes(p, top[k], plan_gpu_of(p, top[k]), p->store[r] / n,
						p->store_gpu[r] / n);
			if (!ok)
				continue;
			double room = 0;
			for (int k = 0; k < n; k++)
				room += room_of(p, top[k]);
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
	p->req_gpu[j] = home, p->req_dev[j] = best_dev[0];
	p->nshard[j] = n;
	for (int k = 0; k < n; k++) {
		p->shard_dev[j * PLAN_MAX_SHARDS + k] = best_dev[k];
		add_share(p, r, plan_gpu_of(p, best_dev[k]), best_dev[k], 1.0 / n);
	}
	cnt[home]++;
	p->nsharded++;
	return 1;
}

/* Longest first onto the device (the GPU itself without memory devices)
 * with the most free room that can hold the request, ties to the lowest
 * summed context.  A request no device can hold goes to the roomiest one,
 * which it overfills: the capacity check then fails this sample.  Returns
 * whether every request fitted.  Devices are kept in a tournament tree by
 * room (a placement only shrinks its device's room); where index keys also take
 * HBM (the GPU runs the scan) or several GPUs share one device, they are
 * scanned instead. */
static int place_memory(struct plan *p, long B)
{
	place_reset(p, B);
	plan_order_longest(p, B, p->req_order);
	int D = p->devs, ok = 1;
	int scan = p->has_mem && D < p->gpus;
	int *cnt = p->n_big; /* requests per GPU so far (group_by_gpu reuses it) */
	memset(cnt, 0, sizeof(int) * (size_t)p->gpus);
	tour_build(p, D);
	/* Rooms only shrink during a placement, so a split that failed for
	 * caches of (s, sg) fails for any as large; and none succeeds when even
	 * the roomiest device cannot take one slice.  Both skip shard()'s scan
	 * of every node, which an overfull batch would pay per request.  The
	 * tree's root (p->tour[1]) is the device with the most room. */
	double fail_s = INFINITY, fail_sg = INFINITY;
	for (long t = 0; t < B; t++) {
		long j = p->req_order[t];
		/* its context and cache bytes, read in key order (p->by_key) */
		const double *e = p->by_key + PLAN_BK_N * p->req_key[j];
		double need = e[PLAN_BK_STORE], need_g = e[PLAN_BK_GSTORE];
		int dev, root = p->tour[1];
		if (!scan &&
		    (!p->keys_on_gpu || fits_bytes(p, root, gpu_for(p, root, cnt), need, need_g))) {
			dev = root;
		} else { /* the best device that holds it, else the roomiest */
			int best = -1, roomy = -1;
			for (int k = 0; k < D; k++) {
				if (roomy < 0 || before(p, k, roomy))
					roomy = k;
				if (fits_bytes(p, k, gpu_for(p, k, cnt), need, need_g) &&
				    (best < 0 || before(p, k, best)))
					best = k;
			}
			dev = best >= 0 ? best : roomy;
		}
		int g = gpu_for(p, dev, cnt);
		int fit = fits_bytes(p, dev, g, need, need_g);
		if (!fit && p->d.sys->kv_shard == SHARD_ON && !(need >= fail_s && need_g >= fail_sg) &&
		    (scan || need / PLAN_MAX_SHARDS <= room_of(p, root) + PLAN_SLACK_BYTES)) {
			if (shard(p, j, p->req_pool[j], cnt)) {
				for (int k = 0; !scan && k < p->nshard[j]; k++) /* its slices'
									    * devices have less room */
					tour_update(p, p->shard_dev[j * PLAN_MAX_SHARDS + k]);
				continue;
			}
			fail_s = need, fail_sg = need_g;
		}
		ok &= fit;
		p->req_gpu[j] = g, p->req_dev[j] = dev;
		p->dev_load[dev] += e[PLAN_BK_CTX], p->dev_store[dev] += need;
		p->gpu_store[g] += need_g;
		cnt[g]++;
		if (!scan) /* its room shrank (the root's, or another's where the GPU's
			    * room sent it elsewhere) */
			tour_update(p, dev);
	}
	return ok;
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

/* Places the batch by the system's rule; returns the order in which the
 * requests were placed (p->req_order), or NULL for arrival order.  Memory-aware
 * placement that cannot hold every request falls back to round-robin
 * where that holds them all (so it never admits fewer); where neither
 * does, the memory-aware placement is the one reported (round-robin is
 * tried on the side, so the placement stays in p). */
const int *plan_place(struct plan *p, long B)
{
	if (p->d.sys->admission == ADMIT_ROUND_ROBIN) {
		place_round_robin(p, B);
		return NULL;
	}
	if (place_memory(p, B))
		return p->req_order;
	round_robin(p, B, p->rr_load, p->rr_store, p->rr_gstore, NULL, NULL);
	if (!placement_fits(p, p->rr_store, p->rr_gstore))
		return p->req_order;
	place_round_robin(p, B);
	return NULL;
}

/* byg and gstart from rgpu (counting sort), each GPU's requests in the
 * order it received them: seq (the placement order), or arrival order. */
void plan_group_by_gpu(struct plan *p, long B, const int *seq)
{
	int G = p->gpus;
	memset(p->gpu_start, 0, sizeof(int) * (size_t)(G + 1));
	for (long j = 0; j < B; j++)
		p->gpu_start[p->req_gpu[j] + 1]++;
	for (int g = 0; g < G; g++)
		p->gpu_start[g + 1] += p->gpu_start[g];
	memcpy(p->n_big, p->gpu_start, sizeof(int) * (size_t)G); /* cursors */
	for (long t = 0; t < B; t++) {
		int j = seq ? seq[t] : (int)t;
		p->by_gpu[p->n_big[p->req_gpu[j]]++] = j;
	}
}

