/* attn.c: the cache-side costs of each attention algorithm, per layer and
 * summed over the local requests: index projections, cache writes, index
 * scan, top-k, gather and attention.  Formulas and sources:
 * ../shared/reference/sparse_attention.md (one multiply-add = 2 FLOPs;
 * MAC FLOPs only, compare/exp "aux" ops excluded except where they are the
 * whole work, as in top-k).  Extend by adding a case per algo_id. */
#include "cost/emit.h"

#include <math.h>

/* Bytes of one int32 index written by top-k. */
#define INDEX_ID_BYTES 4.0

/* Dense GQA attention over every cached token: QK^T and PV. */
static void gqa_dense(struct emit *e, double layers, const struct ctx_sums *cs,
		      double q)
{
	const struct kmodel *m = e->m;
	double sa = dtype_bytes(m->act_dt);
	double flops = 4 * m->heads * m->head_dim * cs->L * q;
	double bytes = cs->L * model_kv_bytes_layer(m) +
		       2 * cs->n * q * m->heads * m->head_dim * sa;
	emit_op(e, OP_ATTENTION, layers, flops, bytes, m->attn_dt);
}

/* Absorbed MLA over `tokens` cached rows (all heads share one latent):
 * QK over kv_lora + rope dims, PV over kv_lora dims.  rows_in_bytes says
 * whether the rows are read here (dense) or by a gather (sparse). */
static void mla_attend(struct emit *e, double layers, double tokens,
		       const struct ctx_sums *cs, double q, int rows_in_bytes)
{
	const struct kmodel *m = e->m;
	double sa = dtype_bytes(m->act_dt);
	double r = m->kv_lora_rank, rope = m->qk_rope_dim;
	double flops = q * m->heads * tokens * (2 * (r + rope) + 2 * r);
	double bytes = cs->n * q * m->heads * (2 * r + rope) * sa;
	if (rows_in_bytes)
		bytes += tokens * model_kv_bytes_layer(m);
	emit_op(e, OP_ATTENTION, layers, flops, bytes, m->attn_dt);
}

static void cache_write(struct emit *e, const struct layer_set *ls, double T)
{
	const struct kmodel *m = e->m;
	emit_op(e, OP_CACHE_WRITE, ls->all, 0, T * model_kv_bytes_layer(m), DT_FP32);
	emit_op(e, OP_CACHE_WRITE, ls->index, 0, T * model_index_bytes_layer(m),
		DT_FP32);
}

/* DSA lightning indexer (also index-share, on its index-owning layers):
 * I(t,s) = sum_j w_j ReLU(q_j . k_s) with one FP8 key per token. */
static void dsa(struct emit *e, const struct layer_set *ls,
		const struct ctx_sums *cs, double q, double T)
{
	const struct kmodel *m = e->m;
	double hi = m->index_heads, di = m->index_dim;
	double qin = m->q_lora_rank > 0 ? m->q_lora_rank : m->hidden;
	emit_gemm(e, OP_INDEX_Q_PROJ, ls->index, T, qin, hi * di, m->w_dt);
	emit_gemm(e, OP_INDEX_K_PROJ, ls->index, T, m->hidden, di, m->w_dt);
	emit_gemm(e, OP_INDEX_W_PROJ, ls->index, T, m->hidden, hi, m->act_dt);
	cache_write(e, ls, T);
	/* Scan: read every key, write one fp32 score per token and query. */
	double qbytes = cs->n * q * (hi * di * dtype_bytes(m->index_dt) + hi * 4);
	emit_op(e, OP_INDEX_SCAN, ls->index, 2 * hi * di * cs->L * q,
		cs->L * model_index_bytes_layer(m) + q * cs->L * m->score_bytes +
			qbytes,
		m->index_dt);
	/* Top-k: one compare per score; read scores, write k indices. */
	emit_op(e, OP_TOPK, ls->index, q * cs->L,
		q * cs->L * m->score_bytes + q * cs->k_tok * INDEX_ID_BYTES, DT_FP32);
	emit_op(e, OP_GATHER, ls->all, 0, cs->k_tok * model_kv_bytes_layer(m),
		DT_FP32);
	mla_attend(e, ls->all, cs->k_tok, cs, q, 0);
}

/* MiniMax sparse attention: one index query head per KV head scores every
 * token against a single shared index key, scores are max-pooled per
 * block, top-k blocks per KV head, exact GQA attention on them. */
static void msa(struct emit *e, const struct layer_set *ls,
		const struct ctx_sums *cs, double q, double T)
{
	const struct kmodel *m = e->m;
	double hi = m->index_heads, di = m->index_dim;
	double sparse = ls->all - ls->dense;
	emit_gemm(e, OP_INDEX_Q_PROJ, ls->index, T, m->hidden, hi * di, m->w_dt);
	emit_gemm(e, OP_INDEX_K_PROJ, ls->index, T, m->hidden, di, m->w_dt);
	cache_write(e, ls, T);
	double qbytes = cs->n * q * hi * di * dtype_bytes(m->index_dt);
	emit_op(e, OP_INDEX_SCAN, ls->index, 2 * hi * di * cs->L * q,
		cs->L * model_index_bytes_layer(m) +
			q * hi * cs->blocks * m->score_bytes + qbytes,
		m->index_dt);
	emit_op(e, OP_TOPK, ls->index, q * hi * cs->blocks,
		q * hi * (cs->blocks * m->score_bytes + cs->k_blk * INDEX_ID_BYTES),
		DT_FP32);
	/* Each KV head reads its own selected tokens: sel rows of one head. */
	emit_op(e, OP_GATHER, sparse, 0, cs->sel_tok * model_kv_bytes_layer(m),
		DT_FP32);
	double sa = dtype_bytes(m->act_dt);
	emit_op(e, OP_ATTENTION, sparse, 4 * m->heads * m->head_dim * cs->sel_tok * q,
		2 * cs->n * q * m->heads * m->head_dim * sa, m->attn_dt);
	gqa_dense(e, ls->dense, cs, q);
}

void attn_emit(struct emit *e, int algo, const struct layer_set *ls,
	       const struct ctx_sums *cs, double q, double T)
{
	switch ((enum algo_id)algo) {
	case ALGO_GQA:
		cache_write(e, ls, T);
		gqa_dense(e, ls->all, cs, q);
		return;
	case ALGO_MLA:
		cache_write(e, ls, T);
		mla_attend(e, ls->all, cs->L, cs, q, 1);
		return;
	case ALGO_DSA:
	case ALGO_INDEX_SHARE:
		dsa(e, ls, cs, q, T);
		return;
	case ALGO_MSA:
		msa(e, ls, cs, q, T);
		return;
	case ALGO_N:
		break;
	}
	e->overflow = 1; /* unreachable for a validated model */
}
