/* algo.c: the attention-algorithm table with published parameter defaults,
 * and parsing of "--algo NAME[:key=value,...]".  Formulas and sources:
 * ../shared/reference/sparse_attention.md.  Adding an algorithm means a row
 * here, a case in cost/attn.c and a test with hand-computed counts. */
#include "sparse/algo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/dtype.h"
#include "base/suggest.h"

const struct sp_param_info sp_params[SP_N] = {
	[SP_TOPK] = {"topk", U_TOKENS, 1, 1e9, 0, "tokens (or compressed entries) selected per query"},
	[SP_TOPK_BLOCKS] = {"topk_blocks", U_INT, 1, 1e9, 0, "blocks or pages selected per query"},
	[SP_BLOCK] = {"block", U_TOKENS, 1, 1e9, 0, "tokens per block or page"},
	[SP_WINDOW] = {"window", U_TOKENS, 0, 1e9, 0, "most recent tokens always attended"},
	[SP_SINKS] = {"sinks", U_TOKENS, 0, 1e9, 0, "initial tokens always attended"},
	[SP_BUDGET] = {"budget", U_TOKENS, 1, 1e9, 0, "tokens attended (or kept) per query"},
	[SP_KEEP] = {"keep", U_REAL, 1e-6, 1, 0, "fraction of the context kept in the cache"},
	[SP_RATIO] = {"ratio", U_INT, 1, 1e6, 0, "compression ratio or stride in tokens"},
	[SP_INDEX_HEADS] = {"index_heads", U_INT, 1, 4096, 0, "indexer query heads"},
	[SP_INDEX_DIM] = {"index_dim", U_INT, 1, 65536, 0, "indexer head dimension"},
	[SP_INDEX_DTYPE] = {"index_dtype", U_INT, 0, DT_N - 1, 1, "data type of index keys"},
	[SP_INDEX_SCALE] = {"index_scale_bytes", U_BYTES, 0, 1e6, 0, "scale bytes per index key"},
	[SP_INDEX_FREQ] = {"index_freq", U_INT, 1, 4096, 0, "every n-th layer owns an indexer"},
	[SP_INDEX_OFFSET] = {"index_offset", U_INT, 0, 4096, 0, "shift of the indexer-layer pattern"},
	[SP_DENSE_LAYERS] = {"dense_layers", U_INT, 0, 4096, 0, "leading layers with dense attention"},
	[SP_DENSE_BELOW] = {"dense_below", U_TOKENS, 0, 1e9, 0, "contexts up to this length attend densely"},
	[SP_SCORE_BYTES] = {"score_bytes", U_BYTES, 1, 64, 0, "bytes per materialised score"},
	[SP_PER_GROUP] = {"per_group", U_INT, 0, 1, 0, "1: one selection per KV group; 0: per query head"},
	[SP_HASH_BITS] = {"hash_bits", U_INT, 1, 30, 0, "SimHash bits per table"},
	[SP_HASH_TABLES] = {"hash_tables", U_INT, 1, 4096, 0, "hash tables per KV head"},
	[SP_SAMPLE] = {"sample", U_REAL, 1e-6, 1, 0, "fraction of the context the sampler retrieves"},
	[SP_CAND_BLOCKS] = {"cand_blocks", U_INT, 1, 1e9, 0, "candidate blocks kept by the first level"},
	[SP_CAND_BLOCK] = {"cand_block", U_TOKENS, 1, 1e9, 0, "tokens per candidate block"},
	[SP_FULL_SHARE] = {"full_share", U_REAL, 0, 1, 0, "share of layers scanning the whole context"},
	[SP_REINDEX_SHARE] = {"reindex_share", U_REAL, 0, 1, 0, "share of layers re-scoring the candidates"},
};

