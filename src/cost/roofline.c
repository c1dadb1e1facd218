/* roofline.c: the per-operator roofline. */
#include "cost/roofline.h"

#include <math.h>

/* Cube root of a in [1, 2] (the p = 3 join, on the solver's hot path; a
 * third of libm's cbrt): a quadratic start within 1e-3, then two Halley
 * steps, each cubing the relative error: within 1e-15. */
static double cbrt_1_2(double a)
{
	double x = a - 1, y = 1 + x * (0.3188 - 0.0589 * x);
	for (int i = 0; i < 2; i++) {
		double y3 = y * y * y;
		y *= (y3 + 2 * a) / (2 * y3 + a);
	}
	return y;
}

/* The p-norm of two times (p >= 1; otherwise, or NaN: their max). */
static inline double pnorm(double a, double b, double p)
{
	double hi = a > b ? a : b;
	if (!(p >= 1) || !(hi > 0))
		return hi;
	double lo = (a > b ? b : a) / hi; /* scaled: no overflow */
	if (lo == 0)
		return hi;
	if (p == 3)
		return hi * cbrt_1_2(1 + lo * lo * lo);
	return hi * pow(1 + pow(lo, p), 1 / p);
}

double roofline_join(const struct kdevice *d, double tc, double tm)
{
	return pnorm(tc, tm, d->overlap);
}

double roofline_select_join(const struct kdevice *d, double through, double row)
{
	return pnorm(through, row, d->select_overlap);
}

double roofline_select_time(const struct kdevice *d, double tc, double row, double tm,
			    double fixed, double fixed_split, double *fixed_used, double *tc_used)
{
	double c = pnorm(tc, row, d->select_overlap);
	double t = pnorm(c, tm, d->overlap);
	*fixed_used = fixed, *tc_used = c;
	if (d->select_split > 1 && row > 0) {
		double c2 = pnorm(tc, row / d->select_split, d->select_overlap);
		double t2 = pnorm(c2, tm, d->overlap);
		if (t2 + fixed_split < t + fixed)
			t = t2, *fixed_used = fixed_split, *tc_used = c2;
	}
	return t;
}

/* A kernel's least time `one` for an instance of kind k: on a GPU, times
 * the kernels it launches. */
static double per_instance(const struct kdevice *d, enum op_kind k, double one)
{
	return d->kind == DEV_GPU ? one * op_gpu_kernels(k) : one;
}

double roofline_split_fixed(const struct kdevice *d, enum op_kind k)
{
	if (!(d->select_split > 1) || !op_table[k].selects)
		return 0;
	return per_instance(d, k, d->select_split_fixed);
}

double roofline_fixed(const struct kdevice *d, enum op_kind k)
{
	const struct op_info *i = &op_table[k];
	return per_instance(d, k, device_fixed(d, i->cls, i->selects));
}

double roofline_op_fixed(const struct kdevice *d, const struct op_cost *o)
{
	enum dtype used = o->dt;
	if (o->cls == OC_GEMM && d->gemm_fixed_fp4 > 0 && device_peak(d, o->dt, &used) > 0 &&
	    used == DT_FP4)
		return per_instance(d, o->base, d->gemm_fixed_fp4);
	return roofline_fixed(d, o->base);
}

/* ceil for 0 <= x < 2^52 without a libm call (the tile search's loop). */
static inline double up(double x)
{
	double c = (double)(long long)x;
	return c < x ? c + 1 : c;
}

double roofline_gemm_flops(const struct kdevice *d, const struct op_cost *o)
{
	if (!(d->sms > 0) || !(o->gm > 0) || o->cls != OC_GEMM)
		return o->flops;
	double bm = o->gm <= d->tile_m_small ? d->tile_m_small : d->tile_m;
	double rows = ceil(o->gm / bm) * o->groups, best = INFINITY, per_sm = 1 / d->sms;
	if (!(rows * o->gn < 1e15)) /* beyond any shape; keeps up() exact */
		return o->flops;
	for (double bn = d->tile_n_step; bn <= d->tile_n_max; bn += d->tile_n_step) {
		double w = up(rows * up(o->gn / bn) * per_sm) * bn;
		best = w < best ? w : best;
	}
	double padded = best * d->sms * bm * 2 * (o->gk + d->tile_k0);
	return padded > o->flops ? padded : o->flops;
}

double roofline_floor(const struct kdevice *d, enum op_kind k)
{
	return d->kind == DEV_GPU && op_gpu_kernels(k) == 0 ? 0 : d->floor[op_table[k].cls];
}

void roofline_op(struct op_cost *o, const struct kdevice *d,
		 const struct klink *l)
{
	o->t_compute = o->t_memory = o->t_link = 0;
	if (o->side == SIDE_LINK) { /* the expert all-to-all */
		o->t_link = o->bytes > 0 ? o->bytes / (l->bw * l->efficiency) : 0;
		o->time = roofline_a2a(l, o->bytes, o->kind == OP_DISPATCH);
		o->bound = o->bytes > 0 ? BOUND_LINK : BOUND_NONE;
		return;
	}
	double ic, im;
	roofline_op_rates(d, o->base, o->cls, o->dt, &ic, &im);
	if (!isfinite(ic)) {
		o->time = INFINITY;
		o->bound = BOUND_UNSUPPORTED;
		return;
	}
	if (o->flops == 0 && o->bytes == 0) {
		o->time = 0, o->bound = BOUND_NONE;
		return;
	}
	o->t_compute = roofline_gemm_flops(d, o) * ic;
	o->t_memory = o->bytes * im;
	double fixed = roofline_op_fixed(d, o), floor = roofline_floor(d, o->base), t;
	if (op_table[o->base].selects) {
		/* rows side by side, each its own pass; fewer passes over the
		 * scores where seeded */
		double x = device_select_scale(d, o->passes);
		double row = d->select_row_rate > 0 && o->rows > 0
				     ? o->flops / o->rows / d->select_row_rate * x : 0;
		t = roofline_select_time(d, o->t_compute * x, row, o->t_memory, fixed,
					 roofline_split_fixed(d, o->base), &fixed, &o->t_compute);
	} else
		t = roofline_join(d, o->t_compute, o->t_memory);
	o->time = t + fixed > floor ? t + fixed : floor;
	if (fixed > t || floor > t + fixed)
		o->bound = BOUND_OVERHEAD;
	else
		o->bound = o->t_compute >= o->t_memory ? BOUND_COMPUTE : BOUND_MEMORY;
}

