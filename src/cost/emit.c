/* emit.c: appending operators to a step, and the shapes (GEMM, norm) every
 * layer uses.  Internal to cost/. */
#include "cost/emit.h"

void emit_op(struct emit *e, enum op_kind k, double count, double flops,
	     double bytes, enum dtype dt)
{
	if (count <= 0 || (flops <= 0 && bytes <= 0))
		return;
	if (e->gpu_only && op_table[k].side == SIDE_CACHE)
		return;
	struct step *s = e->s;
	if (s->n == STEP_MAX_OPS) {
		e->overflow = 1;
		return;
	}
	struct op_cost *o = &s->op[s->n++];
	o->kind = e->as_module ? OP_MTP : k;
	o->base = k;
	o->cls = op_table[k].cls;
	o->side = op_table[k].side;
	o->dt = dt;
	o->count = count;
	o->flops = flops;
	o->bytes = bytes;
	o->gm = o->gn = o->gk = 0, o->groups = 1;
	o->time = o->t_compute = o->t_memory = o->t_link = 0;
	o->bound = BOUND_NONE;
}

void emit_shape(struct emit *e, int first, double groups, double m, double n, double k)
{
	for (int i = first; i < e->s->n; i++) {
		struct op_cost *o = &e->s->op[i];
		o->groups = groups, o->gm = m, o->gn = n, o->gk = k;
	}
}

void emit_gemm(struct emit *e, enum op_kind k, double count, double tokens,
	       double din, double dout, enum dtype wdt)
{
	double sa = dtype_bytes(e->m->act_dt);
	int first = e->s->n;
	emit_op(e, k, count, 2 * tokens * din * dout,
		din * dout * dtype_bytes(wdt) + tokens * (din + dout) * sa, wdt);
	emit_shape(e, first, 1, tokens, dout, din);
}

void emit_norm(struct emit *e, enum op_kind k, double count, double tokens,
	       double dim)
{
	/* square, accumulate, scale, weight: 4 FLOPs per element; read and
	 * write the row, read the weight vector. */
	double sa = dtype_bytes(e->m->act_dt);
	emit_op(e, k, count, 4 * tokens * dim, (2 * tokens + 1) * dim * sa, DT_FP32);
}
