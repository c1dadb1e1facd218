/* tp.c: tensor-parallel attention (tp.h). */
#include "cost/tp.h"

#include <math.h>

double tp_degree(const struct ksystem *s)
{
	return s->attention_tp > 1 ? s->attention_tp : 1;
}

int tp_check(const struct kmodel *m, const struct ksystem *s, const struct klink *up,
	     struct kerr *err)
{
	double t = tp_degree(s);
	if (t <= 1)
		return 0;
	if (m->attn != ATTN_GQA)
		return kerr_set(err, 0, 0, "system.attention_tp is %g but %s's attention is MLA: its "
				"latent cache is shared by every head, so each of the %g GPUs would hold "
				"all of it (MLA deployments run attention data-parallel, "
				"attention_tp = 1)", t, m->name, t);
	if (fmod(m->kv_heads, t) != 0)
		return kerr_set(err, 0, 0, "system.attention_tp is %g but %s has %g KV heads: each "
				"GPU must hold whole KV heads (at most %g, a divisor of them), or some "
				"heads' caches would be copied", t, m->name, m->kv_heads, m->kv_heads);
	if (!(up->allreduce_floor > 0))
		return kerr_set(err, 0, 0, "system.attention_tp is %g but the scale-up link %s gives "
				"no allreduce_floor: the all-reduce each layer pays cannot be priced",
				t, up->name);
	return 0;
}

double tp_allreduce_bytes(double t, double bytes)
{
	return 2 * (t - 1) / t * bytes;
}

double tp_allreduce_time(const struct klink *up, double t, double bytes)
{
	if (t <= 1)
		return 0;
	return up->allreduce_floor + tp_allreduce_bytes(t, bytes) / (up->bw * up->efficiency);
}

int tp_allreduces(int moe)
{
	return moe ? 1 : 2;
}

void tp_unit_device(struct kdevice *g, double t)
{
	for (int i = 0; i < DT_N; i++)
		g->peak[i] *= t;
	g->mem_capacity *= t;
	g->mem_reserve.bytes *= t; /* a share stays a share */
	g->mem_bw *= t;
	g->tdp *= t;
	g->sms *= t;
	g->select_cores *= t;
	g->select_unit_rate *= t;
	g->e_static *= t;
	g->price *= t;
	g->node_power *= t;
	g->node_price *= t;
}

void tp_unit_link(struct klink *l, double t)
{
	l->bw *= t;
}

void tp_unit_system(struct ksystem *s, double t)
{
	s->gpus /= t;
	s->gpus_per_node /= t; /* a node's host tier serves its units alike */
}
