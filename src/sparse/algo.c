/* algo.c: the attention-algorithm table.  Adding an algorithm means a row
 * here, a row in cost/attn.c and a test with its hand-computed counts. */
#include "sparse/algo.h"

#include <string.h>

const struct algo_info algo_table[ALGO_N] = {
	{ALGO_GQA, "gqa", LAYOUT_GQA, 0, 0,
	 "dense grouped-query attention over the whole context",
	 "standard; ../shared/reference/sparse_attention.md 0.2"},
	{ALGO_MLA, "mla", LAYOUT_MLA, 0, 0,
	 "dense multi-head latent attention in absorbed (MQA) form",
	 "deepseek-ai/DeepSeek-V3.2-Exp inference/model.py"},
	{ALGO_DSA, "dsa", LAYOUT_MLA, 1, 0,
	 "DeepSeek sparse attention: FP8 lightning indexer, top-k tokens",
	 "deepseek-ai/DeepSeek-V3.2-Exp inference/model.py (Indexer)"},
	{ALGO_INDEX_SHARE, "index-share", LAYOUT_MLA, 1, 0,
	 "DSA with the indexer on some layers, top-k reused by the others",
	 "arXiv 2603.12201 (IndexCache); zai-org/GLM-5.2 config.json"},
	{ALGO_MSA, "msa", LAYOUT_GQA, 1, 0,
	 "MiniMax sparse attention: max-pooled block scores, top-k blocks per KV head",
	 "MiniMax-AI/MSA README.en.md; arXiv 2606.13392"},
};

const char *const algo_names[ALGO_N + 1] = {"gqa", "mla", "dsa", "index-share",
					    "msa", 0};

const struct algo_info *algo_find(const char *name)
{
	for (int i = 0; i < ALGO_N; i++)
		if (strcmp(algo_table[i].name, name) == 0)
			return &algo_table[i];
	return 0;
}
