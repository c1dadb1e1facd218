/* token.c: training-free token methods that approximate the scores of
 * every token and attend to the best: sparq (a few query channels),
 * magicpig (SimHash LSH sampling).  Sources: each row's .source and the
 * tags below. */
#include <math.h>
#include <stdio.h>

#include "sparse/stage.h"

#define SPARQ "Graphcore SparQ gpt-fast SparQArgs (ratio 8: r = d/8, k = L/16)"
#define MPIG "Infini-AI-Lab/MagicPIG README and attnserver_dist.py"

/* sparq: r of the dk key channels approximate the scores, then exact
 * attention on the top-k tokens.  Per group (the default), a KV group's
 * query heads sum their approximate scores and select once: r channels
 * and k rows per KV head; per query head, up to G x r channels and G x k
 * rows. */
static void sparq_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
			 enum lclass cls, double L, double q, struct attn_stage *s)
{
	const double *p = sp->p;
	(void)cls;
	double r = fmax(1, round(g->dk / p[SP_RATIO]));
	double k = fmax(1, fmin(L, round(L / (2 * p[SP_RATIO]))));
	double ch = p[SP_PER_GROUP] > 0 ? r : fmin(g->G * r, g->dk);
	s->scan_f = 2 * r * L * g->H * q;
	s->scan_b = L * ch * g->krow / g->dk;
	stage_topk(sp, stage_selectors(g, sp), L, k, q, s);
	stage_attend(g, k, stage_union_rows(g, sp, k, L), q, s);
}

/* The keys are kept a second time, channel-major, for the channel scan. */
static void sparq_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
			 enum lclass cls, double *kv, double *idx)
{
	(void)sp, (void)cls;
	*kv = g->row;
	*idx = g->krow;
}

static int sparq_check(const struct sparse_cfg *sp, char *why, size_t n)
{
	if (sp->p[SP_RATIO] < 1) {
		snprintf(why, n, "sparq: ratio must be at least 1");
		return -1;
	}
	return 0;
}

const struct algo_row algo_row_sparq = {
	.layout = LAYOUT_ANY, .has_index = 1, .training_free = 1, .granularity = "token",
	.desc = "SparQ: top-r query channels approximate scores, exact attention on the top-k tokens",
	.source = "arXiv 2312.04985; Graphcore gpt-fast sparq_attn",
	PARAMS({SP_RATIO, 8, -1, SPARQ},
	       {SP_PER_GROUP, 1, -1, "assumed: GQA-aware, as a careful port would run it: each KV "
				     "group's approximate scores summed over its query heads, one "
				     "selection and one gather per KV head (the same as per head on "
				     "a multi-head model); per_group = 0 is " SPARQ "'s form, which "
				     "repeats K and V per query head"},
	       {SP_SCORE_BYTES, 4, 1, "assumed: fp32 approximate scores"}),
	.stages = sparq_stages, .writes = sparq_writes, .check = sparq_check,
};

/* magicpig: LSH buckets walked per query head sample tokens; sinks and a
 * local window are always attended.  Simplification: the retrieved share
 * is a parameter (sample, 2% by default: the paper's order of magnitude,
 * not re-read), not derived from the hash collisions. */
static void magicpig_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
			    enum lclass cls, double L, double q, struct attn_stage *s)
{
	const double *p = sp->p;
	(void)cls;
	double K = p[SP_HASH_BITS], T = p[SP_HASH_TABLES];
	double walk = T * L / pow(2, K); /* bucket members visited */
	double ns = fmin(L, ceil(p[SP_SAMPLE] * L));
	double fixed = fmin(L, p[SP_SINKS] + p[SP_WINDOW]);
	s->scan_f = 2 * g->dk * K * T * g->H * q; /* hashing the query */
	s->scan_b = g->H * q * walk * 5;          /* int32 id + 1-byte mask */
	s->topk_f = g->H * q * walk;              /* collision counting */
	s->topk_rows = g->H * q;
	stage_attend(g, ns + fixed, fmin(L, stage_union_rows(g, sp, ns, L) + fixed), q, s);
}

/* One int32 bucket id per table and KV head. */
static void magicpig_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
			    enum lclass cls, double *kv, double *idx)
{
	(void)cls;
	*kv = g->row;
	*idx = 4 * sp->p[SP_HASH_TABLES] * g->Hkv;
}

const struct algo_row algo_row_magicpig = {
	.layout = LAYOUT_ANY, .has_index = 1, .training_free = 1, .granularity = "token",
	.desc = "MagicPIG: SimHash LSH tables sample tokens for attention, plus sinks and a local window",
	.source = "arXiv 2410.16179; Infini-AI-Lab/MagicPIG",
	PARAMS({SP_HASH_BITS, 10, -1, MPIG " (K = 10)"}, {SP_HASH_TABLES, 150, 1, MPIG " (L = 150-170)"},
	       {SP_SAMPLE, 0.02, 1, "assumed: about 2% of the context retrieved (paper, not re-read)"},
	       {SP_SINKS, 4, 1, MPIG " (4 sink tokens)"}, {SP_WINDOW, 64, 1, MPIG " (64 local tokens)"},
	       {SP_PER_GROUP, 0, -1, MPIG " (retrieval per query head)"}),
	.stages = magicpig_stages, .writes = magicpig_writes,
};
