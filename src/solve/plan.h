/* plan.h: internal to solve/: a design point's plan (struct plan, read
 * only once built) and the workspace its evaluations write (struct
 * plan_ws, in solve/ws.h, which only this header includes).  pool.c
 * draws and packs the pool of sampled requests, plan.c builds plans and
 * workspaces, price.c prices the GPU side and the cache side's buckets,
 * place.c places a batch's requests, assign.c gives them to
 * micro-batches, fluid.c evaluates a large batch from its sums, sample.c
 * one sampled batch, eval.c many at one batch, search.c solves for the
 * largest, probe.c what to grow first.  Every function here is
 * plan_-prefixed. */
#ifndef KARAT_SOLVE_PLAN_H
#define KARAT_SOLVE_PLAN_H

#include "base/limits.h"

#include <stdint.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "cost/attn.h"
#include "cost/step.h"
#include "solve/solve.h"

#define PLAN_POOL_BITS 12
#define PLAN_POOL (1 << PLAN_POOL_BITS) /* contexts per plan for batches to draw from (16x
	more moved GLM-5.2's GPU-only answer no more than the seed does, at 4x the plan cost) */
#define PLAN_RADIX_BITS (PLAN_POOL_BITS / 2)
/* The batch from which CMR runs GPU by GPU (assign.c cmr_by_gpu): below
 * it the per-request arrays sit in cache, and the whole batch's two
 * sorting passes take less than a sort per GPU; CPU time, DeepSeek-V3.2
 * on gpu-karat, agentic, m = 5 (GPUs: batch): 16: 1,800, +6%; 64:
 * 7,168, +0%; 256: 27,000, -6%; 1,024: 107,745, -36%
 * (docs/notes/performance.md) */
#define PLAN_CMR_BY_GPU_MIN 16384
#define PLAN_SLACK_BYTES 0.5  /* storage sums are whole bytes; "exactly full" fits */

enum { PLAN_BK_CTX, PLAN_BK_STORE, PLAN_BK_GSTORE, PLAN_BK_N }; /* plan.by_key */

/* Where each operator sits in a layer's chain (sched/pipeline.h). */
enum phase { PH_NONE, PH_PRE, PH_POST, PH_DISP, PH_EXP, PH_COMB, PH_TAIL, PH_CACHE, PH_N };

/* Slot k of a layer class: slot s of a layout is k = s %
 * ATTN_SLOTS_PER_CLASS, in attn_layout's order. */
enum plan_slot_kind { SL_KV_WRITE, SL_INDEX_WRITE, SL_SCAN, SL_TOPK, SL_GATHER, SL_ATTENTION };

/* Roofline of one cache-side slot on the device that runs it. */
struct plan_slot_rate {
	double ic, im, ovh; /* s per FLOP, s per byte, s per instance */
	double row;         /* s per score of one row's pass (a selection on a
			       device with select.row_rate; 0: none) */
	double ovh_split;   /* s per instance of the device's split top-k
			       kernel (select.split; 0: none) */
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
 * seconds, then the GPU's activity energy (J, all but the all-to-all), the
 * all-to-all bytes leaving it, and the seconds of its GPU work priced by
 * values fitted on the GPU (device_op_fitted). */
#define PLAN_PH_ENERGY PH_N
#define PLAN_PH_A2A (PH_N + 1)
#define PLAN_PH_FIT (PH_N + 2)
#define PLAN_PH_STRIDE (PH_N + 3)

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
	int monotone;      /* a bucket's time grows with each sum (pool.c) */
	int pos[PLAN_MAX_VALUES];     /* value -> index among the summed ones, -1: affine */
	double a[PLAN_MAX_VALUES], b[PLAN_MAX_VALUES];
	double *pool;      /* PLAN_POOL x nres */
};

/* The fluid path (fluid.c): a batch with many requests per device is
 * evaluated from its sums.  The pool, in longest-first order, is cut into
 * PLAN_FLUID_STRATA strata of equal size; a sample draws each stratum's
 * request count (the multinomial's normal limit) and its summed values
 * (the normal limit of the sum: the stratum's mean and covariance), and
 * shares them out as the exact path's placement and micro-batch rules do
 * in the limit of many requests per device (docs/solver.md). */
#define PLAN_FLUID_STRATA 64
#define PLAN_FLUID_VALUES 24  /* context, cache bytes on the device and in
				 HBM, and the per-request sums of both sides */
