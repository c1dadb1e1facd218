/* test_attn_fit.c: the MI355X's dense MLA decode (issue 28 item 1),
 * fitted on AITER's persistent MLA decode table in
 * validation/mla-mi355x-aiter.csv (aiter PR 5456, BF16 latent cache of
 * 4K-128K tokens, batch 16-128): 32 heads and one query token, and 64
 * heads and four (256 query rows a cached token).
 *
 * A layer reads each request's cache (576 BF16 values a token) and its
 * heads' queries (576 values) and outputs (512), and computes 2 (576 +
 * 512) FLOPs a query row a cached token.  With one query token of 32
 * heads every row is memory-bound; with 256 query rows every row is
 * compute-bound.  So a row takes 2 kernel fixed times (a split-KV pass and
 * a combine) plus its bytes over (bandwidth x attention_memory), or its
 * FLOPs over (BF16 peak x attention_compute): linear in the three values,
 * which the least squares of relative error (weights 1 / t^2,
 * gsl_multifit_wlinear, helpers.c fit_relative) gives.  Checked: the
 * shipped values are the fit, each row is bound where the fit put it,
 * `karat validate` prices every row as this formula, the table's mean
 * error is under 3.5%, and the Hopper values the MI355X carried before
 * (0.90 of its bandwidth, 0.67 of its peak, 2 us a kernel) were over 10x
 * worse. */
#include <criterion/criterion.h>
#include <math.h>

#include "helpers.h"
#include "karat.h"

/* A layer's attention bytes for one row: the cache, then each head's
 * query in and output back, all BF16. */
static double row_bytes(const struct vrow *r)
{
	return r->batch * r->context * 576 * 2 + r->batch * r->q_len * r->heads * (576 + 512) * 2;
}

/* Its FLOPs: scores over 576 values and outputs over 512, each a multiply
 * and an add, for every query row and cached token. */
static double row_flops(const struct vrow *r)
{
	return 2 * r->batch * r->q_len * r->heads * r->context * (576 + 512);
}

/* The table's compute-bound rows: 128 query rows or more a cached token. */
static int compute_bound(const struct vrow *r)
{
	return r->heads * r->q_len >= 128;
}

/* Reads a shipped table and loads the device it fits; both must load,
 * and the device must take the max of compute and memory (no p-norm). */
