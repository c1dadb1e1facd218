/* emit.h: internal to cost/: appending operators to a step, and the shared
 * shapes (GEMM, norm) every layer uses. */
#ifndef KARAT_COST_EMIT_H
#define KARAT_COST_EMIT_H

#include "cost/step.h"

struct emit {
	struct step *s;
	const struct kmodel *m;
	int as_module;     /* emit everything as OP_MTP (draft module) */
	int overflow;
};

/* Appends `count` instances of kind k with per-instance flops and bytes.
 * Zero counts are dropped. */
void emit_op(struct emit *e, enum op_kind k, double count, double flops,
	     double bytes, enum dtype dt);

/* [tokens x din] x [din x dout] with weights of type wdt. */
void emit_gemm(struct emit *e, enum op_kind k, double count, double tokens,
	       double din, double dout, enum dtype wdt);

/* RMSNorm over `dim` for `tokens` rows. */
void emit_norm(struct emit *e, enum op_kind k, double count, double tokens,
	       double dim);

/* The local requests: n of them, each at `context`, or listed in ctx. */
struct req_view {
	double n, context;
	const double *ctx;
	int nctx;
};

/* Emits the cache-side operators (and indexer projections) of algorithm
 * sp for `layers` decoder layers (mtp: the MTP layer); T = query tokens on
 * this GPU, q per request. */
void attn_emit(struct emit *e, const struct sparse_cfg *sp, double layers,
	       int mtp, const struct req_view *r, double q, double T);

#endif
