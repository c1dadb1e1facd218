/* test_topk_fit.c: a GPU's top-k as it scales (issue 28 item 3), fitted on
 * the published B200 tables in validation/topk-b200.csv.  A selection over
 * r rows of n scores takes fixed + max(n / row_rate, r n / unit_rate):
 * its rows run side by side, each a pass of its own, until the device's
 * throughput bounds them.  The fit, as a reader can redo it:
 *   - the rows of at most 8 x 65,536 scores (SGLang's JIT-v2 kernel) lie
 *     on one line in n: its intercept is the fixed time and its slope one
 *     row's pass (gsl_fit_linear);
 *   - the rows of at least 2^26 scores (flashinfer PR 3009) less the
 *     fixed time are r n / unit_rate (gsl_fit_mul through zero).
 * Checked: the shipped b200 values are the fit, `karat validate` prices
 * every row as the formula here, and the table's mean error is under 10%
 * where the fixed 30 us it replaces left every small selection 2-6x too
 * slow. */
#include <criterion/criterion.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>

#include "helpers.h"
#include "karat.h"

/* The shipped selection of d is the fit: its fixed time t0 (s), and s per
 * score of a row's pass (row) and of the throughput (per), within 0.5%. */
static void shipped_is_fit(const struct kdevice *d, double t0, double row, double per)
{
	cr_log_info("%s fit: fixed %.4g us, row_rate %.4g, unit_rate %.4g", d->name, t0 * 1e6,
		    1 / row, 1 / per);
	cr_expect(fabs(d->select_fixed / t0 - 1) < 0.005, "fixed: shipped %g, fit %g",
		  d->select_fixed, t0);
	cr_expect(fabs(d->select_row_rate * row - 1) < 0.005, "row_rate: shipped %g, fit %g",
		  d->select_row_rate, 1 / row);
	cr_expect(fabs(d->select_unit_rate * per - 1) < 0.005, "unit_rate: shipped %g, fit %g",
		  d->select_unit_rate, 1 / per);
}

Test(topk_fit, the_shipped_selection_is_the_fit_of_the_table)
{
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_read(zoo_path("validation/topk-b200.csv"), &t, &err), 0, "%s", err.msg);
	struct kdevice d;
	cr_assert_eq(zoo_load_device("b200", &d, NULL, &err), 0, "%s", err.msg);
	double sx[32], sy[32], lx[32], ly[32];
	size_t ns = 0, nl = 0;
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		cr_assert_eq(r->kernel, VK_TOPK);
		if (r->batch <= 8 && r->context <= 65536)
			sx[ns] = r->context, sy[ns++] = r->measured * 1e-6;
		else if (r->batch * r->context >= 67108864)
			lx[nl] = r->batch * r->context, ly[nl++] = r->measured * 1e-6;
		cr_assert(ns < 32 && nl < 32);
	}
	cr_assert(ns >= 4 && nl >= 4, "%zu small rows, %zu large", ns, nl);
	double t0, slope, c00, c01, c11, sumsq;
	gsl_fit_linear(sx, 1, sy, 1, ns, &t0, &slope, &c00, &c01, &c11, &sumsq);
	for (size_t i = 0; i < nl; i++)
		ly[i] -= t0;
	double per, cov;
	gsl_fit_mul(lx, 1, ly, 1, nl, &per, &cov, &sumsq);
	shipped_is_fit(&d, t0, slope, per);
	double mean = 0, was = 0;
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		double meas = r->measured * 1e-6, v;
		/* the scores stream once from HBM beside the passes: far below
		 * either term here */
		double mem = 4 * r->batch * r->context / (d.mem_bw * d.eff_m[OC_SCAN]);
		double want = d.select_fixed + fmax(fmax(r->context / d.select_row_rate,
							  r->batch * r->context / d.select_unit_rate),
						     mem);
		cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
		cr_expect(fabs(v * 1e-6 / want - 1) < 1e-9, "line %d: validate %.6g us, here %.6g us",
			  r->line, v, want * 1e6);
		mean += fabs(want / meas - 1) / t.n;
		was += fabs(30e-6 + r->batch * r->context / 3.4e11 - meas) / meas / t.n;
	}
	cr_expect_lt(mean, 0.10, "mean absolute error %.1f%%", 100 * mean);
	cr_expect_gt(was, 3 * mean, "the fixed 30 us: %.1f%%, the fit %.1f%%", 100 * was, 100 * mean);
	cr_log_info("mean absolute error: %.1f%% (the fixed 30 us and 3.4e11: %.1f%%)", 100 * mean,
		    100 * was);
	vtable_free(&t);
}

/* The MI355X's selection, fitted on AITER's sweep in
 * validation/topk-mi355x-aiter.csv (rows 1-1,024, 4K-128K scores): there
 * a row's own pass and the throughput time add (select.overlap 1), so a
 * selection takes fixed + n / row_rate + r n / unit_rate, which is linear
 * in (1, n, r n): the least squares of relative error (weights 1 / t^2,
 * gsl_multifit_wlinear) gives all three.  Checked: the shipped values are
 * the fit, `karat validate` prices every row so, and the mean error stays
 * at the fit's 10.1% (the max of the two terms, fitted as well as it can
 * be, leaves 11.6%; docs/validation.md). */
