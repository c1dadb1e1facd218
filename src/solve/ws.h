/* ws.h: internal to solve/, included by solve/plan.h alone: the workspace
 * an evaluation writes (struct plan_ws) and its parts: the per-sample
 * sums, the buckets, the kept online placements and the reuse of the
 * batch being sampled.  A plan (plan.h) is read only once built; every
 * evaluation writes one workspace, owned by one thread at a time. */
#ifndef KARAT_SOLVE_WS_H
#define KARAT_SOLVE_WS_H

#ifndef KARAT_SOLVE_PLAN_H
#error "solve/ws.h is part of solve/plan.h: include that"
#endif

/* What one sampled batch adds to an evaluation's means: kept per sample
 * so that the means are summed in sample order whatever order the samples
 * ran in (eval.c). */
struct plan_sampled {
	double busy[RES_N], bubble[RES_N];
	double energy, ctx, shards;
	int mb;
};

/* The buckets of one side in the batch being sampled: per (micro-batch,
 * unit), the per-request sums (nres each) and the summed context. */
struct plan_buckets {
	double *acc;       /* (mb, unit) x nres */
	double *suml;      /* (mb, unit) */
};

/* One sample's online placement, kept across evaluations (place.c).
 * Online placement is in arrival order, and the batch of B + 1 holds the
 * batch of B (common random numbers): so the placement of the first n
 * requests is the same at every batch of n or more.  A sample keeps the
 * devices of the most requests it has placed, their draws and the state
 * after the last, and draws and places only the requests past them. */
struct plan_placed {
	long n, cap;         /* requests kept; room for */
	int *dev, *gpu, *pool; /* per request: its device, GPU and draw */
	unsigned long rng[4]; /* the sample's stream after the n draws */
	unsigned char *nsh;  /* per request: its slices (0: whole) */
	int *sh;             /* the slices' devices, request after request */
	long nsh_used, sh_cap;
	long first_bad;      /* the first request no device held (n: none) */
	long nsharded;       /* requests split among the n */
	double fail_s, fail_sg; /* the least caches a split failed for */
	double *state;       /* after the n: dev_load, dev_store (D each),
				gpu_store (G) */
	int *cnt;            /* after the n: requests per GPU */
};

/* The prefix reuse a batch leaves room for: sessions that come back
 * within keep_near s find their caches where they are used (HBM, or the
 * devices); within keep_host s, in the host DRAM; within keep_s, on the
 * host's NVMe (reuse >= host >= near).  Then, per step and the whole
 * system: the cache bytes admissions bring in less what they reuse
 * (ingest), and what the host tiers return (reload; from_ssd of it off
 * the NVMe). */
struct plan_reuse {
	double reuse, host, near, keep_s, keep_host, keep_near;
	double ingest, reload, from_ssd;
};

/* A request as CMR reads it, copied so that its passes read memory in
 * order (assign.c): its index in the batch, device, context (whole
 * tokens) and longest-first key. */
struct plan_cmr_req {
	int32_t j, dev, ctx, key;
};

/* What evaluations write: the memo of GPU phase times, the batch being
 * sampled and its placement, the buckets, the samples' results and the
 * search's state.  Owned by one thread at a time. */
