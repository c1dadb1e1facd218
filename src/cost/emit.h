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

/* Layer counts an attention algorithm emits for. */
struct layer_set {
	double all;        /* layers with attention */
	double index;      /* of them, layers that own an indexer */
	double dense;      /* of them, layers forced to dense attention (msa) */
};

/* Emits the cache-side operators (and indexer projections) of algorithm
 * a for the layers in ls; T = query tokens on this GPU. */
void attn_emit(struct emit *e, int algo, const struct layer_set *ls,
	       const struct ctx_sums *cs, double q, double T);

#endif