#define PLAN_FLUID_MIN 64     /* requests per (micro-batch, device), at least */
#define PLAN_FLUID_MIN_ONLINE 512 /* the same, placed online: each unit's mix is
				    drawn, and the busiest unit's tail needs
				    more (tests/test_fluid.c: at 256 three
				    designs of 83 miss its tolerance, none at
				    512) */
#define PLAN_FLUID_PER_STRATUM 16 /* requests per stratum, at least */
#define PLAN_FLUID_GRAIN 16   /* a device's mean cache bytes over the
				 largest request's, at least */
#define PLAN_FLUID_EXCESS 3   /* requests the exact placement's busiest GPU
				 holds over an even share: 0-2 in every
				 sample but one (4) of 256 in each of 7
				 designs at 128-8,192 per GPU (docs/notes/solver-history.md) */
#define PLAN_FLUID_STEP 0.005 /* the GPU's work over that many requests more
				 grows by no more than this (no tile edge) */

struct plan_fluid {
	int state;      /* 0: not built; 1: built; -1: not available */
	int k, nm, ng;  /* values per request; of which per-request sums of
			   the memory side and of the GPU side */
	int rank[PLAN_FLUID_STRATA]; /* factor columns kept per stratum */
	double max_store, max_store_gpu;  /* the pool's largest request */
	int alike;      /* every pool entry stores the same bytes */
	int orank;      /* columns of the online placement's factor (ofac) */
	struct plan_strata *st; /* allocated when built (300 KB a plan would
				   otherwise clear without using) */
	double *unit;   /* online: each device's, then each GPU's, values and
			   request count (PLAN_FLUID_UNIT apart) */
	gsl_ran_discrete_t *olast; /* online: a request drawn by its bytes */
};
#define PLAN_FLUID_UNIT (PLAN_FLUID_VALUES + 1)

/* Each stratum's mean and covariance factor (fluid.c). */
struct plan_strata {
	double mu[PLAN_FLUID_STRATA][PLAN_FLUID_VALUES];
	/* covariance factor: column r of stratum s is fac[s][r][0..k) */
	double fac[PLAN_FLUID_STRATA][PLAN_FLUID_VALUES][PLAN_FLUID_VALUES];
	/* online placement (fluid.c online_build): per request, the
	 * variance of a unit's count, the values' regression on it, and the
	 * factor of what that leaves */
	double ocount_var, obeta[PLAN_FLUID_VALUES];
	double omean_bytes, omu[PLAN_FLUID_VALUES]; /* the pool's means */
	double ofac[PLAN_FLUID_UNIT][PLAN_FLUID_UNIT];
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
				      rows the device gathered; with hot,
				      the stages of requests whole in HBM) */
	double merge;      /* s per layer: split requests' partial outputs */
	double bcast;      /* s per layer: their queries to the remote slices */
	double energy;     /* J: its GPUs' operators and its cache-side work */
};

struct plan_ws;

/* A design point's plan: everything plan_new derives from the design.
 * Nothing after plan_new writes it; every evaluation writes only its
 * workspace (struct plan_ws), so one plan serves several workspaces. */