#define P(id, v, dir, src) {id, v, dir, src}
#define DS32 "deepseek-ai/DeepSeek-V3.2-Exp inference/config_671B_v3.2.json"
#define DSV4 "NeMo DeepSeek-V4 config and TensorRT-LLM DeepSeekV4SparseAttentionConfig (sparse_attention.md 2.1)"
#define DSV41 "transformers deepseek_v41 configuration (sparse_attention.md 2.2)"
#define NSA "XunhaoLai/native-sparse-attention-triton README; arXiv 2502.11089"
#define MOBA "MoonshotAI MoBA tech report (Llama-8B-1M: block 4096, top-12)"
#define MSA "MiniMax-AI/MSA README.en.md (block 128, TopK 16)"
#define INF "MiniCPM4 config.json sparse_config (OpenBMB/infllmv2_cuda_impl)"
#define QUEST "mit-han-lab/Quest paper (page 16, budgets 256-4096, first two layers dense)"
#define SPARQ "Graphcore SparQ gpt-fast SparQArgs (ratio 8: r = d/8, k = L/16)"
#define MPIG "Infini-AI-Lab/MagicPIG README and attnserver_dist.py"
#define H2O "FMInference/H2O README (20% heavy hitters)"
#define SNAP "FasterDecoding/SnapKV snapkv_utils.py (max_capacity_prompt 2048)"
#define STRM "mit-han-lab/streaming-llm README (4 sink tokens, recent window)"

