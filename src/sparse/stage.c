/* stage.c: the shared building blocks of the rows' stage functions. */
#include "sparse/stage.h"

#include <math.h>

#include "base/dtype.h"

void stage_dense(const struct attn_geo *g, double tokens, double q,
		 struct attn_stage *s)
{
	s->attn_f = g->ftok * tokens * q;
	s->attn_b = tokens * g->row + q * g->act;
}

void stage_attend(const struct attn_geo *g, double sel, double rows, double q,
		  struct attn_stage *s)
{
	s->gather_b = rows * g->row;
	s->attn_f = g->ftok * sel * q;
	s->attn_b = q * g->act;
}

void stage_topk(const struct sparse_cfg *sp, double units, double n, double k,
		double q, struct attn_stage *s)
{
	/* two-level: the scan keeps each block's maximum; the top-k blocks by
	 * maximum hold every top-k token (a block that holds one has a maximum
	 * at or above the k-th score, and at most k blocks do), so ranking the
	 * n / B maxima, then the k B tokens of those blocks, selects the same
	 * set; where that ranks more than the n scores, the flat one runs */
	double B = sp->p[SP_SELECT_BLOCK];
	double ranked = B > 0 && n > k ? fmin(n, ceil(n / B) + fmin(n, k * B)) : n;
	s->topk_f += q * units * ranked;
	s->topk_rows += q * units;
	s->topk_passes = sp->p[SP_SELECT_PREV];
	s->topk_b += q * units * (ranked * sp->p[SP_SCORE_BYTES] + k * STAGE_ID_BYTES);
	s->ids_b += q * units * k * STAGE_ID_BYTES;
}

void stage_indexer(const struct sparse_cfg *sp, double entries, double q,
		   struct attn_stage *s)
{
	double hi = sp->p[SP_INDEX_HEADS], di = sp->p[SP_INDEX_DIM];
	double sq = dtype_bytes((enum dtype)sp->p[SP_INDEX_DTYPE]);
	s->scan_f += 2 * hi * di * entries * q;
	s->scan_b += entries * sparse_index_key_bytes(sp) +
		     q * entries * sp->p[SP_SCORE_BYTES] + q * (hi * di * sq + hi * 4);
}

double stage_union_rows(const struct attn_geo *g, const struct sparse_cfg *sp,
			double sel, double cap)
{
	return sp->p[SP_PER_GROUP] > 0 ? sel : fmin(cap, g->G * sel);
}

void stage_own_index_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
			    enum lclass cls, double *kv, double *idx)
{
	*kv = g->row;
	*idx = cls == LC_SPARSE ? sparse_index_key_bytes(sp) : 0;
}

double stage_selectors(const struct attn_geo *g, const struct sparse_cfg *sp)
{
	return sp->p[SP_PER_GROUP] > 0 ? g->Hkv : g->H;
}