struct plan {
	struct design d;    /* with tensor-parallel attention (tp > 1), its GPU,
			       links and system are the plan's own unit copies */
	double tp;          /* GPUs per unit: system.attention_tp (cost/tp.h) */
	struct kdevice unit_gpu; /* tp GPUs as one */
	struct ksystem unit_sys; /* units, units per node */
	struct klink unit_up, unit_out, unit_host;
	const struct klink *up1, *out1; /* one GPU's own links: the
					   all-to-all and the all-reduce */
	int gpus;           /* G: units (GPUs when tp = 1) */
	int devs;           /* memory devices (D); the GPUs themselves without */
	int devs_per_gpu;   /* D / G when D >= G, else 1 */
	int gpus_per_dev;   /* G / D when D < G, else 1 */
	int link_units;     /* links priced apart: max(D, G) */
	int has_mem;        /* the system has memory devices */
	int in_hbm;         /* they are the GPUs' own HBM (system.memdev_in_hbm):
			       caches in what the weights leave, power within
			       the GPU's TDP */
	int has_energy;     /* every device gives its activity energy */
	double q;           /* query tokens per request per step (1 + draft) */
	double layers;      /* decoder layers */
	double weights;     /* weight bytes per GPU */
	double cap_gpu, cap_mem; /* cache capacity of a GPU and a memory device
				    (capacity less its reserve; cap_gpu before
				    weights) */
	double free_gpu;    /* HBM left for caches on a GPU (after weights) */
	/* the kinds of decoder layer (cost/step.h) and which each layer is */
	int nkinds;
	struct layer_kind kinds[PIPE_MAX_CLASSES];
	double kind_layers[PIPE_MAX_CLASSES];
	unsigned char layer_kind[PIPE_MAX_LAYERS];
	/* cache-side slots (the layers', the MTP layer's) and where they run */
	struct attn_layout layout, layout_mtp;
	struct plan_slot_rate slot_dev[ATTN_MAX_SLOTS], slot_dev_mtp[ATTN_MAX_SLOTS];
	/* system.hot_in_hbm: a request whose whole cache is in HBM has the
	 * device's slots (the cache write and the gather) run by the GPU from
	 * HBM: slot_dev with those slots at the GPU's rates */
	int hot;
	struct plan_slot_rate slot_hot[ATTN_MAX_SLOTS], slot_hot_mtp[ATTN_MAX_SLOTS];
	/* The pool (pool.c): contexts and cache bytes of PLAN_POOL sampled
	 * requests, and their cache-side FLOPs and bytes packed into the
	 * values its memory device (mem_side, per device) and its GPU
	 * (gpu_side, fallback stages) accumulate; slot s of the layers reads
	 * value slot_map[s].f and slot_map[s].b (-1: zero for every request),
	 * slot_map_mtp for the MTP layer. */
	double *ctx, *store, *store_gpu;
	double mean_store, mean_store_gpu; /* over the pool */
	double clipped;     /* share of the pool cut to the model's context */
	double ctx_top;     /* the longest context, or -1: not all whole tokens */
	int *rank;          /* order of each pool entry by context */
	double *by_key;     /* PLAN_BK_N values (PLAN_BK_*) of the entry with each
			       pool_key: the placement reads them in key order */
	int *pool_key;      /* its longest-first position: PLAN_POOL - 1 - rank
			       (0 for all when the pool is alike) */
	int pool_alike;     /* every entry is the same request (a fixed
			       context): every sample is the same batch */
	struct plan_side mem_side, gpu_side;
	struct plan_vmap slot_map[ATTN_MAX_SLOTS], slot_map_mtp[ATTN_MAX_SLOTS];
	int keys_on_gpu;    /* index keys stay in HBM (the GPU runs the scan) */
	int dense_in_hbm;   /* the dense-attention layers' caches stay in HBM
			       (the gather role: the GPU attends over them) */
	int gpu_stores;     /* either: a request holds bytes in HBM too */
	int has_post;       /* some slot runs on the GPU after the device's gather */
	/* The device links, per request per step by layer class: the bytes
	 * they carry out (with the GPU running the scan and top-k: not the
	 * indexer's rows and query, but the selected indices) and back (the
	 * attention output, or the gathered rows the GPU attends). */
	double cls_out[LC_N], cls_back[LC_N];
	double mtp_link;    /* the same out and back for the MTP layer */
	double post_b[ATTN_MAX_SLOTS], post_bm[ATTN_MAX_SLOTS]; /* an after slot's
				  bytes per instance, mean over the pool (the
				  layers', the MTP layer's) */
	/* requests split over devices (decode context parallelism) */
	double merge_bytes; /* per remote slice per step: partial outputs and
			       top-k candidates to the request's GPU */
	double bcast_bytes; /* per remote slice per step: the query its device
			       attends with, from the request's GPU */
	double a2a_cross;   /* bytes crossing nodes per routed copy bound for
			       another node: 1 flat; hierarchical, the
			       distinct nodes a token needs over its copies
			       there (plan_new) */
	int a2a_per_gpu;    /* a token sent once per GPU (link.a2a_sends) */
	double a2a_port;    /* share of a GPU's all-to-all bytes that cross
			       its port to another node's GPUs (0: none do,
			       or the NIC has its own path) */
	/* cache ingest: each admitted request's KV and index rows reach the
	 * device that will hold them */
	double adm_rate;    /* admissions per request in the batch per step */
	double cache_in;    /* KV and index bytes of the mean input */
	/* idle sessions' caches (workload [keepalive], plan_reuse): they keep
	 * what the batch leaves of the capacity that holds its caches, and a
	 * host tier where the system has one */
	double idle_cap;    /* that capacity, all of it (HBM or the devices) */
	double idle_used;   /* of it, per active request (its mean cache) */
	double idle_req;    /* an idle session's cache, bytes */
	double idle_host;   /* host DRAM for idle caches (system.host_cache) */
	double idle_ssd;    /* and NVMe past it (system.host_ssd) */
	double ssd_read;    /* the NVMe's read bandwidth, all nodes, B/s */
	double idle_rate;   /* calls finished per second per request in the
			       batch, at a step of the SLO */
	/* each admission's prefill on the GPUs (cost/prefill.h), per output
	 * token: drawn joules (its FLOPs, bytes, all-to-all and the GPUs'
	 * static power while it computes), the same with the nodes' share,
	 * and GPU-seconds (NaN without the GPU's [energy]) */
	double pre_j, pre_j_node, pre_gpu_s;
	double pre_in, pre_out; /* the mean input (within the window) and output */
	int *dev_gpu;       /* the GPU of each device (the first, where GPUs
			       share one; without memory devices the unit is
			       the GPU) */
	int *dev_rank;      /* placement tie-break: GPUs' first devices, then
			       their second devices, ... */
	int tour_p;         /* the placement tree's leaves: the least power of
			       two >= the units */
	struct plan_ws *ws; /* the workspace the public calls (solve.h) use */
	struct plan_ws **helper; /* with d.threads > 1: one more workspace per
				    thread, for its share of the samples */
	int nhelper;
};

