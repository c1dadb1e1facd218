/* test_gemm_fit.c: the GB200's GEMM fixed times (kernel.gemm_fixed and
 * kernel.gemm_fixed_fp4, issue 28 item 1), fitted on Azure's cuBLASLt
 * table (validation/gemm-gb200-azure.csv).  A GEMM's time is its fixed
 * time plus the join of its compute and memory times.  The fit, as a
 * reader can redo it: price each row with no fixed time; the rows whose
 * compute and memory come to under half the measured time are the ones
 * the fixed part dominates; each precision's fixed time is the mean of
 * their measured time less that join.  Checked: the shipped values are
 * the fit, karat validate prices every row as here, and the table's mean
 * error is under 10%. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

/* A row's GEMM as karat validate builds it, on device d. */
static double gemm_time(const struct vrow *r, const struct kdevice *d, const struct klink *l)
{
	struct op_cost o;
	valid_gemm_op(r, &o);
	roofline_op(&o, d, l);
	return o.time;
}

Test(gemm_fit, the_gb200_fixed_times_are_the_fit_of_its_table)
{
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_read(zoo_path("validation/gemm-gb200-azure.csv"), &t, &err), 0, "%s",
		     err.msg);
	struct kdevice d, bare;
	struct klink l;
	cr_assert_eq(zoo_load_device("gb200", &d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link(d.link, &l, NULL, &err), 0, "%s", err.msg);
	bare = d;
	bare.fixed[OC_GEMM] = 0, bare.gemm_fixed_fp4 = 0, bare.overhead = 0;
	double sum[2] = {0, 0}, mean = 0;
	int n[2] = {0, 0};
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		cr_assert_eq(r->kernel, VK_GEMM);
		double meas = r->measured * 1e-6, join = gemm_time(r, &bare, &l);
		int fp4 = strcmp(r->dtype, "fp4") == 0;
		if (join < meas / 2)
			sum[fp4] += meas - join, n[fp4]++;
		double v, here = gemm_time(r, &d, &l);
		cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
		cr_expect(fabs(v * 1e-6 / here - 1) < 1e-12, "line %d: validate %.6g us, here %.6g us",
			  r->line, v, here * 1e6);
		mean += fabs(here / meas - 1) / t.n;
	}
	cr_assert(n[0] >= 2 && n[1] >= 2, "%d FP8 and %d FP4 rows the fixed time dominates", n[0],
		  n[1]);
	cr_expect(fabs(d.fixed[OC_GEMM] / (sum[0] / n[0]) - 1) < 0.005, "FP8: shipped %g, fit %g",
		  d.fixed[OC_GEMM], sum[0] / n[0]);
	cr_expect(fabs(d.gemm_fixed_fp4 / (sum[1] / n[1]) - 1) < 0.005, "FP4: shipped %g, fit %g",
		  d.gemm_fixed_fp4, sum[1] / n[1]);
	cr_expect_lt(mean, 0.10, "mean absolute error %.1f%%", 100 * mean);
	cr_log_info("fit: %.3g us (FP8, %d rows), %.3g us (FP4, %d rows); table %.1f%%",
		    1e6 * sum[0] / n[0], n[0], 1e6 * sum[1] / n[1], n[1], 100 * mean);
	vtable_free(&t);
}

/* The MI300X's GEMM compute efficiency (issue 28 item 1), fitted on AMD's
 * max-achievable-FLOPs GEMMs (validation/gemm-mi300x-rocm-maf.csv: one
 * BF16 and one FP8 shape, both compute-bound).  One value for both: the
 * one whose relative errors on the two rows are equal and opposite (the
 * least largest error), to two decimals. */
Test(gemm_fit, the_mi300x_gemm_compute_is_the_fit_of_its_table)
{
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_read(zoo_path("validation/gemm-mi300x-rocm-maf.csv"), &t, &err), 0,
		     "%s", err.msg);
	struct kdevice d;
	struct klink l;
	cr_assert_eq(zoo_load_device("mi300x", &d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link(d.link, &l, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(t.n, 2);
	double lo = 0.3, hi = 0.9; /* the summed relative error falls as the efficiency grows */
	for (int it = 0; it < 60; it++) {
		struct kdevice x = d;
		x.eff_c[OC_GEMM] = (lo + hi) / 2;
		double s = 0;
		for (int i = 0; i < t.n; i++)
			s += gemm_time(&t.rows[i], &x, &l) / (t.rows[i].measured * 1e-6) - 1;
		if (s > 0)
			lo = x.eff_c[OC_GEMM];
		else
			hi = x.eff_c[OC_GEMM];
	}
	double fit = (lo + hi) / 2, mean = 0;
	cr_expect(fabs(d.eff_c[OC_GEMM] - fit) <= 0.005, "shipped %g, fit %.4f", d.eff_c[OC_GEMM],
		  fit);
	cr_expect_eq(d.eff_c[OC_SCAN], d.eff_c[OC_GEMM], "scan_compute is taken equal to it");
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		double v, here = gemm_time(r, &d, &l);
		cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
		cr_expect(fabs(v * 1e-6 / here - 1) < 1e-12, "line %d: validate %.6g us, here %.6g us",
			  r->line, v, here * 1e6);
		mean += fabs(here / (r->measured * 1e-6) - 1) / t.n;
	}
	cr_expect_lt(mean, 0.10, "mean absolute error %.1f%%", 100 * mean);
	cr_log_info("MI300X: fit %.4f, table %.1f%%", fit, 100 * mean);
	vtable_free(&t);
}
