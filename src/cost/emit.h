/* emit.h: internal to cost/: appending operators to a step (emit.c), and
 * the shared shapes (GEMM, norm) every layer uses.  step.c and attn.c
 * build on it; it calls neither. */
#ifndef KARAT_COST_EMIT_H
#define KARAT_COST_EMIT_H

#include "cost/step.h"

struct emit {
	struct step *s;
	const struct kmodel *m;
	int as_module;     /* emit everything as OP_MTP (draft module) */
	int gpu_only;      /* drop the cache-side operators */
	int pad_topk;      /* attn_geo.pad_topk for the attention stages */
	double tp;         /* GPUs per unit (kbatch.tp; 0: 1) */
	double imbalance;  /* kbatch.imbalance (0: 1) */
	int a2a_per_gpu;   /* kbatch.a2a_per_gpu */
	int overflow;
};

/* Appends `count` instances of kind k with per-instance flops and bytes.
 * Zero counts are dropped. */
void emit_op(struct emit *e, enum op_kind k, double count, double flops,
	     double bytes, enum dtype dt);

/* Gives the operators emitted since index `first` a GEMM shape: groups of
 * [m x k] x [k x n]. */
void emit_shape(struct emit *e, int first, double groups, double m, double n, double k);

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

#endif
