/* model.c: the model schema (every INI key of models/NAME.ini), cross-field
 * validation, cache sizes per token and parameter counts. */
#include "model/model.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *const attn_names[] = {"gqa", "mla", 0};

#define OFF(f) offsetof(struct kmodel, f)
#define NUM(sec, key, fld, unit, req, lo, hi, pos, help) \
	{sec, key, FK_NUM, unit, OFF(fld), 0, req, lo, hi, pos, 0, help}
#define DT(key, fld, req, help) \
	{"dtypes", key, FK_ENUM, U_INT, OFF(fld), 0, req, 0, 0, 0, dtype_names, help}
#define BIG 1e15

static const struct field model_fields[] = {
	{"model", "name", FK_STR, U_INT, OFF(name), sizeof(((struct kmodel *)0)->name),
	 1, 0, 0, 0, 0, "display name"},
	NUM("model", "layers", layers, U_INT, 1, 1, 4096, 1, "decoder layers (MTP excluded)"),
	NUM("model", "hidden", hidden, U_INT, 1, 1, 1e6, 1, "hidden size"),
	NUM("model", "vocab", vocab, U_INT, 1, 1, 1e8, 1, "vocabulary size"),
	NUM("model", "max_context", max_context, U_TOKENS, 1, 1, 1e9, 1, "longest context the model supports"),
	NUM("model", "total_params", total_params, U_REAL, 1, 1, BIG, 1, "published parameter count, checked against the shape"),
	NUM("model", "mtp_layers", mtp_layers, U_INT, 1, 0, 64, 0, "multi-token-prediction modules in the checkpoint"),
	{"attention", "kind", FK_ENUM, U_INT, OFF(attn), 0, 1, 0, 0, 0, attn_names, "gqa or mla"},
	NUM("attention", "heads", heads, U_INT, 1, 1, 4096, 1, "query heads"),
	NUM("attention", "kv_heads", kv_heads, U_INT, 0, 1, 4096, 1, "GQA: key/value heads"),
	NUM("attention", "head_dim", head_dim, U_INT, 0, 1, 65536, 1, "GQA: head dimension"),
	NUM("attention", "q_lora_rank", q_lora_rank, U_INT, 0, 0, 1e6, 0, "MLA: query latent rank (0 = no query compression)"),
	NUM("attention", "kv_lora_rank", kv_lora_rank, U_INT, 0, 1, 1e6, 1, "MLA: KV latent rank"),
	NUM("attention", "qk_nope_dim", qk_nope_dim, U_INT, 0, 1, 65536, 1, "MLA: non-rotary q/k head dim"),
	NUM("attention", "qk_rope_dim", qk_rope_dim, U_INT, 0, 1, 65536, 1, "MLA: rotary q/k head dim"),
	NUM("attention", "v_head_dim", v_head_dim, U_INT, 0, 1, 65536, 1, "MLA: value head dim"),
	{"sparse", "algo", FK_ENUM, U_INT, OFF(sp.algo), 0, 1, 0, 0, 0, algo_names,
	 "native attention algorithm; its parameters follow in [sparse]"},
	NUM("ffn", "dense_layers", dense_layers, U_INT, 1, 0, 4096, 0, "leading layers with a dense FFN (all, for a dense model)"),
	NUM("ffn", "dense_inter", dense_inter, U_INT, 0, 1, 1e7, 1, "dense FFN intermediate size"),
	NUM("moe", "experts", experts, U_INT, 0, 1, 1e5, 1, "routed experts per MoE layer"),
	NUM("moe", "active", active_experts, U_INT, 0, 1, 1e5, 1, "routed experts per token (top-k)"),
	NUM("moe", "shared", shared_experts, U_INT, 0, 0, 1e3, 0, "shared experts per MoE layer"),
	NUM("moe", "expert_inter", expert_inter, U_INT, 0, 1, 1e7, 1, "expert intermediate size"),
	DT("weights", w_dt, 1, "linear-layer weights"),
	DT("embedding", emb_dt, 1, "embedding and LM head"),
	DT("activations", act_dt, 1, "activations between operators"),
	DT("kv", kv_dt, 1, "KV cache elements (MLA: the latent)"),
	DT("kv_rope", kv_rope_dt, 0, "MLA: rotary part of the cached row"),
	NUM("dtypes", "kv_scale_bytes", kv_scale_bytes, U_BYTES, 1, 0, 1e6, 0, "scale bytes per token per layer in the KV row"),
	DT("attention", attn_dt, 1, "compute type of attention"),
	DT("dispatch", dispatch_dt, 0, "MoE all-to-all dispatch payload (fp4: with an FP8 scale per 16 "
	   "values, fp8: an FP32 scale per 128)"),
	DT("attention_weights", attn_w_dt, 0, "attention and indexer projections (default: weights)"),
	DT("dense_ffn_weights", dense_w_dt, 0, "dense FFN layers (default: weights)"),
	DT("expert_weights", expert_w_dt, 0, "routed and shared experts (default: weights)"),
	DT("lm_head", head_dt, 0, "LM head (default: embedding)"),
	NUM("decode", "mtp_draft_tokens", mtp_draft, U_INT, 1, 0, 64, 0, "draft tokens verified per step (the default of a design)"),
	NUM("decode", "mtp_acceptance", mtp_accept, U_REAL, 1, 0, 1, 0, "probability a draft token is accepted"),
	NUM("decode", "mtp_select_overlap", mtp_overlap, U_REAL, 0, 0, 1, 0,
	    "share of a draft token's selected rows the step's first query token also selected (needed with MTP)"),
};

