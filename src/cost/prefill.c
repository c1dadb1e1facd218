/* prefill.c: one request's prefill on its GPUs (cost/prefill.h). */
#include "cost/prefill.h"

#include <math.h>
#include <string.h>

#include "cost/attn.h"
#include "cost/roofline.h"
#include "cost/step.h"

/* One token per GPU (on G GPUs) at context L, the whole step or its tail
 * alone (part): FLOPs, their energy, the compute seconds of one GPU and
 * the all-to-all bytes into v. */
static int per_token(const struct kmodel *m, const struct sparse_cfg *sp,
		     const struct kdevice *gpu, double G, int per_gpu, double L, enum step_part part,
		     double v[4], struct kerr *err)
{
	static _Thread_local struct step s;
	struct kbatch kb = {.requests = G, .gpus = G, .context = L, .sp = sp, .part = part,
			    .a2a_per_gpu = per_gpu};
	memset(v, 0, 4 * sizeof *v);
	if (step_build(m, &kb, &s, err) != 0)
		return -1;
	for (int i = 0; i < s.n; i++) {
		const struct op_cost *o = &s.op[i];
		if (o->side == SIDE_LINK) {
			v[3] += o->count * o->bytes;
			continue;
		}
		double spf, spb;
		roofline_op_rates(gpu, o->kind, o->cls, o->dt, &spf, &spb);
		v[0] += o->count * o->flops;
		v[1] += o->count * o->flops * device_energy_flop(gpu, o->dt);
		v[2] += o->count * o->flops * spf;
	}
	return 0;
}

int prefill_cost(const struct kmodel *m, const struct sparse_cfg *sp, const struct kdevice *gpu,
		 double gpus, int a2a_per_gpu, double c0, double n, struct prefill *out,
		 struct kerr *err)
{
	memset(out, 0, sizeof *out);
	if (!(n >= 0) || !(c0 >= 0) || !(gpus >= 1) || n != floor(n) || c0 != floor(c0))
		return kerr_set(err, 0, 0, "prefill: %g new tokens after %g on %g GPUs (whole numbers, at least one GPU)", n, c0, gpus);
	if (c0 + n > m->max_context)
		return kerr_set(err, 0, 0, "prefill: %g tokens exceed %s's window of %g", c0 + n,
				m->name, m->max_context);
	if (n < 1)
		return 0;
	/* whole steps: each token at its context where there are few, else
	 * the trapezoid over the contexts the new tokens see (n points' sum
	 * is n times their mean, the mean of a linear function its ends');
	 * the weights sum to n */
	double sum[4] = {0}, v[4];
	int exact = n <= PREFILL_POINTS, K = exact ? (int)n - 1 : PREFILL_POINTS;
	for (int k = 0; k <= K; k++) {
		double L = exact ? c0 + 1 + k : round(c0 + 1 + (n - 1) * k / K);
		if (per_token(m, sp, gpu, gpus, a2a_per_gpu, L, STEP_WHOLE, v, err) != 0)
			return -1;
		double w = exact ? 1 : (k == 0 || k == K ? 0.5 : 1) * n / K;
		for (int j = 0; j < 4; j++)
			sum[j] += w * v[j];
	}
	/* the tail (final norm, LM head, sampling: the same at any context)
	 * runs once, for the last token, not n times */
	if (per_token(m, sp, gpu, gpus, a2a_per_gpu, c0 + n, STEP_TAIL, v, err) != 0)
		return -1;
	for (int j = 0; j < 4; j++)
		sum[j] -= (n - 1) * v[j];
	/* per GPU the step priced one token: the sums are per token on one
	 * GPU, which is the request's own (its tokens go one per GPU) */
	double kv0, idx0, kv1, idx1;
	attn_storage(m, sp ? sp : &m->sp, c0, 0, &kv0, &idx0); /* decoder layers (the MTP
								   module's prefill is not priced) */
	attn_storage(m, sp ? sp : &m->sp, c0 + n, 0, &kv1, &idx1);
	double bytes = n / PREFILL_CHUNK * model_weight_bytes(m, gpus) + (kv1 + idx1 - kv0 - idx0);
	out->flops = sum[0];
	out->joules = sum[1] + bytes * 8 * gpu->e_bit;
	out->gpu_s = sum[2];
	out->a2a_bytes = sum[3];
	return 0;
}
