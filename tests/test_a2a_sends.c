/* test_a2a_sends.c: what an expert all-to-all sends of a token
 * (link.a2a_sends; issue 28 item 4).  Low-latency kernels send one copy
 * per routed expert; mori's intra-node kernels (and DeepEP's normal ones)
 * send a token once to each GPU that holds any of its experts.  With
 * DeepSeek-V3's 256 experts, 8 routed, on 8 GPUs of 32 experts each, a
 * GPU holds none of a token's experts with probability
 *   (224/256)(223/255)(222/254)(221/253)(220/252)(219/251)(218/250)(217/249)
 *   = 0.338168...,
 * so a token reaches 8 (1 - 0.338168) = 5.29465 GPUs on average, against 8
 * copies per expert; 7/8 of either leave its GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"
#include "solve/plan.h" /* internal: the phases a plan prices */
#include "solve_helpers.h"

Test(a2a_sends, copies_by_hand)
{
	double none = 1;
	for (int i = 0; i < 8; i++)
		none *= (224.0 - i) / (256.0 - i);
	cr_expect_float_eq(none, 0.3381684999521901, 1e-12);
	cr_expect_float_eq(step_a2a_sends(256, 8, 8, 1), 8 * (1 - none), 1e-12);
	cr_expect_float_eq(step_a2a_sends(256, 8, 8, 1), 5.294652, 1e-6);
	cr_expect_eq(step_a2a_sends(256, 8, 8, 0), 8, "one copy per routed expert");
	/* one GPU holds every expert: the token stays (what leaves is 0) */
	cr_expect_float_eq(step_a2a_sends(256, 8, 1, 1), 1, 1e-12);
	/* one expert per token: a GPU per copy either way */
	cr_expect_float_eq(step_a2a_sends(64, 1, 8, 1), 1, 1e-12);
	/* never more GPUs than copies, nor than GPUs */
	for (int P = 2; P <= 64; P *= 2)
		for (int k = 1; k <= 16; k *= 2) {
			double s = step_a2a_sends(256, k, P, 1);
			cr_expect_leq(s, fmin(k, P) + 1e-12, "k %d P %d: %g", k, P, s);
			cr_expect_gt(s, 0);
		}
}

/* In one MoE layer of DeepSeek-V3 on 8 GPUs the dispatch and combine move
 * 5.29465 / 8 of the bytes when the link's kernels send per GPU; no other
 * operator moves. */
Test(a2a_sends, per_gpu_sends_scale_the_dispatch_and_combine_only)
{
	static struct step a, b;
	struct kmodel m;
	struct kbatch ka = moe_layer(&m, "deepseek-v3", 1024, 8), kb = ka;
	kb.a2a_per_gpu = 1;
	build_pair(&m, &ka, &kb, &a, &b);
	int seen = 0;
	for (int i = 0; i < a.n; i++) {
		const struct op_cost *x = &a.op[i], *y = &b.op[i];
		double f = 1;
		if (x->kind == OP_DISPATCH || x->kind == OP_COMBINE)
			f = 5.294652 / 8, seen++;
		cr_expect_float_eq(y->bytes, f * x->bytes, 1e-6 * x->bytes + 1e-9, "%s bytes",
				   op_table[x->kind].name);
		cr_expect_float_eq(y->flops, x->flops, 1e-9 * x->flops + 1e-9);
	}
	cr_expect_eq(seen, 2);
	/* 128 tokens a GPU: 128 x 5.29465 x 7/8 copies of 7,168 BF16 values
	 * combine, of 7,168 FP8 values and 56 FP32 scales dispatch */
	for (int i = 0; i < b.n; i++)
		if (b.op[i].kind == OP_COMBINE)
			cr_expect_float_eq(b.op[i].bytes, 128 * 5.294652 * 7 / 8 * 7168 * 2, 1e3);
		else if (b.op[i].kind == OP_DISPATCH)
			cr_expect_float_eq(b.op[i].bytes, 128 * 5.294652 * 7 / 8 * (7168 + 224), 1e3);
}

/* A hierarchical route whose scale-out kernels send a copy per GPU, as
 * DeepEP's normal internode kernels do.  DeepSeek-V3.2 (8 of 256 experts)
 * on 16 GPUs, 2 nodes of 8: a token reaches 16 (1 - none16) GPUs, none16
 * = (240/256)(239/255)...(233/249) = 0.592295, so 6.52328, half of them
 * on the other node; it crosses to that node once unless all 8 experts
 * are on its own, 1 - (128/256)(127/255)...(121/249) = 0.996510 times.
 * The scale-out link carries 0.996510 / 3.26164 = 0.305524 of the copies
 * bound for the other node, and the scale-up link the copies for its own
 * node's GPUs (7/15 of the bytes) plus the 7/8 of the crossing copies the
 * receiving GPU forwards (the same roofline_a2a_nodes validate prices
 * DeepEP V2's hierarchical rows with, validation/a2a-deepep-v2-cx7.csv). */
