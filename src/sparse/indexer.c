/* indexer.c: learned token indexers of the DSA family: dsa (every layer
 * scans every token), index-share (every n-th layer scans, the others
 * reuse its top-k), dsv4-csa (the indexer scans compressed entries),
 * dsv41 (a full scan picks candidate blocks that later layers re-score).
 * Sources: each row's .source and the tags below. */
#include <math.h>
#include <stdio.h>

#include "base/dtype.h"

#include "sparse/stage.h"

#define DS32 "deepseek-ai/DeepSeek-V3.2-Exp inference/config_671B_v3.2.json"
#define DSV41 "huggingface/transformers src/transformers/models/deepseek_v41/configuration_deepseek_v41.py"
#define SRC_PREV \
	"assumed: the device's own top-k; select_prev = P seeds it with the previous step's k-th " \
	"score and makes P full passes over the scores (TensorRT-LLM's GVR: 1-2, against radix " \
	"select's 3-4; tech blog 21, arXiv 2604.22312)"

/* Query, key and head-weight projections on the layers that score. */
#define DSA_INDEXER {.classes = 1u << LC_SPARSE | 1u << LC_REINDEX, .q_from_lora = 1, .head_weights = 1}

/* dsa and index-share: the owning layers score every token and pick the
 * top-k; every sparse layer attends to them. */
static void dsa_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double L, double q, struct attn_stage *s)
{
	double k = fmin(L, sp->p[SP_TOPK]);
	if (cls == LC_SPARSE) {
		stage_indexer(sp, L, q, s);
		stage_topk(sp, 1, L, k, q, s);
	}
	/* a padded kernel computes over every slot, reads the valid rows */
	stage_attend(g, g->pad_topk ? sp->p[SP_TOPK] : k, k, q, s);
}

static double all_layers(const struct sparse_cfg *sp, double layers)
{
	(void)sp;
	return layers;
}

const struct algo_row algo_row_dsa = {
	.layout = LAYOUT_ANY, .has_index = 1, .granularity = "token",
	.desc = "DeepSeek sparse attention: FP8 lightning indexer over every token, top-k tokens",
	.source = "deepseek-ai/DeepSeek-V3.2-Exp inference/model.py (Indexer)",
	PARAMS({SP_TOPK, 2048, 1, DS32 " index_topk"},
	       {SP_INDEX_HEADS, 64, 0, DS32 " index_n_heads"},
	       {SP_INDEX_DIM, 128, 1, DS32 " index_head_dim"},
	       {SP_INDEX_DTYPE, DT_FP8, 1, "DeepSeek-V3.2-Exp model.py fp8_index (E4M3 keys)"},
	       {SP_INDEX_SCALE, 4, 1, "DeepGEMM tests kv_cache_cast_to_fp8 (head_dim + 4 B)"},
	       {SP_SCORE_BYTES, 4, 1, "DeepSeek-V3.2-Exp model.py (fp32 index scores)"},
	       {SP_SELECT_BLOCK, 0, 0, "assumed: the published top-k kernels (FlashInfer's, SGLang's) rank every score; select_block = B ranks n / B block maxima and the k B tokens of the top blocks, the same set"},
	       {SP_SELECT_PREV, 0, 0, SRC_PREV}),
	.indexer = DSA_INDEXER,
	.stages = dsa_stages, .writes = stage_own_index_writes, .index_layers = all_layers,
};

/* Layer i owns an indexer iff max(i - off + 1, 0) % freq == 0: the first
 * `off` layers, then every freq-th. */
static double share_index_layers(const struct sparse_cfg *sp, double layers)
{
	double f = sp->p[SP_INDEX_FREQ], off = sp->p[SP_INDEX_OFFSET];
	return fmin(layers, off) + fmax(0, floor((layers - off) / f));
}

/* Layer i owns an indexer iff max(i - off + 1, 0) % freq == 0. */
static void share_sequence(const struct sparse_cfg *sp, long layers, long dense,
			   unsigned char *cls)
{
	double f = sp->p[SP_INDEX_FREQ], off = sp->p[SP_INDEX_OFFSET];
	for (long i = dense; i < layers; i++)
		cls[i] = i < off || fmod(i - off + 1, f) == 0 ? LC_SPARSE : LC_SHARE;
}

static int share_classes(const struct sparse_cfg *sp, double layers, double rest,
			 struct lcount *out)
{
	double own = share_index_layers(sp, layers);
	out[0] = (struct lcount){LC_SPARSE, own};
	out[1] = (struct lcount){LC_SHARE, rest - own};
	return 2;
}

