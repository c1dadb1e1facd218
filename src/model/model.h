/* model.h: the description of one LLM as the decode cost model needs it:
 * shape, attention layout and algorithm, MoE, data types, MTP defaults.
 * Dimensions are doubles so the cost formulas need no casts. */
#ifndef KARAT_MODEL_MODEL_H
#define KARAT_MODEL_MODEL_H

#include "base/dtype.h"
#include "base/err.h"
#include "io/ini_doc.h"
#include "io/schema.h"
#include "sparse/algo.h"

enum attn_kind { ATTN_GQA, ATTN_MLA };

struct kmodel {
	char name[64];
	double layers, hidden, vocab, max_context, total_params, mtp_layers;
	/* [attention] */
	int attn;                                   /* enum attn_kind */
	double heads, kv_heads, head_dim;           /* GQA */
	double q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim;
	/* [sparse]: the native algorithm and its parameters */
	struct sparse_cfg sp;
	/* [ffn] and [moe] */
	double dense_layers, dense_inter;
	double experts, active_experts, shared_experts, expert_inter;
	/* [dtypes] */
	int w_dt, emb_dt, act_dt, kv_dt, kv_rope_dt, attn_dt, dispatch_dt;
	/* weights per operator group; each defaults to w_dt (head_dt to
	 * emb_dt) where the file does not give it (model_validate) */
	int attn_w_dt, dense_w_dt, expert_w_dt, head_dt;
	double kv_scale_bytes;
	/* [decode] defaults, overridable per command */
	double mtp_draft, mtp_accept;
	double mtp_overlap; /* share of a draft token's selection already selected */
};

extern const struct schema model_schema;

/* Binds the [sparse] parameters of the declared algorithm (published
 * defaults for those not given), then cross-field checks (keys a layout
 * needs, consistent layer counts).  doc gives line numbers; returns 0 or
 * -1 with err. */
int model_validate(struct kmodel *m, const struct ini_doc *doc,
		   struct kerr *err);

/* Bytes of KV cache per token per layer (one sequence), all heads, in the
 * model's own layout (before any algorithm compresses or evicts). */
double model_kv_bytes_layer(const struct kmodel *m);
/* The same over all decoder layers. */
double model_kv_bytes_token(const struct kmodel *m);

/* Parameter counts from the shape (embedding, LM head, attention, FFN,
 * experts, MTP), to check against the published total. */
struct param_count {
	double embed, lm_head, attn_layer, index_layer, dense_ffn_layer;
	double moe_layer, mtp_module, total;
};
void model_params(const struct kmodel *m, struct param_count *p);

/* Bytes of weights one GPU holds when experts are spread over `gpus`
 * (everything else replicated: attention data-parallel). */
double model_weight_bytes(const struct kmodel *m, double gpus);

/* Bytes of one routed expert over every MoE layer (an MTP module's
 * too): what a redundant copy of an expert adds to a GPU. */
double model_expert_bytes(const struct kmodel *m);

/* Query heads' dimension of one MLA head's q/k (nope + rope). */
static inline double mla_qk_dim(const struct kmodel *m)
{
	return m->qk_nope_dim + m->qk_rope_dim;
}

#endif
