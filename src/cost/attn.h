/* attn.h: cache-side cost and storage of every attention algorithm of
 * sparse/algo.h, per layer and request.  Internal to cost/ except for the
 * storage queries, which capacity checks and reports use. */
#ifndef KARAT_COST_ATTN_H
#define KARAT_COST_ATTN_H

#include "cost/ops.h"
#include "model/model.h"
#include "sparse/algo.h"

/* Classes of `layers` decoder layers (the MTP layer: mtp = 1); returns how
 * many entries out[] got (at most LC_N). */
int attn_classes(const struct kmodel *m, const struct sparse_cfg *sp,
		 double layers, int mtp, struct lcount out[LC_N]);

/* The class of each of the model's `layers` decoder layers, in order,
 * into cls[0 .. layers - 1]: the leading dense ones, then where the
 * algorithm puts its classes.  Counted, they are attn_classes'. */
void attn_sequence(const struct kmodel *m, const struct sparse_cfg *sp, long layers,
		   unsigned char *cls);

struct emit;
struct req_view;

/* Emits the cache-side operators (and indexer projections) of algorithm
 * sp for `layers` decoder layers (mtp: the MTP layer); T = query tokens on
 * this GPU, q per request (cost/emit.h has the types).  With
 * e->gpu_only, the indexer projections alone. */
void attn_emit(struct emit *e, const struct sparse_cfg *sp, double layers,
	       int mtp, const struct req_view *r, double q, double T);

/* The same for `count` layers of class cls alone. */
void attn_emit_class(struct emit *e, const struct sparse_cfg *sp, enum lclass cls,
		     double count, const struct req_view *r, double q, double T);

/* Cache bytes one request holds at context L over all decoder layers
 * and mtp_layers multi-token-prediction modules (each keeps a cache of
 * its own; 0 where no draft runs): KV (as the algorithm keeps it) and
 * index keys or summaries. */
void attn_storage(const struct kmodel *m, const struct sparse_cfg *sp, double L,
		  double mtp_layers, double *kv_bytes, double *index_bytes);
/* The same over the layers of the classes in the mask (bit 1 << cls). */
void attn_storage_of(const struct kmodel *m, const struct sparse_cfg *sp, double L,
		     double mtp_layers, unsigned classes, double *kv_bytes, double *index_bytes);

/* Cache bytes per token of context at long context (1M tokens): KV and
 * index, over all decoder layers. */
void attn_bytes_per_token(const struct kmodel *m, const struct sparse_cfg *sp,
			  double *kv, double *index);

/* Whether m may run sp: the layout must fit (-1 when it does not: nothing
 * forces that); a trained-only algorithm other than the model's own needs
 * `force`, its accuracy being unknown (-2 without it).  Returns 0, or -1
 * or -2 with the reason. */
int attn_applicable(const struct kmodel *m, const struct sparse_cfg *sp,
		    int force, struct kerr *err);

/* The cache-side operators of one request, slot by slot, for the system
 * layer: per layer class the two cache writes (KV, index), the index
 * scan, top-k, gather and attention.  A group of requests on one device
 * costs, per slot, the roofline of the summed FLOPs and bytes: exactly what
 * attn_emit emits for the same requests. */
#define ATTN_SLOTS_PER_CLASS 6
#define ATTN_MAX_SLOTS (LC_N * ATTN_SLOTS_PER_CLASS)

struct attn_slot {
	enum op_kind kind;
	enum op_class cls;
	enum dtype dt;
	enum lclass lc;    /* the layer class it belongs to */
	double layers;     /* instances per step: the layers of that class */
	double rows;       /* a top-k slot's rows per request (at the model's
			      longest context; 0: none) */
	double passes;     /* a top-k slot's full passes over its scores (0:
			      the device's own kernel's) */
};

struct attn_layout {
	int n;
	double layers;     /* decoder layers the layout covers */
	int pad_topk;      /* attn_request prices the attention slots padded
			      to top-k (set by the caller: the device that
			      runs them pads, kernel.sparse_fixed_topk) */
	struct attn_slot s[ATTN_MAX_SLOTS];
	double out_bytes;  /* per request per step: query, new KV and index rows */
	double back_bytes; /* per request per step: attention output */
	/* per layer class: its layers, and out_bytes and back_bytes over them;
	 * cls_index: of cls_out, the indexer query and index key rows (which
	 * stay on the GPU when it runs the scan) */
	double cls_layers[LC_N], cls_out[LC_N], cls_back[LC_N], cls_index[LC_N];
	double cls_query[LC_N]; /* of cls_out, the attention query (which stays
				   on the GPU when it attends) */
};

/* Slots of `layers` decoder layers (mtp = 1: the MTP layer) at q query
 * tokens per request. */
void attn_layout(const struct kmodel *m, const struct sparse_cfg *sp,
		 double layers, int mtp, double q, struct attn_layout *lay);

/* Bytes of the indices a top-k selects, per request over the layers of
 * class cls of lay at context L: what a GPU that runs the selection sends
 * the device that gathers and attends. */
double attn_ids_bytes(const struct kmodel *m, const struct sparse_cfg *sp,
		      const struct attn_layout *lay, enum lclass cls, double L, double q);

/* FLOPs and bytes per instance of each slot of lay for one request at
 * context L (arrays of lay->n). */
void attn_request(const struct kmodel *m, const struct sparse_cfg *sp,
		  const struct attn_layout *lay, int mtp, double L, double q,
		  double *f, double *b);

#endif
