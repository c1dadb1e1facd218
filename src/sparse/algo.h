/* algo.h: the table of attention algorithms (dense and sparse) a model can
 * declare or have swapped in.  One row per algorithm (struct algo_row, in
 * sparse/<family>.c: dense.c, indexer.c, block.c, token.c, evict.c) holds
 * its facts (layout, training-free flag, access granularity, parameters
 * with their published defaults and sources) and its costs as functions
 * of a plain geometry: the cache-side work of one request on one layer,
 * the bytes it writes per new token and keeps per request, how it splits
 * the layers into classes, its indexer's GPU-side projections.
 * sparse/algos.def lists the rows; ids, names and the table derive from
 * it.  cost/attn.c turns a model into the geometry and the rows' work into
 * operators.  Depends on base/ only. */
#ifndef KARAT_SPARSE_ALGO_H
#define KARAT_SPARSE_ALGO_H

#include "base/limits.h"

#include <stddef.h>

#include "base/err.h"
#include "base/units.h"

enum algo_id {
#define ALGO(id, name, row) id,
#include "sparse/algos.def"
#undef ALGO
	ALGO_N
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
	SP_MTP_SHARE,      /* 1: the MTP layer reuses a selection, no index scan */
	SP_EVICT_TOPK,     /* 1: the evicted token found by a full top-k over
			      the kept set; 0: by a running argmin */
	SP_SELECT_BLOCK,   /* B > 0: two-level selection, the top-k blocks of B
			      tokens by their maxima, then the top-k of their
			      tokens (0: one top-k over every score) */
	SP_SELECT_PREV,    /* P > 0: the top-k seeded by the previous step's
			      k-th score, P full passes over the scores
			      (0: the device's own kernel) */
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


/* Layer classes an algorithm splits a model into. */
enum lclass {
	LC_SPARSE,   /* runs the algorithm (owns its index) */
	LC_DENSE,    /* leading layers kept dense */
	LC_SHARE,    /* reuses another layer's selection */
	LC_REINDEX,  /* re-scores candidates chosen by another layer */
	LC_N
};

/* "sparse", "dense", "share", "reindex" */
extern const char *const lclass_names[LC_N + 1];

struct lcount {
	enum lclass cls;
	double layers;
};

/* The attention shape every algorithm is priced on.  A GQA model has H_kv
 * heads of d dims; an MLA model one shared latent "head" whose keys span
 * kv_lora + rope dims and values kv_lora dims. */
struct attn_geo {
	double H, Hkv, G;   /* query heads, KV heads, group size */
	double dk, dv;      /* key and value dims per KV head */
	double row, krow;   /* bytes per token per layer: K+V, K only */
	double ftok;        /* attention FLOPs per attended token per query */
	double act;         /* bytes of q in and output out, per query token */
	int pad_topk;       /* the attention kernel computes over all top-k
			       slots whatever the context (a GPU's
			       fixed-size index list) */
};

/* Cache-side work of one request on one layer. */
struct attn_stage {
	double scan_f, scan_b, topk_f, topk_b, gather_b, attn_f, attn_b;
	double ids_b;       /* of topk_b: the selected indices it writes */
	double topk_rows;   /* the rows topk_f's scores lie in (a row: one
			       query token's, one selector's) */
	double topk_passes; /* full passes the top-k makes over its scores
			       (0: as many as the device's own kernel) */
};

struct sparse_cfg;

/* A learned indexer's GPU-side projections: the query (from the q LoRA
 * rank when q_from_lora and the model has one, else from the hidden
 * state), the shared key, and per-head weights when head_weights (which
 * also add 4 B per head to the query sent).  classes: bit (1 << lclass)
 * per layer class that runs them; 0: no indexer. */
struct algo_indexer {
	unsigned classes;
	int q_from_lora, head_weights;
};

/* One algorithm.  stages is required; a NULL function takes the default
 * named beside it.  Layers of class LC_DENSE never reach a row: cost/attn.c
 * prices them as dense attention. */
struct algo_row {
	enum algo_layout layout;  /* attention layout it needs */
	int has_index;            /* keeps index keys or summaries */
	int training_free;        /* applies to any model */
	const char *granularity;  /* token, entry, page, block, window, none */
	const char *desc;
	const char *source;
	int nparams;
	struct algo_param params[ALGO_MAX_PARAMS];
	struct algo_indexer indexer;
	/* work of one request at context L, q query tokens, on a layer of cls */
	void (*stages)(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double L, double q, struct attn_stage *s);
	/* bytes per new token: KV, index (NULL: the KV row, no index) */
	void (*writes)(const struct attn_geo *g, const struct sparse_cfg *sp,
		       enum lclass cls, double *kv, double *idx);
	/* bytes one request keeps at context L (NULL: L x writes) */
	void (*keeps)(const struct attn_geo *g, const struct sparse_cfg *sp,
		      enum lclass cls, double L, double *kv, double *idx);
	/* splits `rest` non-dense layers of `layers` into classes; returns the
	 * entries written (NULL: all LC_SPARSE).  Not called for MTP. */
	int (*classes)(const struct sparse_cfg *sp, double layers, double rest,
		       struct lcount *out);
	/* where the classes sit: cls[i] for the non-dense layers i = dense ..
	 * layers - 1, with `classes`' counts (NULL: all LC_SPARSE).  Not
	 * called for MTP. */
	void (*sequence)(const struct sparse_cfg *sp, long layers, long dense,
			 unsigned char *cls);
	/* layers (of `layers`) that own the indexer's weights and keys (NULL: 0) */
	double (*index_layers)(const struct sparse_cfg *sp, double layers);
	/* cross-parameter checks (NULL: none) */
	int (*check)(const struct sparse_cfg *sp, char *why, size_t n);
};

/* The parameter list of a row with its count: PARAMS(P(...), P(...)). */
#define PARAMS(...)                                                              \
	.nparams = (int)(sizeof((struct algo_param[]){__VA_ARGS__}) /            \
			 sizeof(struct algo_param)),                             \
	.params = {__VA_ARGS__}

struct algo_info {
	enum algo_id id;
	const char *name;         /* command-line and INI spelling */
	const struct algo_row *row;
};

#define ALGO(id, name, row) extern const struct algo_row row;
#include "sparse/algos.def"
#undef ALGO

extern const struct algo_info algo_table[ALGO_N];
extern const char *const algo_names[ALGO_N + 1]; /* NULL-terminated */

/* The row of algorithm id (0 <= id < ALGO_N). */
static inline const struct algo_row *algo_row(int id)
{
	return algo_table[id].row;
}

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
/* The specification that ran: "NAME:key=value,..." with every parameter
 * of the algorithm (dtypes by name, numbers in SI units); it parses back
 * to cfg.  Returns the length written (truncated to n). */
int sparse_format_spec(const struct sparse_cfg *cfg, char *buf, size_t n);

int sparse_parse_spec(const char *spec, const struct sparse_cfg *native,
		      struct sparse_cfg *cfg, struct kerr *err);

/* Layers (of `layers`) that own a learned indexer's weights and keys:
 * all for dsa and dsv4-csa, the index-share pattern, the msa sparse
 * layers, dsv41's full-scan layers; 0 for algorithms without one. */
double sparse_index_layers(const struct sparse_cfg *cfg, double layers);

/* Bytes of one index key: index_dim elements of index_dtype plus its
 * scale bytes. */
double sparse_index_key_bytes(const struct sparse_cfg *sp);

/* Cross-parameter checks (e.g. budget at least one page). */
int sparse_cfg_check(const struct sparse_cfg *cfg, char *why, size_t n);

#endif
