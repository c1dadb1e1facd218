/* step.c: one decode step of a model, operator by operator.
 * Per layer: norms and projections (GPU, weights-bound), the attention
 * algorithm's cache-side stages (cost/attn.c), output projection, then a
 * dense FFN or the MoE block with its all-to-all; once per step the final
 * norm, LM head, sampling and the MTP draft module.  Shapes: docs/model.md
 * and each model file's sources. */
#include "cost/attn.h"
#include "cost/emit.h"
#include "cost/roofline.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* Norms and projections before attention, for `layers` layers. */
static void pre_attention(struct emit *e, double layers, double T)
{
	const struct kmodel *m = e->m;
	double h = m->hidden, H = m->heads, sa = dtype_bytes(m->act_dt);
	emit_norm(e, OP_ATTN_NORM, layers, T, h);
	if (m->attn == ATTN_GQA) {
		double d = m->head_dim;
		emit_gemm(e, OP_QKV_PROJ, layers, T, h, (H + 2 * m->kv_heads) * d, m->attn_w_dt);
		double n = T * (H + m->kv_heads) * d; /* rotated elements */
		emit_op(e, OP_ROPE, layers, 3 * n, 2 * n * sa, DT_FP32);
		return;
	}
	double qk = mla_qk_dim(m), r = m->kv_lora_rank, rope = m->qk_rope_dim;
	if (m->q_lora_rank > 0) {
		emit_gemm(e, OP_Q_DOWN, layers, T, h, m->q_lora_rank, m->attn_w_dt);
		emit_norm(e, OP_Q_NORM, layers, T, m->q_lora_rank);
		emit_gemm(e, OP_Q_UP, layers, T, m->q_lora_rank, H * qk, m->attn_w_dt);
	} else {
		emit_gemm(e, OP_Q_PROJ, layers, T, h, H * qk, m->attn_w_dt);
	}
	emit_gemm(e, OP_KV_DOWN, layers, T, h, r + rope, m->attn_w_dt);
	emit_norm(e, OP_KV_NORM, layers, T, r);
	/* W_UK per head [nope -> r], batched over heads. */
	emit_op(e, OP_Q_ABSORB, layers, 2 * T * H * m->qk_nope_dim * r,
		H * m->qk_nope_dim * r * dtype_bytes(m->attn_w_dt) +
			T * H * (m->qk_nope_dim + r) * sa,
		m->attn_w_dt);
	double n = T * (H + 1) * rope;
	emit_op(e, OP_ROPE, layers, 3 * n, 2 * n * sa, DT_FP32);
}

static void post_attention(struct emit *e, double layers, double T)
{
	const struct kmodel *m = e->m;
	double h = m->hidden, H = m->heads, sa = dtype_bytes(m->act_dt);
	if (m->attn == ATTN_GQA) {
		emit_gemm(e, OP_O_PROJ, layers, T, H * m->head_dim, h, m->attn_w_dt);
		return;
	}
	double r = m->kv_lora_rank, v = m->v_head_dim;
	emit_op(e, OP_V_ABSORB, layers, 2 * T * H * r * v,
		H * r * v * dtype_bytes(m->attn_w_dt) + T * H * (r + v) * sa, m->attn_w_dt);
	emit_gemm(e, OP_O_PROJ, layers, T, H * v, h, m->attn_w_dt);
}

/* SwiGLU FFN of width `inter` on `tokens` rows: gate+up and down. */
static void ffn_op(struct emit *e, enum op_kind k, double count, double tokens,
		   double inter, double weight_sets)
{
	const struct kmodel *m = e->m;
	double h = m->hidden, sa = dtype_bytes(m->act_dt);
	int wdt = k == OP_DENSE_FFN ? m->dense_w_dt : m->expert_w_dt; /* routed or shared */
	int first = e->s->n;
	emit_op(e, k, count, 6 * tokens * h * inter,
		weight_sets * 3 * h * inter * dtype_bytes(wdt) +
			tokens * (2 * h + 3 * inter) * sa,
		wdt);
	/* for the tile model, one GEMM per weight set of width 3 x inter over
	 * depth h: the gate-up [h -> 2 inter] and down [inter -> h] GEMMs'
	 * FLOPs, their tiles approximated as one GEMM's */
	if (weight_sets > 0)
		emit_shape(e, first, weight_sets, tokens / weight_sets, 3 * inter, h);
}

double step_a2a_sends(double E, double k, double P, int per_gpu)
{
	/* k distinct experts of E, E / P on each GPU: the GPUs they reach */
	return per_gpu ? roofline_a2a_reached(E, k, P) : k;
}

/* The MoE block for `layers` layers.  T local tokens; `global` tokens over
 * all GPUs choose experts, G GPUs hold E/G experts each. */