const struct schema model_schema = {"model", model_fields,
				    sizeof model_fields / sizeof model_fields[0], "sparse", 0};

static int at(const struct ini_doc *doc, const char *section, const char *key)
{
	const struct ini_entry *e = ini_doc_find(doc, section, key);
	return e ? e->line : ini_doc_section_line(doc, section);
}

/* Requires section.key, which the value at cause_sec.cause_key makes
 * necessary; err points at the section, or at the cause when the section
 * is absent. */
static int need_for(const struct ini_doc *doc, const char *section,
		    const char *key, const char *cause_sec, const char *cause_key,
		    const char *why, struct kerr *err)
{
	if (ini_doc_find(doc, section, key))
		return 0;
	int line = ini_doc_section_line(doc, section);
	if (line <= 0)
		line = at(doc, cause_sec, cause_key);
	return kerr_set(err, doc->path, line > 0 ? line : 1,
			"missing key '%s' in [%s] (needed %s)", key, section, why);
}


/* The [sparse] keys other than algo are the parameters of the declared
 * algorithm: start from its published defaults, then apply each key. */
static int bind_sparse(struct kmodel *m, const struct ini_doc *doc,
		       struct kerr *err)
{
	int algo = m->sp.algo;
	const struct algo_row *a = algo_row(algo);
	int line = at(doc, "sparse", "algo");
	if ((a->layout == LAYOUT_MLA && m->attn != ATTN_MLA) ||
	    (a->layout == LAYOUT_GQA && m->attn != ATTN_GQA))
		return kerr_set(err, doc->path, line, "algo '%s' needs %s attention, the model has %s",
				algo_names[algo], a->layout == LAYOUT_MLA ? "mla" : "gqa",
				m->attn == ATTN_MLA ? "mla" : "gqa");
	sparse_cfg_init(&m->sp, algo);
	for (int i = 0; i < doc->n; i++) {
		const struct ini_entry *e = &doc->e[i];
		if (strcmp(e->section, "sparse") != 0 || strcmp(e->key, "algo") == 0)
			continue;
		char why[300];
		if (sparse_cfg_set(&m->sp, e->key, e->value, why, sizeof why) != 0)
			return kerr_set(err, doc->path, e->line, "sparse.%s", why);
	}
	char why[300];
	if (sparse_cfg_check(&m->sp, why, sizeof why) != 0)
		return kerr_set(err, doc->path, line, "%s", why);
	if (m->sp.p[SP_DENSE_LAYERS] > m->layers)
		return kerr_set(err, doc->path, at(doc, "sparse", "dense_layers"),
				"sparse.dense_layers (%g) exceeds layers (%g)",
				m->sp.p[SP_DENSE_LAYERS], m->layers);
	return 0;
}

