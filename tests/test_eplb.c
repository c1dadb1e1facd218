/* test_eplb.c: expert load imbalance (system.eplb, system.moe_imbalance;
 * issue 28 item 5).  The busiest GPU receives, computes and returns f
 * times the mean routed token copies (f = 1.109 with a load balancer,
 * 2.564 without: TensorRT-LLM tech blog 4, Table 1); the HBM of the
 * redundant expert copies is charged where moe_redundant_per_gpu says. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"
#include "solve/plan.h" /* internal: the plan's weights */
#include "solve_helpers.h"

Test(eplb, the_published_figures_and_an_override)
{
	struct ksystem s;
	memset(&s, 0, sizeof s);
	cr_expect_eq(s.eplb, EPLB_ON, "on is the default");
	cr_expect_float_eq(system_moe_imbalance(&s), 1.109, 1e-12);
	cr_expect_float_eq(system_moe_redundant(&s), 0, 1e-12, "copies not charged by default");
	s.eplb = EPLB_OFF;
	cr_expect_float_eq(system_moe_imbalance(&s), 2.564, 1e-12);
	s.moe_imbalance = 1.3;
	cr_expect_float_eq(system_moe_imbalance(&s), 1.3, 1e-12, "a given figure wins");
}

/* DeepSeek-V3.2: 58 MoE layers and its MTP module's, each expert 3 x 7168
 * x 2048 FP8 weights: 59 x 44,040,192 B = 2,598,371,328 B per copy. */
Test(eplb, a_redundant_copy_costs_one_expert_of_hbm)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-only", 32768, NULL);
	cr_expect_float_eq(model_expert_bytes(&s.m), 2598371328.0, 0.5);
	double w = model_weight_bytes(&s.m, s.sys.gpus);
	struct plan *p = plan(&s);
	cr_expect_float_eq(p->weights, w, 1, "by default no copy is charged");
	plan_free(p);
	s.sys.moe_redundant = 1;
	p = plan(&s);
	cr_expect_float_eq(p->weights, w + 2598371328.0, 1, "one copy per GPU");
	plan_free(p);
	s.sys.moe_redundant = 2;
	p = plan(&s);
	cr_expect_float_eq(p->weights, w + 2 * 2598371328.0, 1, "two copies");
	plan_free(p);
}

/* In one MoE layer the dispatch and combine bytes and the experts' FLOPs
 * scale by f; no other operator moves. */
Test(eplb, the_busiest_gpu_carries_f_times_the_mean)
{
	static struct step a, b;
	struct kmodel m;
	struct kbatch ka = moe_layer(&m, "deepseek-v3.2", 512, 32), kb = ka;
	kb.imbalance = 1.109;
	build_pair(&m, &ka, &kb, &a, &b);
	int seen = 0;
	for (int i = 0; i < a.n; i++) {
		const struct op_cost *x = &a.op[i], *y = &b.op[i];
		double fb = 1, ff = 1;
		if (x->kind == OP_DISPATCH || x->kind == OP_COMBINE)
			fb = 1.109, seen++;
		if (x->kind == OP_EXPERTS)
			ff = 1.109, seen++;
		cr_expect_float_eq(y->flops, ff * x->flops, 1e-9 * x->flops + 1e-9, "%s FLOPs",
				   op_table[x->kind].name);
		if (x->kind != OP_EXPERTS) /* its weights are read whatever the tokens */
			cr_expect_float_eq(y->bytes, fb * x->bytes, 1e-9 * x->bytes + 1e-9,
					   "%s bytes", op_table[x->kind].name);
	}
	cr_expect_eq(seen, 3, "dispatch, experts and combine");
}

/* A design the experts bound: more imbalance never serves more. */
Test(eplb, more_imbalance_never_serves_more)
{
	static struct setup s;
	double last = INFINITY;
	const double f[] = {1, 1.109, 1.5, 2.564};
	for (int i = 0; i < 4; i++) {
		load(&s, "deepseek-v3.2", "gpu-only", 4096, NULL);
		s.sys.moe_imbalance = f[i];
		struct plan *p = plan(&s);
		struct result r = eval(p, 256, 1);
		cr_assert(r.feasible, "%s", r.reason);
		cr_expect_leq(r.throughput, last, "f %g: %g tok/s after %g", f[i], r.throughput, last);
		cr_expect(i == 0 || r.throughput < last, "f %g moves the step", f[i]);
		last = r.throughput;
		plan_free(p);
	}
}
