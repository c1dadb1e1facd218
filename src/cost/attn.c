/* attn.c: the cache-side stages of every attention algorithm: index scan,
 * top-k, gather and attention, per layer and request, summed over the
 * local requests; plus what each algorithm stores per request and writes
 * per new token.  Formulas and sources: ../shared/reference/
 * sparse_attention.md (one multiply-add = 2 FLOPs; non-MAC "aux" ops are
 * left out except where they are the whole work, as in top-k).
 *
 * Generic geometry lets every algorithm run on either layout: a GQA model
 * has H_kv heads of d dims; an MLA model one shared latent "head" whose
 * keys span kv_lora + rope dims and values kv_lora dims. */
#include "cost/attn.h"

#include <math.h>
#include <string.h>

#include "cost/emit.h"

#define ID_BYTES 4.0 /* one int32 index written by top-k */

struct geo {
	double H, Hkv, G;   /* query heads, KV heads, group size */
	double dk, dv;      /* key and value dims per KV head */
	double row, krow;   /* bytes per token per layer: K+V, K only */
	double ftok;        /* attention FLOPs per attended token per query */
	double act;         /* bytes of q in and output out, per query token */
};

static void geometry(const struct kmodel *m, struct geo *g)
{
	double sa = dtype_bytes(m->act_dt);
	g->H = m->heads;
	g->row = model_kv_bytes_layer(m);
	if (m->attn == ATTN_GQA) {
		g->Hkv = m->kv_heads;
		g->dk = g->dv = m->head_dim;
		g->krow = g->row / 2;
	} else {
		g->Hkv = 1;
		g->dk = m->kv_lora_rank + m->qk_rope_dim;
		g->dv = m->kv_lora_rank;
		g->krow = g->row; /* K and V share the latent */
	}
	g->G = g->H / g->Hkv;
	g->ftok = 2 * g->H * (g->dk + g->dv);
	g->act = g->H * (g->dk + g->dv) * sa;
}

/* Cache-side work of one request on one layer. */
struct stage {
	double scan_f, scan_b, topk_f, topk_b, gather_b, attn_f, attn_b;
};

static void dense(const struct geo *g, double tokens, double q, struct stage *s)
{
	s->attn_f = g->ftok * tokens * q;
	s->attn_b = tokens * g->row + q * g->act;
}

/* Attention on `sel` tokens per head whose rows a gather brought in;
 * `rows` tokens were read (the union over the heads that select apart). */
static void attend(const struct geo *g, double sel, double rows, double q,
		   struct stage *s)
{
	s->gather_b = rows * g->row;
	s->attn_f = g->ftok * sel * q;
	s->attn_b = q * g->act;
}

/* Top-k by `units` selectors over n scores each, keeping k. */
static void topk(const struct sparse_cfg *sp, double units, double n, double k,
		 double q, struct stage *s)
{
	s->topk_f += q * units * n;
	s->topk_b += q * units * (n * sp->p[SP_SCORE_BYTES] + k * ID_BYTES);
}

/* A learned indexer (DSA family) scoring `entries` keys: multiply-adds of
 * H_I heads against one shared key, an fp32 score per entry and query
 * written, the query and head weights read. */
static void indexer(const struct sparse_cfg *sp, double entries, double q,
		    struct stage *s)
{
	double hi = sp->p[SP_INDEX_HEADS], di = sp->p[SP_INDEX_DIM];
	double sq = dtype_bytes((enum dtype)sp->p[SP_INDEX_DTYPE]);
	s->scan_f += 2 * hi * di * entries * q;
	s->scan_b += entries * sparse_index_key_bytes(sp) + q * entries * sp->p[SP_SCORE_BYTES] +
		     q * (hi * di * sq + hi * 4);
}

/* Rows a per-query-head selection of `sel` tokens (of `cap` possible)
 * touches per KV head: one set when shared by the group, else up to G. */
static double union_rows(const struct geo *g, const struct sparse_cfg *sp,
			 double sel, double cap)
{
	return sp->p[SP_PER_GROUP] > 0 ? sel : fmin(cap, g->G * sel);
}