const struct algo_info algo_table[ALGO_N] = {
	{ALGO_GQA, "gqa", LAYOUT_GQA, 0, 1, "none",
	 "dense grouped-query attention over the whole context",
	 "sparse_attention.md 0.2", 0, {{0}}},
	{ALGO_MLA, "mla", LAYOUT_MLA, 0, 1, "none",
	 "dense multi-head latent attention in absorbed (MQA) form",
	 "deepseek-ai/DeepSeek-V3.2-Exp inference/model.py", 0, {{0}}},
	{ALGO_DSA, "dsa", LAYOUT_ANY, 1, 0, "token",
	 "DeepSeek sparse attention: FP8 lightning indexer over every token, top-k tokens",
	 "deepseek-ai/DeepSeek-V3.2-Exp inference/model.py (Indexer)", 6,
	 {P(SP_TOPK, 2048, 1, DS32 " index_topk"), P(SP_INDEX_HEADS, 64, 0, DS32 " index_n_heads"),
	  P(SP_INDEX_DIM, 128, 1, DS32 " index_head_dim"),
	  P(SP_INDEX_DTYPE, DT_FP8, 1, "DeepSeek-V3.2-Exp model.py fp8_index (E4M3 keys)"),
	  P(SP_INDEX_SCALE, 4, 1, "DeepGEMM tests kv_cache_cast_to_fp8 (head_dim + 4 B)"),
	  P(SP_SCORE_BYTES, 4, 1, "DeepSeek-V3.2-Exp model.py (fp32 index scores)")}},
	{ALGO_INDEX_SHARE, "index-share", LAYOUT_ANY, 1, 0, "token",
	 "DSA with an indexer on every n-th layer; the others reuse its top-k",
	 "arXiv 2603.12201 (IndexCache); zai-org/GLM-5.2 config.json", 8,
	 {P(SP_TOPK, 2048, 1, "GLM-5.2 config.json index_topk"),
	  P(SP_INDEX_HEADS, 32, 0, "GLM-5.2 config.json index_n_heads"),
	  P(SP_INDEX_DIM, 128, 1, "GLM-5.2 config.json index_head_dim"),
	  P(SP_INDEX_DTYPE, DT_FP8, 1, "SGLang/vLLM DSA path (FP8 index keys)"),
	  P(SP_INDEX_SCALE, 4, 1, "DeepGEMM tests kv_cache_cast_to_fp8"),
	  P(SP_INDEX_FREQ, 4, -1, "GLM-5.2 config.json index_topk_freq"),
	  P(SP_INDEX_OFFSET, 3, 0, "GLM-5.2 config.json index_skip_topk_offset"),
	  P(SP_SCORE_BYTES, 4, 1, "DSA path (fp32 logits)")}},
	{ALGO_DSV4_CSA, "dsv4-csa", LAYOUT_ANY, 1, 0, "entry",
	 "DeepSeek-V4 compressed sparse attention: one KV entry per m tokens, indexer picks top-k entries",
	 "arXiv 2606.19348; FlashMLA tests (MODEL1)", 8,
	 {P(SP_RATIO, 4, -1, DSV4 " compress ratio 4"), P(SP_TOPK, 512, 1, DSV4 " index_topk (V4-Flash)"),
	  P(SP_WINDOW, 128, 1, DSV4 " sliding_window 128"), P(SP_INDEX_HEADS, 64, 0, DSV4 " index_n_heads"),
	  P(SP_INDEX_DIM, 128, 1, DSV4 " index_head_dim"),
	  P(SP_INDEX_DTYPE, DT_FP4, 1, "TensorRT-LLM indexer_k_dtype fp4"),
	  P(SP_INDEX_SCALE, 4, 1, "DeepGEMM kv_cache_cast_to_fp4 (head_dim/2 + 4 B)"),
	  P(SP_SCORE_BYTES, 4, 1, "DeepGEMM fp8_fp4_paged_mqa_logits (fp32 logits)")}},
	{ALGO_DSV4_HCA, "dsv4-hca", LAYOUT_ANY, 0, 0, "window",
	 "DeepSeek-V4 heavily compressed attention: dense over one entry per m tokens plus a window",
	 "arXiv 2606.19348", 2,
	 {P(SP_RATIO, 128, -1, DSV4 " compress ratio 128"), P(SP_WINDOW, 128, 1, DSV4 " sliding_window 128")}},
	{ALGO_DSV41, "dsv41", LAYOUT_ANY, 1, 0, "entry",
	 "DeepSeek-V4.1 two-level indexer: candidate blocks from one scan, re-scored by later layers",
	 "transformers deepseek_v41; FlashMLA README (V4.1 formats)", 11,
	 {P(SP_TOPK, 512, 1, DSV41 " index_topk"), P(SP_WINDOW, 128, 1, DSV41 " window 128"),
	  P(SP_INDEX_HEADS, 32, 0, DSV41 " index_n_heads"), P(SP_INDEX_DIM, 128, 1, DSV41 " index_head_dim"),
	  P(SP_INDEX_DTYPE, DT_FP4, 1, DSV41 " (FP4 e2m1 index keys)"),
	  P(SP_INDEX_SCALE, 4, 1, "DeepGEMM kv_cache_cast_to_fp4 (ue8m0 per 32)"),
	  P(SP_CAND_BLOCKS, 2048, 1, DSV41 " candidate_topk_blocks"),
	  P(SP_CAND_BLOCK, 8, 1, DSV41 " candidate_block_size"),
	  P(SP_FULL_SHARE, 0.1, 1, DSV41 " 4 of 40 layers scan everything (kv_source_layer_ids)"),
	  P(SP_REINDEX_SHARE, 0.1, 0, DSV41 " 4 of 40 layers re-score candidates (index_source_layer_ids)"),
	  P(SP_SCORE_BYTES, 4, 1, "DeepGEMM paged mqa_logits (fp32 logits)")}},
	{ALGO_NSA, "nsa", LAYOUT_ANY, 1, 0, "block",
	 "native sparse attention: compressed, selected-block and sliding-window branches per KV group",
	 NSA, 5,
	 {P(SP_RATIO, 16, -1, NSA " compression stride 16"), P(SP_BLOCK, 64, 1, NSA " selection block 64"),
	  P(SP_TOPK_BLOCKS, 16, 1, NSA " top-16 blocks (1 initial + 2 local)"),
	  P(SP_WINDOW, 512, 1, NSA " window 512"), P(SP_SCORE_BYTES, 4, 1, "assumed: fp32 importance scores")}},
	{ALGO_MOBA, "moba", LAYOUT_ANY, 1, 0, "block",
	 "mixture of block attention: mean-pooled block keys gate top-k blocks per query head",
	 MOBA, 4,
	 /* block: no monotone claim; larger blocks mean fewer summaries to
	  * scan but more tokens per pick */
	 {P(SP_BLOCK, 4096, 0, MOBA), P(SP_TOPK_BLOCKS, 12, 1, MOBA),
	  P(SP_PER_GROUP, 0, -1, "MoBA tech report eq. 5-6 (gating per query head)"),
	  P(SP_SCORE_BYTES, 4, 1, "assumed: fp32 gate scores")}},
	{ALGO_MSA, "msa", LAYOUT_ANY, 1, 0, "block",
	 "MiniMax sparse attention: max-pooled block scores, top-k blocks per KV head",
	 "MiniMax-AI/MSA README.en.md; arXiv 2606.13392", 8,
	 {P(SP_TOPK_BLOCKS, 16, 1, MSA), P(SP_BLOCK, 128, 1, MSA),
	  P(SP_INDEX_HEADS, 4, 0, "MiniMax-M3 config sparse_num_index_heads (one per KV head)"),
	  P(SP_INDEX_DIM, 128, 1, "MiniMax-M3 config sparse_index_dim"),
	  P(SP_INDEX_DTYPE, DT_FP8, 1, "MSA indexer/decode/q8kv8 README (FP8 E4M3 keys)"),
	  P(SP_INDEX_SCALE, 0, 1, "MSA q8kv8 README (no per-token scale)"),
	  P(SP_DENSE_LAYERS, 0, 1, "assumed: 0 unless the model says (MiniMax-M3: 3)"),
	  P(SP_SCORE_BYTES, 4, 1, "assumed: fp32 block scores")}},
	{ALGO_INFLLM_V2, "infllm-v2", LAYOUT_ANY, 1, 0, "block",
	 "InfLLM-V2: compressed keys score 64-token blocks per KV group, plus initial block and window",
	 "OpenBMB/infllmv2_cuda_impl; MiniCPM4 config.json", 7,
	 {P(SP_RATIO, 16, -1, INF " kernel_stride 16"), P(SP_BLOCK, 64, 1, INF " block_size 64"),
	  P(SP_TOPK_BLOCKS, 64, 1, INF " topk 64"), P(SP_SINKS, 64, 1, INF " init_blocks 1 (64 tokens)"),
	  P(SP_WINDOW, 2048, 1, INF " window_size 2048"), P(SP_DENSE_BELOW, 8192, 1, INF " dense_len 8192"),
	  P(SP_SCORE_BYTES, 4, 1, "assumed: fp32 block scores")}},
	{ALGO_QUEST, "quest", LAYOUT_ANY, 1, 1, "page",
	 "Quest: per-page key min/max bound the scores, top pages within a token budget",
	 "mit-han-lab/Quest assets/quest_paper.pdf", 5,
	 {P(SP_BLOCK, 16, -1, QUEST), P(SP_BUDGET, 2048, 1, QUEST " (2048: 100% passkey at 100K)"),
	  P(SP_DENSE_LAYERS, 2, 1, QUEST),
	  P(SP_PER_GROUP, 1, -1, "assumed: GQA ports share one page choice per KV group (the paper targets MHA)"),
	  P(SP_SCORE_BYTES, 4, 1, "assumed: fp32 page scores")}},
	{ALGO_SPARQ, "sparq", LAYOUT_ANY, 1, 1, "token",
	 "SparQ: top-r query channels approximate scores, exact attention on the top-k tokens",
	 "arXiv 2312.04985; Graphcore gpt-fast sparq_attn", 3,
	 {P(SP_RATIO, 8, -1, SPARQ), P(SP_PER_GROUP, 0, -1, SPARQ " (K/V repeated per query head)"),
	  P(SP_SCORE_BYTES, 4, 1, "assumed: fp32 approximate scores")}},
	{ALGO_MAGICPIG, "magicpig", LAYOUT_ANY, 1, 1, "token",
	 "MagicPIG: SimHash LSH tables sample tokens for attention, plus sinks and a local window",
	 "arXiv 2410.16179; Infini-AI-Lab/MagicPIG", 6,
	 {P(SP_HASH_BITS, 10, -1, MPIG " (K = 10)"), P(SP_HASH_TABLES, 150, 1, MPIG " (L = 150-170)"),
	  P(SP_SAMPLE, 0.02, 1, "assumed: about 2% of the context retrieved (paper, not re-read)"),
	  P(SP_SINKS, 4, 1, MPIG " (4 sink tokens)"), P(SP_WINDOW, 64, 1, MPIG " (64 local tokens)"),
	  P(SP_PER_GROUP, 0, -1, MPIG " (retrieval per query head)")}},
	{ALGO_H2O, "h2o", LAYOUT_ANY, 1, 1, "none",
	 "H2O: keeps heavy-hitter and recent tokens, evicts the rest (evicted tokens are gone)",
	 "FMInference/H2O", 1, {P(SP_KEEP, 0.2, 1, H2O " (10% heavy + 10% recent)")}},
	{ALGO_SNAPKV, "snapkv", LAYOUT_ANY, 0, 1, "none",
	 "SnapKV: compresses the prompt cache once to a fixed budget; decode is dense on it",
	 "FasterDecoding/SnapKV", 1, {P(SP_BUDGET, 2048, 1, SNAP)}},
	{ALGO_STREAMINGLLM, "streamingllm", LAYOUT_ANY, 0, 1, "window",
	 "StreamingLLM: attention sinks plus a window of recent tokens",
	 "mit-han-lab/streaming-llm", 2,
	 {P(SP_SINKS, 4, 1, STRM " (start_size 4)"),
	  P(SP_WINDOW, 2048, 1, "assumed: middle of the 1K-4K windows of the README's examples")}},
};

