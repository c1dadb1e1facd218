/* algo.c: the parameters algorithms take, the table of rows (from
 * sparse/algos.def; the rows live in the family files), and parsing of
 * "NAME[:key=value,...]".  Each parameter's default cites its source in
 * its row (the family files). */
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
	[SP_MTP_SHARE] = {"mtp_share", U_INT, 0, 1, 0, "1: the MTP layer reuses the last indexer layer's selection"},
	[SP_EVICT_TOPK] = {"evict_topk", U_INT, 0, 1, 0, "1: a full top-k over the kept set finds the token to evict; 0: an argmin fused into the score update"},
	[SP_SELECT_BLOCK] = {"select_block", U_TOKENS, 0, 1e9, 0, "0: one top-k over every score; B: the top-k blocks of B tokens by their maxima (taken in the scan), then the top-k of their tokens (the same set)"},
	[SP_SELECT_PREV] = {"select_prev", U_REAL, 0, 64, 0, "0: the device's own top-k; P: a top-k seeded by the previous step's k-th score that makes P full passes over the scores (the same set), where the device's kernel makes more"},
};

const struct algo_info algo_table[ALGO_N] = {
#define ALGO(id, name, row) [id] = {id, name, &row},
#include "sparse/algos.def"
#undef ALGO
};

const char *const lclass_names[LC_N + 1] = {[LC_SPARSE] = "sparse", [LC_DENSE] = "dense",
					     [LC_SHARE] = "share", [LC_REINDEX] = "reindex",
					     [LC_N] = 0};

const char *const algo_names[ALGO_N + 1] = {
#define ALGO(id, name, row) [id] = name,
#include "sparse/algos.def"
#undef ALGO
	[ALGO_N] = 0};

const struct algo_info *algo_find(const char *name)
{
	for (int i = 0; i < ALGO_N; i++)
		if (strcmp(algo_table[i].name, name) == 0)
			return &algo_table[i];
	return 0;
}

const struct algo_param *algo_param_of(int algo, enum sp_param p)
{
	const struct algo_row *a = algo_row(algo);
	for (int i = 0; i < a->nparams; i++)
		if (a->params[i].p == p)
			return &a->params[i];
	return 0;
}

void sparse_cfg_init(struct sparse_cfg *cfg, int algo)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->algo = algo;
	const struct algo_row *a = algo_row(algo);
	for (int i = 0; i < a->nparams; i++)
		cfg->p[a->params[i].p] = a->params[i].value;
}

static void param_list(int algo, char *buf, size_t n)
{
	const struct algo_row *a = algo_row(algo);
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
	const struct algo_row *r = algo_row(c->algo);
	return r->index_layers ? r->index_layers(c, layers) : 0;
}

double sparse_index_key_bytes(const struct sparse_cfg *sp)
{
	return sp->p[SP_INDEX_DIM] * dtype_bytes((enum dtype)sp->p[SP_INDEX_DTYPE]) +
	       sp->p[SP_INDEX_SCALE];
}

int sparse_cfg_check(const struct sparse_cfg *c, char *why, size_t n)
{
	const struct algo_row *r = algo_row(c->algo);
	return r->check ? r->check(c, why, n) : 0;
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

int sparse_format_spec(const struct sparse_cfg *cfg, char *buf, size_t n)
{
	const struct algo_row *a = algo_row(cfg->algo);
	size_t used = (size_t)snprintf(buf, n, "%s", algo_names[cfg->algo]);
	for (int i = 0; i < a->nparams; i++) {
		const struct sp_param_info *info = &sp_params[a->params[i].p];
		double v = cfg->p[a->params[i].p];
		char val[64];
		if (info->is_dtype)
			snprintf(val, sizeof val, "%s", dtype_names[(int)v]);
		else
			snprintf(val, sizeof val, "%.17g", v);
		used += (size_t)snprintf(buf + (used < n ? used : n), used < n ? n - used : 0,
					 "%c%s=%s", i ? ',' : ':', info->key, val);
	}
	return (int)used;
}
