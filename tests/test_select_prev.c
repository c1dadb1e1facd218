/* test_select_prev.c: a top-k seeded by the previous step's k-th score
 * (an algorithm's select_prev = P, issue 29 item 1).  It makes P full
 * passes over the scores where the device's own kernel makes
 * select.passes, so its per-score time scales by P / passes; its fixed
 * time, its bytes and the set it selects stay.  A device whose kernel
 * already makes fewer passes (KARAT's cores: one filter pass) gains
 * nothing.  By hand on the B200: 8 rows of 131,072 scores.  The one-row
 * kernel takes 4.13 us fixed plus one row's pass, 131,072 / 9.05e9 =
 * 14.483 us (above 8 x 131,072 / 3.85e11 = 2.724 us): 18.613 us.  The
 * split kernel takes 7.94 us fixed plus the throughput, 2.724 us (above
 * the pass over 8 SMs, 1.810 us): 10.664 us, the faster.  Seeded with
 * P = 1.5 of the radix kernel's 4 passes, each per-score time x 0.375:
 * 4.13 + 5.431 = 9.561 us against 7.94 + 1.021 = 8.961 us. */
#include <criterion/criterion.h>
#include <math.h>

#include "helpers.h"
#include "karat.h"
#include "solve_helpers.h"

static double topk_time(const char *dev, double passes)
{
	struct kdevice d;
	struct kerr err;
	cr_assert_eq(zoo_load_device(dev, &d, NULL, &err), 0, "%s", err.msg);
	struct op_cost o = {.kind = OP_TOPK, .base = OP_TOPK, .cls = op_table[OP_TOPK].cls,
			    .side = op_table[OP_TOPK].side, .dt = DT_FP32, .count = 1,
			    .flops = 8 * 131072.0, .bytes = 0, .rows = 8, .passes = passes};
	roofline_op(&o, &d, NULL);
	return o.time;
}

Test(select_prev, the_seeded_selection_by_hand)
{
	double through = 8 * 131072 / 3.85e11;
	cr_expect(near(topk_time("b200", 0), 7.94e-6 + through, 1e-12), "%.17g",
		  topk_time("b200", 0));
	cr_expect(near(topk_time("b200", 1.5), 7.94e-6 + through * 1.5 / 4, 1e-12), "%.17g",
		  topk_time("b200", 1.5));
	cr_expect(near(topk_time("b200", 0), 10.664e-6, 1e-4), "%.17g", topk_time("b200", 0));
	cr_expect(near(topk_time("b200", 1.5), 8.961e-6, 1e-4), "%.17g", topk_time("b200", 1.5));
}

Test(select_prev, fewer_passes_never_cost_more_and_more_never_help)
{
	double last = 0;
	for (double p = 0.5; p <= 4; p += 0.5) { /* monotone in the passes */
		double t = topk_time("b200", p);
		cr_expect(t >= last, "%g passes: %g below %g", p, t, last);
		last = t;
	}
	/* as many passes as the kernel's own, or more: its own time */
	cr_expect_eq(topk_time("b200", 4), topk_time("b200", 0));
	cr_expect_eq(topk_time("b200", 6), topk_time("b200", 0));
	/* cores that already filter in one pass gain nothing */
	cr_expect_eq(topk_time("karat", 1.5), topk_time("karat", 0));
}

Test(select_prev, the_algorithm_keeps_what_it_ranks_and_passes_its_count_on)
{
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("deepseek-v3.2", &m, NULL, &err), 0, "%s", err.msg);
	static struct sparse_cfg flat, seeded;
	static struct step a, b;
	cr_assert_eq(sparse_parse_spec("dsa", &m.sp, &flat, &err), 0, "%s", err.msg);
	cr_assert_eq(sparse_parse_spec("dsa:select_prev=1.5", &m.sp, &seeded, &err), 0, "%s",
		     err.msg);
	struct kbatch ka = {.requests = 4, .gpus = 1, .context = 131072, .sp = &flat};
	struct kbatch kb = ka;
	kb.sp = &seeded;
	cr_assert_eq(step_build(&m, &ka, &a, &err), 0, "%s", err.msg);
	cr_assert_eq(step_build(&m, &kb, &b, &err), 0, "%s", err.msg);
	int found = 0;
	for (int i = 0; i < a.n; i++)
		if (a.op[i].kind == OP_TOPK) {
			found = 1;
			cr_expect_eq(a.op[i].passes, 0);
			cr_expect_eq(b.op[i].passes, 1.5);
			cr_expect_eq(b.op[i].flops, a.op[i].flops, "the same set is ranked");
			cr_expect_eq(b.op[i].bytes, a.op[i].bytes);
		}
	cr_expect(found);
	cr_expect_neq(sparse_parse_spec("dsa:select_prev=-1", &m.sp, &seeded, &err), 0);
}

/* As if every value of the GPU's file were fitted on it, so that what the
 * seeded selection assumes is all that moves its fitted share. */
static void fit_all(struct kdevice *d)
{
	for (int c = 0; c < OC_N; c++)
		d->fit[c] = 1;
	d->fit_select = 1;
}

/* Through the solver: GPU-only's step with the seeded selection is never
 * slower, and faster where its top-k costs anything; KARAT's is the same.
 * The GPU's fitted share falls where the GPU selects, not where KARAT's
 * cores do. */
Test(select_prev, the_solver_prices_it_where_the_selection_runs)
{
	static struct setup g, k;
	load(&g, "deepseek-v3.2", "gpu-only", 131072, NULL);
	fit_all(&g.gpu);
	struct plan *p = plan(&g);
	struct result base = eval(p, 16, 1);
	plan_free(p);
	g.sp.p[SP_SELECT_PREV] = 1.5;
	p = plan(&g);
	struct result seeded = eval(p, 16, 1);
	plan_free(p);
	cr_expect(seeded.tbt_mean < base.tbt_mean, "%g against %g", seeded.tbt_mean, base.tbt_mean);
	/* the GPU's selection now rests on an assumed pass count */
	cr_expect(base.gpu_fitted > 0 && seeded.gpu_fitted < base.gpu_fitted,
		  "fitted share %g against %g",
		  seeded.gpu_fitted, base.gpu_fitted);
	load(&k, "deepseek-v3.2", "gpu-karat", 131072, NULL);
	fit_all(&k.gpu);
	p = plan(&k);
	base = eval(p, 64, 1);
	plan_free(p);
	k.sp.p[SP_SELECT_PREV] = 1.5;
	p = plan(&k);
	seeded = eval(p, 64, 1);
	plan_free(p);
	cr_expect_eq(seeded.tbt_mean, base.tbt_mean);
	/* KARAT's cores select: the GPU's fitted share does not move */
	cr_expect(base.gpu_fitted > 0 && seeded.gpu_fitted == base.gpu_fitted,
		  "fitted share %g against %g", seeded.gpu_fitted, base.gpu_fitted);
}
