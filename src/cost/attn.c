/* attn.c: the cache-side operators of every attention algorithm, from the
 * rows of sparse/ (which hold each algorithm's work per request and
 * layer): the model's attention geometry, its layer classes, the work
 * summed over the local requests as operators, the slots the system layer
 * prices per device, and what each request stores.  The costs themselves
 * live in the rows; nothing here names an algorithm. */
#include "cost/attn.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "cost/emit.h"
#include "sparse/stage.h" /* stage_dense, for the dense layers */

static void geometry(const struct kmodel *m, struct attn_geo *g)
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
	g->pad_topk = 0;
}

/* Work of one request on one layer of class cls; dense layers are dense
 * attention whatever the algorithm.  The rows a gather brings in are one
 * query token's; q query tokens (MTP) select apart, sharing `overlap` of
 * a later token's rows with the first's: their union is read, at most the
 * whole context. */
static void stages(const struct attn_geo *g, const struct sparse_cfg *sp,
		   enum lclass cls, double L, double q, double overlap, struct attn_stage *s)
{
	memset(s, 0, sizeof *s);
	assert(algo_row(sp->algo)->stages); /* every row has one (tests/test_sparse.c) */
	if (cls == LC_DENSE)
		stage_dense(g, L, q, s);
	else
		algo_row(sp->algo)->stages(g, sp, cls, L, q, s);
	if (q > 1 && s->gather_b > 0)
		s->gather_b = fmin(s->gather_b * (1 + (q - 1) * (1 - overlap)), L * g->row);
}

/* Bytes per new token a layer of class cls writes: KV, index. */
static void writes(const struct attn_geo *g, const struct sparse_cfg *sp,
		   enum lclass cls, double *kv, double *idx)
{
	const struct algo_row *r = algo_row(sp->algo);
	*kv = g->row;
	*idx = 0;
	if (cls != LC_DENSE && r->writes)
		r->writes(g, sp, cls, kv, idx);
}

/* Bytes one request keeps on a layer of class cls at context L. */
static void keeps(const struct attn_geo *g, const struct sparse_cfg *sp,
		  enum lclass cls, double L, double *kv, double *idx)
{
	const struct algo_row *r = algo_row(sp->algo);
	if (cls != LC_DENSE && r->keeps) {
		r->keeps(g, sp, cls, L, kv, idx);
		return;
	}
	double w_kv, w_idx;
	writes(g, sp, cls, &w_kv, &w_idx);
	*kv = L * g->row;
	*idx = L * w_idx;
}

int attn_classes(const struct kmodel *m, const struct sparse_cfg *sp,
		 double layers, int mtp, struct lcount out[LC_N])
{
	int n = 0;
	const struct algo_row *r = algo_row(sp->algo);
	double dense_n = mtp ? 0 : fmin(layers, sp->p[SP_DENSE_LAYERS]);
	(void)m;
	if (dense_n > 0)
		out[n++] = (struct lcount){LC_DENSE, dense_n};
	double rest = layers - dense_n;
	if (r->classes && !mtp)
		n += r->classes(sp, layers, rest, out + n);
	else /* the MTP layer reuses a selection where the model says so */
		out[n++] = (struct lcount){mtp && sp->p[SP_MTP_SHARE] > 0 ? LC_SHARE : LC_SPARSE, rest};
	assert(n <= LC_N); /* a row's classes and the dense ones are distinct */
	return n;
}

void attn_storage_of(const struct kmodel *m, const struct sparse_cfg *sp, double L,
		     double mtp_layers, unsigned classes, double *kv_bytes, double *index_bytes)
{
	struct attn_geo g;
	geometry(m, &g);
	struct lcount lc[2 * LC_N];
	int n = attn_classes(m, sp, m->layers, 0, lc);
	if (mtp_layers > 0) /* each MTP module is a decoder layer with its own cache */
		n += attn_classes(m, sp, mtp_layers, 1, lc + n);
	*kv_bytes = *index_bytes = 0;
	for (int i = 0; i < n; i++) {
		if (!((classes >> lc[i].cls) & 1u))
			continue;
		double kv, idx;
		keeps(&g, sp, lc[i].cls, L, &kv, &idx);
		*kv_bytes += lc[i].layers * kv;
		*index_bytes += lc[i].layers * idx;
	}
}

void attn_storage(const struct kmodel *m, const struct sparse_cfg *sp, double L,
		  double mtp_layers, double *kv_bytes, double *index_bytes)
{
	attn_storage_of(m, sp, L, mtp_layers, ~0u, kv_bytes, index_bytes);
}

/* Whether the indexer of sp's algorithm projects on layers of class cls. */
static int projects(const struct algo_indexer *ix, enum lclass cls)
{
	return (ix->classes >> cls) & 1u;
}

