/* plan.h: internal to solve/: the precomputed state of one design point
 * (struct plan) shared by its three files: plan.c builds it (the pool of
 * sampled requests, their cache-side costs, the GPU phase times), sample.c
 * evaluates one sampled batch on it, point.c samples many and solves. */
#ifndef KARAT_SOLVE_PLAN_H
#define KARAT_SOLVE_PLAN_H

#include <gsl/gsl_rng.h>

#include "cost/attn.h"
#include "cost/step.h"
#include "solve/point.h"

#define POOL_BITS 12
#define POOL (1 << POOL_BITS) /* contexts drawn per plan; sampled batches
				 draw their requests from this pool (16x more
				 moved GLM-5.2's GPU-only answer no more than
				 changing the seed does, at 4x the plan cost) */
#define RADIX_BITS (POOL_BITS / 2)
#define MB PIPE_MAX_MB
#define SLACK_BYTES 0.5  /* storage sums are whole bytes; "exactly full" fits */

/* Where each operator sits in a layer's chain (sched/pipeline.h). */
enum phase { PH_NONE, PH_PRE, PH_POST, PH_DISP, PH_EXP, PH_COMB, PH_TAIL, PH_CACHE, PH_N };

extern const unsigned char phase_of[OP_N];

/* Roofline of one cache-side slot on the device that runs it. */
struct slotdev {
	double ic, im, ovh; /* s per FLOP, s per byte, s per instance */
	int on_gpu;         /* unsupported on the memory device: the GPU runs it */
};

struct vmap {
	int f, b; /* index of a slot's FLOPs and bytes among the packed values */
};

#define MAXV (4 * ATTN_MAX_SLOTS)
#define MAX_SHARDS 8 /* slices of one request, at most */

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
	int *byg;           /* requests grouped by GPU, ascending within a GPU */
	int *gstart;        /* G + 1: GPU g's requests are byg[gstart[g] ..] */
	int *heap;          /* placement: units ordered by free room */
	int keys_on_gpu;    /* index keys stay in HBM (the GPU runs the scan) */
	double cap_g, cap_m; /* cache capacity of a GPU and a memory device
				(capacity less its reserve; cap_g before weights) */
	double free_g;      /* HBM left for caches on a GPU (after weights) */
	const int *placed;  /* the last sample's placement order, or NULL */
	/* requests split over devices (decode context parallelism) */
	int *nshard;        /* per request: its slices, 0 when whole */
	int *shard_dev;     /* per request: the devices of its slices */
	long nsharded;      /* requests split in the last sample */
	double merge_bytes; /* per remote slice per step: partial outputs and
			       top-k candidates to the request's GPU */
	/* cache ingest: each admitted request's KV and index rows reach the
	 * device that will hold them */
	double adm_rate;    /* admissions per request in the batch per step */
	double ingest_req;  /* bytes moved per admission */
	double *lctx_view;  /* plan_inspect's contexts */
	double *dev_load, *dev_store, *gpu_store;
	int *dev_rank;      /* placement tie-break: GPUs' first devices, then
			       their second devices, ... */
	double *mbload;
	int *gcnt, *dcnt, *lcnt, *ccnt, *nbig;
	double *tbt, *use_g, *use_m;
	gsl_rng *rng;
	struct step step;
	struct kerr fail; /* why plan_sample returned NaN */
};


/* plan.c */
/* Seconds of cache-side slot s for FLOPs f and bytes b per layer on the
 * device of sd (the roofline of cost/roofline.c, over s->layers). */
double slot_time(const struct slotdev *sd, const struct attn_slot *s, double f, double b);
int ensure_batch(struct plan *p, long B);
int ensure_memo(struct plan *p, long n);
/* GPU-side seconds per phase for n requests per GPU (memoised); NULL when
 * the step cannot be built, with the reason in p->fail. */
const double *gpu_phases(struct plan *p, long n);
void side_values(const struct side *sd, int unit_idx, int cnt, double *v);
double bucket_time(const struct plan *p, const struct attn_layout *lay,
		   const struct slotdev *sd, const struct vmap *map, const double *v,
		   int want_gpu);

/* place.c */
/* The requests of a batch in longest-first order (pool rank), into out
 * (uses p->tmp as scratch). */
void order_longest(struct plan *p, long B, int *out);
/* Places the B requests by the system's rule (rgpu, rdev, nshard and the
 * device and GPU stores); returns the order they were placed in, or NULL
 * for arrival order. */
const int *plan_place(struct plan *p, long B);
/* byg and gstart: each GPU's requests in the order it received them. */
void plan_group_by_gpu(struct plan *p, long B, const int *seq);
/* The GPU of device dev (the first, where GPUs share one). */
int plan_gpu_of(const struct plan *p, int dev);

/* Cache-ingest bytes per step for a batch of B (the whole system). */
double plan_ingest_bytes(const struct plan *p, long B);

/* sample.c: one sampled batch (sample s of a batch of B at m micro-batches):
 * placed, assigned, priced, scheduled.  Returns the step time (infinite
 * when a stage cannot run) and the bytes on the fullest GPU and device;
 * NaN when it cannot be priced, with the reason in p->fail. */
double plan_sample(struct plan *p, long B, int m, int sample, struct pipe_out *po,
		   double *use_g, double *use_m);

#endif