static void stages(const struct geo *g, const struct sparse_cfg *sp,
		   enum lclass cls, double L, double q, struct stage *s)
{
	const double *p = sp->p;
	memset(s, 0, sizeof *s);
	if (cls == LC_DENSE) {
		dense(g, L, q, s);
		return;
	}
	switch ((enum algo_id)sp->algo) {
	case ALGO_GQA:
	case ALGO_MLA:
		dense(g, L, q, s);
		return;
	case ALGO_DSA:
	case ALGO_INDEX_SHARE: {
		double k = fmin(L, p[SP_TOPK]);
		if (cls == LC_SPARSE) {
			indexer(sp, L, q, s);
			topk(sp, 1, L, k, q, s);
		}
		attend(g, k, k, q, s);
		return;
	}
	case ALGO_DSV4_CSA: {
		double ne = ceil(L / p[SP_RATIO]), k = fmin(ne, p[SP_TOPK]);
		double w = fmin(L, p[SP_WINDOW]);
		indexer(sp, ne, q, s);
		topk(sp, 1, ne, k, q, s);
		attend(g, k + w, k + w, q, s);
		return;
	}
	case ALGO_DSV4_HCA:
		dense(g, ceil(L / p[SP_RATIO]) + fmin(L, p[SP_WINDOW]), q, s);
		return;
	case ALGO_DSV41: {
		double k = fmin(L, p[SP_TOPK]), w = fmin(L, p[SP_WINDOW]);
		double sel = fmin(L, k + w);
		if (cls == LC_SPARSE) { /* scores everything, picks candidates too */
			double nb = ceil(L / p[SP_CAND_BLOCK]);
			indexer(sp, L, q, s);
			topk(sp, 1, L, k, q, s);
			topk(sp, 1, nb, fmin(nb, p[SP_CAND_BLOCKS]), q, s);
		} else if (cls == LC_REINDEX) {
			double c = fmin(L, p[SP_CAND_BLOCKS] * p[SP_CAND_BLOCK]);
			indexer(sp, c, q, s);
			topk(sp, 1, c, fmin(c, k), q, s);
		}
		attend(g, sel, sel, q, s);
		return;
	}
	case ALGO_NSA: { /* compressed branch = attention over L/stride entries */
		double nc = floor(L / p[SP_RATIO]), nb = ceil(L / p[SP_BLOCK]);
		double kb = fmin(nb, p[SP_TOPK_BLOCKS]);
		double sel = fmin(L, kb * p[SP_BLOCK] + p[SP_WINDOW]);
		s->scan_f = g->ftok * nc * q;
		s->scan_b = nc * g->row;
		topk(sp, g->Hkv, nb, kb, q, s);
		attend(g, sel, sel, q, s);
		return;
	}
	case ALGO_MOBA: { /* mean-pooled block keys gate blocks per query head */
		double B = p[SP_BLOCK], nb = ceil(L / B), kb = fmin(nb, p[SP_TOPK_BLOCKS]);
		double sel = fmin(L, kb * B);
		s->scan_f = 2 * g->dk * nb * g->H * q;
		s->scan_b = nb * g->krow;
		topk(sp, p[SP_PER_GROUP] > 0 ? g->Hkv : g->H, nb, kb, q, s);
		attend(g, sel, fmin(L, union_rows(g, sp, kb, nb) * B), q, s);
		return;
	}
	case ALGO_MSA: { /* one index head per KV head, max-pooled per block */
		double hi = p[SP_INDEX_HEADS], di = p[SP_INDEX_DIM];
		double nb = ceil(L / p[SP_BLOCK]), kb = fmin(nb, p[SP_TOPK_BLOCKS]);
		double sel = fmin(L, kb * p[SP_BLOCK]);
		s->scan_f = 2 * hi * di * L * q;
		s->scan_b = L * sparse_index_key_bytes(sp) + q * hi * nb * p[SP_SCORE_BYTES] +
			    q * hi * di * dtype_bytes((enum dtype)p[SP_INDEX_DTYPE]);
		topk(sp, hi, nb, kb, q, s);
		attend(g, sel, sel, q, s);
		return;
	}
	case ALGO_INFLLM_V2: {
		if (L <= p[SP_DENSE_BELOW]) {
			dense(g, L, q, s);
			return;
		}
		double nc = floor(L / p[SP_RATIO]), nb = ceil(L / p[SP_BLOCK]);
		double kb = fmin(nb, p[SP_TOPK_BLOCKS]);
		double sel = fmin(L, kb * p[SP_BLOCK] + p[SP_SINKS] + p[SP_WINDOW]);
		s->scan_f = 2 * g->dk * nc * g->H * q;
		s->scan_b = nc * g->krow;
		topk(sp, g->Hkv, nb, kb, q, s);
		attend(g, sel, sel, q, s);
		return;
	}
	case ALGO_QUEST: { /* key min and max per page bound q.k from above */
		double S = p[SP_BLOCK], np = ceil(L / S);
		double kp = fmin(np, floor(p[SP_BUDGET] / S)), sel = fmin(L, kp * S);
		s->scan_f = 2 * g->dk * np * g->H * q;
		s->scan_b = np * 2 * g->krow;
		topk(sp, p[SP_PER_GROUP] > 0 ? g->Hkv : g->H, np, kp, q, s);
		attend(g, sel, fmin(L, union_rows(g, sp, kp, np) * S), q, s);
		return;
	}
	case ALGO_SPARQ: { /* r of dk key channels, then exact top-k */
		double r = fmax(1, round(g->dk / p[SP_RATIO]));
		double k = fmax(1, fmin(L, round(L / (2 * p[SP_RATIO]))));
		double ch = p[SP_PER_GROUP] > 0 ? r : fmin(g->G * r, g->dk);
		s->scan_f = 2 * r * L * g->H * q;
		s->scan_b = L * ch * g->krow / g->dk;
		topk(sp, p[SP_PER_GROUP] > 0 ? g->Hkv : g->H, L, k, q, s);
		attend(g, k, union_rows(g, sp, k, L), q, s);
		return;
	}
	case ALGO_MAGICPIG: { /* LSH buckets walked per query head */
		double K = p[SP_HASH_BITS], T = p[SP_HASH_TABLES];
		double walk = T * L / pow(2, K); /* bucket members visited */
		double ns = fmin(L, ceil(p[SP_SAMPLE] * L));
		double fixed = fmin(L, p[SP_SINKS] + p[SP_WINDOW]);
		s->scan_f = 2 * g->dk * K * T * g->H * q; /* hashing the query */
		s->scan_b = g->H * q * walk * 5;          /* int32 id + 1-byte mask */
		s->topk_f = g->H * q * walk;              /* collision counting */
		attend(g, ns + fixed, fmin(L, union_rows(g, sp, ns, L) + fixed), q, s);
		return;
	}
	case ALGO_H2O: { /* keeps C tokens, updates their scores, evicts one */
		double C = fmin(L, ceil(p[SP_KEEP] * L));
		s->scan_f = g->H * C * q;
		s->scan_b = 2 * g->H * C * 4;
		s->topk_f = g->H * C;
		dense(g, C, q, s);
		return;
	}
	case ALGO_SNAPKV:
		dense(g, fmin(L, p[SP_BUDGET]), q, s);
		return;
	case ALGO_STREAMINGLLM:
		dense(g, fmin(L, p[SP_SINKS] + p[SP_WINDOW]), q, s);
		return;
	case ALGO_N:
		break;
	}
}

