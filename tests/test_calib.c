/* test_calib.c: how well an answer is calibrated (issue 28 item 2): the
 * share of a step's GPU work priced by values fitted on that GPU's own
 * measurements, by hand, and what moves it. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

#include "solve_helpers.h"

/* GPU-only DeepSeek-V3.2 on 8 H800s, every request at 32K, one
 * micro-batch: the H800's GEMM class is fitted on its own DeepGEMM table
 * (efficiencies, fixed time, overlap, tile depth), nothing else is.  So
 * the share is the whole step's GEMM-class operators (karat ops' step of
 * 8 requests per GPU) over the GPU's busy time.  On the H200, which
 * carries the H800's fits over, it is 0; an override of a fitted value
 * is no fit. */
Test(calib, fitted_share_by_hand)
{
	static struct setup s;
	static struct step st;
	struct kerr err;
	const char *sets[] = {"system.gpu=h800"};
	struct design_spec spec = DESIGN_SPEC_INIT;
	spec.model = "deepseek-v3.2", spec.system = "gpu-only", spec.context = 32768;
	spec.sets = sets, spec.nsets = 1, spec.samples = 8;
	cr_assert_eq(design_assemble(&spec, &s, &err), 0, "%s", err.msg);
	cr_assert(s.gpu.fit[OC_GEMM] && !s.gpu.fit[OC_ATTENTION] && !s.gpu.fit[OC_SCAN]);
	struct plan *p = plan(&s);
	struct result r = eval(p, 64, 1);
	struct kbatch kb = {.requests = 64, .gpus = 8, .context = 32768, .mtp = s.d.mtp,
			    .sp = s.d.sp, .imbalance = system_moe_imbalance(&s.sys)};
	cr_assert_eq(step_build(&s.m, &kb, &st, &err), 0, "%s", err.msg);
	double gemm = 0;
	for (int i = 0; i < st.n; i++) {
		struct op_cost *o = &st.op[i];
		if (o->side != SIDE_GPU || op_table[o->kind].cls != OC_GEMM)
			continue;
		roofline_op(o, &s.gpu, &s.up);
		gemm += o->count * o->time;
	}
	cr_expect(near(r.gpu_fitted, gemm / r.busy[RES_GPU], 1e-9), "share %g, by hand %g / %g",
		  r.gpu_fitted, gemm, r.busy[RES_GPU]);
	cr_expect(r.gpu_fitted > 0.1 && r.gpu_fitted < 1, "%g", r.gpu_fitted);
	plan_free(p);
	design_free(&s);
	const char *sets2[] = {"system.gpu=h800", "gpu.efficiency.gemm_compute=0.72"};
	spec.sets = sets2, spec.nsets = 2;
	cr_assert_eq(design_assemble(&spec, &s, &err), 0, "%s", err.msg);
	cr_expect(!s.gpu.fit[OC_GEMM], "a value set by an override is not the fit");
	design_free(&s);
	spec.sets = NULL, spec.nsets = 0; /* the H200 */
	cr_assert_eq(design_assemble(&spec, &s, &err), 0, "%s", err.msg);
	p = plan(&s);
	r = eval(p, 64, 1);
	cr_expect(r.gpu_fitted == 0, "the H200 carries its fits over: %g", r.gpu_fitted);
	plan_free(p);
	design_free(&s);
}

/* A link's fit: NVLink 4's all-to-all floor is measured but its
 * efficiency carried over, so the link is not fitted; one whose values
 * are both fitted is, until an override sets one of them. */
Test(calib, a_link_is_fitted_when_its_values_are)
{
	struct klink l;
	struct kerr err;
	cr_assert_eq(zoo_load_link("nvlink4", &l, NULL, &err), 0, "%s", err.msg);
	cr_expect(!l.fitted, "its efficiency is the H800's, carried over");
	const char *path = tmp_ini_str(0, "[link]\nname = x ; src: t\nbandwidth = 450 GB/s ; src: t\n"
				       "latency = 1 us ; src: t\nefficiency = 0.8 ; fitted: t\n"
				       "energy = 1 pJ/bit ; src: t\na2a_floor = 40 us ; fitted: t\n");
	cr_assert_eq(zoo_load_link(path, &l, NULL, &err), 0, "%s", err.msg);
	cr_expect(l.fitted);
	struct override ov;
	cr_assert_eq(override_parse("scaleup_link.link.efficiency=0.7", &ov, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(override_apply(&ov, &l, &err), 0, "%s", err.msg);
	cr_expect(!l.fitted && l.efficiency == 0.7);
}

/* A fitted value's data: the tables in its fit clause (up to the first
 * ';', ',' or '('), without their folder; a table the comment cites
 * after that is a remark, and a value not fitted names none. */
Test(calib, fit_tables_are_the_fit_clause_s)
{
	char t[4][CAL_TABLE_NAME];
	cr_expect_eq(cal_fit_tables("fitted: validation/a.csv and b.csv (x, validation/c.csv)", t, 4), 2);
	cr_expect_str_eq(t[0], "a.csv");
	cr_expect_str_eq(t[1], "b.csv");
	cr_expect_eq(cal_fit_tables("fitted: validation/x-1.csv, the fit (rank zero's, y.csv)", t, 4), 1);
	cr_expect_str_eq(t[0], "x-1.csv");
	cr_expect_eq(cal_fit_tables("fitted: validation/p.csv; src: q.csv", t, 4), 1);
	cr_expect_str_eq(t[0], "p.csv");
	cr_expect_eq(cal_fit_tables("fitted: validation/a.csv and validation/b.csv", t, 1), 1,
		     "at most max");
	cr_expect_eq(cal_fit_tables("fitted: pplx-kernels README (EP8 over NVLink 4)", t, 4), 0);
	cr_expect_eq(cal_fit_tables("sibling: h800 (validation/deepgemm-h800.csv)", t, 4), 0);
	cr_expect_eq(cal_fit_tables("src: validation/z.csv", t, 4), 0);
	cr_expect_eq(cal_fit_tables("fitted:validation/n.csv", t, 4), 1);
	cr_expect_str_eq(t[0], "n.csv");
	cr_expect_eq(cal_fit_tables("fitted: the data in notcsv", t, 4), 0);
}
