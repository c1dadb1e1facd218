/* block.c: block and page methods: a summary per block or page (compressed
 * keys, pooled keys, key bounds or learned index keys) is scored, and the
 * top blocks are attended: nsa, moba, msa, infllm-v2, quest.  Sources:
 * each row's .source and the tags below. */
#include <math.h>
#include <stdio.h>

#include "base/dtype.h"
#include "sparse/stage.h"

#define NSA "XunhaoLai/native-sparse-attention-triton README; arXiv 2502.11089"
#define MOBA "MoonshotAI MoBA tech report (Llama-8B-1M: block 4096, top-12)"
#define MSA "MiniMax-AI/MSA README.en.md (block 128, TopK 16)"
#define INF "MiniCPM4 config.json sparse_config (OpenBMB/infllmv2_cuda_impl)"
#define QUEST "mit-han-lab/Quest paper (page 16, budgets 256-4096, first two layers dense)"

/* nsa: the compressed branch is attention over L/stride entries; the
 * selected blocks and the window are attended per KV group.
 * Simplification: the compression MLP and the branch gate are left out of
 * the GPU-side projections. */
static void nsa_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double L, double q, struct attn_stage *s)
{
	const double *p = sp->p;
	(void)cls;
	double nc = floor(L / p[SP_RATIO]), nb = ceil(L / p[SP_BLOCK]);
	double kb = fmin(nb, p[SP_TOPK_BLOCKS]);
	double sel = fmin(L, kb * p[SP_BLOCK] + p[SP_WINDOW]);
	s->scan_f = g->ftok * nc * q;
	s->scan_b = nc * g->row;
	stage_topk(sp, g->Hkv, nb, kb, q, s);
	stage_attend(g, sel, sel, q, s);
}

static void nsa_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double *kv, double *idx)
{
	(void)cls;
	*kv = g->row;
	*idx = g->row / sp->p[SP_RATIO];
}

static void nsa_keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
		      enum lclass cls, double L, double *kv, double *idx)
{
	(void)cls;
	*kv = L * g->row;
	*idx = floor(L / sp->p[SP_RATIO]) * g->row;
}

const struct algo_row algo_row_nsa = {
	.layout = LAYOUT_ANY, .has_index = 1, .granularity = "block",
	.desc = "native sparse attention: compressed, selected-block and sliding-window branches per KV group",
	.source = NSA,
	PARAMS({SP_RATIO, 16, -1, NSA " compression stride 16"},
	       {SP_BLOCK, 64, 1, NSA " selection block 64"},
	       {SP_TOPK_BLOCKS, 16, 1, NSA " top-16 blocks (1 initial + 2 local)"},
	       {SP_WINDOW, 512, 1, NSA " window 512"},
	       {SP_SCORE_BYTES, 4, 1, "assumed: fp32 importance scores"}),
	.stages = nsa_stages, .writes = nsa_writes, .keeps = nsa_keeps,
};

/* moba: mean-pooled block keys gate blocks per query head. */
static void moba_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
			enum lclass cls, double L, double q, struct attn_stage *s)
{
	const double *p = sp->p;
	(void)cls;
	double B = p[SP_BLOCK], nb = ceil(L / B), kb = fmin(nb, p[SP_TOPK_BLOCKS]);
	double sel = fmin(L, kb * B);
	s->scan_f = 2 * g->dk * nb * g->H * q;
	s->scan_b = nb * g->krow;
	stage_topk(sp, stage_selectors(g, sp), nb, kb, q, s);
	stage_attend(g, sel, fmin(L, stage_union_rows(g, sp, kb, nb) * B), q, s);
}

static void moba_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
			enum lclass cls, double *kv, double *idx)
{
	(void)cls;
	*kv = g->row;
	*idx = g->krow / sp->p[SP_BLOCK];
}

static void moba_keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double L, double *kv, double *idx)
{
	(void)cls;
	*kv = L * g->row;
	*idx = ceil(L / sp->p[SP_BLOCK]) * g->krow;
}