const char *const algo_names[ALGO_N + 1] = {
	"gqa", "mla", "dsa", "index-share", "dsv4-csa", "dsv4-hca", "dsv41", "nsa",
	"moba", "msa", "infllm-v2", "quest", "sparq", "magicpig", "h2o", "snapkv",
	"streamingllm", 0};

const struct algo_info *algo_find(const char *name)
{
	for (int i = 0; i < ALGO_N; i++)
		if (strcmp(algo_table[i].name, name) == 0)
			return &algo_table[i];
	return 0;
}

const struct algo_param *algo_param_of(int algo, enum sp_param p)
{
	const struct algo_info *a = &algo_table[algo];
	for (int i = 0; i < a->nparams; i++)
		if (a->params[i].p == p)
			return &a->params[i];
	return 0;
}

void sparse_cfg_init(struct sparse_cfg *cfg, int algo)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->algo = algo;
	const struct algo_info *a = &algo_table[algo];
	for (int i = 0; i < a->nparams; i++)
		cfg->p[a->params[i].p] = a->params[i].value;
}

static void param_list(int algo, char *buf, size_t n)
{
	const struct algo_info *a = &algo_table[algo];
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < a->nparams && used + 2 < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "",
					 sp_params[a->params[i].p].key);
	if (!a->nparams)
		snprintf(buf, n, "none");
}