static void open_fit(const char *table, const char *device, struct vtable *t, struct kdevice *d)
{
	struct kerr err;
	cr_assert_eq(vtable_read(zoo_path(table), t, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_device(device, d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(d->overlap, 0, "%s: the max of compute and memory", device);
}

/* The mean absolute error over table t of a + max(FLOPs / (BF16 peak x
 * ec), bytes / (bandwidth x em)), each row's bytes from `bytes`.  With
 * `shipped` (d's own values), also checks that `karat validate` prices
 * every row as that formula and that each row is compute-bound exactly
 * where `bound` says. */
static double priced_error(const struct vtable *t, const struct kdevice *d, double a, double em,
			   double ec, double (*bytes)(const struct vrow *),
			   int (*bound)(const struct vrow *), int shipped)
{
	double mean = 0, peak = d->peak[DT_BF16];
	for (int i = 0; i < t->n; i++) {
		const struct vrow *r = &t->rows[i];
		double v, tc = row_flops(r) / (peak * ec), tm = bytes(r) / (d->mem_bw * em);
		double want = a + fmax(tc, tm);
		if (shipped) {
			struct kerr err;
			cr_expect_eq(tc > tm, bound(r), "line %d: compute-bound %d", r->line, tc > tm);
			cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
			cr_expect(fabs(v * 1e-6 / want - 1) < 1e-9,
				  "line %d: validate %.6g us, here %.6g us", r->line, v, want * 1e6);
		}
		mean += fabs(want / (r->measured * 1e-6) - 1) / t->n;
	}
	return mean;
}

Test(attn_fit, the_mi355x_mla_decode_is_the_weighted_fit_of_its_table)
{
	struct vtable t;
	struct kdevice d;
	open_fit("validation/mla-mi355x-aiter.csv", "mi355x", &t, &d);
	cr_assert_geq(t.n, 32);
	cr_assert_leq(t.n, 64);
	double x[3 * 64], y[64], c[3];
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		cr_assert_eq(r->kernel, VK_MLA);
		int cb = compute_bound(r);
		x[3 * i] = 1, x[3 * i + 1] = cb ? 0 : row_bytes(r), x[3 * i + 2] = cb ? row_flops(r) : 0;
		y[i] = r->measured * 1e-6;
	}
	cr_assert_eq(fit_relative((size_t)t.n, 3, x, y, c), 0);
	double peak = d.peak[DT_BF16];
	double fixed = c[0] / 2, em = 1 / (c[1] * d.mem_bw), ec = 1 / (c[2] * peak);
	cr_log_info("mi355x attention fit: fixed %.4g us a kernel, memory %.4g, compute %.4g",
		    fixed * 1e6, em, ec);
	cr_expect(fabs(d.fixed[OC_ATTENTION] / fixed - 1) < 0.005,
		  "kernel.attention_fixed: shipped %g, fit %g", d.fixed[OC_ATTENTION], fixed);
	cr_expect(fabs(d.eff_m[OC_ATTENTION] / em - 1) < 0.005,
		  "efficiency.attention_memory: shipped %g, fit %g", d.eff_m[OC_ATTENTION], em);
	cr_expect(fabs(d.eff_c[OC_ATTENTION] / ec - 1) < 0.005,
		  "efficiency.attention_compute: shipped %g, fit %g", d.eff_c[OC_ATTENTION], ec);
	double mean = priced_error(&t, &d, 2 * d.fixed[OC_ATTENTION], d.eff_m[OC_ATTENTION],
				   d.eff_c[OC_ATTENTION], row_bytes, compute_bound, 1);
	double was = priced_error(&t, &d, 4e-6, 0.90, 0.67, row_bytes, compute_bound, 0);
	cr_log_info("mi355x attention: mean absolute error %.1f%% (Hopper's values: %.1f%%)",
		    100 * mean, 100 * was);
	cr_expect_lt(mean, 0.035, "mean absolute error %.1f%%", 100 * mean);
	cr_expect_gt(was, 10 * mean, "Hopper's values: %.1f%%, the fit %.1f%%", 100 * was,
		     100 * mean);
	vtable_free(&t);
}

/* The B200's dense MLA decode (issue 28 item 1), fitted on
 * validation/mla-b200-vllm.csv (vllm PR 41778: trtllm-gen and
 * tokenspeed_mla_decode at 16 heads and four query tokens over 81,920
 * tokens of FP8 cache, batch 16-256, the faster per row).  Every row reads
 * 576 FP8 bytes a cached token and computes 64 query rows' 2 (576 + 512)
 * FLOPs on it: 242 FLOPs a byte, one intensity, so the table fixes one
 * roof.  It sits past the ridge of Hopper's values (0.67 of the BF16 peak
 * against 0.90 of the bandwidth: 218), and the B200's sparse kernel (350
 * TFLOPS, validation/flashmla-sparse-b200.csv) is further still below its
 * compute side, so the shortfall is put on attention_compute: a row takes
 * two kernel fixed times (assumed, as shipped) plus its FLOPs over (BF16
 * peak x attention_compute), linear in 1 / attention_compute, whose least
 * squares of relative error has a closed form.  Checked: the shipped value
 * is the fit, every row is compute-bound with the memory side left at
 * Hopper's, `karat validate` prices each row as this formula, the mean
 * error is under 7%, and Hopper's 0.67 is over 3x worse. */
static double b200_bytes(const struct vrow *r)
{
	return r->batch * r->context * 576 + r->batch * r->q_len * r->heads * (576 + 512) * 2;
}

static int every_row(const struct vrow *r)
{
	(void)r;
	return 1;
}

Test(attn_fit, the_b200_mla_decode_compute_is_the_fit_of_its_table)
{
	struct vtable t;
	struct kdevice d;
	open_fit("validation/mla-b200-vllm.csv", "b200", &t, &d);
	cr_assert_geq(t.n, 7);
	double peak = d.peak[DT_BF16], a = 2 * device_fixed(&d, OC_ATTENTION, 0), num = 0, den = 0;
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		cr_assert_eq(r->kernel, VK_MLA);
		cr_assert_eq(r->heads * r->q_len, 64, "line %d: one intensity", r->line);
		double y = r->measured * 1e-6, f = row_flops(r);
		num += f / y * (1 - a / y), den += (f / y) * (f / y);
	}
	double ec = den / (num * peak);
	cr_log_info("b200 attention fit: compute %.4g (kernel fixed %.3g us, assumed)", ec,
		    a / 2 * 1e6);
	cr_expect(fabs(d.eff_c[OC_ATTENTION] / ec - 1) < 0.005,
		  "efficiency.attention_compute: shipped %g, fit %g", d.eff_c[OC_ATTENTION], ec);
	double mean = priced_error(&t, &d, a, d.eff_m[OC_ATTENTION], d.eff_c[OC_ATTENTION],
				   b200_bytes, every_row, 1);
	double was = priced_error(&t, &d, a, d.eff_m[OC_ATTENTION], 0.67, b200_bytes, every_row, 0);
	cr_log_info("b200 attention: mean absolute error %.1f%% (Hopper's 0.67: %.1f%%)",
		    100 * mean, 100 * was);
	cr_expect_lt(mean, 0.07, "mean absolute error %.1f%%", 100 * mean);
	cr_expect_gt(was, 3 * mean, "Hopper's 0.67: %.1f%%, the fit %.1f%%", 100 * was,
		     100 * mean);
	vtable_free(&t);
}
