/* dense.c: dense attention over the whole context (gqa, mla) or over a
 * compressed cache (dsv4-hca).  Sources: each row's .source. */
#include <math.h>

#include "sparse/stage.h"

static void dense_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
			 enum lclass cls, double L, double q, struct attn_stage *s)
{
	(void)sp, (void)cls;
	stage_dense(g, L, q, s);
}

const struct algo_row algo_row_gqa = {
	.layout = LAYOUT_GQA, .training_free = 1, .granularity = "none",
	.desc = "dense grouped-query attention over the whole context",
	.source = "arXiv 2305.13245 (GQA): 2 x kv_heads x head_dim values a token, 4 x heads x head_dim FLOPs a token and query",
	.stages = dense_stages,
};

const struct algo_row algo_row_mla = {
	.layout = LAYOUT_MLA, .training_free = 1, .granularity = "none",
	.desc = "dense multi-head latent attention in absorbed (MQA) form",
	.source = "deepseek-ai/DeepSeek-V3.2-Exp inference/model.py",
	.stages = dense_stages,
};

/* One compressed entry per `ratio` tokens plus a window of recent ones. */
static double hca_entries(const struct sparse_cfg *sp, double L)
{
	return ceil(L / sp->p[SP_RATIO]) + fmin(L, sp->p[SP_WINDOW]);
}

static void hca_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double L, double q, struct attn_stage *s)
{
	(void)cls;
	stage_dense(g, hca_entries(sp, L), q, s);
}

static void hca_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double *kv, double *idx)
{
	(void)cls;
	*kv = g->row * (1 + 1 / sp->p[SP_RATIO]); /* window ring + compressed */
	*idx = 0;
}

static void hca_keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
		      enum lclass cls, double L, double *kv, double *idx)
{
	(void)cls;
	*kv = hca_entries(sp, L) * g->row;
	*idx = 0;
}

const struct algo_row algo_row_dsv4_hca = {
	.layout = LAYOUT_ANY, .granularity = "window",
	.desc = "DeepSeek-V4 heavily compressed attention: dense over one entry per m tokens plus a window",
	.source = "arXiv 2606.19348",
	PARAMS({SP_RATIO, 128, -1, SRC_DSV4 " compress ratio 128"},
	       {SP_WINDOW, 128, 1, SRC_DSV4 " sliding_window 128"}),
	.stages = hca_stages, .writes = hca_writes, .keeps = hca_keeps,
};