/* Class c's compute efficiency on d at the peak of dtype `used` (the one
 * device_peak ran it at): a GEMM at the FP4 or FP8 peak takes
 * efficiency.gemm_compute_fp4 or _fp8 where the file gives it. */
static double eff_compute(const struct kdevice *d, enum op_class c, enum dtype used)
{
	if (c == OC_GEMM && used == DT_FP4 && d->eff_gemm_fp4 > 0)
		return d->eff_gemm_fp4;
	if (c == OC_GEMM && used == DT_FP8 && d->eff_gemm_fp8 > 0)
		return d->eff_gemm_fp8;
	return d->eff_c[c];
}

void roofline_rates(const struct kdevice *d, enum op_class c, enum dtype t,
		    double *s_per_flop, double *s_per_byte)
{
	enum dtype used = t;
	double peak = device_peak(d, t, &used);
	int ok = (d->supports & (1u << c)) && peak > 0;
	*s_per_flop = ok ? 1 / (peak * eff_compute(d, c, used)) : INFINITY;
	*s_per_byte = ok ? 1 / (d->mem_bw * d->eff_m[c]) : INFINITY;
}

void roofline_op_rates(const struct kdevice *d, enum op_kind k, enum op_class c, enum dtype t,
		       double *s_per_flop, double *s_per_byte)
{
	roofline_rates(d, c, t, s_per_flop, s_per_byte);
	double sel = device_select_rate(d);
	if (op_table[k].selects && sel > 0 && isfinite(*s_per_flop) && 1 / sel > *s_per_flop)
		*s_per_flop = 1 / sel;
}

double roofline_transfer(const struct klink *l, double bytes)
{
	return bytes > 0 ? bytes / (l->bw * l->efficiency) + l->latency : 0;
}

/* roofline_a2a with `extra` seconds on the link's floor. */
static double a2a_time(const struct klink *l, double bytes, int dispatch, double extra)
{
	if (!(bytes > 0))
		return 0;
	double x = bytes / (l->bw * l->efficiency);
	double floor = dispatch && l->a2a_floor_dispatch > 0 ? l->a2a_floor_dispatch : l->a2a_floor;
	floor += extra;
	double f = floor > l->latency ? floor : l->latency;
	/* and never under the transfer plus its own fixed part */
	return fmax(x + f - l->a2a_overlap * (x < f ? x : f), x + l->a2a_latency);
}

double roofline_a2a(const struct klink *l, double bytes, int dispatch)
{
	return a2a_time(l, bytes, dispatch, 0);
}

double roofline_a2a_reached(double E, double k, double P)
{
	double none = 1; /* a group holds none of the k */
	for (int i = 0; i < (int)k; i++)
		none *= fmax(E - E / P - i, 0) / (E - i);
	return P * (1 - none);
}

double roofline_a2a_cross(double G, double gpn, double E, double k, int hierarchical,
			  int per_gpu)
{
	double N = G / gpn;
	if (!(hierarchical && G > gpn && k > 0))
		return 1;
	if (!per_gpu)
		return N * (1 - pow(1 - 1 / N, k)) / k;
	return roofline_a2a_reached(E, k, N) * (N - 1) / N /
	       (roofline_a2a_reached(E, k, G) * (G - gpn) / G);
}

double roofline_a2a_nodes(const struct klink *up, const struct klink *out, double G, double gpn,
			  double cross, double bytes, int dispatch)
{
	if (bytes <= 0)
		return 0;
	if (G <= gpn)
		return roofline_a2a(up, bytes, dispatch);
	/* the scale-out link's floor grows with the nodes past the first */
	double extra = out->a2a_floor_per_node * (G / gpn - 1);
	if (cross < 1) { /* hierarchical: each token crosses once per node it
			  * needs; the copies then move over the scale-up link */
		double away = bytes * (G - gpn) / (G - 1); /* copies bound for other nodes */
		double t_up = roofline_a2a(up, bytes * (gpn - 1) / (G - 1) + away * (gpn - 1) / gpn,
					   dispatch);
		return fmax(t_up, a2a_time(out, away * cross, dispatch, extra));
	}
	/* the shares for GPUs inside and outside the node move at once */
	double t_up = roofline_a2a(up, bytes * (gpn - 1) / (G - 1), dispatch);
	double t_out = a2a_time(out, bytes * (G - gpn) / (G - 1), dispatch, extra);
	return t_up > t_out ? t_up : t_out;
}

int roofline_a2a_per_gpu(const struct klink *up, const struct klink *out, double G, double gpn)
{
	return (G > gpn ? out : up)->a2a_sends == A2A_PER_GPU;
}

double roofline_ridge(const struct kdevice *d, enum op_class c, enum dtype t)
{
	enum dtype used = t;
	double peak = device_peak(d, t, &used);
	return peak * eff_compute(d, c, used) / (d->mem_bw * d->eff_m[c]);
}