const struct algo_row algo_row_index_share = {
	.layout = LAYOUT_ANY, .has_index = 1, .granularity = "token",
	.desc = "DSA with an indexer on every n-th layer; the others reuse its top-k",
	.source = "arXiv 2603.12201 (IndexCache); zai-org/GLM-5.2 config.json",
	PARAMS({SP_TOPK, 2048, 1, "GLM-5.2 config.json index_topk"},
	       {SP_INDEX_HEADS, 32, 0, "GLM-5.2 config.json index_n_heads"},
	       {SP_INDEX_DIM, 128, 1, "GLM-5.2 config.json index_head_dim"},
	       {SP_INDEX_DTYPE, DT_FP8, 1, "SGLang/vLLM DSA path (FP8 index keys)"},
	       {SP_INDEX_SCALE, 4, 1, "DeepGEMM tests kv_cache_cast_to_fp8"},
	       {SP_INDEX_FREQ, 4, -1, "GLM-5.2 config.json index_topk_freq"},
	       {SP_INDEX_OFFSET, 3, 0, "GLM-5.2 config.json index_skip_topk_offset"},
	       {SP_SCORE_BYTES, 4, 1, "DSA path (fp32 logits)"},
	       /* no claim on bytes: the MTP layer keeps its KV either way */
	       {SP_MTP_SHARE, 1, 0, "huggingface.co/zai-org/GLM-5.2 config.json: index_share_for_mtp_iteration = true"},
	       {SP_SELECT_BLOCK, 0, 0, "assumed: the published top-k kernels (FlashInfer's, SGLang's) rank every score; select_block = B ranks n / B block maxima and the k B tokens of the top blocks, the same set"},
	       {SP_SELECT_PREV, 0, 0, SRC_PREV}),
	.indexer = DSA_INDEXER,
	.stages = dsa_stages, .writes = stage_own_index_writes, .classes = share_classes,
	.sequence = share_sequence, .index_layers = share_index_layers,
};

/* dsv4-csa: one compressed entry per `ratio` tokens; the indexer scores
 * the entries, attention covers the top-k entries and the window.
 * Simplification: the compressor is left out of the GPU-side projections. */
static void csa_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double L, double q, struct attn_stage *s)
{
	(void)cls;
	double ne = ceil(L / sp->p[SP_RATIO]), k = fmin(ne, sp->p[SP_TOPK]);
	double w = fmin(L, sp->p[SP_WINDOW]);
	stage_indexer(sp, ne, q, s);
	stage_topk(sp, 1, ne, k, q, s);
	stage_attend(g, k + w, k + w, q, s);
}

static void csa_writes(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double *kv, double *idx)
{
	(void)cls;
	*kv = g->row * (1 + 1 / sp->p[SP_RATIO]); /* window ring + compressed */
	*idx = sparse_index_key_bytes(sp) / sp->p[SP_RATIO];
}

static void csa_keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
		      enum lclass cls, double L, double *kv, double *idx)
{
	(void)cls;
	double ne = ceil(L / sp->p[SP_RATIO]);
	*kv = (ne + fmin(L, sp->p[SP_WINDOW])) * g->row;
	*idx = ne * sparse_index_key_bytes(sp);
}

const struct algo_row algo_row_dsv4_csa = {
	.layout = LAYOUT_ANY, .has_index = 1, .granularity = "entry",
	.desc = "DeepSeek-V4 compressed sparse attention: one KV entry per m tokens, indexer picks top-k entries",
	.source = "arXiv 2606.19348; FlashMLA tests (MODEL1)",
	PARAMS({SP_RATIO, 4, -1, SRC_DSV4 " compress ratio 4"},
	       {SP_TOPK, 512, 1, SRC_DSV4 " index_topk (V4-Flash)"},
	       {SP_WINDOW, 128, 1, SRC_DSV4 " sliding_window 128"},
	       {SP_INDEX_HEADS, 64, 0, SRC_DSV4 " index_n_heads"},
	       {SP_INDEX_DIM, 128, 1, SRC_DSV4 " index_head_dim"},
	       {SP_INDEX_DTYPE, DT_FP4, 1, "TensorRT-LLM indexer_k_dtype fp4"},
	       {SP_INDEX_SCALE, 4, 1, "DeepGEMM kv_cache_cast_to_fp4 (head_dim/2 + 4 B)"},
	       {SP_SCORE_BYTES, 4, 1, "DeepGEMM fp8_fp4_paged_mqa_logits (fp32 logits)"}),
	.indexer = DSA_INDEXER,
	.stages = csa_stages, .writes = csa_writes, .keeps = csa_keeps,
	.index_layers = all_layers,
};

/* dsv41: the full-scan layers score everything and also pick candidate
 * blocks; the re-index layers score only those candidates; the rest
 * reuse a selection.  All attend to the top-k and the window.
 * Simplification: every layer's KV is kept at ratio 1 (uncompressed). */
