/* test_attn_fit.c: the MI355X's dense MLA decode (issue 28 item 1),
 * fitted on AITER's persistent MLA decode table in
 * validation/mla-mi355x-aiter.csv (aiter PR 5456: 32 heads, one query
 * token, batch 16-128, 4K-128K tokens of BF16 latent cache).
 *
 * Every row is memory-bound: a layer reads each request's cache
 * (576 BF16 values a token) and its 32 heads' queries (576 values) and
 * outputs (512), so it takes 2 kernel fixed times (a split-KV pass and a
 * combine) plus bytes / (bandwidth x attention_memory).  That is linear in
 * (1, bytes): the least squares of relative error (weights 1 / t^2,
 * gsl_multifit_wlinear, helpers.c fit_relative) gives both values.  Checked: the shipped values
 * are the fit, `karat validate` prices every row as this formula, the
 * table's mean error is under 2%, and the Hopper values the MI355X carried
 * before (0.90 of its bandwidth, 2 us a kernel) were over 10x worse. */
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

Test(attn_fit, the_mi355x_mla_decode_is_the_weighted_fit_of_its_table)
{
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_read(zoo_path("validation/mla-mi355x-aiter.csv"), &t, &err), 0, "%s",
		     err.msg);
	struct kdevice d;
	cr_assert_eq(zoo_load_device("mi355x", &d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(d.overlap, 0, "the max of compute and memory: the rows are memory-bound");
	cr_assert_geq(t.n, 16);
	cr_assert_leq(t.n, 64);
	double x[2 * 64], y[64], c[2];
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		cr_assert_eq(r->kernel, VK_MLA);
		x[2 * i] = 1, x[2 * i + 1] = row_bytes(r);
		y[i] = r->measured * 1e-6;
	}
	cr_assert_eq(fit_relative((size_t)t.n, 2, x, y, c), 0);
	double fixed = c[0] / 2, eff = 1 / (c[1] * d.mem_bw);
	cr_log_info("mi355x attention fit: fixed %.4g us a kernel, memory efficiency %.4g",
		    fixed * 1e6, eff);
	cr_expect(fabs(d.fixed[OC_ATTENTION] / fixed - 1) < 0.005,
		  "kernel.attention_fixed: shipped %g, fit %g", d.fixed[OC_ATTENTION], fixed);
	cr_expect(fabs(d.eff_m[OC_ATTENTION] / eff - 1) < 0.005,
		  "efficiency.attention_memory: shipped %g, fit %g", d.eff_m[OC_ATTENTION], eff);
	double mean = 0, was = 0;
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		double v, meas = r->measured * 1e-6, b = row_bytes(r);
		double flops = 2 * r->batch * r->q_len * r->heads * r->context * (576 + 512);
		double tc = flops / (d.peak[DT_BF16] * d.eff_c[OC_ATTENTION]);
		double tm = b / (d.mem_bw * d.eff_m[OC_ATTENTION]);
		cr_expect_lt(tc, tm, "line %d is memory-bound", r->line);
		double want = 2 * d.fixed[OC_ATTENTION] + tm;
		cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
		cr_expect(fabs(v * 1e-6 / want - 1) < 1e-9, "line %d: validate %.6g us, here %.6g us",
			  r->line, v, want * 1e6);
		mean += fabs(want / meas - 1) / t.n;
		was += fabs((4e-6 + b / (d.mem_bw * 0.90)) / meas - 1) / t.n;
	}
	cr_log_info("mi355x attention: mean absolute error %.1f%% (Hopper's values: %.1f%%)",
		    100 * mean, 100 * was);
	cr_expect_lt(mean, 0.02, "mean absolute error %.1f%%", 100 * mean);
	cr_expect_gt(was, 10 * mean, "Hopper's values: %.1f%%, the fit %.1f%%", 100 * was,
		     100 * mean);
	vtable_free(&t);
}