#include "solve/ws.h" /* struct plan_ws, the workspace */

/* How plan_eval_at evaluates (flags). */
enum {
	PLAN_EARLY = 1,  /* stop once the batch is known to fail */
	PLAN_ENERGY = 2, /* price the activity energy (a full evaluation does) */
	PLAN_PARTIAL = 4 /* early, and a guess from the worst few samples */
};

/* The files of solve/ call one way only (scripts/check-chain.sh):
 *   pool <- plan <- price <- place <- assign <- fluid <- sample <- eval <- search
 *   <- probe
 * Each may call the files to its left, never one to its right. */

/* pool.c: the pool of sampled requests and their packed costs. */
/* Draws the pool and packs its costs (slot FLOPs f and bytes b, PLAN_POOL
 * rows of the layers' then the MTP layer's slots, are scratch).  0, -1
 * out of memory, -2 when a context cannot be drawn. */
int plan_pool_fill(struct plan *p, double *f, double *b);
/* Whether plan_pool_fill would give p base's pool (the same model, algo,
 * workload, seed, drafts, slots, sides and memory arrangement). */
int plan_pool_same(const struct plan *p, const struct plan *base);
/* Copies base's pool into p where plan_pool_same (the probe's plans): 0,
 * 1 when not (nothing copied), -1 out of memory. */
int plan_pool_copy(struct plan *p, const struct plan *base);
/* The packed values of cnt requests with summed context L and sums res. */
void plan_side_eval(const struct plan_side *sd, double cnt, double L, const double *res,
		    double *v);
/* A bucket's packed values from its count, summed context and sums. */
void plan_side_values(const struct plan_side *sd, const struct plan_buckets *bk, int unit_idx,
		      int cnt, double *v);

/* plan.c: the plan's and a workspace's lifecycle. */
/* plan_new, with the pool copied from base where it would be the same
 * (plan_pool_copy; base NULL: drawn and priced afresh).  Its answers are
 * plan_new's, bit for bit. */
struct plan *plan_new_like(const struct design *d, const struct plan *base, struct kerr *err);
/* A workspace for plan p (NULL: out of memory). */
struct plan_ws *plan_ws_new(const struct plan *p);
void plan_ws_free(struct plan_ws *w);
/* Room for a batch of B requests and GPU phases up to n per GPU. */
int plan_ensure_batch(const struct plan *p, struct plan_ws *w, long B);
/* J per all-to-all byte: the share inside a node on the scale-up link. */
double plan_a2a_energy(const struct plan *p);

/* price.c: the GPU side's costs, memoised per count, and the cache
 * side's roofline per bucket. */