const struct algo_row algo_row_moba = {
	.layout = LAYOUT_ANY, .has_index = 1, .granularity = "block",
	.desc = "mixture of block attention: mean-pooled block keys gate top-k blocks per query head",
	.source = MOBA,
	/* block: no monotone claim; larger blocks mean fewer summaries to
	 * scan but more tokens per pick */
	PARAMS({SP_BLOCK, 4096, 0, MOBA}, {SP_TOPK_BLOCKS, 12, 1, MOBA},
	       {SP_PER_GROUP, 0, -1, "MoBA tech report eq. 5-6 (gating per query head)"},
	       {SP_SCORE_BYTES, 4, 1, "assumed: fp32 gate scores"}),
	.stages = moba_stages, .writes = moba_writes, .keeps = moba_keeps,
};

/* msa: one index head per KV head scores every token; scores are
 * max-pooled per block and the top blocks attended per KV head. */
static void msa_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double L, double q, struct attn_stage *s)
{
	const double *p = sp->p;
	(void)cls;
	double hi = p[SP_INDEX_HEADS], di = p[SP_INDEX_DIM];
	double nb = ceil(L / p[SP_BLOCK]), kb = fmin(nb, p[SP_TOPK_BLOCKS]);
	double sel = fmin(L, kb * p[SP_BLOCK]);
	s->scan_f = 2 * hi * di * L * q;
	s->scan_b = L * sparse_index_key_bytes(sp) + q * hi * nb * p[SP_SCORE_BYTES] +
		    q * hi * di * dtype_bytes((enum dtype)p[SP_INDEX_DTYPE]);
	stage_topk(sp, hi, nb, kb, q, s);
	stage_attend(g, sel, sel, q, s);
}

static double msa_index_layers(const struct sparse_cfg *sp, double layers)
{
	return fmax(layers - sp->p[SP_DENSE_LAYERS], 0);
}

const struct algo_row algo_row_msa = {
	.layout = LAYOUT_ANY, .has_index = 1, .granularity = "block",
	.desc = "MiniMax sparse attention: max-pooled block scores, top-k blocks per KV head",
	.source = "MiniMax-AI/MSA README.en.md; arXiv 2606.13392",
	PARAMS({SP_TOPK_BLOCKS, 16, 1, MSA}, {SP_BLOCK, 128, 1, MSA},
	       {SP_INDEX_HEADS, 4, 0, "MiniMax-M3 config sparse_num_index_heads (one per KV head)"},
	       {SP_INDEX_DIM, 128, 1, "MiniMax-M3 config sparse_index_dim"},
	       {SP_INDEX_DTYPE, DT_FP8, 1, "MSA indexer/decode/q8kv8 README (FP8 E4M3 keys)"},
	       {SP_INDEX_SCALE, 0, 1, "MSA q8kv8 README (no per-token scale)"},
	       {SP_DENSE_LAYERS, 0, 1, "assumed: 0 unless the model says (MiniMax-M3: 3)"},
	       {SP_SCORE_BYTES, 4, 1, "assumed: fp32 block scores"}),
	/* query and key projections from the hidden state, no head weights */
	.indexer = {.classes = 1u << LC_SPARSE},
	.stages = msa_stages, .writes = stage_own_index_writes,
	.index_layers = msa_index_layers,
};

/* infllm-v2: compressed keys score blocks per KV group; the top blocks,
 * the initial block and the window are attended; short contexts are
 * dense. */
static void infllm_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
			  enum lclass cls, double L, double q, struct attn_stage *s)
{
	const double *p = sp->p;
	(void)cls;
	if (L <= p[SP_DENSE_BELOW]) {
		stage_dense(g, L, q, s);
		return;
	}
	double nc = floor(L / p[SP_RATIO]), nb = ceil(L / p[SP_BLOCK]);
	double kb = fmin(nb, p[SP_TOPK_BLOCKS]);
	double sel = fmin(L, kb * p[SP_BLOCK] + p[SP_SINKS] + p[SP_WINDOW]);
	s->scan_f = 2 * g->dk * nc * g->H * q;
	s->scan_b = nc * g->krow;
	stage_topk(sp, g->Hkv, nb, kb, q, s);
	stage_attend(g, sel, sel, q, s);
}

