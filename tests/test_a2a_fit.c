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
		cr_assert_eq(valid_a2a_bytes(r, &bytes, &err), 0, "%s", err.msg);
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
