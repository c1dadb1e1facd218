/* evict.c: methods that drop tokens from the cache, so decode is dense on
 * what is left: h2o (heavy hitters, scored as it goes), snapkv (a budget
 * chosen once from the prompt), streamingllm (sinks and a window).
 * Sources: each row's .source and the tags below. */
#include <math.h>

#include "sparse/stage.h"

#define H2O "FMInference/H2O README (20% heavy hitters)"
#define SNAP "FasterDecoding/SnapKV snapkv_utils.py (max_capacity_prompt 2048)"
#define STRM "mit-han-lab/streaming-llm README (4 sink tokens, recent window)"

/* Tokens h2o keeps of a context of L. */
static double h2o_kept(const struct sparse_cfg *sp, double L)
{
	return fmin(L, ceil(sp->p[SP_KEEP] * L));
}

/* h2o keeps C tokens, updates their accumulated scores, evicts one: the
 * least score, found by an argmin in the same pass as the update (C more
 * compares per head, no bytes of its own: the set a heap keeps), or with
 * evict_topk by ranking the kept set with a top-k kernel each step, as
 * the reference code does (reading the scores again). */
static void h2o_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double L, double q, struct attn_stage *s)
{
	(void)cls;
	double C = h2o_kept(sp, L);
	s->scan_f = g->H * C * q;
	s->scan_b = 2 * g->H * C * 4;
	if (sp->p[SP_EVICT_TOPK] > 0) { /* a kernel of its own reads the scores again */
		s->topk_f = g->H * C;
		s->topk_b = 4 * g->H * C;
		s->topk_rows = g->H;
	} else
		s->scan_f += g->H * C;
	stage_dense(g, C, q, s);
}

/* One fp32 accumulated score per query head and kept token. */
static void h2o_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double *kv, double *idx)
{
	(void)sp, (void)cls;
	*kv = g->row;
	*idx = 4 * g->H;
}

static void h2o_keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
		      enum lclass cls, double L, double *kv, double *idx)
{
	(void)cls;
	double C = h2o_kept(sp, L);
	*kv = C * g->row;
	*idx = C * 4 * g->H;
}

const struct algo_row algo_row_h2o = {
	.layout = LAYOUT_ANY, .has_index = 1, .training_free = 1, .granularity = "none",
	.desc = "H2O: keeps heavy-hitter and recent tokens, evicts the rest (evicted tokens are gone)",
	.source = "FMInference/H2O",
	PARAMS({SP_KEEP, 0.2, 1, H2O " (10% heavy + 10% recent)"},
	       {SP_EVICT_TOPK, 0, 1, "assumed: an argmin in the score update keeps the same set as "
				      "FMInference/H2O's top-k over the accumulated scores, at the cost "
				      "of a reduction; every system alike (evict_topk = 1: the "
				      "reference code's ranking)"}),
	.stages = h2o_stages, .writes = h2o_writes, .keeps = h2o_keeps,
};

/* snapkv: the prompt's cache cut once to the budget.  Simplification: the
 * tokens generated since are not counted (decode is dense on the budget). */
static void snapkv_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
			  enum lclass cls, double L, double q, struct attn_stage *s)
{
	(void)cls;
	stage_dense(g, fmin(L, sp->p[SP_BUDGET]), q, s);
}

static void snapkv_keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
			 enum lclass cls, double L, double *kv, double *idx)
{
	(void)cls;
	*kv = fmin(L, sp->p[SP_BUDGET]) * g->row;
	*idx = 0;
}

const struct algo_row algo_row_snapkv = {
	.layout = LAYOUT_ANY, .training_free = 1, .granularity = "none",
	.desc = "SnapKV: compresses the prompt cache once to a fixed budget; decode is dense on it",
	.source = "FasterDecoding/SnapKV",
	PARAMS({SP_BUDGET, 2048, 1, SNAP}),
	.stages = snapkv_stages, .keeps = snapkv_keeps,
};

static double stream_tokens(const struct sparse_cfg *sp, double L)
{
	return fmin(L, sp->p[SP_SINKS] + sp->p[SP_WINDOW]);
}

static void stream_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
			  enum lclass cls, double L, double q, struct attn_stage *s)
{
	(void)cls;
	stage_dense(g, stream_tokens(sp, L), q, s);
}

static void stream_keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
			 enum lclass cls, double L, double *kv, double *idx)
{
	(void)cls;
	*kv = stream_tokens(sp, L) * g->row;
	*idx = 0;
}

const struct algo_row algo_row_streamingllm = {
	.layout = LAYOUT_ANY, .training_free = 1, .granularity = "window",
	.desc = "StreamingLLM: attention sinks plus a window of recent tokens",
	.source = "mit-han-lab/streaming-llm",
	PARAMS({SP_SINKS, 4, 1, STRM " (start_size 4)"},
	       {SP_WINDOW, 2048, 1, "assumed: middle of the 1K-4K windows of the README's examples"}),
	.stages = stream_stages, .keeps = stream_keeps,
};
