/* test_tp.c: tensor-parallel attention on GPU-only (system.attention_tp,
 * issue 29 item 6): t GPUs of a node share each attention layer by KV
 * heads, priced as one unit of t GPUs that holds the replicated weights
 * once and pays an all-reduce per layer on the scale-up link. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cost/tp.h"
#include "helpers.h"
#include "karat.h"
#include "solve/plan.h" /* internal: the unit's weights and GPU phases */
#include "solve_helpers.h"

/* NVLink 4: a 2.3 us floor, 450 GB/s at 0.8.  Four GPUs all-reduce 1 MB:
 * each sends 2 x 3/4 x 1 MB = 1.5 MB, 1.5e6 / 360e9 = 4.1667 us, plus the
 * floor: 6.4667 us.  One GPU pays nothing. */
Test(tp, the_allreduce_by_hand)
{
	struct klink up;
	struct kerr err;
	cr_assert_eq(zoo_load_link("nvlink4", &up, NULL, &err), 0, "%s", err.msg);
	cr_expect_float_eq(up.allreduce_floor, 2.3e-6, 1e-15);
	cr_expect_float_eq(tp_allreduce_bytes(4, 1e6), 1.5e6, 1e-6);
	cr_expect_float_eq(tp_allreduce_time(&up, 4, 1e6), 2.3e-6 + 1.5e6 / 360e9, 1e-15);
	cr_expect_float_eq(tp_allreduce_time(&up, 4, 1e6), 6.46667e-6, 1e-11);
	cr_expect_eq(tp_allreduce_time(&up, 1, 1e6), 0);
	cr_expect_eq(tp_allreduces(1), 1, "a MoE layer: reduce-scatter and all-gather, one");
	cr_expect_eq(tp_allreduces(0), 2, "a dense FFN adds its own");
}

/* Weights per GPU are R + X / G (R replicated, X the experts), so R and
 * X follow from two GPU counts: X = 8 (w(4) - w(8)), R = 2 w(8) - w(4).
 * Four GPUs of eight in a unit: each holds R / 4 + X / 8 and its
 * redundant expert copy (system.eplb), and the unit four GPUs' capacity
 * less that. */
Test(tp, a_unit_holds_the_replicated_weights_once)
{
	static struct setup s;
	load(&s, "minimax-m3", "gpu-only", 0, "agentic");
	double w8 = model_weight_bytes(&s.m, 8), w4 = model_weight_bytes(&s.m, 4);
	double X = 8 * (w4 - w8), R = 2 * w8 - w4;
	cr_assert_gt(R, 10e9, "MiniMax-M3 replicates over 10 GB per GPU (%g)", R);
	s.sys.attention_tp = 4;
	s.sys.moe_redundant = 1; /* each GPU's copy counts four times in a unit */
	struct plan *p = plan(&s);
	cr_expect_eq(p->gpus, 2, "8 GPUs are 2 units");
	cr_expect_eq(p->tp, 4);
	double one = system_moe_redundant(&s.sys) * model_expert_bytes(&s.m);
	cr_expect_gt(one, 0);
	cr_expect_float_eq(p->weights / 4, R / 4 + X / 8 + one, 1e-9 * w8, "per GPU %g, by hand %g",
			   p->weights / 4, R / 4 + X / 8 + one);
	double cap = device_cache_capacity(&s.gpu); /* one GPU's, the reserve a share */
	cr_expect_float_eq(p->free_gpu, 4 * cap - p->weights, 1e-9 * cap);
	cr_expect_float_eq(p->d.gpu->tdp, 4 * s.gpu.tdp, 1e-9, "the unit draws four GPUs' TDP");
	cr_expect_float_eq(s.gpu.tdp, 700, 1e-9, "the design's own GPU is untouched");
	plan_free(p);
}

/* A 1 ms higher all-reduce floor adds 1 ms per all-reduce: one per MoE
 * layer, two per dense-FFN layer, and in the tail one per MTP draft pass
 * and one for the gather after the LM head.  No other phase moves. */
Test(tp, each_layer_pays_its_allreduces)
{
	static struct setup s;
	const double *ph[2];
	struct plan *p[2];
	load(&s, "minimax-m3", "gpu-only", 0, "agentic");
	s.sys.attention_tp = 4;
	for (int k = 0; k < 2; k++) {
		s.up.allreduce_floor = 2.3e-6 + k * 1e-3;
		p[k] = plan(&s);
		cr_assert_not_null(ph[k] = plan_gpu_phases(p[k], p[k]->ws, 16), "%s",
				   p[k]->ws->fail.msg);
	}
	int nk = p[0]->nkinds;
	for (int k = 0; k <= nk; k++)
		for (int x = 0; x < PLAN_PH_STRIDE; x++) {
			double a = ph[0][k * PLAN_PH_STRIDE + x], b = ph[1][k * PLAN_PH_STRIDE + x];
			double want = 0;
			if (k < nk && x == PH_POST)
				want = 1e-3 * tp_allreduces(p[0]->kinds[k].moe);
			if (k == nk && x == PH_TAIL)
				want = 1e-3 * (s.d.mtp * design_mtp_layers(&s.d) + 1);
			if (x == PLAN_PH_ENERGY)
				continue; /* the floor costs no bytes */
			cr_expect_float_eq(b - a, want, 1e-12, "kind %d phase %d: +%g s, by hand +%g",
					   k, x, b - a, want);
		}
	cr_expect(s.d.mtp > 0, "the tail's MTP passes are counted");
	int dense = 0;
	for (int k = 0; k < nk; k++)
		dense += !p[0]->kinds[k].moe;
	cr_expect_gt(dense, 0, "MiniMax-M3's 3 dense-FFN layers pay two each");
	plan_free(p[0]), plan_free(p[1]);
}

