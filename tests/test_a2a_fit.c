/* test_a2a_fit.c: the expert all-to-all's floor and transfer overlap
 * (link.a2a_overlap, issue 28 item 4), fitted on Perplexity's published
 * dispatch and combine times (validation/a2a-fabric-lib-h100.csv: 128
 * tokens per GPU, EP8 on NVLink 4, EP16-64 across ConnectX-7).  A row's
 * time is x + f - a min(x, f) (x: its bytes over the link, f: the floor),
 * linear in a; a is the least-squares fit of the relative errors
 * (gsl_fit_mul), per link: NVLink 4 on the one-node rows, InfiniBand NDR
 * on the others.  Checked: the shipped value is the fit, the fit lowers
 * the table's error against adding the two, and `karat validate` prices
 * each row as computed here. */
#include <criterion/criterion.h>
#include <gsl/gsl_fit.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

Test(a2a_fit, the_shipped_overlap_is_the_fit_of_the_table)
{
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_read(zoo_path("validation/a2a-fabric-lib-h100.csv"), &t, &err), 0, "%s",
		     err.msg);
	struct klink up, out;
	cr_assert_eq(zoo_load_link("nvlink4", &up, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link("ib-ndr", &out, NULL, &err), 0, "%s", err.msg);
	const double gpn = 8;
	double x[2][8], y[2][8], err_add = 0, err_fit = 0;
	size_t n[2] = {0, 0};
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		double bytes, meas = r->measured * 1e-6;
		cr_assert_eq(valid_a2a_bytes(r, 0, &bytes, &err), 0, "%s", err.msg);
		/* DeepSeek-V3: 128 tokens x 8 experts of 7,168 FP8 values and 56
		 * FP32 scales (dispatch) or 7,168 BF16 values (combine), the
		 * (G - 1) / G that leave the GPU */
		double row = r->kernel == VK_DISPATCH ? 7168 + 56 * 4 : 7168 * 2;
		cr_expect(fabs(bytes - 128 * 8 * row * (r->gpus - 1) / r->gpus) <= 1e-9 * bytes,
			  "line %d: %.6g bytes", r->line, bytes);
		int cross = r->gpus > gpn; /* the link whose overlap the row fits */
		int disp = r->kernel == VK_DISPATCH;
		struct klink u = up, o = out, *l = cross ? &o : &u;
		l->a2a_overlap = 0;
		double t0 = roofline_a2a_nodes(&u, &o, r->gpus, gpn, 1, bytes, disp);
		l->a2a_overlap = 1;
		double t1 = roofline_a2a_nodes(&u, &o, r->gpus, gpn, 1, bytes, disp);
		cr_assert_lt(n[cross], 8);
		x[cross][n[cross]] = (t0 - t1) / meas, y[cross][n[cross]++] = (t0 - meas) / meas;
		/* the shipped links, as karat validate prices the row */
		double shipped = roofline_a2a_nodes(&up, &out, r->gpus, gpn, 1, bytes, disp), v;
		cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
		cr_expect(fabs(v * 1e-6 - shipped) <= 1e-9 * shipped, "line %d: validate %.6g us, "
			  "here %.6g us", r->line, v, shipped * 1e6);
		err_add += fabs(t0 - meas) / meas / t.n;
		err_fit += fabs(shipped - meas) / meas / t.n;
	}
	cr_assert(n[0] >= 2 && n[1] >= 2, "rows on one node %zu, across %zu", n[0], n[1]);
	const struct klink *links[2] = {&up, &out};
	for (int c = 0; c < 2; c++) {
		double a, cov, sumsq;
		gsl_fit_mul(x[c], 1, y[c], 1, n[c], &a, &cov, &sumsq);
		cr_expect(fabs(a - links[c]->a2a_overlap) < 0.005, "%s: shipped %.3f, the fit %.3f",
			  c ? "ib-ndr" : "nvlink4", links[c]->a2a_overlap, a);
		cr_log_info("%s: a2a_overlap fit %.4f", c ? "ib-ndr" : "nvlink4", a);
	}
	cr_expect_lt(err_fit, 0.5 * err_add, "mean error %.3f fitted, %.3f added", err_fit,
		     err_add);
	cr_log_info("mean absolute error: %.1f%% added, %.1f%% fitted", 100 * err_add,
		    100 * err_fit);
	vtable_free(&t);
}

