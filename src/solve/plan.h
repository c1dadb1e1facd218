/* plan.h: internal to solve/: the precomputed state of one design point
 * (struct plan) shared by its files: plan.c builds it (the pool of sampled
 * requests, their cache-side costs, the GPU phase times), place.c puts a
 * sampled batch's requests on GPUs and devices, sample.c evaluates one
 * sampled batch, eval.c samples many at one batch, search.c solves for
 * the largest batch.  Every function here is plan_-prefixed. */
#ifndef KARAT_SOLVE_PLAN_H
#define KARAT_SOLVE_PLAN_H

#include "base/limits.h"

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "cost/attn.h"
#include "cost/step.h"
#include "solve/solve.h"

#define PLAN_POOL_BITS 12
#define PLAN_POOL (1 << PLAN_POOL_BITS) /* contexts drawn per plan; sampled batches
				 draw their requests from this pool (16x more
				 moved GLM-5.2's GPU-only answer no more than
				 changing the seed does, at 4x the plan cost) */
#define PLAN_RADIX_BITS (PLAN_POOL_BITS / 2)
#define PLAN_SLACK_BYTES 0.5  /* storage sums are whole bytes; "exactly full" fits */

enum { PLAN_BK_CTX, PLAN_BK_STORE, PLAN_BK_GSTORE, PLAN_BK_N }; /* plan.by_key */

/* Where each operator sits in a layer's chain (sched/pipeline.h). */
enum phase { PH_NONE, PH_PRE, PH_POST, PH_DISP, PH_EXP, PH_COMB, PH_TAIL, PH_CACHE, PH_N };

extern const unsigned char phase_of[OP_N];

/* Roofline of one cache-side slot on the device that runs it. */
struct plan_slot_rate {
	double ic, im, ovh; /* s per FLOP, s per byte, s per instance */
	double floor;       /* s, the least time of an instance */
	const struct kdevice *dev; /* the device that runs it (its overlap) */
	double ef, eb;      /* J per FLOP, J per byte on that device (0: none given) */
	int on_gpu;         /* unsupported on the memory device: the GPU runs it */
	int after;          /* on the GPU after the device's gather (attention
			       over rows the link brings back): priced after
			       the link, not before it */
};

/* Which slots a bucket's time or energy covers: the memory device's, the
 * GPU's before the device's stages, the GPU's after them. */
enum plan_where { W_DEVICE, W_GPU_PRE, W_GPU_POST };

/* Per kind of layer (and the tail) in plan_gpu_phases' memo: the phase
 * seconds, then the GPU's activity energy (J, all but the all-to-all) and
 * the all-to-all bytes leaving it. */
#define PLAN_PH_ENERGY PH_N
#define PLAN_PH_A2A (PH_N + 1)
#define PLAN_PH_STRIDE (PH_N + 2)

struct plan_vmap {
	int f, b; /* index of a slot's FLOPs and bytes among the packed values */
};

#define PLAN_MAX_VALUES (4 * ATTN_MAX_SLOTS)

/* The packed values one device (a memory device, or a GPU's fallback
 * stages) sums over its requests.  Most are affine in the context over the
 * whole pool (a + b L: FLOPs and bytes of a scan grow with L, a top-k
 * selection of fixed size is constant), so a bucket needs only its count
 * and summed context for them; the rest are summed request by request. */
struct plan_side {
	int k;             /* packed values */
	int nres;          /* of which summed per request */
	int pos[PLAN_MAX_VALUES];     /* value -> index among the summed ones, -1: affine */
	double a[PLAN_MAX_VALUES], b[PLAN_MAX_VALUES];
	double *pool;      /* PLAN_POOL x nres */
	double *acc;       /* (mb, unit) x nres */
	double *suml;      /* (mb, unit): summed contexts */
};