int model_validate(struct kmodel *m, const struct ini_doc *doc,
		   struct kerr *err)
{
	/* the operator groups' weights default to the whole model's */
	if (!ini_doc_find(doc, "dtypes", "attention_weights"))
		m->attn_w_dt = m->w_dt;
	if (!ini_doc_find(doc, "dtypes", "dense_ffn_weights"))
		m->dense_w_dt = m->w_dt;
	if (!ini_doc_find(doc, "dtypes", "expert_weights"))
		m->expert_w_dt = m->w_dt;
	if (!ini_doc_find(doc, "dtypes", "lm_head"))
		m->head_dt = m->emb_dt;
	static const char *const gqa_keys[] = {"kv_heads", "head_dim", 0};
	static const char *const mla_keys[] = {"q_lora_rank", "kv_lora_rank",
					       "qk_nope_dim", "qk_rope_dim",
					       "v_head_dim", 0};
	const char *const *keys = m->attn == ATTN_GQA ? gqa_keys : mla_keys;
	const char *why = m->attn == ATTN_GQA ? "for kind = gqa" : "for kind = mla";
	const char *cause_sec = "attention", *cause_key = "kind";
	for (int i = 0; keys[i]; i++)
		if (need_for(doc, "attention", keys[i], cause_sec, cause_key, why, err))
			return -1;
	if (m->attn == ATTN_MLA && need_for(doc, "dtypes", "kv_rope", cause_sec, cause_key, why, err))
		return -1;
	if (m->attn == ATTN_GQA && fmod(m->heads, m->kv_heads) != 0)
		return kerr_set(err, doc->path, at(doc, "attention", "kv_heads"),
				"heads (%g) must be a multiple of kv_heads (%g)",
				m->heads, m->kv_heads);

	if (bind_sparse(m, doc, err) != 0)
		return -1;

	if (m->dense_layers > m->layers)
		return kerr_set(err, doc->path, at(doc, "ffn", "dense_layers"),
				"dense_layers (%g) exceeds layers (%g)",
				m->dense_layers, m->layers);
	cause_sec = "ffn", cause_key = "dense_layers";
	if (m->dense_layers > 0 &&
	    need_for(doc, "ffn", "dense_inter", cause_sec, cause_key, "when dense_layers > 0", err))
		return -1;
	if (m->dense_layers < m->layers) {
		static const char *const moe[] = {"experts", "active", "shared",
						  "expert_inter", 0};
		for (int i = 0; moe[i]; i++)
			if (need_for(doc, "moe", moe[i], cause_sec, cause_key, "when some layers are MoE", err))
				return -1;
		if (need_for(doc, "dtypes", "dispatch", cause_sec, cause_key, "when some layers are MoE", err))
			return -1;
		if (m->active_experts > m->experts)
			return kerr_set(err, doc->path, at(doc, "moe", "active"),
					"active (%g) exceeds experts (%g)",
					m->active_experts, m->experts);
	} else if (ini_doc_section_line(doc, "moe") > 0) {
		return kerr_set(err, doc->path, ini_doc_section_line(doc, "moe"),
				"[moe] given but ffn.dense_layers = layers (no MoE layer)");
	}
	if (m->mtp_draft > 0 && m->mtp_layers == 0)
		return kerr_set(err, doc->path, at(doc, "decode", "mtp_draft_tokens"),
				"mtp_draft_tokens > 0 needs mtp_layers > 0");
	if (m->mtp_layers > 0 &&
	    need_for(doc, "decode", "mtp_select_overlap", "model", "mtp_layers",
		     "when the model has an MTP module: its query tokens select rows apart", err))
		return -1;
	return 0;
}

double model_kv_bytes_layer(const struct kmodel *m)
{
	if (m->attn == ATTN_MLA)
		return m->kv_lora_rank * dtype_bytes(m->kv_dt) +
		       m->qk_rope_dim * dtype_bytes(m->kv_rope_dt) + m->kv_scale_bytes;
	return 2 * m->kv_heads * m->head_dim * dtype_bytes(m->kv_dt) +
	       m->kv_scale_bytes;
}

double model_kv_bytes_token(const struct kmodel *m)
{
	return m->layers * model_kv_bytes_layer(m);
}