int attn_classes(const struct kmodel *m, const struct sparse_cfg *sp,
		 double layers, int mtp, struct lcount out[LC_N])
{
	int n = 0;
	const double *p = sp->p;
	double dense_n = mtp ? 0 : fmin(layers, p[SP_DENSE_LAYERS]);
	(void)m;
	if (dense_n > 0)
		out[n++] = (struct lcount){LC_DENSE, dense_n};
	double rest = layers - dense_n;
	if (sp->algo == ALGO_INDEX_SHARE && !mtp) {
		double own = sparse_index_layers(sp, layers);
		out[n++] = (struct lcount){LC_SPARSE, own};
		out[n++] = (struct lcount){LC_SHARE, rest - own};
	} else if (sp->algo == ALGO_DSV41 && !mtp) {
		double full = round(p[SP_FULL_SHARE] * layers);
		double re = fmin(rest - full, round(p[SP_REINDEX_SHARE] * layers));
		out[n++] = (struct lcount){LC_SPARSE, full};
		out[n++] = (struct lcount){LC_REINDEX, re};
		out[n++] = (struct lcount){LC_SHARE, rest - full - re};
	} else {
		out[n++] = (struct lcount){LC_SPARSE, rest};
	}
	return n;
}

/* Bytes per new token a layer of class cls writes: KV, index. */
static void writes(const struct geo *g, const struct sparse_cfg *sp,
		   enum lclass cls, double *kv, double *idx)
{
	const double *p = sp->p;
	*kv = g->row;
	*idx = 0;
	if (cls == LC_DENSE)
		return;
	switch ((enum algo_id)sp->algo) {
	case ALGO_DSA: case ALGO_MSA:
		*idx = sparse_index_key_bytes(sp);
		break;
	case ALGO_INDEX_SHARE: case ALGO_DSV41:
		*idx = cls == LC_SPARSE ? sparse_index_key_bytes(sp) : 0;
		break;
	case ALGO_DSV4_CSA:
		*kv = g->row * (1 + 1 / p[SP_RATIO]); /* window ring + compressed */
		*idx = sparse_index_key_bytes(sp) / p[SP_RATIO];
		break;
	case ALGO_DSV4_HCA:
		*kv = g->row * (1 + 1 / p[SP_RATIO]);
		break;
	case ALGO_NSA: *idx = g->row / p[SP_RATIO]; break;
	case ALGO_MOBA: *idx = g->krow / p[SP_BLOCK]; break;
	case ALGO_INFLLM_V2: *idx = g->krow / p[SP_RATIO]; break;
	case ALGO_QUEST: *idx = 2 * g->krow / p[SP_BLOCK]; break;
	case ALGO_SPARQ: *idx = g->krow; break;
	case ALGO_MAGICPIG: *idx = 4 * p[SP_HASH_TABLES] * g->Hkv; break;
	case ALGO_H2O: *idx = 4 * g->H; break;
	default: break;
	}
}

