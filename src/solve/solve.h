/* solve.h: the solver's public interface: one design point (model,
 * algorithm, system, workload, schedule, micro-batches) evaluated on
 * sampled decode batches (eval.c), and the solver for the largest batch
 * under the P99 time-between-tokens SLO (search.c; docs/solver.md).
 *
 * A plan precomputes what does not depend on the batch: a pool of request
 * contexts drawn from the workload (fixed seed), each request's cache-side
 * FLOPs and bytes per operator slot, its cache footprint, and the GPU-side
 * phase times per micro-batch size (memoised).  Evaluating a batch of B
 * then draws B requests from the pool per sample, places them (GPUs in
 * arrival order; within a GPU, the least loaded memory device), assigns
 * them to micro-batches (arrival order, or CMR), prices every micro-batch's
 * tasks on the device that sets the pace, and schedules the pipeline.  The
 * hot path does not allocate. */
#ifndef KARAT_SOLVE_SOLVE_H
#define KARAT_SOLVE_SOLVE_H

#include "base/limits.h"

#include "base/err.h"
#include "hw/device.h"
#include "hw/link.h"
#include "model/model.h"
#include "sched/pipeline.h"
#include "hw/system.h"
#include "workload/workload.h"

struct design {
	const struct kmodel *m;
	const struct sparse_cfg *sp;   /* the algorithm (m->sp for the native) */
	const struct ksystem *sys;
	const struct kdevice *gpu, *mem; /* mem is NULL without memory devices */
	const struct klink *up, *out, *mlink; /* scale-up, scale-out, GPU<->memdev */
	const struct klink *port;      /* the GPU port its devices share, or NULL */
	const struct klink *host;      /* GPU-only with system.host_cache: the GPU's own
					  port to its host, or NULL */
	const struct kworkload *wl;
	int sched;             /* enum sched_kind */
	double mtp, accept;    /* draft tokens per step, acceptance rate */
	double slo;            /* P99 TBT target, s */
	int samples;           /* sampled batches per evaluation */
	unsigned long seed;
	int exact;             /* 1: the reference list schedule, not pipe_fast */
	int per_request;       /* 1: every request drawn and placed at any
				  batch, never a large batch from its sums
				  (fluid.c) */
	int threads;           /* sampled batches evaluated at once on this
				  many threads (0 or 1: one); every result is
				  the same for any count (eval.c) */
	int average_layers;    /* 1: every layer priced at the average of the
				  model's kinds of layer (the smoothing the
				  per-kind pipeline replaces; for tests and
				  comparisons, never the default) */
	/* Called before each evaluation of the solver (micro-batch count m,
	 * the batch it tries), for a progress line; NULL for none. */
	void (*progress)(void *ctx, int m, double batch);
	void *progress_ctx;
};

/* The MTP modules whose caches a request keeps: the model's, where a
 * draft runs (each is a decoder layer with its own KV). */
static inline double design_mtp_layers(const struct design *d)
{
	return d->mtp > 0 ? d->m->mtp_layers : 0;
}

/* What bounds a point (result.bound; the operators' own bound is
 * cost/ops.h's enum bound): for an infeasible point, the limit
 * it fails; for a solved answer, the limit the next batch fails (or the
 * search's own limits); for a feasible point at a given batch, none. */
enum point_bound { PB_NONE, PB_SLO, PB_HBM, PB_MEMDEV, PB_UNSUPPORTED, PB_WORK, PB_CAP, PB_N };

struct result {
	double batch;
	int mb_ran;                    /* the most micro-batches that ran in a
					  sample (an empty one does not run) */
	int mb;
	double tbt_mean, tbt_p99;      /* s */
	double throughput;             /* output tokens/s, whole system */
	double tdp;                    /* W, all devices */
	double tok_per_w, j_per_tok;   /* at TDP */
	int feasible;
	char reason[200];
	int bound;                     /* enum point_bound */
	double busy[RES_N], bubble[RES_N]; /* mean over samples: s, fraction */
	double gpu_use, mem_use;       /* P99 over samples of the fullest device / capacity */
	double ctx_mean;               /* mean context of the requests drawn */
	double clipped;                /* share of drawn contexts cut to the model maximum */
	double sharded;                /* mean share of requests split over devices */
	double ingest;                 /* cache-ingest bytes per step, whole system */
	double reload;                 /* bytes per step the host tier returns (whole system) */
	double gpu_fitted;             /* share of the GPU's work priced by values
					  fitted on its own measurements (NaN:
					  not computed, in a search's probes) */
	double reuse;                  /* prefix reuse the batch leaves room for */
	double keepalive_s;            /* how long idle caches are kept (INFINITY: forever) */
	int fluid;                     /* 1: the samples came from their sums
					  (fluid.c), 0: every request placed */
	/* activity-based energy (NaN where a device gives no [energy]) */
	double energy_act;             /* J per step, mean over samples */
	double power_act;              /* W: energy_act / tbt_mean */
	double j_per_tok_act, tok_per_w_act;
	/* power counted whole: the activity power plus every device's share
	 * of its node or enclosure (NaN where a device gives no [node] or
	 * [energy]); capex: every device's price and its node share, USD;
	 * usd_per_mtok: capex spread over the amortisation and the node
	 * view's electricity, per million output tokens (NaN without prices) */
	double power_node, tok_per_w_node, capex, usd_per_mtok;
	/* each request's prefill on the GPUs per output token (cost/prefill.h):
	 * drawn J, and J with the nodes' share (NaN without [energy] or
	 * [node]); with system.prefill_energy = on, j_per_tok_act,
	 * tok_per_w_act, tok_per_w_node and usd_per_mtok count it too */
	double prefill_j_tok, prefill_node_j_tok;
	int prefill_on;                /* system.prefill_energy = on */
	/* filled by the caller from plan_probe, for a solved answer: probed
	 * 1 once probed; grow the resource to double first (enum probe_res,
	 * -1: none helps) and the next batch's margin with it doubled */
	int probed, grow;
	double grow_margin;
};