/* The fluid path (fluid.c): a batch with many requests per device is
 * evaluated from its sums.  The pool, in longest-first order, is cut into
 * PLAN_FLUID_STRATA strata of equal size; a sample draws each stratum's
 * request count (the multinomial's normal limit) and its summed values
 * (the normal limit of the sum: the stratum's mean and covariance), and
 * shares them out as the exact path's placement and micro-batch rules do
 * in the limit of many requests per device (DESIGN.md section 5). */
#define PLAN_FLUID_STRATA 64
#define PLAN_FLUID_VALUES 24  /* context, cache bytes on the device and in
				 HBM, and the per-request sums of both sides */
#define PLAN_FLUID_MIN 64     /* requests per (micro-batch, device), at least */
#define PLAN_FLUID_PER_STRATUM 16 /* requests per stratum, at least */
#define PLAN_FLUID_GRAIN 16   /* a device's mean cache bytes over the
				 largest request's, at least */
#define PLAN_FLUID_EXCESS 3   /* requests the exact placement's busiest GPU
				 holds over an even share: 0-2 in every
				 sample but one (4) of 256 in each of 7
				 designs at 128-8,192 per GPU (README) */
#define PLAN_FLUID_STEP 0.005 /* the GPU's work over that many requests more
				 grows by no more than this (no tile edge) */

struct plan_fluid {
	int state;      /* 0: not built; 1: built; -1: not available */
	int k, nm, ng;  /* values per request; of which per-request sums of
			   the memory side and of the GPU side */
	int rank[PLAN_FLUID_STRATA]; /* factor columns kept per stratum */
	double max_store, max_store_gpu;  /* the pool's largest request */
	int alike;      /* every pool entry stores the same bytes */
	struct plan_strata *st; /* allocated when built (300 KB a plan would
				   otherwise clear without using) */
};

/* Each stratum's mean and covariance factor (fluid.c). */
struct plan_strata {
	double mu[PLAN_FLUID_STRATA][PLAN_FLUID_VALUES];
	/* covariance factor: column r of stratum s is fac[s][r][0..k) */
	double fac[PLAN_FLUID_STRATA][PLAN_FLUID_VALUES][PLAN_FLUID_VALUES];
};

/* One micro-batch's load, as the pricing reads it: from the buckets of
 * placed requests (sample.c) or from a fluid sample's sums (fluid.c). */
struct plan_mb {
	int n;             /* requests on its busiest GPU */
	double c, n_port;  /* requests on its busiest device link and GPU port */
	double attn[LC_N], attn_m; /* slowest device's cache-side seconds: the
				      layers by class, the MTP layer */
	double fb[LC_N], fbm;      /* the same for the stages the GPU runs
				      before the device's */
	double fbp[LC_N], fbpm;    /* ... and after them (attention over the
				      rows the device gathered) */
	double merge;      /* s per step: split requests' partial outputs */
	double energy;     /* J: its GPUs' operators and its cache-side work */
};

/* A placement unit's key in the tournament tree (place.c): free room,
 * summed context, tie-break rank. */
struct plan_tkey {
	uint64_t room; /* free room, as an integer of the same order */
	double load;
	int rank;
};

/* What one sampled batch adds to an evaluation's means: kept per sample
 * so that the means are summed in sample order whatever order the samples
 * ran in (eval.c). */
struct plan_sampled {
	double busy[RES_N], bubble[RES_N];
	double energy, ctx, shards;
	int mb;
};