int sparse_cfg_set(struct sparse_cfg *cfg, const char *key, const char *value,
		   char *why, size_t n)
{
	int p = 0;
	while (p < SP_N && strcmp(sp_params[p].key, key) != 0)
		p++;
	char list[256];
	param_list(cfg->algo, list, sizeof list);
	if (p == SP_N || !algo_param_of(cfg->algo, (enum sp_param)p)) {
		snprintf(why, n, "'%.40s' is not a parameter of %s (its parameters: %s)", key,
			 algo_table[cfg->algo].name, list);
		return -1;
	}
	const struct sp_param_info *info = &sp_params[p];
	double v;
	if (info->is_dtype) {
		int k = 0;
		while (dtype_names[k] && strcmp(dtype_names[k], value) != 0)
			k++;
		if (!dtype_names[k]) {
			snprintf(why, n, "%s: '%.40s' is not one of: fp4, fp8, bf16, fp32", key, value);
			return -1;
		}
		v = k;
	} else {
		char e[160];
		if (unit_parse(value, info->unit, &v, e, sizeof e) != 0) {
			snprintf(why, n, "%s: %s", key, e);
			return -1;
		}
		if (v < info->min || v > info->max) {
			snprintf(why, n, "%s: '%s' is out of range [%g, %g]", key, value,
				 info->min, info->max);
			return -1;
		}
	}
	cfg->p[p] = v;
	cfg->set |= 1ul << p;
	return 0;
}

