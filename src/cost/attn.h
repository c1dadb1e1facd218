/* attn.h: cache-side cost and storage of every attention algorithm of
 * sparse/algo.h, per layer and request.  Internal to cost/ except for the
 * storage queries, which capacity checks and reports use. */
#ifndef KARAT_COST_ATTN_H
#define KARAT_COST_ATTN_H

#include "model/model.h"
#include "sparse/algo.h"

/* Layer classes an algorithm splits a model into. */
enum lclass {
	LC_SPARSE,   /* runs the algorithm (owns its index) */
	LC_DENSE,    /* leading layers kept dense */
	LC_SHARE,    /* reuses another layer's selection */
	LC_REINDEX,  /* re-scores candidates chosen by another layer */
	LC_N
};

struct lcount {
	enum lclass cls;
	double layers;
};

/* Classes of `layers` decoder layers (the MTP layer: mtp = 1); returns how
 * many entries out[] got (at most LC_N). */
int attn_classes(const struct kmodel *m, const struct sparse_cfg *sp,
		 double layers, int mtp, struct lcount out[LC_N]);

/* Cache bytes one request holds at context L over all decoder layers:
 * KV (as the algorithm keeps it) and index keys or summaries. */
void attn_storage(const struct kmodel *m, const struct sparse_cfg *sp, double L,
		  double *kv_bytes, double *index_bytes);

/* Cache bytes per token of context at long context (1M tokens): KV and
 * index, over all decoder layers. */
void attn_bytes_per_token(const struct kmodel *m, const struct sparse_cfg *sp,
			  double *kv, double *index);

/* Whether m may run sp: the layout must fit; a trained-only algorithm
 * other than the model's own needs `force` (its accuracy is unknown).
 * Returns 0 or -1 with the reason. */
int attn_applicable(const struct kmodel *m, const struct sparse_cfg *sp,
		    int force, struct kerr *err);

#endif
