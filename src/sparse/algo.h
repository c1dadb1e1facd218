/* algo.h: the table of attention algorithms a model can declare or swap in
 * (names, descriptions, which attention layout they need, whether they are
 * training-free).  Their costs live in cost/attn.c, indexed by the same id. */
#ifndef KARAT_SPARSE_ALGO_H
#define KARAT_SPARSE_ALGO_H

enum algo_id {
	ALGO_GQA,         /* dense grouped-query attention */
	ALGO_MLA,         /* dense multi-head latent attention, absorbed */
	ALGO_DSA,         /* DeepSeek sparse attention (lightning indexer) */
	ALGO_INDEX_SHARE, /* DSA whose top-k is shared across layers (GLM-5.2) */
	ALGO_MSA,         /* MiniMax sparse attention: block top-k per KV head */
	ALGO_N
};

enum algo_layout { LAYOUT_GQA, LAYOUT_MLA }; /* attention kind required */

struct algo_info {
	enum algo_id id;
	const char *name;      /* command-line and INI spelling */
	enum algo_layout layout;
	int has_index;         /* keeps index keys in the cache */
	int training_free;     /* applies to any model of its layout */
	const char *desc;
	const char *source;
};

extern const struct algo_info algo_table[ALGO_N];
extern const char *const algo_names[ALGO_N + 1]; /* NULL-terminated */

/* The entry named name, or NULL. */
const struct algo_info *algo_find(const char *name);

#endif