struct plan {
	struct design d;
	int gpus;           /* G */
	int devs;           /* memory devices (D); the GPUs themselves without */
	int devs_per_gpu;   /* D / G when D >= G, else 1 */
	int gpus_per_dev;   /* G / D when D < G, else 1 */
	int link_units;     /* links priced apart: max(D, G) */
	int has_mem;        /* the system has memory devices */
	int in_hbm;         /* they are the GPUs' own HBM (system.memdev_in_hbm):
			       caches in what the weights leave, power within
			       the GPU's TDP */
	double q;           /* query tokens per request per step (1 + draft) */
	double layers;      /* decoder layers */
	double weights;     /* weight bytes per GPU */
	struct attn_layout layout, layout_mtp; /* cache-side slots: the layers, the MTP layer */
	struct plan_slot_rate slot_dev[ATTN_MAX_SLOTS], slot_dev_mtp[ATTN_MAX_SLOTS];
	/* the pool: contexts, cache-side FLOPs and bytes of each request packed
	 * into the values its memory device (mem_side, per device) and its GPU
	 * (gpu_side, fallback stages) accumulate; slot s of the layers reads
	 * value slot_map[s].f and slot_map[s].b (-1: zero for every request),
	 * slot_map_mtp for the MTP layer */
	double *ctx, *store, *store_gpu;
	double mean_store, mean_store_gpu; /* over the pool */
	int *rank;                 /* order of each pool entry by context */
	double *by_key;            /* PLAN_BK_N values (PLAN_BK_*) of the entry with
				      each pool_key, so that the placement, which
				      runs in key order, reads them in order */
	int *pool_key;             /* its longest-first position: PLAN_POOL - 1 - rank
				      (0 for all when the pool is alike) */
	int pool_alike;            /* every entry is the same request (a fixed
				      context): every sample is the same batch */
	struct plan_side mem_side, gpu_side;
	struct plan_vmap slot_map[ATTN_MAX_SLOTS], slot_map_mtp[ATTN_MAX_SLOTS];
	double clipped;
	/* GPU phase seconds per step for n requests per GPU in a micro-batch */
	/* the kinds of decoder layer (cost/step.h) and which each layer is */
	int nkinds;
	struct layer_kind kinds[PIPE_MAX_CLASSES];
	double kind_layers[PIPE_MAX_CLASSES];
	unsigned char layer_kind[PIPE_MAX_LAYERS];
	/* GPU phase seconds for n requests per GPU in a micro-batch: one layer
	 * of each kind, then the tail ((nkinds + 1) x PLAN_PH_STRIDE per n) */
	double *memo;
	unsigned char *memo_ok;
	long memo_cap;
	/* per request of the batch being sampled, sized for cap_batch */
	long cap_batch;
	int *req_pool;      /* its entry in the pool */
	int *req_key;       /* that entry's pool_key (the longest-first sort key) */
	int *req_gpu, *req_dev, *req_mb; /* where it runs, its micro-batch */
	int *req_order, *scratch; /* orderings (CMR's longest first), scratch */
	int *by_gpu;        /* requests grouped by GPU, ascending within a GPU */
	int *gpu_start;     /* G + 1: GPU g's requests are by_gpu[gpu_start[g] ..] */
	int *tour;          /* placement: a tournament tree of the units by free
			       room (place.c), 2 tour_p entries */
	struct plan_tkey *tour_key; /* each node's winner's key */
	int tour_p;         /* its leaves: the least power of two >= the units */
	int keys_on_gpu;    /* index keys stay in HBM (the GPU runs the scan) */
	int has_post;       /* some slot runs on the GPU after the device's gather */
	double cls_back[LC_N]; /* per request per step, by layer class: the bytes
				  the device links carry back (the attention
				  output, or the gathered rows the GPU attends) */
	double mtp_link;    /* the same out and back for the MTP layer */
	double post_b[ATTN_MAX_SLOTS], post_bm[ATTN_MAX_SLOTS]; /* an after slot's
				  bytes per instance, mean over the pool (the
				  layers', the MTP layer's) */
	/* per request per step, by layer class: the bytes the device link
	 * carries out (with the GPU running the scan and top-k: not the
	 * indexer's rows and query, but the selected indices) */
	double cls_out[LC_N];
	double cap_gpu, cap_mem; /* cache capacity of a GPU and a memory device
				    (capacity less its reserve; cap_gpu before
				    weights) */
	double free_gpu;    /* HBM left for caches on a GPU (after weights) */
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
	double *rr_load, *rr_store, *rr_gstore; /* the same, for a trial round-robin (place.c) */
	int *dev_gpu;       /* the GPU of each device (the first, where GPUs
			       share one; without memory devices the unit is
			       the GPU) */
	int *dev_rank;      /* placement tie-break: GPUs' first devices, then
			       their second devices, ... */
	double *mb_load;    /* (device, micro-batch): summed context (CMR) */
	/* per (micro-batch, unit): requests on each GPU, device and link;
	 * CMR's count per (GPU, micro-batch) and its GPUs' big micro-batches */
	int *gpu_count, *dev_count, *link_count, *mb_count, *n_big;
	int *gpu_share;     /* CMR: per GPU, its count over m and the remainder */
	double *tbt, *use_gpu, *use_mem; /* per sample: step time, fullest GPU and device */
	gsl_rng *rng;
	struct step step;
	struct pipe_in pin; /* the pipeline input of the batch being sampled */
	struct kerr fail; /* why plan_sample or plan_gpu_phases failed */
	int has_energy;      /* every device gives its activity energy */
	int skip_energy;     /* the search's feasibility tests need none */
	double work_stop;    /* the least batch the search found past the work
				limit (INFINITY: none) */
	double mem_fail;     /* the least batch found whose caches alone fail
				(P99 of the fullest GPU or device over its
				capacity) where every count places it request
				by request, so at every count; INFINITY before
				one (eval.c) */
	int probe_energy;    /* ... unless the answer is to be its last probe's
				result, energy too (a solve at one count) */
	double energy_last;  /* the last sample's activity energy, J (NaN: none) */
	struct plan_sampled *per; /* per sample: what the evaluator sums */
	/* Worst-first order for an early-exit evaluation: each sample's
	 * worst ratio of step time to the SLO, or memory used to what it
	 * holds, when it was last evaluated (at any batch and count), and the
	 * order of those ratios, worst first.  No ratio yet: natural order. */
	double *score;
	size_t *order;
	int scored;
	double *p99_top;    /* eval.c's P99 bounds: the plan_p99_top(samples)
			       largest values so far of step time, GPU and
			       device bytes */
	double ctx_last;     /* the last sample's summed context */
	int fluid_now;       /* the batch being sampled comes from its sums (set
				by plan_eval_at from plan_fluid_ok; plan_inspect,
				a view of placed requests, clears it) */
	struct plan_mb mbl[PIPE_MAX_MB]; /* the last sample's non-empty micro-batches */
	struct plan_fluid fl;
};