/* GPU-side indexer projections for `count` layers of class cls. */
static void index_proj(struct emit *e, const struct sparse_cfg *sp,
		       enum lclass cls, double count, double T)
{
	const struct kmodel *m = e->m;
	const struct algo_indexer *ix = &algo_row(sp->algo)->indexer;
	double hi = sp->p[SP_INDEX_HEADS], di = sp->p[SP_INDEX_DIM], h = m->hidden;
	if (!projects(ix, cls))
		return;
	emit_gemm(e, OP_INDEX_Q_PROJ, count, T,
		  ix->q_from_lora && m->q_lora_rank > 0 ? m->q_lora_rank : h, hi * di, m->attn_w_dt);
	emit_gemm(e, OP_INDEX_K_PROJ, count, T, h, di, m->attn_w_dt);
	if (ix->head_weights)
		emit_gemm(e, OP_INDEX_W_PROJ, count, T, h, hi, m->act_dt);
}

/* Data type of the index scan: the index keys' when the algorithm keeps
 * learned ones, else the cache's. */
static enum dtype scan_dtype(const struct kmodel *m, const struct sparse_cfg *sp)
{
	return algo_row(sp->algo)->has_index && sp->p[SP_INDEX_DIM] > 0
		       ? (enum dtype)sp->p[SP_INDEX_DTYPE]
		       : (enum dtype)m->attn_dt;
}

void attn_emit_class(struct emit *e, const struct sparse_cfg *sp, enum lclass cls,
		     double count, const struct req_view *r, double q, double T)
{
	const struct kmodel *m = e->m;
	if (count <= 0)
		return;
	struct attn_geo g;
	geometry(m, &g);
	g.pad_topk = e->pad_topk;
	index_proj(e, sp, cls, count, T);
	double kv_w, idx_w;
	writes(&g, sp, cls, &kv_w, &idx_w);
	emit_op(e, OP_CACHE_WRITE, count, 0, T * kv_w, DT_FP32);
	emit_op(e, OP_CACHE_WRITE, count, 0, T * idx_w, DT_FP32);
	if (e->gpu_only)
		return; /* the stages below are all cache-side */
	struct attn_stage sum = {0}, one;
	int nreq = r->ctx ? r->nctx : 1;
	double w = r->ctx ? 1 : r->n; /* uniform contexts: one request x n */
	for (int j = 0; j < nreq; j++) {
		stages(&g, sp, cls, r->ctx ? r->ctx[j] : r->context, q, m->mtp_overlap, &one);
		sum.scan_f += w * one.scan_f, sum.scan_b += w * one.scan_b;
		sum.topk_f += w * one.topk_f, sum.topk_b += w * one.topk_b;
		sum.topk_rows += w * one.topk_rows;
		sum.topk_passes = one.topk_passes;
		sum.gather_b += w * one.gather_b;
		sum.attn_f += w * one.attn_f, sum.attn_b += w * one.attn_b;
	}
	emit_op(e, OP_INDEX_SCAN, count, sum.scan_f, sum.scan_b, scan_dtype(m, sp));
	int at = e->s->n;
	emit_op(e, OP_TOPK, count, sum.topk_f, sum.topk_b, DT_FP32);
	if (e->s->n > at)
		e->s->op[at].rows = sum.topk_rows, e->s->op[at].passes = sum.topk_passes;
	emit_op(e, OP_GATHER, count, 0, sum.gather_b, DT_FP32);
	emit_op(e, OP_ATTENTION, count, sum.attn_f, sum.attn_b, m->attn_dt);
}

void attn_emit(struct emit *e, const struct sparse_cfg *sp, double layers,
	       int mtp, const struct req_view *r, double q, double T)
{
	struct lcount lc[LC_N];
	int n = attn_classes(e->m, sp, layers, mtp, lc);
	for (int i = 0; i < n; i++)
		attn_emit_class(e, sp, lc[i].cls, lc[i].layers, r, q, T);
}

void attn_sequence(const struct kmodel *m, const struct sparse_cfg *sp, long layers,
		   unsigned char *cls)
{
	const struct algo_row *r = algo_row(sp->algo);
	long dense = (long)fmin((double)layers, sp->p[SP_DENSE_LAYERS]);
	(void)m;
	for (long i = 0; i < layers; i++)
		cls[i] = i < dense ? LC_DENSE : LC_SPARSE;
	if (r->sequence)
		r->sequence(sp, layers, dense, cls);
}

void attn_bytes_per_token(const struct kmodel *m, const struct sparse_cfg *sp,
			  double *kv, double *index)
{
	const double L = 1048576;
	attn_storage(m, sp, L, 0, kv, index);
	*kv /= L;
	*index /= L;
}

int attn_applicable(const struct kmodel *m, const struct sparse_cfg *sp,
		    int force, struct kerr *err)
{
	const struct algo_row *a = algo_row(sp->algo);
	const char *name = algo_names[sp->algo];
	if ((a->layout == LAYOUT_GQA && m->attn != ATTN_GQA) ||
	    (a->layout == LAYOUT_MLA && m->attn != ATTN_MLA))
		return kerr_set(err, 0, 0, "%s needs %s attention; %s has %s", name,
				a->layout == LAYOUT_GQA ? "gqa" : "mla", m->name,
				m->attn == ATTN_GQA ? "gqa" : "mla");
	if (sp->algo != m->sp.algo && !a->training_free && !force)
		return (void)kerr_set(err, 0, 0,
				"%s is trained-only and %s was not trained for it, so its "
				"accuracy is unknown",
				name, m->name), -2;
	return 0;
}