static void moe(struct emit *e, double layers, double T, double global,
		double G)
{
	const struct kmodel *m = e->m;
	double h = m->hidden, E = m->experts, k = m->active_experts;
	emit_gemm(e, OP_ROUTER, layers, T, h, E, m->act_dt);
	double P = G * (e->tp > 1 ? e->tp : 1); /* GPUs */
	double away = (P - 1) / P; /* share of a token's copies leaving the GPU */
	double sent = step_a2a_sends(E, k, P, e->a2a_per_gpu); /* copies of a token */
	/* FP8 dispatch also carries an FP32 scale per 128 channels (DeepEP's
	 * per-token-group quantisation; +3% for a 7168-wide row), FP4 an FP8
	 * scale per 16 (NVFP4, +12.5%: developer.nvidia.com/blog/introducing-nvfp4-for-
	 * efficient-and-accurate-low-precision-inference) */
	double row = h * dtype_bytes(m->dispatch_dt) +
		     (m->dispatch_dt == DT_FP8 ? ceil(h / 128) * 4 : 0) +
		     (m->dispatch_dt == DT_FP4 ? ceil(h / 16) : 0);
	/* the busiest GPU receives f times the mean copies, computes them and
	 * returns them: the step waits for it */
	double f = e->imbalance > 1 ? e->imbalance : 1;
	emit_op(e, OP_DISPATCH, layers, 0, f * T * sent * row * away, DT_FP32);
	/* Expected distinct experts a GPU's share sees: each of its E/G
	 * experts is untouched by one token with probability 1 - k/E. */
	double active = (E / G) * (1 - pow(1 - k / E, global));
	double pairs = f * global * k / G;
	ffn_op(e, OP_EXPERTS, layers, pairs, m->expert_inter, active);
	if (m->shared_experts > 0)
		ffn_op(e, OP_SHARED_EXPERT, layers, T,
		       m->shared_experts * m->expert_inter, 1);
	emit_op(e, OP_COMBINE, layers, 0,
		f * T * sent * h * dtype_bytes(m->act_dt) * away, DT_FP32);
}

static void lm_head(struct emit *e, double T)
{
	const struct kmodel *m = e->m;
	emit_norm(e, OP_FINAL_NORM, 1, T, m->hidden);
	emit_gemm(e, OP_LM_HEAD, 1, T, m->hidden, m->vocab, m->head_dt);
	/* max, exp, sum over the logits; read them once. */
	emit_op(e, OP_SAMPLING, 1, 3 * T * m->vocab,
		T * m->vocab * dtype_bytes(m->act_dt), DT_FP32);
}

/* One pass of the MTP draft module over one token per local request: the
 * input projection [2h -> h] and one decoder layer (MoE when the model has
 * MoE layers), then the shared LM head.  Run d times per step. */
static void mtp_pass(struct emit *e, const struct sparse_cfg *sp,
		     const struct req_view *r, double global, double G)
{
	const struct kmodel *m = e->m;
	double h = m->hidden, local = r->n;
	emit_gemm(e, OP_O_PROJ, 1, local, 2 * h, h, m->w_dt);
	pre_attention(e, 1, local);
	attn_emit(e, sp, 1, 1, r, 1, local);
	post_attention(e, 1, local);
	emit_norm(e, OP_FFN_NORM, 1, local, h);
	if (m->layers > m->dense_layers)
		moe(e, 1, local, global, G);
	else
		ffn_op(e, OP_DENSE_FFN, 1, local, m->dense_inter, 1);
	lm_head(e, local);
}

int step_layer_kinds(const struct kmodel *m, const struct sparse_cfg *sp, unsigned char *seq,
		     struct layer_kind kinds[PIPE_MAX_CLASSES], double counts[PIPE_MAX_CLASSES])
{
	long L = (long)m->layers;
	int n = 0;
	attn_sequence(m, sp, L, seq); /* attention classes first, then kinds */
	for (long i = 0; i < L; i++) {
		struct layer_kind k = {seq[i], i >= m->dense_layers};
		int j = 0;
		while (j < n && (kinds[j].cls != k.cls || kinds[j].moe != k.moe))
			j++;
		if (j == n) {
			assert(n < PIPE_MAX_CLASSES); /* LC_N classes x 2 FFNs */
			kinds[n] = k, counts[n++] = 0;
		}
		seq[i] = (unsigned char)j;
		counts[j]++;
	}
	return n;
}

/* One decoder layer of kind k. */
static void one_layer(struct emit *e, const struct sparse_cfg *sp, struct layer_kind k,
		      const struct req_view *r, double q, double T, double global, double G)
{
	const struct kmodel *m = e->m;
	pre_attention(e, 1, T);
	attn_emit_class(e, sp, (enum lclass)k.cls, 1, r, q, T);
	post_attention(e, 1, T);
	emit_norm(e, OP_FFN_NORM, 1, T, m->hidden);
	if (k.moe)
		moe(e, 1, T, global, G);
	else
		ffn_op(e, OP_DENSE_FFN, 1, T, m->dense_inter, 1);
}