/* The all-to-all stays one GPU's: a unit of four at 8 requests sends, per
 * GPU, what a data-parallel GPU at 2 requests sends, to the same 7 other
 * GPUs, so dispatch and combine take the same time. */
Test(tp, the_all_to_all_is_priced_per_gpu)
{
	static struct setup s;
	const double *ph[2];
	struct plan *p[2];
	for (int k = 0; k < 2; k++) {
		load(&s, "minimax-m3", "gpu-only", 0, "agentic");
		s.sys.attention_tp = k ? 4 : 1;
		p[k] = plan(&s);
		cr_assert_not_null(ph[k] = plan_gpu_phases(p[k], p[k]->ws, k ? 8 : 2), "%s",
				   p[k]->ws->fail.msg);
	}
	for (int k = 0; k < p[0]->nkinds; k++)
		for (int x = PH_DISP; x <= PH_COMB; x += PH_COMB - PH_DISP) {
			double a = ph[0][k * PLAN_PH_STRIDE + x], b = ph[1][k * PLAN_PH_STRIDE + x];
			cr_expect(p[0]->kinds[k].moe ? a > 0 : a == 0, "kind %d: %g s", k, a);
			cr_expect_float_eq(b, a, 1e-12 * a, "kind %d phase %d: %g s, one GPU's %g s",
					   k, x, b, a);
		}
	plan_free(p[0]), plan_free(p[1]);
}

static int refused(const char *model, const char *system, const char *set, const char *why)
{
	static struct design_parts dp;
	struct design_spec s = DESIGN_SPEC_INIT;
	const char *sets[] = {set};
	struct kerr err;
	s.model = model, s.system = system, s.workload = "agentic";
	s.sets = sets, s.nsets = 1;
	int rc = design_assemble(&s, &dp, &err);
	design_free(&dp);
	cr_expect(rc != 0 && strstr(err.msg, why) != NULL, "%s on %s with %s: rc %d, '%s'", model,
		  system, set, rc, rc ? err.msg : "");
	return rc;
}

/* What tensor-parallel attention cannot run is refused with its reason. */
Test(tp, what_cannot_split_is_refused)
{
	refused("deepseek-v3.2", "gpu-only", "system.attention_tp=2", "MLA");
	refused("minimax-m3", "gpu-only", "system.attention_tp=8", "4 KV heads");
	refused("minimax-m3", "gpu-only", "system.attention_tp=3", "divide");
	refused("minimax-m3", "gpu-karat", "system.attention_tp=2", "GPU-only");
	refused("minimax-m3", "gpu-only", "system.attention_tp=2.5", "whole");
	static struct setup s;
	load(&s, "minimax-m3", "gpu-only", 0, "agentic");
	s.sys.attention_tp = 2;
	s.up.allreduce_floor = 0;
	struct kerr err;
	struct plan *p = plan_new(&s.d, &err);
	cr_expect_null(p);
	cr_expect(strstr(err.msg, "allreduce_floor") != NULL, "%s", err.msg);
	plan_free(p);
}

/* MiniMax-M3 on agentic fills HBM at 8 GPUs: splitting its 10+ GB of
 * replicated attention weights four ways leaves room for more requests
 * (measured: 20 -> 27). */
Test(tp, splitting_the_attention_admits_more_where_hbm_is_full)
{
	static struct setup s;
	double batch[2];
	for (int k = 0; k < 2; k++) {
		load(&s, "minimax-m3", "gpu-only", 0, "agentic");
		s.sys.attention_tp = k ? 4 : 1;
		struct plan *p = plan(&s);
		struct result r;
		struct kerr err;
		cr_assert_eq(plan_solve(p, 1, &r, &err), 0, "%s", err.msg);
		cr_assert(r.feasible, "%s", r.reason);
		cr_expect_eq(r.bound, PB_HBM, "HBM bounds it (%d)", r.bound);
		batch[k] = r.batch;
		plan_free(p);
	}
	cr_expect_gt(batch[1], batch[0], "%g split four ways, %g data-parallel", batch[1], batch[0]);
}