/* Bytes one request keeps on a layer of class cls at context L. */
static void keeps(const struct geo *g, const struct sparse_cfg *sp,
		  enum lclass cls, double L, double *kv, double *idx)
{
	const double *p = sp->p;
	*kv = L * g->row;
	*idx = 0;
	if (cls == LC_DENSE)
		return;
	switch ((enum algo_id)sp->algo) {
	case ALGO_DSV4_CSA:
		*kv = (ceil(L / p[SP_RATIO]) + fmin(L, p[SP_WINDOW])) * g->row;
		*idx = ceil(L / p[SP_RATIO]) * sparse_index_key_bytes(sp);
		return;
	case ALGO_DSV4_HCA:
		*kv = (ceil(L / p[SP_RATIO]) + fmin(L, p[SP_WINDOW])) * g->row;
		return;
	case ALGO_NSA: *idx = floor(L / p[SP_RATIO]) * g->row; return;
	case ALGO_MOBA: *idx = ceil(L / p[SP_BLOCK]) * g->krow; return;
	case ALGO_INFLLM_V2: *idx = floor(L / p[SP_RATIO]) * g->krow; return;
	case ALGO_QUEST: *idx = ceil(L / p[SP_BLOCK]) * 2 * g->krow; return;
	case ALGO_H2O: {
		double C = fmin(L, ceil(p[SP_KEEP] * L));
		*kv = C * g->row;
		*idx = C * 4 * g->H;
		return;
	}
	case ALGO_SNAPKV: *kv = fmin(L, p[SP_BUDGET]) * g->row; return;
	case ALGO_STREAMINGLLM: *kv = fmin(L, p[SP_SINKS] + p[SP_WINDOW]) * g->row; return;
	default: {
		double w_kv, w_idx;
		writes(g, sp, cls, &w_kv, &w_idx);
		*idx = L * w_idx;
		return;
	}
	}
}

void attn_storage(const struct kmodel *m, const struct sparse_cfg *sp, double L,
		  double *kv_bytes, double *index_bytes)
{
	struct geo g;
	geometry(m, &g);
	struct lcount lc[LC_N];
	int n = attn_classes(m, sp, m->layers, 0, lc);
	*kv_bytes = *index_bytes = 0;
	for (int i = 0; i < n; i++) {
		double kv, idx;
		keeps(&g, sp, lc[i].cls, L, &kv, &idx);
		*kv_bytes += lc[i].layers * kv;
		*index_bytes += lc[i].layers * idx;
	}
}