/* XGMI 4 (MI355X), fitted on mori's intra-node kernels in
 * validation/a2a-mori-mi355x.csv (8 x MI355X, EP8, DeepSeek-V3's shapes:
 * FP8 dispatch at 8-256 tokens a GPU, BF16 combine at 8-2,048).  These
 * kernels send a token once to each GPU holding any of its experts
 * (link.a2a_sends = gpu).  Their times are the floor plus the transfer,
 * added (a2a_overlap 0): linear in the dispatch floor, the combine floor
 * and the seconds per byte, which the least squares of relative error
 * (weights 1 / t^2, gsl_multifit_wlinear) gives.  Checked: the shipped
 * xgmi4 values are the fit, validate prices every row so, and the
 * table's mean error falls from the NVLink 4 values' 45% to under 5%. */
Test(a2a_fit, the_xgmi4_floors_and_efficiency_are_the_fit_of_mori)
{
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_read(zoo_path("validation/a2a-mori-mi355x.csv"), &t, &err), 0, "%s",
		     err.msg);
	struct klink l;
	cr_assert_eq(zoo_load_link("xgmi4", &l, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(l.a2a_sends, A2A_PER_GPU);
	cr_assert_eq(l.a2a_overlap, 0);
	cr_assert_geq(t.n, 10);
	cr_assert_leq(t.n, 64);
	double x[3 * 64], y[64], c[3], bytes[64];
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		cr_assert_eq(r->gpus, 8, "one node");
		cr_assert_eq(valid_a2a_bytes(r, 1, &bytes[i], &err), 0, "%s", err.msg);
		x[3 * i] = r->kernel == VK_DISPATCH, x[3 * i + 1] = r->kernel == VK_COMBINE;
		x[3 * i + 2] = bytes[i];
		y[i] = r->measured * 1e-6;
	}
	cr_assert_eq(fit_relative((size_t)t.n, 3, x, y, c), 0);
	double fd = c[0], fc = c[1], eff = 1 / (c[2] * l.bw);
	cr_log_info("xgmi4 fit: dispatch floor %.4g us, combine floor %.4g us, efficiency %.4g",
		    fd * 1e6, fc * 1e6, eff);
	cr_expect(fabs(l.a2a_floor_dispatch / fd - 1) < 0.005, "a2a_floor_dispatch: shipped %g, "
		  "fit %g", l.a2a_floor_dispatch, fd);
	cr_expect(fabs(l.a2a_floor / fc - 1) < 0.005, "a2a_floor: shipped %g, fit %g", l.a2a_floor,
		  fc);
	cr_expect(fabs(l.efficiency / eff - 1) < 0.005, "efficiency: shipped %g, fit %g",
		  l.efficiency, eff);
	double mean = 0, was = 0;
	for (int i = 0; i < t.n; i++) {
		const struct vrow *r = &t.rows[i];
		double meas = r->measured * 1e-6, v, per_expert;
		double want = (r->kernel == VK_DISPATCH ? l.a2a_floor_dispatch : l.a2a_floor) +
			      bytes[i] / (l.bw * l.efficiency);
		cr_assert_eq(valid_model(r, &v, &err), 0, "%s", err.msg);
		cr_expect(fabs(v * 1e-6 / want - 1) < 1e-9, "line %d: validate %.6g us, here %.6g us",
			  r->line, v, want * 1e6);
		mean += fabs(want / meas - 1) / t.n;
		/* before: NVLink 4's floor and overlap, 0.8 of the bandwidth, a
		 * copy per expert */
		cr_assert_eq(valid_a2a_bytes(r, 0, &per_expert, &err), 0, "%s", err.msg);
		double xb = per_expert / (l.bw * 0.8), f = 41.6e-6;
		was += fabs((xb + f - 0.39 * fmin(xb, f)) / meas - 1) / t.n;
	}
	cr_log_info("xgmi4: mean absolute error %.1f%% (NVLink 4's values: %.1f%%)", 100 * mean,
		    100 * was);
	cr_expect_lt(mean, 0.05, "mean absolute error %.1f%%", 100 * mean);
	cr_expect_gt(was, 5 * mean, "before %.1f%%, the fit %.1f%%", 100 * was, 100 * mean);
	vtable_free(&t);
}