/* Where each operator sits in a layer's chain (sched/pipeline.h). */
extern const unsigned char phase_of[OP_N];
int plan_ensure_memo(const struct plan *p, struct plan_ws *w, long n);
/* GPU-side seconds per phase for n requests per GPU (memoised; the memo
 * grows to hold n, so a pointer it returned holds until the next call):
 * PLAN_PH_STRIDE values (the phases, the energy, the all-to-all bytes) for
 * one layer of each kind in turn, then for the tail; NULL when a step
 * cannot be built or memory runs out, with the reason in w->fail. */
const double *plan_gpu_phases(const struct plan *p, struct plan_ws *w, long n);
/* One micro-batch's GPU work (s) at n requests per GPU: every layer's
 * tasks on the GPU (before and after attention, the experts) and the
 * tail; NaN when the step cannot be built.  Non-decreasing in n. */
double plan_gpu_work(const struct plan *p, struct plan_ws *w, long n);
/* Activity energy (J) of n requests per GPU on one GPU in one
 * micro-batch (every kind of layer, the tail, its all-to-all bytes at
 * e_a2a J/byte); NaN when the step cannot be built (w->fail says why). */
double plan_gpu_energy(const struct plan *p, struct plan_ws *w, long n, double e_a2a);
/* Seconds of slot s, f FLOPs and b bytes a layer, on sd's roofline. */
double plan_slot_time(const struct plan_slot_rate *sd, const struct attn_slot *s, double f,
		      double b, double n);
/* Seconds of lay's slots that run where (enum plan_where) for a bucket's
 * packed sums v over n requests (the fill of a piped scan and top-k);
 * per_class (LC_N, or NULL) gets them by layer class. */
double plan_bucket_time(const struct plan *p, const struct attn_layout *lay,
			const struct plan_slot_rate *sd, const struct plan_vmap *map,
			const double *v, double n, int where, double *per_class);
/* Whether slot s of lay is a scan piped with its top-k (select.pipelined). */
int plan_slots_piped(const struct plan_slot_rate *sd, const struct attn_layout *lay, int s);
/* Activity energy (J) of lay's slots on the GPU (want_gpu) or the device. */
double plan_bucket_energy(const struct plan *p, const struct attn_layout *lay,
			  const struct plan_slot_rate *sd, const struct plan_vmap *map,
			  const double *v, int want_gpu);
/* The slowest of side sd's units in micro-batch i (cnt: requests per
 * (micro-batch, unit)): its slots that run where, by class (t, LC_N) and
 * in the MTP layer (*tm); energy: the side's (the GPU's stages where
 * want_gpu) added in over the same walk. */
void plan_side_peak(const struct plan *p, const struct plan_side *sd,
		    const struct plan_buckets *bk, int i, int units, const int *cnt, int where,
		    double *t, double *tm, double *energy, int want_gpu);
/* System hot_in_hbm, micro-batch i: each GPU's attention over gathered
 * rows (its after slots), then its whole-in-HBM requests' device stages
 * (at p->slot_hot's rates): the slowest GPU's sum by class into fbp
 * (LC_N) and *fbpm (MTP); the latter's energy added into *energy. */
void plan_hot_post_peak(const struct plan *p, const struct plan_ws *w, int i, double *fbp,
			double *fbpm, double *energy);
/* The prefix reuse a batch of B leaves room for, and the bytes per step
 * it leaves to move (plan_reuse, struct plan_reuse). */
void plan_reuse(const struct plan *p, long B, struct plan_reuse *u);
/* Each admission's prefill per output token at a prefix reuse: the
 * workload's mean input, its reused share already cached, at the mean
 * output (plan.h pre_j ...), into pre: joules, the same with the nodes'
 * share, GPU-seconds (NaN without the GPU's [energy]). */
void plan_prefill_at(const struct plan *p, double reuse, double pre[3]);
/* The share of a GPU's work priced by values fitted on its own
 * measurements (io/calib.h): its operators at n requests per micro-batch
 * (the memo's PLAN_PH_FIT over plan_gpu_work), m micro-batches, and the
 * cache side it runs (gpu_busy, the step's GPU busy time, less those
 * operators), fitted where every class it uses is.  NaN when a step
 * cannot be built. */
double plan_gpu_fitted_share(const struct plan *p, struct plan_ws *w, long n, int m,
			     double gpu_busy);

/* place.c */
/* The requests of a batch in longest-first order (w->req_key; ties in
 * arrival order), into out (uses w->scratch as scratch). */
