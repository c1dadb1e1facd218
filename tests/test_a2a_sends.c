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

/* A hierarchical route forwards a token's copies inside the node, which a
 * scale-out link that sends per GPU cannot: refused with the reason. */
Test(a2a_sends, hierarchical_with_per_gpu_scale_out_is_refused)
{
	struct kerr err;
	const char *sets[] = {"system.gpus=16", "system.a2a_route=hierarchical",
			      "scaleout_link.a2a_sends=gpu"};
	struct design_spec s = DESIGN_SPEC_INIT;
	s.model = "deepseek-v3", s.system = "gpu-only", s.context = 4096;
	s.sets = sets, s.nsets = 3;
	struct design_parts *dp = calloc(1, sizeof *dp);
	cr_assert(dp);
	int rc = design_assemble(&s, dp, &err);
	struct plan *p = rc == 0 ? plan_new(&dp->d, &err) : NULL;
	cr_expect_null(p);
	cr_expect(strstr(err.msg, "a2a_sends") != NULL, "%s", err.msg);
	plan_free(p);
	design_free(dp);
	free(dp);
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