struct plan;

/* Checks the design (devices, counts, workload) and precomputes.  Returns
 * NULL with err on a bad design. */
struct plan *plan_new(const struct design *d, struct kerr *err);
void plan_free(struct plan *p);

/* One design point at batch B (all GPUs together) and m micro-batches
 * (m = 0: the count in 1..16 with the lowest mean step time, feasible ones
 * first), evaluated even when it does not fit (feasible = 0, reason says
 * why).  Returns 0, or -1 with err for invalid input (B < 1, m > 16). */
int plan_eval(struct plan *p, double batch, int m, struct result *r,
	      struct kerr *err);

/* Whether an evaluation at batch and m micro-batches (0: every count, as
 * plan_eval with auto) stays within the work limit (PLAN_MAX_WORK):
 * samples x (requests placed + devices + layers x micro-batches).  0, or
 * -1 with err naming the limit and how to stay within it. */
int plan_check_work(struct plan *p, double batch, int m, struct kerr *err);

/* The largest batch that fits and meets the SLO at m micro-batches (m = 0:
 * the best m in 1..16 by throughput).  When nothing is feasible, r holds
 * the batch-1 evaluation with its reason. */
int plan_solve(struct plan *p, int m, struct result *r, struct kerr *err);

/* What would move a solved answer most (probe.c): each resource the
 * design has, doubled alone, and the next batch (answer + 1, at the
 * answer's micro-batches) evaluated again.  margin[k]: the worst of P99 /
 * SLO and each memory's use / capacity there with resource k doubled (NaN:
 * the design has no such resource; INFINITY: a resource of time whose
 * evaluation stopped once it could not beat the best so far); base: the
 * same undoubled (NaN: nothing was probed); best: the resource with the
 * lowest margin below base, or -1 (none helps, or the answer is bound by
 * the search's own limits: nothing probed).  solved (or NULL): the plan
 * that found the answer; the probe borrows its pool and its samples'
 * placements (every value as if placed afresh), and gives them back. */
enum probe_res {
	PR_GPU_COMPUTE, PR_GPU_BW, PR_GPU_CAP, PR_MEM_COMPUTE, PR_MEM_BW, PR_MEM_CAP,
	PR_MEM_SELECT, PR_MLINK, PR_PORT, PR_UP, PR_OUT, PR_N
};
extern const char *const probe_names[PR_N];
struct probe {
	int best;
	double base, margin[PR_N];
};
int plan_probe(const struct design *d, struct plan *solved, const struct result *r,
	       struct probe *pb, struct kerr *err);

/* The step times of the last plan_eval's samples, sorted ascending (their
 * empirical distribution), valid until the next call on the plan; *n gets
 * their count. */
const double *plan_step_times(const struct plan *p, int *n);

/* One sampled batch as the evaluator saw it (for tests and reports):
 * arrays of n entries, valid until the next call on the plan. */
struct sample_view {
	long n;
	const double *ctx;          /* context of each request */
	const int *gpu, *dev, *mb;  /* its GPU, memory device (the GPU itself
				       without memory devices), micro-batch */
	double tbt;                 /* the step time of this batch */
	double use_gpu, use_mem;    /* bytes on the fullest GPU and device */
	const int *order;           /* the order requests were placed in
				       (memory-aware), or NULL: arrival order */
	const int *nshard;          /* slices of each request (0: whole) */
};

/* Sample `sample` (0-based, < samples) of a batch of B at m micro-batches. */
int plan_inspect(struct plan *p, double batch, int m, int sample,
		 struct sample_view *v, struct kerr *err);

/* The reference schedule (pipe_list) of sample `sample` of a batch of B
 * at m micro-batches: up to nev events in start order into ev, how many in
 * *n (every task of every micro-batch: m x (layers x 8 + 3) with m
 * non-empty micro-batches), the makespan in *makespan.  Returns 0, or -1
 * with err (bad arguments, nev too small, a stage no device runs). */
/* The design a plan was made for. */
const struct design *plan_design(const struct plan *p);

int plan_timeline(struct plan *p, double batch, int m, int sample, struct pipe_event *ev,
		  long nev, long *n, double *makespan, struct kerr *err);


#endif