static void dsv41_stages(const struct attn_geo *g, const struct sparse_cfg *sp,
			 enum lclass cls, double L, double q, struct attn_stage *s)
{
	const double *p = sp->p;
	double k = fmin(L, p[SP_TOPK]), w = fmin(L, p[SP_WINDOW]);
	double sel = fmin(L, k + w);
	if (cls == LC_SPARSE) {
		double nb = ceil(L / p[SP_CAND_BLOCK]);
		stage_indexer(sp, L, q, s);
		stage_topk(sp, 1, L, k, q, s);
		stage_topk(sp, 1, nb, fmin(nb, p[SP_CAND_BLOCKS]), q, s);
	} else if (cls == LC_REINDEX) {
		double c = fmin(L, p[SP_CAND_BLOCKS] * p[SP_CAND_BLOCK]);
		stage_indexer(sp, c, q, s);
		stage_topk(sp, 1, c, fmin(c, k), q, s);
	}
	stage_attend(g, sel, sel, q, s);
}

static double dsv41_index_layers(const struct sparse_cfg *sp, double layers)
{
	return round(sp->p[SP_FULL_SHARE] * layers);
}

static int dsv41_classes(const struct sparse_cfg *sp, double layers, double rest,
			 struct lcount *out)
{
	double full = dsv41_index_layers(sp, layers);
	double re = fmin(rest - full, round(sp->p[SP_REINDEX_SHARE] * layers));
	out[0] = (struct lcount){LC_SPARSE, full};
	out[1] = (struct lcount){LC_REINDEX, re};
	out[2] = (struct lcount){LC_SHARE, rest - full - re};
	return 3;
}

/* Where the classes sit: assumed spread evenly (a checkpoint's
 * configuration names them, kv_source_layer_ids and index_source_layer_ids).
 * The non-dense layers fall into one block per full-scan layer, which
 * leads its block; the re-index layers follow the full-scan ones, one per
 * block in turn; the rest reuse a selection. */
static void dsv41_sequence(const struct sparse_cfg *sp, long layers, long dense,
			   unsigned char *cls)
{
	long rest = layers - dense, full = (long)dsv41_index_layers(sp, (double)layers);
	long re = (long)fmin((double)(rest - full), round(sp->p[SP_REINDEX_SHARE] * layers));
	for (long i = dense; i < layers; i++)
		cls[i] = LC_SHARE;
	long nb = full > 0 ? full : 1, used[PIPE_MAX_LAYERS] = {0};
	for (long b = 0; b < full; b++)
		cls[dense + b * rest / full] = LC_SPARSE, used[b] = 1;
	for (long placed = 0, b = 0, idle = 0; placed < re && idle < nb; b = (b + 1) % nb) {
		long start = dense + b * rest / nb, end = dense + (b + 1) * rest / nb;
		if (start + used[b] < end) {
			cls[start + used[b]++] = LC_REINDEX;
			placed++, idle = 0;
		} else {
			idle++; /* this block is full */
		}
	}
}

static int dsv41_check(const struct sparse_cfg *sp, char *why, size_t n)
{
	if (sp->p[SP_FULL_SHARE] + sp->p[SP_REINDEX_SHARE] > 1) {
		snprintf(why, n, "dsv41: full_share + reindex_share exceed 1");
		return -1;
	}
	return 0;
}

const struct algo_row algo_row_dsv41 = {
	.layout = LAYOUT_ANY, .has_index = 1, .granularity = "entry",
	.desc = "DeepSeek-V4.1 two-level indexer: candidate blocks from one scan, re-scored by later layers",
	.source = "transformers deepseek_v41; FlashMLA README (V4.1 formats)",
	PARAMS({SP_TOPK, 512, 1, DSV41 " index_topk"}, {SP_WINDOW, 128, 1, DSV41 " window 128"},
	       {SP_INDEX_HEADS, 32, 0, DSV41 " index_n_heads"},
	       {SP_INDEX_DIM, 128, 1, DSV41 " index_head_dim"},
	       {SP_INDEX_DTYPE, DT_FP4, 1, DSV41 " (FP4 e2m1 index keys)"},
	       {SP_INDEX_SCALE, 4, 1, "DeepGEMM kv_cache_cast_to_fp4 (ue8m0 per 32)"},
	       {SP_CAND_BLOCKS, 2048, 1, DSV41 " candidate_topk_blocks"},
	       {SP_CAND_BLOCK, 8, 1, DSV41 " candidate_block_size"},
	       {SP_FULL_SHARE, 0.1, 1, DSV41 " 4 of 40 layers scan everything (kv_source_layer_ids)"},
	       {SP_REINDEX_SHARE, 0.1, 0, DSV41 " 4 of 40 layers re-score candidates (index_source_layer_ids)"},
	       {SP_SCORE_BYTES, 4, 1, "DeepGEMM paged mqa_logits (fp32 logits)"}),
	.indexer = DSA_INDEXER,
	.stages = dsv41_stages, .writes = stage_own_index_writes, .classes = dsv41_classes,
	.sequence = dsv41_sequence, .index_layers = dsv41_index_layers, .check = dsv41_check,
};