static void infllm_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
			  enum lclass cls, double *kv, double *idx)
{
	(void)cls;
	*kv = g->row;
	*idx = g->krow / sp->p[SP_RATIO];
}

static void infllm_keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
			 enum lclass cls, double L, double *kv, double *idx)
{
	(void)cls;
	*kv = L * g->row;
	*idx = floor(L / sp->p[SP_RATIO]) * g->krow;
}

const struct algo_row algo_row_infllm_v2 = {
	.layout = LAYOUT_ANY, .has_index = 1, .granularity = "block",
	.desc = "InfLLM-V2: compressed keys score 64-token blocks per KV group, plus initial block and window",
	.source = "OpenBMB/infllmv2_cuda_impl; MiniCPM4 config.json",
	PARAMS({SP_RATIO, 16, -1, INF " kernel_stride 16"}, {SP_BLOCK, 64, 1, INF " block_size 64"},
	       {SP_TOPK_BLOCKS, 64, 1, INF " topk 64"},
	       {SP_SINKS, 64, 1, INF " init_blocks 1 (64 tokens)"},
	       {SP_WINDOW, 2048, 1, INF " window_size 2048"},
	       {SP_DENSE_BELOW, 8192, 1, INF " dense_len 8192"},
	       {SP_SCORE_BYTES, 4, 1, "assumed: fp32 block scores"}),
	.stages = infllm_stages, .writes = infllm_writes, .keeps = infllm_keeps,
};

/* quest: the key min and max per page bound q.k from above; the top
 * pages within the token budget are attended. */
static void quest_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
			 enum lclass cls, double L, double q, struct attn_stage *s)
{
	const double *p = sp->p;
	(void)cls;
	double S = p[SP_BLOCK], np = ceil(L / S);
	double kp = fmin(np, floor(p[SP_BUDGET] / S)), sel = fmin(L, kp * S);
	s->scan_f = 2 * g->dk * np * g->H * q;
	s->scan_b = np * 2 * g->krow;
	stage_topk(sp, stage_selectors(g, sp), np, kp, q, s);
	stage_attend(g, sel, fmin(L, stage_union_rows(g, sp, kp, np) * S), q, s);
}

static void quest_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
			 enum lclass cls, double *kv, double *idx)
{
	(void)cls;
	*kv = g->row;
	*idx = 2 * g->krow / sp->p[SP_BLOCK];
}

static void quest_keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
			enum lclass cls, double L, double *kv, double *idx)
{
	(void)cls;
	*kv = L * g->row;
	*idx = ceil(L / sp->p[SP_BLOCK]) * 2 * g->krow;
}

static int quest_check(const struct sparse_cfg *sp, char *why, size_t n)
{
	if (sp->p[SP_BUDGET] < sp->p[SP_BLOCK]) {
		snprintf(why, n, "quest: budget (%g) is smaller than one page (%g tokens)",
			 sp->p[SP_BUDGET], sp->p[SP_BLOCK]);
		return -1;
	}
	return 0;
}

const struct algo_row algo_row_quest = {
	.layout = LAYOUT_ANY, .has_index = 1, .training_free = 1, .granularity = "page",
	.desc = "Quest: per-page key min/max bound the scores, top pages within a token budget",
	.source = "mit-han-lab/Quest assets/quest_paper.pdf",
	PARAMS({SP_BLOCK, 16, -1, QUEST}, {SP_BUDGET, 2048, 1, QUEST " (2048: 100% passkey at 100K)"},
	       {SP_DENSE_LAYERS, 2, 1, QUEST},
	       {SP_PER_GROUP, 1, -1, "assumed: GQA ports share one page choice per KV group (the paper targets MHA)"},
	       {SP_SCORE_BYTES, 4, 1, "assumed: fp32 page scores"}),
	.stages = quest_stages, .writes = quest_writes, .keeps = quest_keeps,
	.check = quest_check,
};
