/* algo.h: the table of attention algorithms (dense and sparse) a model can
 * declare or have swapped in: names, descriptions, training-free flag,
 * access granularity, and the parameters each one takes with their
 * published defaults and sources.  Costs live in cost/attn.c, by the same
 * id.  Depends on base/ only. */
#ifndef KARAT_SPARSE_ALGO_H
#define KARAT_SPARSE_ALGO_H

#include <stddef.h>

#include "base/err.h"
#include "base/units.h"

enum algo_id {
	ALGO_GQA, ALGO_MLA, ALGO_DSA, ALGO_INDEX_SHARE, ALGO_DSV4_CSA,
	ALGO_DSV4_HCA, ALGO_DSV41, ALGO_NSA, ALGO_MOBA, ALGO_MSA, ALGO_INFLLM_V2,
	ALGO_QUEST, ALGO_SPARQ, ALGO_MAGICPIG, ALGO_H2O, ALGO_SNAPKV,
	ALGO_STREAMINGLLM, ALGO_N
};

/* Parameters an algorithm may take; one INI key each in [sparse]. */
enum sp_param {
	SP_TOPK,           /* selected tokens or entries */
	SP_TOPK_BLOCKS,    /* selected blocks or pages */
	SP_BLOCK,          /* tokens per block or page */
	SP_WINDOW,         /* recent tokens always attended */
	SP_SINKS,          /* initial tokens always attended */
	SP_BUDGET,         /* token budget */
	SP_KEEP,           /* fraction of the context kept */
	SP_RATIO,          /* compression ratio or stride */
	SP_INDEX_HEADS, SP_INDEX_DIM, SP_INDEX_DTYPE, SP_INDEX_SCALE,
	SP_INDEX_FREQ,     /* index-share: every n-th layer owns an indexer */
	SP_INDEX_OFFSET,   /* index-share: leading layers that all own one */
	SP_DENSE_LAYERS,   /* leading layers that keep dense attention */
	SP_DENSE_BELOW,    /* contexts up to this length use dense attention */
	SP_SCORE_BYTES,    /* bytes per materialised score */
	SP_PER_GROUP,      /* 1: one selection per KV group, 0: per query head */
	SP_HASH_BITS, SP_HASH_TABLES, SP_SAMPLE,
	SP_CAND_BLOCKS, SP_CAND_BLOCK, SP_FULL_SHARE, SP_REINDEX_SHARE,
	SP_N
};

struct sp_param_info {
	const char *key;
	enum unit_class unit;
	double min, max;
	int is_dtype;      /* value is a dtype name, stored as its enum */
	const char *help;
};
extern const struct sp_param_info sp_params[SP_N];

/* A parameter an algorithm uses, its published default and the direction
 * in which raising it moves the cache-side bytes of a long context (+1 up,
 * -1 down, 0 no claim). */
struct algo_param {
	enum sp_param p;
	double value;
	int bytes_dir;
	const char *source;
};

enum algo_layout { LAYOUT_ANY, LAYOUT_GQA, LAYOUT_MLA };

#define ALGO_MAX_PARAMS 12

struct algo_info {
	enum algo_id id;
	const char *name;         /* command-line and INI spelling */
	enum algo_layout layout;  /* attention layout it needs */
	int has_index;            /* keeps index keys or summaries */
	int training_free;        /* applies to any model */
	const char *granularity;  /* token, entry, page, block, window, none */
	const char *desc;
	const char *source;
	int nparams;
	struct algo_param params[ALGO_MAX_PARAMS];
};

extern const struct algo_info algo_table[ALGO_N];
extern const char *const algo_names[ALGO_N + 1]; /* NULL-terminated */

/* The entry named name, or NULL. */
const struct algo_info *algo_find(const char *name);

/* An algorithm with its parameter values. */
struct sparse_cfg {
	int algo;            /* enum algo_id */
	double p[SP_N];
	unsigned long set;   /* bit per parameter given explicitly */
};

/* The published default of parameter p for algo, or NULL if unused. */
const struct algo_param *algo_param_of(int algo, enum sp_param p);

/* Sets cfg to algo with every parameter at its published default. */
void sparse_cfg_init(struct sparse_cfg *cfg, int algo);

/* Sets parameter `key` from text; fails (why) when the key is unknown,
 * not a parameter of cfg's algorithm, or its value is bad. */
int sparse_cfg_set(struct sparse_cfg *cfg, const char *key, const char *value,
		   char *why, size_t n);

/* Parses "NAME[:key=value,...]" into cfg; err has no file location.  When
 * NAME is native's algorithm, native's values are the starting point (a
 * model's own settings); otherwise the published defaults. */
int sparse_parse_spec(const char *spec, const struct sparse_cfg *native,
		      struct sparse_cfg *cfg, struct kerr *err);

/* Layers (of `layers`) that own a learned indexer's weights and keys:
 * all for dsa and dsv4-csa, the index-share pattern, the msa sparse
 * layers, dsv41's full-scan layers; 0 for algorithms without one. */
double sparse_index_layers(const struct sparse_cfg *cfg, double layers);

/* Cross-parameter checks (e.g. budget at least one page). */
int sparse_cfg_check(const struct sparse_cfg *cfg, char *why, size_t n);

#endif