double sparse_index_layers(const struct sparse_cfg *c, double layers)
{
	switch ((enum algo_id)c->algo) {
	case ALGO_DSA:
	case ALGO_DSV4_CSA:
		return layers;
	case ALGO_INDEX_SHARE: {
		/* layer i owns one iff max(i - off + 1, 0) % freq == 0: the first
		 * `off` layers, then every freq-th */
		double f = c->p[SP_INDEX_FREQ], off = c->p[SP_INDEX_OFFSET];
		return fmin(layers, off) + fmax(0, floor((layers - off) / f));
	}
	case ALGO_MSA:
		return fmax(layers - c->p[SP_DENSE_LAYERS], 0);
	case ALGO_DSV41:
		return round(c->p[SP_FULL_SHARE] * layers);
	default:
		return 0;
	}
}

int sparse_cfg_check(const struct sparse_cfg *c, char *why, size_t n)
{
	if (c->algo == ALGO_QUEST && c->p[SP_BUDGET] < c->p[SP_BLOCK]) {
		snprintf(why, n, "quest: budget (%g) is smaller than one page (%g tokens)",
			 c->p[SP_BUDGET], c->p[SP_BLOCK]);
		return -1;
	}
	if (c->algo == ALGO_DSV41 && c->p[SP_FULL_SHARE] + c->p[SP_REINDEX_SHARE] > 1) {
		snprintf(why, n, "dsv41: full_share + reindex_share exceed 1");
		return -1;
	}
	if (c->algo == ALGO_SPARQ && c->p[SP_RATIO] < 1) {
		snprintf(why, n, "sparq: ratio must be at least 1");
		return -1;
	}
	return 0;
}

int sparse_parse_spec(const char *spec, const struct sparse_cfg *native,
		      struct sparse_cfg *cfg, struct kerr *err)
{
	char buf[512];
	if (strlen(spec) >= sizeof buf)
		return kerr_set(err, 0, 0, "algorithm specification too long");
	snprintf(buf, sizeof buf, "%s", spec);
	char *colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	const struct algo_info *a = algo_find(buf);
	if (!a) {
		char list[512];
		size_t used = 0;
		for (int i = 0; i < ALGO_N; i++)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
						 i ? ", " : "", algo_names[i]);
		const char *near = suggest_name(buf, algo_names, ALGO_N);
		return kerr_set(err, 0, 0, "unknown algorithm '%.40s' (known: %s)%s%s%s", buf,
				list, near ? "; did you mean '" : "", near ? near : "",
				near ? "'?" : "");
	}
	if (native && native->algo == (int)a->id)
		*cfg = *native;
	else
		sparse_cfg_init(cfg, a->id);
	if (!colon)
		return 0;
	const char *seen[32];
	int nseen = 0;
	for (char *kv = colon[1] ? colon + 1 : NULL, *next; kv; kv = next) { /* "NAME:" = none */
		char *comma = strchr(kv, ',');
		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = '\0';
		if (!*kv)
			return kerr_set(err, 0, 0, "%s: empty parameter (two commas, or "
					"one at an end)", a->name);
		char *eq = strchr(kv, '=');
		if (!eq || eq == kv || !eq[1])
			return kerr_set(err, 0, 0, "%s: '%.60s' is not key=value", a->name, kv);
		*eq = '\0';
		for (int i = 0; i < nseen; i++)
			if (strcmp(seen[i], kv) == 0)
				return kerr_set(err, 0, 0, "%s: parameter '%.40s' given twice",
						a->name, kv);
		if (nseen == 32)
			return kerr_set(err, 0, 0, "%s: more than 32 parameters", a->name);
		seen[nseen++] = kv;
		char why[300];
		if (sparse_cfg_set(cfg, kv, eq + 1, why, sizeof why) != 0)
			return kerr_set(err, 0, 0, "%s: %s", a->name, why);
	}
	char why[300];
	if (sparse_cfg_check(cfg, why, sizeof why) != 0)
		return kerr_set(err, 0, 0, "%s", why);
	return 0;
}