void plan_order_longest(struct plan_ws *w, long B, int *out);
/* Places the B requests of sample `sample` by the system's rule
 * (w->req_gpu, req_dev, nshard and the device and GPU stores); returns the
 * order they were placed in, or NULL for arrival order.  Online, it starts
 * from what the sample kept (struct plan_placed) and keeps what it adds. */
const int *plan_place(const struct plan *p, struct plan_ws *w, long B, int sample);
/* Swaps p's and base's kept online placements (1; 0: not) where the two
 * place alike: the same units, capacities, rules and pool (a probe's
 * plans differ in rates and sample counts alone). */
int plan_kept_swap(struct plan *p, struct plan *base);
/* w->by_gpu and gpu_start: each GPU's requests in the order it received
 * them (seq, or arrival order where seq is NULL). */
void plan_group_by_gpu(const struct plan *p, struct plan_ws *w, long B, const int *seq);
/* The GPU of device dev (the first, where GPUs share one). */
static inline int plan_gpu_of(const struct plan *p, int dev)
{
	return p->dev_gpu[dev];
}

/* assign.c */
/* w->req_mb: the first B placed requests (grouped by GPU) to m
 * micro-batches, in arrival order or by CMR (the design's schedule). */
void plan_assign_mb(const struct plan *p, struct plan_ws *w, long B, int m);

/* fluid.c */
/* Whether a batch of B at m micro-batches takes the fluid path. */
int plan_fluid_ok(const struct plan *p, struct plan_ws *w, long B, int m);
/* Whether it would but for a GEMM tile edge just above a GPU's even
 * share (where the exact path runs instead). */
int plan_fluid_edge(const struct plan *p, struct plan_ws *w, long B, int m);
/* Sample s of a batch of B at m from its sums: w->mbl (its count in
 * *nmb), the fullest GPU's and device's bytes, w->ctx_last; the energy of
 * each micro-batch when want_energy.  -1 when a GPU step cannot be built
 * (w->fail says why). */
int plan_fluid_sample(const struct plan *p, struct plan_ws *w, long B, int m, int sample,
		      int want_energy, int *nmb, double *use_g, double *use_m);

/* sample.c: one sampled batch (sample s of a batch of B at m micro-batches):
 * placed, assigned, priced, scheduled; from its sums with `fluid`, with
 * its activity energy in w->energy_last with `want_energy`.  Returns the
 * step time (infinite when a stage cannot run) and the bytes on the
 * fullest GPU and device; NaN when it cannot be priced, with the reason
 * in w->fail. */
double plan_sample(const struct plan *p, struct plan_ws *w, long B, int m, int sample,
		   int fluid, int want_energy, struct pipe_out *po, double *use_g,
		   double *use_m);

/* How many of n samples' largest values fix their P99 from below:
 * n - floor(0.99 (n - 1)), the rank of GSL's quantile's lower point. */
static inline int plan_p99_top(int n)
{
	return n - (int)(0.99 * (double)(n - 1));
}

/* eval.c: one evaluation at m micro-batches (1..16), with `how` of
 * PLAN_EARLY and PLAN_ENERGY.  Early, the samples run worst first and it
 * stops as soon as the margin is known to be over `limit` (the P99 of the
 * samples run, the rest taken as 0, over limit x the SLO or limit x a
 * capacity; limit 1: the batch fails) and returns 1; r is then
 * incomplete.  Partial, where it guesses that the batch fits (eval.c),
 * returns 2 with only the floors (lower bounds) in r's tbt_p99, gpu_use
 * and mem_use.  Returns 0, or -1 with err. */
int plan_eval_at(const struct plan *p, struct plan_ws *w, double batch, int m,
		 struct result *r, int how, double limit, struct kerr *err);
/* plan_eval on a workspace (m = 0: every count). */
int plan_eval_ws(const struct plan *p, struct plan_ws *w, double batch, int m,
		 struct result *r, struct kerr *err);

/* The work of one evaluation at batch and m micro-batches: samples x
 * (requests placed + GPUs and devices + layers x micro-batches), a layer
 * of one micro-batch's pipeline taken as one placement (measured on the
 * 2-core development machine: GLM-5.2 at 16 micro-batches, 20,000
 * samples, 2.5e7 layer-micro-batches in 1.1 s; DeepSeek-V3.2 on 72
 * devices, 200,000 requests x 64 samples placed in 1.1 s).  The fluid
 * path places no request. */
double plan_work(const struct plan *p, struct plan_ws *w, double batch, int m);

#endif
