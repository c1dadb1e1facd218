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
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

/* A row's GEMM as karat validate builds it, on device d: its time, and
 * into *bound (unless NULL) what bounds it. */
static double gemm_cost(const struct vrow *r, const struct kdevice *d, const struct klink *l,
			enum bound *bound)
{
	struct op_cost o;
	valid_gemm_op(r, &o);
	roofline_op(&o, d, l);
	if (bound)
		*bound = o.bound;
	return o.time;
}

static double gemm_time(const struct vrow *r, const struct kdevice *d, const struct klink *l)
{
	return gemm_cost(r, d, l, NULL);
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

/* Fitting a GPU's GEMM values on tables of its own (issue 28 item 1), as
 * a reader can redo it.  With no fixed time: each efficiency is the one
 * whose rows' relative errors sum to zero, over the rows priced
 * compute-bound at 20 us or more: BF16 (gemm_compute), FP8
 * (gemm_compute_fp8 where the file gives it, else gemm_compute) and FP4
 * (gemm_compute_fp4), and the rows priced memory-bound at 20 us or
 * more (gemm_memory); then each fixed time (gemm_fixed, and gemm_fixed_fp4
 * at FP4) is the one with the least mean absolute relative error over
 * the rows it dominates (priced under half the measured time): a
 * weighted median of measured less priced (the GB200 above takes their
 * mean). */
struct fit_rows {
	const struct vrow *r[32];
	int n;
};

struct gemm_fit {
	double c16, c8, c4, mem, fix, fix4; /* NaN: no rows */
	int nfix, nfix4;
};

/* The efficiency *eff of device x whose rows' relative errors sum to
 * zero (the summed error falls as the efficiency grows); NaN: no rows. */
static double fit_eff(struct kdevice *x, double *eff, const struct fit_rows *s,
		      const struct klink *l)
{
	if (s->n == 0)
		return NAN;
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

/* Whether row r is priced bound by `want` at 20 us or more on x. */
static int priced_long(const struct vrow *r, const struct kdevice *x, const struct klink *l,
		       enum bound want)
{
	enum bound b;
	double t = gemm_cost(r, x, l, &b);
	return b == want && t >= 20e-6;
}

static void add_row(struct fit_rows *s, const struct vrow *r)
{
	cr_assert_lt(s->n, 32, "more rows than the fit holds");
	s->r[s->n++] = r;
}

/* A row the fixed time dominates: measured less priced (s), and the
 * weight of its error (1 / measured). */
struct fixed_row {
	double c, w;
};

static int by_c(const void *a, const void *b)
{
	double x = ((const struct fixed_row *)a)->c, y = ((const struct fixed_row *)b)->c;
	return (x > y) - (x < y);
}

/* The fixed time f with the least mean absolute relative error over the
 * rows, sum w |f - c|: their weighted median; NaN: no rows. */
static double wmedian(struct fixed_row *r, int n)
{
	if (n == 0)
		return NAN;
	qsort(r, (size_t)n, sizeof *r, by_c);
	double total = 0, cum = 0;
	for (int i = 0; i < n; i++)
		total += r[i].w;
	for (int i = 0; i < n; i++)
		if ((cum += r[i].w) >= total / 2)
			return r[i].c;
	return r[n - 1].c;
}

static void fit_gemms(const struct kdevice *d, const struct klink *l, const struct vtable *t,
		      int nt, struct gemm_fit *f)
{
	struct kdevice x = *d;
	x.fixed[OC_GEMM] = 0, x.gemm_fixed_fp4 = 0, x.overhead = 0;
	static const char *const dts[3] = {"bf16", "fp8", "fp4"};
	struct fit_rows cmp[3] = {{{0}, 0}}, mem = {{0}, 0}; /* compute-bound, by dts */
	for (int i = 0; i < nt; i++)
		for (int j = 0; j < t[i].n; j++) {
			const struct vrow *r = &t[i].rows[j];
			cr_assert_eq(r->kernel, VK_GEMM);
			if (!priced_long(r, &x, l, BOUND_COMPUTE))
				continue;
			int k = 0;
			while (k < 3 && strcmp(r->dtype, dts[k]))
				k++;
			cr_assert_lt(k, 3, "a GEMM in %s", r->dtype);
			add_row(&cmp[k], r);
		}
	f->c16 = fit_eff(&x, &x.eff_c[OC_GEMM], &cmp[0], l);
	f->c8 = fit_eff(&x, d->eff_gemm_fp8 > 0 ? &x.eff_gemm_fp8 : &x.eff_c[OC_GEMM], &cmp[1], l);
	f->c4 = fit_eff(&x, &x.eff_gemm_fp4, &cmp[2], l);
	for (int i = 0; i < nt; i++)
		for (int j = 0; j < t[i].n; j++)
			if (priced_long(&t[i].rows[j], &x, l, BOUND_MEMORY))
				add_row(&mem, &t[i].rows[j]);
	f->mem = fit_eff(&x, &x.eff_m[OC_GEMM], &mem, l);
	struct fixed_row c[2][64];
	int n[2] = {0, 0};
	for (int i = 0; i < nt; i++)
		for (int j = 0; j < t[i].n; j++) {
			const struct vrow *r = &t[i].rows[j];
			double meas = r->measured * 1e-6, join = gemm_time(r, &x, l);
			int fp4 = !strcmp(r->dtype, "fp4");
			if (join < meas / 2) {
				cr_assert_lt(n[fp4], 64, "more rows than the fit holds");
				c[fp4][n[fp4]++] = (struct fixed_row){meas - join, 1 / meas};
			}
		}
	f->fix = wmedian(c[0], n[0]), f->fix4 = wmedian(c[1], n[1]);
	f->nfix = n[0], f->nfix4 = n[1];
	cr_log_info("%s fit: BF16 %.4f (%d rows), FP8 %.4f (%d), FP4 %.4f (%d), memory %.4f (%d), "
		    "fixed %.3g us (%d), at FP4 %.3g us (%d)", d->name, f->c16, cmp[0].n, f->c8,
		    cmp[1].n, f->c4, cmp[2].n, f->mem, mem.n, 1e6 * f->fix, n[0], 1e6 * f->fix4, n[1]);
}

/* The shipped efficiency is the fit to two decimals. */
#define EXPECT_EFF(shipped, fit, what) \
	cr_expect(fabs((shipped) - (fit)) <= 0.005, "%s: shipped %g, fit %.4f", what, shipped, fit)
#define EXPECT_FIXED(shipped, fit, what) \
	cr_expect(fabs((shipped) / (fit) - 1) < 0.005, "%s: shipped %g, fit %g", what, shipped, fit)

/* Every row of the tables as karat validate prices it, and each table's
 * mean absolute error under 10%. */
static void expect_tables(const struct kdevice *d, const struct klink *l, const struct vtable *t,
			  int nt)
{
	struct kerr err;
	for (int i = 0; i < nt; i++) {
		double mean = 0;
		for (int j = 0; j < t[i].n; j++) {
			const struct vrow *r = &t[i].rows[j];
			double v, here = gemm_time(r, d, l);
			cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
			cr_expect(fabs(v * 1e-6 / here - 1) < 1e-12, "%s line %d: validate %.6g us, "
				  "here %.6g us", t[i].path, r->line, v, here * 1e6);
			mean += fabs(here / (r->measured * 1e-6) - 1) / t[i].n;
		}
		cr_expect_lt(mean, 0.10, "%s: mean absolute error %.1f%%", t[i].path, 100 * mean);
		cr_log_info("%s: %.1f%%", t[i].path, 100 * mean);
	}
}

/* Loads GPU gpu and its tables, fits its GEMM values on them into f and
 * checks every row as karat validate prices it with the shipped values. */
static void fit_gpu(const char *gpu, const char *const *paths, int nt, struct kdevice *d,
		    struct gemm_fit *f)
{
	struct vtable t[4];
	struct klink l;
	struct kerr err;
	cr_assert_leq(nt, 4);
	for (int i = 0; i < nt; i++)
		cr_assert_eq(vtable_read(zoo_path(paths[i]), &t[i], &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_device(gpu, d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link(d->link, &l, NULL, &err), 0, "%s", err.msg);
	fit_gemms(d, &l, t, nt, f);
	expect_tables(d, &l, t, nt);
	for (int i = 0; i < nt; i++)
		vtable_free(&t[i]);
}

/* The MI300X: AMD's max-achievable-FLOPs GEMMs (one BF16 and one FP8
 * shape) and Azure's hipBLASLt FP8 table (nine shapes). */
Test(gemm_fit, the_mi300x_gemms_are_the_fit_of_its_tables)
{
	static const char *const paths[] = {"validation/gemm-mi300x-rocm-maf.csv",
					    "validation/gemm-mi300x-azure.csv"};
	struct kdevice d;
	struct gemm_fit f;
	fit_gpu("mi300x", paths, 2, &d, &f);
	cr_assert_gt(d.eff_gemm_fp8, 0, "FP8 has its own efficiency");
	EXPECT_EFF(d.eff_c[OC_GEMM], f.c16, "gemm_compute");
	EXPECT_EFF(d.eff_gemm_fp8, f.c8, "gemm_compute_fp8");
	EXPECT_EFF(d.eff_m[OC_GEMM], f.mem, "gemm_memory");
	cr_assert_geq(f.nfix, 2);
	EXPECT_FIXED(d.fixed[OC_GEMM], f.fix, "gemm_fixed");
	cr_expect_eq(d.eff_c[OC_SCAN], d.eff_gemm_fp8, "scan_compute: the FP8 GEMMs'");
}

/* The GB300 (a Blackwell Ultra GPU): Azure's cuBLASLt FP8 and FP4 table. */
Test(gemm_fit, the_gb300_gemms_are_the_fit_of_its_table)
{
	static const char *const paths[] = {"validation/gemm-gb300-azure.csv"};
	struct kdevice d;
	struct gemm_fit f;
	fit_gpu("gb300", paths, 1, &d, &f);
	EXPECT_EFF(d.eff_c[OC_GEMM], f.c8, "gemm_compute (FP8)");
	EXPECT_EFF(d.eff_gemm_fp4, f.c4, "gemm_compute_fp4");
	EXPECT_EFF(d.eff_m[OC_GEMM], f.mem, "gemm_memory");
	cr_assert(f.nfix >= 2 && f.nfix4 >= 2, "%d FP8 and %d FP4 rows", f.nfix, f.nfix4);
	EXPECT_FIXED(d.fixed[OC_GEMM], f.fix, "gemm_fixed");
	EXPECT_FIXED(d.gemm_fixed_fp4, f.fix4, "gemm_fixed_fp4");
	cr_expect_eq(d.eff_c[OC_SCAN], d.eff_c[OC_GEMM], "scan_compute: the FP8 GEMMs'");
}

/* The MI355X: AMD's hipBLASLt FP8 GEMMs at 4,096 and 8,192 and its BF16
 * decode GEMMs (K 7,168, N 64-1,024, M 1-128, the AITER FlyDSL kernels). */
Test(gemm_fit, the_mi355x_gemms_are_the_fit_of_its_table)
{
	static const char *const paths[] = {"validation/gemm-mi355x-amd.csv"};
	struct kdevice d;
	struct gemm_fit f;
	fit_gpu("mi355x", paths, 1, &d, &f);
	cr_assert_gt(d.eff_gemm_fp8, 0, "FP8 has its own efficiency");
	EXPECT_EFF(d.eff_gemm_fp8, f.c8, "gemm_compute_fp8");
	cr_assert_geq(f.nfix, 30, "%d rows the fixed time dominates", f.nfix);
	EXPECT_FIXED(d.fixed[OC_GEMM], f.fix, "gemm_fixed");
	cr_expect_eq(d.eff_c[OC_SCAN], d.eff_gemm_fp8, "scan_compute: the FP8 GEMMs'");
}

/* The B200: DeepGEMM's and cuBLASLt's MXF4 GEMMs (seven shapes, M
 * 128-8,192, the faster of the two kept).  Few rows are long enough for
 * the two-step fit above to hold (two compute-bound, none memory-bound,
 * and the fixed time is a twentieth of the longest), so gemm_compute_fp4
 * and gemm_fixed_fp4 are fitted together: the pair with the least mean
 * absolute relative error over the table, on a grid of 0.005 and 0.05
 * us.  Its FP8 and memory values stay the GB200's. */
Test(gemm_fit, the_b200_fp4_gemms_are_the_fit_of_its_table)
{
	struct vtable t;
	struct klink l;
	struct kerr err;
	struct kdevice d, x;
	cr_assert_eq(vtable_read(zoo_path("validation/gemm-b200-deepgemm.csv"), &t, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(zoo_load_device("b200", &d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link(d.link, &l, NULL, &err), 0, "%s", err.msg);
	x = d;
	double best = INFINITY, bc = 0, bf = 0;
	for (int i = 0; i <= 80; i++)
		for (int j = 0; j <= 200; j++) {
			x.eff_gemm_fp4 = 0.45 + 0.005 * i, x.gemm_fixed_fp4 = (j * 0.05) * 1e-6;
			double e = 0;
			for (int r = 0; r < t.n; r++)
				e += fabs(gemm_time(&t.rows[r], &x, &l) / (t.rows[r].measured * 1e-6) - 1);
			if (e < best - 1e-12)
				best = e, bc = x.eff_gemm_fp4, bf = x.gemm_fixed_fp4;
		}
	cr_log_info("b200 fit: gemm_compute_fp4 %.3f, gemm_fixed_fp4 %.2f us, %.1f%%", bc, bf * 1e6,
		    100 * best / t.n);
	cr_expect(bc > 0.45 && bc < 0.85 && bf > 0 && bf < 10e-6, "the optimum is inside the grid");
	cr_expect(fabs(d.eff_gemm_fp4 - bc) < 1e-9, "gemm_compute_fp4: shipped %g, fit %.3f",
		  d.eff_gemm_fp4, bc);
	cr_expect(fabs(d.gemm_fixed_fp4 / bf - 1) < 1e-9, "gemm_fixed_fp4: shipped %g, fit %g",
		  d.gemm_fixed_fp4, bf);
	expect_tables(&d, &l, &t, 1);
	vtable_free(&t);
}
