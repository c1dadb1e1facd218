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

/* The MI300X's GEMMs (issue 28 item 1), fitted on two tables of its own:
 * AMD's max-achievable-FLOPs GEMMs (validation/gemm-mi300x-rocm-maf.csv,
 * one BF16 and one FP8 shape) and Azure's hipBLASLt FP8 table
 * (validation/gemm-mi300x-azure.csv, nine shapes).  As a reader can redo
 * it, with no fixed time: each efficiency is the one whose rows' relative
 * errors sum to zero, over the BF16 rows (gemm_compute), the FP8 rows the
 * model prices compute-bound at 100 us or more (gemm_compute_fp8), and the
 * rows it prices memory-bound (gemm_memory); then the fixed time is the
 * mean of measured less priced over the rows it dominates (priced under
 * half the measured time), as for the GB200 above. */
struct mi_rows {
	const struct vrow *r[16];
	int n;
};

/* The efficiency *eff of device x whose rows' relative errors sum to
 * zero (the summed error falls as the efficiency grows). */
static double fit_eff(struct kdevice *x, double *eff, const struct mi_rows *s,
		      const struct klink *l)
{
	double lo = 0.2, hi = 1.0;
	for (int it = 0; it < 60; it++) {
		*eff = (lo + hi) / 2;
		double sum = 0;
		for (int i = 0; i < s->n; i++)
			sum += gemm_time(s->r[i], x, l) / (s->r[i]->measured * 1e-6) - 1;
		if (sum > 0)
			lo = *eff;
		else
			hi = *eff;
	}
	return *eff = (lo + hi) / 2;
}

static enum bound gemm_bound(const struct vrow *r, const struct kdevice *d, const struct klink *l)
{
	struct op_cost o;
	valid_gemm_op(r, &o);
	roofline_op(&o, d, l);
	return o.bound;
}

Test(gemm_fit, the_mi300x_gemms_are_the_fit_of_its_tables)
{
	struct vtable t[2];
	struct kerr err;
	const char *paths[2] = {"validation/gemm-mi300x-rocm-maf.csv",
				"validation/gemm-mi300x-azure.csv"};
	for (int i = 0; i < 2; i++)
		cr_assert_eq(vtable_read(zoo_path(paths[i]), &t[i], &err), 0, "%s", err.msg);
	struct kdevice d, x;
	struct klink l;
	cr_assert_eq(zoo_load_device("mi300x", &d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link(d.link, &l, NULL, &err), 0, "%s", err.msg);
	x = d;
	x.fixed[OC_GEMM] = 0, x.overhead = 0;
	struct mi_rows bf16 = {{0}, 0}, fp8 = {{0}, 0}, mem = {{0}, 0};
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < t[i].n; j++) {
			const struct vrow *r = &t[i].rows[j];
			cr_assert_eq(r->kernel, VK_GEMM);
			if (!strcmp(r->dtype, "bf16"))
				bf16.r[bf16.n++] = r;
			else if (gemm_bound(r, &x, &l) == BOUND_COMPUTE && gemm_time(r, &x, &l) >= 100e-6)
				fp8.r[fp8.n++] = r;
		}
	cr_assert(bf16.n == 1 && fp8.n == 6, "%d BF16 rows, %d compute-bound FP8 rows", bf16.n,
		  fp8.n);
	double c16 = fit_eff(&x, &x.eff_c[OC_GEMM], &bf16, &l);
	double c8 = fit_eff(&x, &x.eff_gemm_fp8, &fp8, &l);
	for (int j = 0; j < t[1].n; j++)
		if (gemm_bound(&t[1].rows[j], &x, &l) == BOUND_MEMORY)
			mem.r[mem.n++] = &t[1].rows[j];
	cr_assert_eq(mem.n, 1, "%d memory-bound rows", mem.n);
	double m8 = fit_eff(&x, &x.eff_m[OC_GEMM], &mem, &l);
	double sum = 0;
	int nf = 0;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < t[i].n; j++) {
			const struct vrow *r = &t[i].rows[j];
			double meas = r->measured * 1e-6, join = gemm_time(r, &x, &l);
			if (join < meas / 2)
				sum += meas - join, nf++;
		}
	cr_assert_geq(nf, 2, "%d rows the fixed time dominates", nf);
	cr_expect(fabs(d.eff_c[OC_GEMM] - c16) <= 0.005, "gemm_compute: shipped %g, fit %.4f",
		  d.eff_c[OC_GEMM], c16);
	cr_expect(fabs(d.eff_gemm_fp8 - c8) <= 0.005, "gemm_compute_fp8: shipped %g, fit %.4f",
		  d.eff_gemm_fp8, c8);
	cr_expect(fabs(d.eff_m[OC_GEMM] - m8) <= 0.005, "gemm_memory: shipped %g, fit %.4f",
		  d.eff_m[OC_GEMM], m8);
	cr_expect(fabs(d.fixed[OC_GEMM] / (sum / nf) - 1) < 0.005, "gemm_fixed: shipped %g, fit %g",
		  d.fixed[OC_GEMM], sum / nf);
	cr_expect_eq(d.eff_c[OC_SCAN], d.eff_gemm_fp8, "scan_compute: the FP8 GEMMs'");
	for (int i = 0; i < 2; i++) {
		double mean = 0;
		for (int j = 0; j < t[i].n; j++) {
			const struct vrow *r = &t[i].rows[j];
			double v, here = gemm_time(r, &d, &l);
			cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
			cr_expect(fabs(v * 1e-6 / here - 1) < 1e-12, "%s line %d: validate %.6g us, "
				  "here %.6g us", paths[i], r->line, v, here * 1e6);
			mean += fabs(here / (r->measured * 1e-6) - 1) / t[i].n;
		}
		cr_expect_lt(mean, 0.10, "%s: mean absolute error %.1f%%", paths[i], 100 * mean);
		cr_log_info("MI300X %s: %.1f%%", paths[i], 100 * mean);
	}
	cr_log_info("MI300X fit: gemm_compute %.4f, gemm_compute_fp8 %.4f, gemm_memory %.4f, "
		    "gemm_fixed %.3g us over %d rows", c16, c8, m8, 1e6 * sum / nf, nf);
	vtable_free(&t[0]);
	vtable_free(&t[1]);
}