struct plan_ws {
	/* GPU phase seconds for n requests per GPU in a micro-batch (price.c):
	 * one layer of each kind, then the tail ((nkinds + 1) x PLAN_PH_STRIDE
	 * per n), memoised */
	double *memo;
	unsigned char *memo_ok;
	long memo_cap;
	struct step step;   /* scratch for step_build */
	struct kerr fail;   /* why plan_sample or plan_gpu_phases failed */
	/* per request of the batch being sampled, sized for cap_batch */
	long cap_batch;
	int *req_pool;      /* its entry in the pool */
	int *req_key;       /* that entry's pool_key (the longest-first sort key) */
	int *req_gpu, *req_dev, *req_mb; /* where it runs, its micro-batch */
	int *req_order, *scratch; /* orderings (CMR's longest first), scratch */
	int *nshard;        /* per request: its slices, 0 when whole */
	unsigned char *req_hot; /* per request: its whole cache in HBM (plan.h hot) */
	long nhot;          /* such requests in the last sample */
	int *shard_dev;     /* per request: the devices of its slices */
	double *lctx_view;  /* plan_inspect's contexts */
	struct plan_cmr_req *cmr_req; /* CMR's requests by GPU and a sort's
					 scratch (assign.c): cap_batch, or
					 NULL below 2 PLAN_CMR_BY_GPU_MIN */
	long nsharded;      /* requests split in the last sample */
	const int *placed;  /* the last sample's placement order, or NULL */
	struct plan_placed *kept; /* per sample (nkept): its online placement
				     so far (place.c) */
	int nkept;
	int keep_off;       /* place every request afresh (tests) */
	/* the placement (place.c) */
	int *tour;          /* a tournament tree of the units by free room,
			       2 tour_p entries */
	uint64_t *tour_room; /* each node's winner's free room, as an integer
				of the same order (place.c) */
	double *dev_load, *dev_store, *gpu_store; /* per unit: summed context,
						     cache bytes; per GPU:
						     index-key bytes */
	double *rr_load, *rr_store, *rr_gstore; /* the same, for a trial round-robin */
	int *gpu_placed;    /* per GPU: requests placed on it so far */
	int *by_gpu;        /* requests grouped by GPU, in the order each received them */
	int *gpu_start;     /* G + 1: GPU g's requests are by_gpu[gpu_start[g] ..] */
	int *gpu_cursor;    /* per GPU: the next free slot of by_gpu while grouping */
	/* micro-batches (assign.c) */
	double *mb_load;    /* (device, micro-batch): summed context (CMR) */
	int64_t *mb_iload;  /* the same in whole tokens (CMR's integer keys) */
	int *mb_count;      /* CMR: requests per (GPU, micro-batch) so far */
	int *gpu_share;     /* CMR: per GPU, its count over m and the remainder */
	int *gpu_big;       /* CMR: per GPU, micro-batches that took the
			       remainder's extra request so far */
	int *gpu_remote;    /* per GPU: slices of its split requests held on
			       another GPU's devices (the merge) */
	/* per (micro-batch, unit): requests on each GPU, device and link */
	int *gpu_count, *dev_count, *link_count;
	struct plan_buckets mem_bk, gpu_bk; /* the sides' buckets */
	struct plan_buckets hot_bk; /* per (micro-batch, GPU): the memory side's
				       sums of the requests whole in HBM */
	int *hot_count;     /* per (micro-batch, GPU): those requests */
	struct pipe_in pin; /* the pipeline input of the batch being sampled */
	struct plan_reuse reuse; /* of the batch being sampled (plan_sample) */
	struct plan_mb mbl[PIPE_MAX_MB]; /* the last sample's non-empty micro-batches */
	double energy_last; /* the last sample's activity energy, J (NaN: none) */
	double ctx_last;    /* the last sample's summed context */
	gsl_rng *rng;       /* one stream per sample, seeded by plan_sample */
	struct plan_fluid fl; /* the fluid path's strata (built on first use) */
	/* the samples of one evaluation (eval.c) */
	double *tbt, *use_gpu, *use_mem; /* per sample: step time, fullest GPU and device */
	struct plan_sampled *per; /* per sample: what the evaluator sums */
	/* Worst-first order for an early-exit evaluation: each sample's
	 * worst ratio of step time to the SLO, or memory used to what it
	 * holds, when it was last evaluated (at any batch and count), and the
	 * order of those ratios, worst first.  No ratio yet: natural order.
	 * Ranked: every sample scored at once (a partial evaluation's few
	 * worst stand for the rest only then). */
	double *score;
	size_t *order;
	int scored, ranked;
	double *p99_top;    /* the P99 bounds: the plan_p99_top(samples)
			       largest values so far of step time, GPU and
			       device bytes */
	/* the search (search.c) */
	int fail_bound;     /* enum point_bound of the last probe that failed */
	double work_stop;   /* the least batch found past the work limit
			       (INFINITY: none) */
	double mem_fail;    /* the least batch found whose caches alone fail
			       (P99 of the fullest GPU or device over its
			       capacity) where every count places it request
			       by request, so at every count; INFINITY before
			       one (eval.c) */
};

#endif