/* GPU-side indexer projections for `count` layers of class cls. */
static void index_proj(struct emit *e, const struct sparse_cfg *sp,
		       enum lclass cls, double count, double T)
{
	const struct kmodel *m = e->m;
	double hi = sp->p[SP_INDEX_HEADS], di = sp->p[SP_INDEX_DIM], h = m->hidden;
	switch ((enum algo_id)sp->algo) {
	case ALGO_DSA: case ALGO_INDEX_SHARE: case ALGO_DSV4_CSA: case ALGO_DSV41:
		if (cls != LC_SPARSE && cls != LC_REINDEX)
			return;
		emit_gemm(e, OP_INDEX_Q_PROJ, count, T,
			  m->q_lora_rank > 0 ? m->q_lora_rank : h, hi * di, m->w_dt);
		emit_gemm(e, OP_INDEX_K_PROJ, count, T, h, di, m->w_dt);
		emit_gemm(e, OP_INDEX_W_PROJ, count, T, h, hi, m->act_dt);
		return;
	case ALGO_MSA:
		if (cls != LC_SPARSE)
			return;
		emit_gemm(e, OP_INDEX_Q_PROJ, count, T, h, hi * di, m->w_dt);
		emit_gemm(e, OP_INDEX_K_PROJ, count, T, h, di, m->w_dt);
		return;
	default:
		return;
	}
}

void attn_emit(struct emit *e, const struct sparse_cfg *sp, double layers,
	       int mtp, const struct req_view *r, double q, double T)
{
	const struct kmodel *m = e->m;
	struct geo g;
	geometry(m, &g);
	struct lcount lc[LC_N];
	int n = attn_classes(m, sp, layers, mtp, lc);
	for (int i = 0; i < n; i++) {
		if (lc[i].layers <= 0)
			continue;
		index_proj(e, sp, lc[i].cls, lc[i].layers, T);
		double kv_w, idx_w;
		writes(&g, sp, lc[i].cls, &kv_w, &idx_w);
		emit_op(e, OP_CACHE_WRITE, lc[i].layers, 0, T * kv_w, DT_FP32);
		emit_op(e, OP_CACHE_WRITE, lc[i].layers, 0, T * idx_w, DT_FP32);
		struct stage sum = {0}, one;
		int nreq = r->ctx ? r->nctx : 1;
		double w = r->ctx ? 1 : r->n; /* uniform contexts: one request x n */
		for (int j = 0; j < nreq; j++) {
			stages(&g, sp, lc[i].cls, r->ctx ? r->ctx[j] : r->context, q, &one);
			sum.scan_f += w * one.scan_f, sum.scan_b += w * one.scan_b;
			sum.topk_f += w * one.topk_f, sum.topk_b += w * one.topk_b;
			sum.gather_b += w * one.gather_b;
			sum.attn_f += w * one.attn_f, sum.attn_b += w * one.attn_b;
		}
		enum dtype idt = algo_table[sp->algo].has_index && sp->p[SP_INDEX_DIM] > 0
					 ? (enum dtype)sp->p[SP_INDEX_DTYPE]
					 : (enum dtype)m->attn_dt;
		emit_op(e, OP_INDEX_SCAN, lc[i].layers, sum.scan_f, sum.scan_b, idt);
		emit_op(e, OP_TOPK, lc[i].layers, sum.topk_f, sum.topk_b, DT_FP32);
		emit_op(e, OP_GATHER, lc[i].layers, 0, sum.gather_b, DT_FP32);
		emit_op(e, OP_ATTENTION, lc[i].layers, sum.attn_f, sum.attn_b, m->attn_dt);
	}
}

void attn_bytes_per_token(const struct kmodel *m, const struct sparse_cfg *sp,
			  double *kv, double *index)
{
	const double L = 1048576;
	attn_storage(m, sp, L, kv, index);
	*kv /= L;
	*index /= L;
}

int attn_applicable(const struct kmodel *m, const struct sparse_cfg *sp,
		    int force, struct kerr *err)
{
	const struct algo_info *a = &algo_table[sp->algo];
	if ((a->layout == LAYOUT_GQA && m->attn != ATTN_GQA) ||
	    (a->layout == LAYOUT_MLA && m->attn != ATTN_MLA))
		return kerr_set(err, 0, 0, "%s needs %s attention; %s has %s", a->name,
				a->layout == LAYOUT_GQA ? "gqa" : "mla", m->name,
				m->attn == ATTN_GQA ? "gqa" : "mla");
	if (sp->algo != m->sp.algo && !a->training_free && !force)
		return (void)kerr_set(err, 0, 0,
				"%s is trained-only and %s was not trained for it, so its "
				"accuracy is unknown",
				a->name, m->name), -2;
	return 0;
}