static int check_batch(const struct kmodel *m, const struct kbatch *b,
		       struct kerr *err)
{
	if (!(b->requests >= 1) || b->requests != floor(b->requests))
		return kerr_set(err, 0, 0, "batch must be a whole number >= 1 (got %g)",
				b->requests);
	if (!(b->gpus >= 1) || b->gpus != floor(b->gpus))
		return kerr_set(err, 0, 0, "gpus must be a whole number >= 1 (got %g)",
				b->gpus);
	if (!(b->mtp >= 0) || b->mtp != floor(b->mtp) || b->mtp > 64)
		return kerr_set(err, 0, 0, "mtp draft tokens must be a whole number in [0, 64] (got %g)",
				b->mtp);
	if (b->mtp > 0 && m->mtp_layers == 0)
		return kerr_set(err, 0, 0, "model %s has no MTP module (mtp_layers = 0)",
				m->name);
	if (b->sp && (b->sp->algo < 0 || b->sp->algo >= ALGO_N))
		return kerr_set(err, 0, 0, "unknown attention algorithm id %d", b->sp->algo);
	if (b->part < STEP_WHOLE || b->part > STEP_TAIL ||
	    (b->part == STEP_LAYER && b->kind.cls >= LC_N))
		return kerr_set(err, 0, 0, "internal: step part %d, layer class %d", b->part,
				b->kind.cls);
	int n = b->ctx ? b->nctx : 1;
	if (b->ctx && (b->nctx < 1 || b->nctx > b->requests))
		return kerr_set(err, 0, 0, "per-request contexts: %d given for a batch of %g",
				b->nctx, b->requests);
	for (int i = 0; i < n; i++) {
		double L = b->ctx ? b->ctx[i] : b->context;
		if (!(L >= 1) || L != floor(L))
			return kerr_set(err, 0, 0, "context must be a whole number >= 1 (got %g)", L);
		if (L > m->max_context)
			return kerr_set(err, 0, 0, "context %g exceeds %s's maximum of %g tokens",
					L, m->name, m->max_context);
	}
	return 0;
}

int step_build(const struct kmodel *m, const struct kbatch *b, struct step *s,
	       struct kerr *err)
{
	if (check_batch(m, b, err) != 0)
		return -1;
	const struct sparse_cfg *sp = b->sp ? b->sp : &m->sp;
	double G = b->gpus;
	double local = b->ctx ? b->nctx : ceil(b->requests / G);
	double q = 1 + b->mtp, T = local * q;
	struct req_view r = {local, b->context, b->ctx, b->ctx ? b->nctx : 0};
	s->n = 0;
	s->local = local;
	s->q = q;
	struct emit e = {.s = s, .m = m, .gpu_only = b->gpu_only, .pad_topk = b->pad_topk,
			 .tp = b->tp, .imbalance = b->imbalance, .a2a_per_gpu = b->a2a_per_gpu};

	if (b->part == STEP_LAYER) {
		one_layer(&e, sp, b->kind, &r, q, T, b->requests * q, G);
		goto done;
	}
	if (b->part == STEP_WHOLE) {
		pre_attention(&e, m->layers, T);
		attn_emit(&e, sp, m->layers, 0, &r, q, T);
		post_attention(&e, m->layers, T);
		emit_norm(&e, OP_FFN_NORM, m->layers, T, m->hidden);
		ffn_op(&e, OP_DENSE_FFN, m->dense_layers, T, m->dense_inter, 1);
		double moe_layers = m->layers - m->dense_layers;
		if (moe_layers > 0)
			moe(&e, moe_layers, T, b->requests * q, G);
	}
	lm_head(&e, T);

	if (b->mtp > 0) {
		int first = s->n;
		e.as_module = 1;
		mtp_pass(&e, sp, &r, b->requests, G);
		for (int j = first; j < s->n; j++)
			s->op[j].count *= b->mtp;
	}
done:
	if (e.overflow)
		return kerr_set(err, 0, 0, "internal: more than %d operators in a step",
				STEP_MAX_OPS);
	return 0;
}

double step_time(struct step *s, const struct kdevice *d, const struct klink *l)
{
	double total = 0;
	for (int i = 0; i < s->n; i++) {
		roofline_op(&s->op[i], d, l);
		total += s->op[i].count * s->op[i].time;
	}
	return total;
}

void step_rows(const struct step *s, struct op_row rows[OP_N],
	       struct op_row *total)
{
	double best[OP_N] = {0};
	memset(rows, 0, sizeof(struct op_row) * OP_N);
	memset(total, 0, sizeof *total);
	for (int i = 0; i < s->n; i++) {
		const struct op_cost *o = &s->op[i];
		struct op_row *r = &rows[o->kind];
		double t = o->count * o->time;
		if (op_table[o->kind].module)
			r->count = r->count > o->count ? r->count : o->count;
		else
			r->count += o->count;
		r->flops += o->count * o->flops;
		r->bytes += o->count * o->bytes;
		r->time += t;
		if (!r->present || t > best[o->kind] || o->bound == BOUND_UNSUPPORTED) {
			if (r->bound != BOUND_UNSUPPORTED)
				r->bound = o->bound;
			best[o->kind] = t;
		}
		r->present = 1;
		total->flops += o->count * o->flops;
		total->bytes += o->count * o->bytes;
		total->time += t;
	}
	for (int k = 0; k < OP_N; k++)
		total->count += rows[k].count;
}