static double attn_params(const struct kmodel *m)
{
	double h = m->hidden;
	if (m->attn == ATTN_GQA)
		return h * (m->heads + 2 * m->kv_heads) * m->head_dim +
		       m->heads * m->head_dim * h;
	double q = m->q_lora_rank > 0
			   ? h * m->q_lora_rank + m->q_lora_rank * m->heads * mla_qk_dim(m)
			   : h * m->heads * mla_qk_dim(m);
	return q + h * (m->kv_lora_rank + m->qk_rope_dim) +
	       m->kv_lora_rank * m->heads * (m->qk_nope_dim + m->v_head_dim) +
	       m->heads * m->v_head_dim * h;
}

/* Indexer weights of one index-owning layer. */
static double index_params(const struct kmodel *m)
{
	double h = m->hidden, hi = m->sp.p[SP_INDEX_HEADS], di = m->sp.p[SP_INDEX_DIM];
	const struct algo_indexer *ix = &algo_row(m->sp.algo)->indexer;
	if (!ix->classes)
		return 0;
	double qin = ix->q_from_lora && m->q_lora_rank > 0 ? m->q_lora_rank : h;
	return qin * hi * di + h * di + (ix->head_weights ? h * hi : 0);
}

void model_params(const struct kmodel *m, struct param_count *p)
{
	double h = m->hidden;
	memset(p, 0, sizeof *p);
	p->embed = m->vocab * h;
	p->lm_head = m->vocab * h;
	p->attn_layer = attn_params(m);
	p->index_layer = index_params(m);
	p->dense_ffn_layer = 3 * h * m->dense_inter;
	double moe_layers = m->layers - m->dense_layers;
	if (moe_layers > 0)
		p->moe_layer = (m->experts + m->shared_experts) * 3 * h * m->expert_inter +
			       h * m->experts;
	/* An MTP module: input projection [2h -> h] plus one MoE decoder layer
	 * (with its indexer) sharing the embedding and LM head. */
	double layer_ffn = moe_layers > 0 ? p->moe_layer : p->dense_ffn_layer;
	p->mtp_module = 2 * h * h + p->attn_layer + p->index_layer + layer_ffn;
	p->total = p->embed + p->lm_head + m->layers * p->attn_layer +
		   sparse_index_layers(&m->sp, m->layers) * p->index_layer +
		   m->dense_layers * p->dense_ffn_layer + moe_layers * p->moe_layer +
		   m->mtp_layers * p->mtp_module;
}

double model_expert_bytes(const struct kmodel *m)
{
	double moe_layers = m->layers - m->dense_layers;
	if (!(moe_layers > 0) || !(m->experts > 0))
		return 0;
	double mtp_moe = m->mtp_layers; /* an MTP module's FFN is a layer's */
	return (moe_layers + mtp_moe) * 3 * m->hidden * m->expert_inter *
	       dtype_bytes(m->expert_w_dt);
}

double model_weight_bytes(const struct kmodel *m, double gpus)
{
	struct param_count p;
	model_params(m, &p);
	double h = m->hidden, moe_layers = m->layers - m->dense_layers;
	double mtp_moe = moe_layers > 0 ? m->mtp_layers : 0; /* an MTP module's FFN is a layer's */
	double routed = (moe_layers + mtp_moe) * m->experts * 3 * h * m->expert_inter;
	double shared = (moe_layers + mtp_moe) * m->shared_experts * 3 * h * m->expert_inter;
	double dense = (m->dense_layers + m->mtp_layers - mtp_moe) * p.dense_ffn_layer;
	double attn = (m->layers + m->mtp_layers) * p.attn_layer +
		      (sparse_index_layers(&m->sp, m->layers) + m->mtp_layers) * p.index_layer;
	/* the rest: routers and the MTP modules' input projections */
	double rest = p.total - p.embed - p.lm_head - routed - shared - dense - attn;
	return p.embed * dtype_bytes(m->emb_dt) + p.lm_head * dtype_bytes(m->head_dt) +
	       attn * dtype_bytes(m->attn_w_dt) + dense * dtype_bytes(m->dense_w_dt) +
	       (shared + routed / gpus) * dtype_bytes(m->expert_w_dt) + rest * dtype_bytes(m->w_dt);
}
