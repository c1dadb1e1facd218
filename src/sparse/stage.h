/* stage.h: the building blocks the rows' stage functions share (dense
 * attention, which cost/attn.c also uses for dense layers; attention on
 * gathered rows; top-k; a learned indexer's scan; the row union of
 * per-head selections).  Formulas: docs/model.md ("Attention
 * algorithms"); each row cites its own sources (one multiply-add =
 * 2 FLOPs; non-MAC "aux" ops are left out except where they are the whole
 * work, as in top-k). */
#ifndef KARAT_SPARSE_STAGE_H
#define KARAT_SPARSE_STAGE_H

#include "sparse/algo.h"

#define STAGE_ID_BYTES 4.0 /* one int32 index written by top-k */

/* A source more than one family file cites. */
#define SRC_DSV4 "NeMo DeepSeek-V4 config; TensorRT-LLM DeepSeekV4SparseAttentionConfig; arXiv 2606.19348"

/* Dense attention over `tokens` tokens (adds to s). */
void stage_dense(const struct attn_geo *g, double tokens, double q,
		 struct attn_stage *s);

/* Attention on `sel` tokens per head whose rows a gather brought in;
 * `rows` tokens were read (the union over the heads that select apart). */
void stage_attend(const struct attn_geo *g, double sel, double rows, double q,
		  struct attn_stage *s);

/* Top-k by `units` selectors over n scores each, keeping k (adds to s). */
void stage_topk(const struct sparse_cfg *sp, double units, double n, double k,
		double q, struct attn_stage *s);

/* A learned indexer (DSA family) scoring `entries` keys: multiply-adds of
 * H_I heads against one shared key, a score per entry and query written,
 * the query and head weights read (adds to s). */
void stage_indexer(const struct sparse_cfg *sp, double entries, double q,
		   struct attn_stage *s);

/* Rows a per-query-head selection of `sel` tokens (of `cap` possible)
 * touches per KV head: one set when shared by the group, else up to G. */
double stage_union_rows(const struct attn_geo *g, const struct sparse_cfg *sp,
			double sel, double cap);

/* Selectors: one per KV group when the group shares a choice
 * (per_group), else one per query head. */
double stage_selectors(const struct attn_geo *g, const struct sparse_cfg *sp);

/* writes for algorithms whose LC_SPARSE layers own an index: the KV row,
 * and one index key on those layers only. */
void stage_own_index_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
			    enum lclass cls, double *kv, double *idx);

#endif