Test(topk_fit, the_mi355x_selection_is_the_weighted_fit_of_its_sweep)
{
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_read(zoo_path("validation/topk-mi355x-aiter.csv"), &t, &err), 0, "%s",
		     err.msg);
	struct kdevice d;
	cr_assert_eq(zoo_load_device("mi355x", &d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(d.select_overlap, 1);
	cr_assert_geq(t.n, 60);
	cr_assert_leq(t.n, 128);
	double x[3 * 128], y[128], c[3];
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		cr_assert_eq(r->kernel, VK_TOPK);
		x[3 * i] = 1, x[3 * i + 1] = r->context, x[3 * i + 2] = r->batch * r->context;
		y[i] = r->measured * 1e-6;
	}
	cr_assert_eq(fit_relative((size_t)t.n, 3, x, y, c), 0);
	double t0 = c[0], row = c[1], per = c[2];
	shipped_is_fit(&d, t0, row, per);
	double mean = 0;
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		double v, mem = 4 * r->batch * r->context / (d.mem_bw * d.eff_m[OC_SCAN]);
		double want = d.select_fixed + fmax(r->context / d.select_row_rate +
							    r->batch * r->context / d.select_unit_rate,
						    mem);
		cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
		cr_expect(fabs(v * 1e-6 / want - 1) < 1e-9, "line %d: validate %.6g us, here %.6g us",
			  r->line, v, want * 1e6);
		mean += fabs(want / (r->measured * 1e-6) - 1) / t.n;
	}
	cr_expect_lt(mean, 0.105, "mean absolute error %.1f%%", 100 * mean);
	cr_log_info("mi355x mean absolute error: %.1f%%", 100 * mean);
	vtable_free(&t);
}

/* A few long rows on the B200: TensorRT-LLM's single-pass multi-CTA
 * kernel (validation/topk-b200-trtllm-split.csv, PR 12236) takes a flat
 * 19.6-19.7 us on one row of 65,536-262,144 scores, where a row's own
 * pass on one SM would take 7-29 us more.  The split kernel spreads each
 * row over select.split = 8 SMs (vLLM PR 43008's cluster of 8 CTAs per
 * row at up to 8 rows), so it takes split_fixed + max(n / (8 row_rate),
 * r n / unit_rate); split_fixed is the weighted mean of measured less
 * that over the flat rows (weights 1 / measured^2: the least squares of
 * relative error, gsl_stats_wmean).  By hand at 65,536, 131,072 and
 * 262,144 scores: the row terms are 0.905, 1.810 and 3.621 us, so
 * split_fixed = 17.55 us and the rows come out 18.46, 19.36, 21.17 us.
 * A selection takes the faster kernel, so the one-row-per-SM kernel
 * still prices the short rows (the split kernel is the slower below
 * about 139K scores), and validate prices every row as the min here. */
Test(topk_fit, the_split_kernel_is_the_fit_of_its_flat_rows)
{
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_read(zoo_path("validation/topk-b200-trtllm-split.csv"), &t, &err), 0,
		     "%s", err.msg);
	struct kdevice d;
	cr_assert_eq(zoo_load_device("b200", &d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(d.select_split, 8);
	double y[8], w[8];
	size_t n = 0;
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		cr_assert_eq(r->kernel, VK_TOPK);
		cr_assert_eq(r->batch, 1);
		if (r->context < 65536)
			continue;
		double c = fmax(r->context / (8 * d.select_row_rate), r->context / d.select_unit_rate);
		y[n] = r->measured * 1e-6 - c, w[n] = 1 / (r->measured * r->measured * 1e-12);
		cr_assert(++n < 8);
	}
	cr_assert_eq(n, 3);
	double fixed = gsl_stats_wmean(w, 1, y, 1, n);
	cr_log_info("b200 split_fixed fit: %.4g us", fixed * 1e6);
	cr_expect(fabs(fixed / 17.55e-6 - 1) < 0.001, "by hand 17.55 us, fit %.4g us", fixed * 1e6);
	cr_expect(fabs(d.select_split_fixed / fixed - 1) < 0.005, "shipped %g, fit %g",
		  d.select_split_fixed, fixed);
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		double v, n_ = r->context, mem = 4 * n_ / (d.mem_bw * d.eff_m[OC_SCAN]);
		double one = d.select_fixed + fmax(fmax(n_ / d.select_row_rate, n_ / d.select_unit_rate), mem);
		double split = d.select_split_fixed +
			       fmax(fmax(n_ / (8 * d.select_row_rate), n_ / d.select_unit_rate), mem);
		cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
		cr_expect(fabs(v * 1e-6 / fmin(one, split) - 1) < 1e-9,
			  "line %d: validate %.6g us, here %.6g us", r->line, v, fmin(one, split) * 1e6);
		cr_expect_eq(split < one, n_ >= 262144, "line %d: the split kernel %s", r->line,
			     split < one ? "wins" : "loses");
	}
	/* the one long row: within 8% where the one-row kernel alone was 69% over */
	double v;
	cr_assert_eq(valid_model(&t.rows[t.n - 1], &v, &err), 0, "%s", err.msg);
	cr_expect_lt(fabs(v / t.rows[t.n - 1].measured - 1), 0.08, "%.4g us against %.4g", v,
		     t.rows[t.n - 1].measured);
	vtable_free(&t);
}