static enum dtype scan_dtype(const struct kmodel *m, const struct sparse_cfg *sp)
{
	return algo_table[sp->algo].has_index && sp->p[SP_INDEX_DIM] > 0
		       ? (enum dtype)sp->p[SP_INDEX_DTYPE]
		       : (enum dtype)m->attn_dt;
}

/* Bytes of the indexer query a GPU sends per query token on class cls. */
static double index_query_bytes(const struct sparse_cfg *sp, enum lclass cls)
{
	double hi = sp->p[SP_INDEX_HEADS], di = sp->p[SP_INDEX_DIM];
	double sq = dtype_bytes((enum dtype)sp->p[SP_INDEX_DTYPE]);
	switch ((enum algo_id)sp->algo) {
	case ALGO_DSA: case ALGO_INDEX_SHARE: case ALGO_DSV4_CSA: case ALGO_DSV41:
		return cls == LC_SPARSE || cls == LC_REINDEX ? hi * di * sq + hi * 4 : 0;
	case ALGO_MSA:
		return cls == LC_SPARSE ? hi * di * sq : 0;
	default:
		return 0;
	}
}

void attn_layout(const struct kmodel *m, const struct sparse_cfg *sp,
		 double layers, int mtp, double q, struct attn_layout *lay)
{
	static const enum op_kind kinds[ATTN_SLOTS_PER_CLASS] = {
		OP_CACHE_WRITE, OP_CACHE_WRITE, OP_INDEX_SCAN, OP_TOPK, OP_GATHER,
		OP_ATTENTION};
	struct geo g;
	geometry(m, &g);
	double sa = dtype_bytes(m->act_dt);
	struct lcount lc[LC_N];
	int nc = attn_classes(m, sp, layers, mtp, lc);
	lay->n = 0;
	lay->layers = layers;
	lay->out_bytes = lay->back_bytes = 0;
	for (int i = 0; i < nc; i++) {
		if (lc[i].layers <= 0)
			continue;
		for (int k = 0; k < ATTN_SLOTS_PER_CLASS; k++) {
			struct attn_slot *s = &lay->s[lay->n++];
			s->kind = kinds[k];
			s->cls = op_table[kinds[k]].cls;
			s->dt = k == 2 ? scan_dtype(m, sp) : k == 5 ? (enum dtype)m->attn_dt : DT_FP32;
			s->layers = lc[i].layers;
		}
		double kv_w, idx_w;
		writes(&g, sp, lc[i].cls, &kv_w, &idx_w);
		lay->out_bytes += lc[i].layers * q *
				  (g.H * g.dk * sa + kv_w + idx_w + index_query_bytes(sp, lc[i].cls));
		lay->back_bytes += lc[i].layers * q * g.H * g.dv * sa;
	}
}

void attn_request(const struct kmodel *m, const struct sparse_cfg *sp,
		  const struct attn_layout *lay, int mtp, double L, double q,
		  double *f, double *b)
{
	struct geo g;
	geometry(m, &g);
	struct lcount lc[LC_N];
	int nc = attn_classes(m, sp, lay->layers, mtp, lc);
	int j = 0;
	for (int i = 0; i < nc && j < lay->n; i++) {
		if (lc[i].layers <= 0)
			continue;
		struct stage st;
		double kv_w, idx_w;
		writes(&g, sp, lc[i].cls, &kv_w, &idx_w);
		stages(&g, sp, lc[i].cls, L, q, &st);
		double fs[ATTN_SLOTS_PER_CLASS] = {0, 0, st.scan_f, st.topk_f, 0, st.attn_f};
		double bs[ATTN_SLOTS_PER_CLASS] = {q * kv_w, q * idx_w, st.scan_b, st.topk_b,
						   st.gather_b, st.attn_b};
		for (int k = 0; k < ATTN_SLOTS_PER_CLASS; k++, j++)
			f[j] = fs[k], b[j] = bs[k];
	}
}