/* plan.c */
/* Seconds of cache-side slot s for FLOPs f and bytes b per layer on the
 * device of sd (the roofline of cost/roofline.c, over s->layers). */
double plan_slot_time(const struct plan_slot_rate *sd, const struct attn_slot *s, double f, double b);
int plan_ensure_batch(struct plan *p, long B);
int plan_ensure_memo(struct plan *p, long n);
/* GPU-side seconds per phase for n requests per GPU (memoised):
 * PLAN_PH_STRIDE values (the phases, the energy, the all-to-all bytes) for
 * one layer of each kind in turn, then for the tail; NULL when a step
 * cannot be built, with the reason in p->fail. */
const double *plan_gpu_phases(struct plan *p, long n);
void plan_side_values(const struct plan_side *sd, int unit_idx, int cnt, double *v);
/* The packed values of cnt requests (a real count) with summed context L
 * and per-request sums res (sd->nres of them). */
void plan_side_eval(const struct plan_side *sd, double cnt, double L, const double *res,
		    double *v);
/* Activity energy (J) of n requests per GPU on one GPU in one
 * micro-batch (every kind of layer, the tail, its all-to-all bytes at
 * e_a2a J/byte); NaN when the step cannot be built (p->fail says why). */
double plan_gpu_energy(struct plan *p, long n, double e_a2a);
/* J per all-to-all byte: the share inside a node on the scale-up link. */
double plan_a2a_energy(const struct plan *p);
/* Seconds of the slots of lay that run where (enum plan_where: the
 * memory device, the GPU before it, the GPU after it), from a bucket's
 * packed sums v; per_class (LC_N, or NULL) gets them by layer class. */
double plan_bucket_time(const struct plan *p, const struct attn_layout *lay,
			const struct plan_slot_rate *sd, const struct plan_vmap *map,
			const double *v, int where, double *per_class);