Test(a2a_sends, hierarchical_with_per_gpu_scale_out_by_hand)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-only", 65536, NULL);
	s.sys.gpus = 16, s.sys.a2a_route = A2A_HIER, s.out.a2a_sends = A2A_PER_GPU;
	struct plan *p = plan(&s);
	double n16 = 1, n2 = 1;
	for (int i = 0; i < 8; i++)
		n16 *= (240.0 - i) / (256 - i), n2 *= (128.0 - i) / (256 - i);
	cr_expect(fabs(n16 - 0.592295) < 1e-6 && fabs(n2 - 0.00348994) < 1e-8);
	double cross = (1 - n2) / (16 * (1 - n16) / 2);
	cr_expect(fabs(cross - 0.305524) < 1e-6, "%.9g", cross);
	cr_expect(fabs(p->a2a_cross - cross) < 1e-14, "%.17g against %.17g", p->a2a_cross, cross);
	cr_expect_eq(p->a2a_per_gpu, 1);
	const double *ph = plan_gpu_phases(p, p->ws, 16);
	cr_assert_not_null(ph);
	int moe = p->nkinds - 1; /* the MoE layers' kind */
	struct step *st = &p->ws->step; /* its operators again, a copy per GPU */
	struct kbatch kb = {.requests = 16.0 * 16, .gpus = 16, .context = 1, .mtp = s.d.mtp,
			    .sp = s.d.sp, .gpu_only = 1, .part = STEP_LAYER, .kind = p->kinds[moe],
			    .imbalance = system_moe_imbalance(&s.sys), .a2a_per_gpu = 1};
	struct kerr err;
	cr_assert_eq(step_build(&s.m, &kb, st, &err), 0, "%s", err.msg);
	double want = 0;
	for (int i = 0; i < st->n; i++) {
		int j = st->op[i].kind == OP_DISPATCH ? 0 : st->op[i].kind == OP_COMBINE ? 1 : -1;
		if (j < 0)
			continue;
		double bytes = st->op[i].bytes, away = bytes * 8 / 15;
		cr_assert_gt(bytes, 0);
		want += fmax(roofline_a2a(&s.up, bytes * 7 / 15 + away * 7 / 8, j == 0),
			     roofline_a2a(&s.out, away * cross, j == 0));
	}
	double got = ph[moe * PLAN_PH_STRIDE + PH_DISP] + ph[moe * PLAN_PH_STRIDE + PH_COMB];
	cr_expect(fabs(got - want) <= 1e-12 * want, "%.9g s, by hand %.9g s", got, want);
	plan_free(p);
}

/* A dispatch or combine row of a validation table may say what its kernel
 * sends (mori's BF16 tables): the row's bytes are then priced in that
 * dtype, by hand 128 x 5.29465 x 7/8 copies of 7,168 BF16 values for the
 * dispatch (no FP8 scales) and of 7,168 FP8 values for an FP8 combine;
 * an empty dtype keeps the model's; a dtype that is none is refused. */
Test(a2a_sends, a_rows_dtype_is_what_its_all_to_all_sends)
{
	static const char csv[] =
		"kernel,model,device,dtype,batch,context,heads,q_len,topk,m,n,k,groups,gpus,"
		"measured,unit,source\n"
		"dispatch,deepseek-v3,mi355x,,128,,,,,,,,,8,40,us,s\n"
		"dispatch,deepseek-v3,mi355x,bf16,128,,,,,,,,,8,47,us,s\n"
		"combine,deepseek-v3,mi355x,,128,,,,,,,,,8,41,us,s\n"
		"combine,deepseek-v3,mi355x,fp8,128,,,,,,,,,8,30,us,s\n";
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_parse("t.csv", csv, sizeof csv - 1, &t, &err), 0, "%s", err.msg);
	cr_assert_eq(t.n, 4);
	double copies = 128 * 5.294652 * 7 / 8, want[4] = {copies * (7168 + 224), copies * 7168 * 2,
							    copies * 7168 * 2, copies * 7168};
	for (int i = 0; i < 4; i++) {
		double bytes;
		cr_assert_eq(valid_a2a_bytes(&t.rows[i], 1, &bytes, &err), 0, "%s", err.msg);
		cr_expect_float_eq(bytes, want[i], 1e3, "row %d: %.0f bytes", i + 1, bytes);
	}
	vtable_free(&t);
	static const char bad[] =
		"kernel,model,device,dtype,batch,context,heads,q_len,topk,m,n,k,groups,gpus,"
		"measured,unit,source\n"
		"dispatch,deepseek-v3,mi355x,fp16,128,,,,,,,,,8,40,us,s\n";
	cr_expect_neq(vtable_parse("bad.csv", bad, sizeof bad - 1, &t, &err), 0);
	cr_expect(strstr(err.msg, "bad.csv:2") && strstr(err.msg, "fp16"), "%s", err.msg);
}