/* Bytes of the indexer query a GPU sends per query token on class cls. */
static double index_query_bytes(const struct sparse_cfg *sp, enum lclass cls)
{
	const struct algo_indexer *ix = &algo_row(sp->algo)->indexer;
	double hi = sp->p[SP_INDEX_HEADS], di = sp->p[SP_INDEX_DIM];
	double sq = dtype_bytes((enum dtype)sp->p[SP_INDEX_DTYPE]);
	if (!projects(ix, cls))
		return 0;
	return hi * di * sq + (ix->head_weights ? hi * 4 : 0);
}

void attn_layout(const struct kmodel *m, const struct sparse_cfg *sp,
		 double layers, int mtp, double q, struct attn_layout *lay)
{
	static const enum op_kind kinds[ATTN_SLOTS_PER_CLASS] = {
		OP_CACHE_WRITE, OP_CACHE_WRITE, OP_INDEX_SCAN, OP_TOPK, OP_GATHER,
		OP_ATTENTION};
	struct attn_geo g;
	geometry(m, &g);
	double sa = dtype_bytes(m->act_dt);
	struct lcount lc[LC_N];
	int nc = attn_classes(m, sp, layers, mtp, lc);
	memset(lay, 0, sizeof *lay);
	lay->layers = layers;
	for (int i = 0; i < nc; i++) {
		if (lc[i].layers <= 0)
			continue;
		for (int k = 0; k < ATTN_SLOTS_PER_CLASS; k++) {
			struct attn_slot *s = &lay->s[lay->n++];
			s->kind = kinds[k];
			s->cls = op_table[kinds[k]].cls;
			s->dt = k == 2 ? scan_dtype(m, sp) : k == 5 ? (enum dtype)m->attn_dt : DT_FP32;
			s->layers = lc[i].layers;
			s->lc = lc[i].cls;
		}
		{ /* rows do not grow with the context: the longest has them all */
			struct attn_stage st;
			stages(&g, sp, lc[i].cls, m->max_context, q, m->mtp_overlap, &st);
			lay->s[lay->n - ATTN_SLOTS_PER_CLASS + 3].rows = st.topk_rows;
			lay->s[lay->n - ATTN_SLOTS_PER_CLASS + 3].passes = st.topk_passes;
		}
		double kv_w, idx_w;
		writes(&g, sp, lc[i].cls, &kv_w, &idx_w);
		double out = lc[i].layers * q *
			     (g.H * g.dk * sa + kv_w + idx_w + index_query_bytes(sp, lc[i].cls));
		double back = lc[i].layers * q * g.H * g.dv * sa;
		lay->out_bytes += out, lay->back_bytes += back;
		lay->cls_layers[lc[i].cls] += lc[i].layers;
		lay->cls_out[lc[i].cls] += out, lay->cls_back[lc[i].cls] += back;
		lay->cls_index[lc[i].cls] += lc[i].layers * q * (idx_w + index_query_bytes(sp, lc[i].cls));
		lay->cls_query[lc[i].cls] += lc[i].layers * q * g.H * g.dk * sa;
	}
}

void attn_request(const struct kmodel *m, const struct sparse_cfg *sp,
		  const struct attn_layout *lay, int mtp, double L, double q,
		  double *f, double *b)
{
	struct attn_geo g;
	geometry(m, &g);
	g.pad_topk = lay->pad_topk;
	struct lcount lc[LC_N];
	int nc = attn_classes(m, sp, lay->layers, mtp, lc);
	int j = 0;
	for (int i = 0; i < nc && j < lay->n; i++) {
		if (lc[i].layers <= 0)
			continue;
		struct attn_stage st;
		double kv_w, idx_w;
		writes(&g, sp, lc[i].cls, &kv_w, &idx_w);
		stages(&g, sp, lc[i].cls, L, q, m->mtp_overlap, &st);
		double fs[ATTN_SLOTS_PER_CLASS] = {0, 0, st.scan_f, st.topk_f, 0, st.attn_f};
		double bs[ATTN_SLOTS_PER_CLASS] = {q * kv_w, q * idx_w, st.scan_b, st.topk_b,
						   st.gather_b, st.attn_b};
		for (int k = 0; k < ATTN_SLOTS_PER_CLASS; k++, j++)
			f[j] = fs[k], b[j] = bs[k];
	}
	assert(j == lay->n); /* lay was made by attn_layout for the same classes */
}

double attn_ids_bytes(const struct kmodel *m, const struct sparse_cfg *sp,
		      const struct attn_layout *lay, enum lclass cls, double L, double q)
{
	struct attn_geo g;
	struct attn_stage st;
	geometry(m, &g);
	stages(&g, sp, cls, L, q, m->mtp_overlap, &st);
	return lay->cls_layers[cls] * st.ids_b;
}