/* Activity energy (J) of the slots of lay a bucket with sums v runs on the
 * GPU (want_gpu) or on the memory device. */
double plan_bucket_energy(const struct plan *p, const struct attn_layout *lay,
			  const struct plan_slot_rate *sd, const struct plan_vmap *map,
			  const double *v, int want_gpu);

/* place.c */
/* The requests of a batch in longest-first order (req_key; ties in
 * arrival order), into out (uses p->scratch as scratch). */
void plan_order_longest(struct plan *p, long B, int *out);
/* Places the B requests by the system's rule (rgpu, rdev, nshard and the
 * device and GPU stores); returns the order they were placed in, or NULL
 * for arrival order. */
const int *plan_place(struct plan *p, long B);
/* byg and gstart: each GPU's requests in the order it received them. */
void plan_group_by_gpu(struct plan *p, long B, const int *seq);
/* The GPU of device dev (the first, where GPUs share one). */
static inline int plan_gpu_of(const struct plan *p, int dev)
{
	return p->dev_gpu[dev];
}

/* Cache-ingest bytes per step for a batch of B (the whole system). */
double plan_ingest_bytes(const struct plan *p, long B);

/* sample.c: one sampled batch (sample s of a batch of B at m micro-batches):
 * placed, assigned, priced, scheduled (from its sums with p->fluid_now).  Returns the step time (infinite
 * when a stage cannot run) and the bytes on the fullest GPU and device;
 * NaN when it cannot be priced, with the reason in p->fail. */
double plan_sample(struct plan *p, long B, int m, int sample, struct pipe_out *po,
		   double *use_g, double *use_m);

/* search.c */
/* One micro-batch's GPU work (s) at n requests per GPU: every layer's
 * tasks on the GPU (before and after attention, the experts) and the
 * tail; NaN when the step cannot be built.  Non-decreasing in n. */
double plan_gpu_work(struct plan *p, long n);

/* fluid.c */
/* Whether a batch of B at m micro-batches takes the fluid path. */
int plan_fluid_ok(struct plan *p, long B, int m);
/* Whether it would but for a GEMM tile edge just above a GPU's even
 * share (where the exact path runs instead). */
int plan_fluid_edge(struct plan *p, long B, int m);
/* Sample s of a batch of B at m from its sums: p->mbl (and in->m's count
 * in *nmb), the fullest GPU's and device's bytes, p->ctx_last; the
 * energy of each micro-batch when want_energy.  -1 when a GPU step cannot
 * be built (p->fail says why). */
int plan_fluid_sample(struct plan *p, long B, int m, int sample, int want_energy, int *nmb,
		      double *use_g, double *use_m);

/* How many of n samples' largest values fix their P99 from below:
 * n - floor(0.99 (n - 1)), the rank of GSL's quantile's lower point. */
static inline int plan_p99_top(int n)
{
	return n - (int)(0.99 * (double)(n - 1));
}

/* eval.c: plan_eval at m micro-batches (1..16).  With `early`, runs the
 * samples worst first and stops as soon as the outcome is known to be
 * infeasible (the P99 of the samples run, the rest taken as 0, over the
 * SLO or a capacity) and returns 1; r is then incomplete.  Returns 0, or
 * -1 with err. */
int plan_eval_at(struct plan *p, double batch, int m, struct result *r,
		 int early, struct kerr *err);

/* The work of one evaluation at batch and m micro-batches: samples x
 * (requests placed + GPUs and devices + layers x micro-batches), a layer
 * of one micro-batch's pipeline taken as one placement (measured on the
 * 2-core development machine: GLM-5.2 at 16 micro-batches, 20,000
 * samples, 2.5e7 layer-micro-batches in 1.1 s; DeepSeek-V3.2 on 72
 * devices, 200,000 requests x 64 samples placed in 1.1 s).  The fluid
 * path places no request. */
double plan_work(struct plan *p, double batch, int m);

#endif
