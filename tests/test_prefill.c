/* test_prefill.c: each request's prefill, counted per output token (issue
 * 30 item 3): FLOPs against hand-computed ones, the trapezoid exact where
 * the FLOPs grow linearly with the context, the bytes (weights once per
 * chunk, the caches written once), and system.prefill_energy moving only
 * the per-watt views and the cost, by exactly the prefill. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

static struct kmodel M;
static struct kdevice H;

static void load(const char *model)
{
	struct kerr err;
	cr_assert_eq(zoo_load_model(model, &M, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_device("h200", &H, NULL, &err), 0, "%s", err.msg);
}

static struct prefill pre(double c0, double n, double gpus)
{
	struct prefill p;
	struct kerr err;
	cr_assert_eq(prefill_cost(&M, NULL, &H, gpus, 0, c0, n, &p, &err), 0, "%s", err.msg);
	return p;
}

/* Qwen3-235B (dense GQA attention): a token at context L attends to L
 * keys in each of 94 layers and 64 query heads of 128 dimensions, 2 FLOPs
 * per multiply-add for the scores and 2 for the weighted values: 1,000
 * more tokens of context cost 1,000 x 4 x 94 x 64 x 128 = 3.08 GFLOP. */
Test(prefill, a_token_costs_its_context_by_hand)
{
	load("qwen3-235b-a22b");
	double slope = pre(5000, 1, 8).flops - pre(4000, 1, 8).flops;
	cr_expect(near(slope, 1000.0 * 4 * 94 * 64 * 128, 1e-9), "%.6g", slope);
}

/* The tail (final norm and LM head) runs once: from three short prefills,
 * T = P(1, c) + P(1, c + 1) - P(2, c); each token is then exact for n up
 * to PREFILL_POINTS, and the trapezoid beyond it is exact when the FLOPs
 * grow linearly (n tokens: n times the mean of the ends; n - 1 a multiple
 * of its 8 intervals, so that every point is a whole context). */
Test(prefill, the_sum_over_the_new_tokens_is_exact_where_linear)
{
	load("qwen3-235b-a22b");
	double c = 2000;
	double T = pre(c, 1, 8).flops + pre(c + 1, 1, 8).flops - pre(c, 2, 8).flops;
	cr_expect(T > 2 * 4096 * 151936 * 0.99, "tail %.4g: the LM head alone is 2 x 4096 x "
		  "151,936 FLOPs", T);
	double f[8];
	for (int j = 0; j < 8; j++)
		f[j] = pre(c + j, 1, 8).flops - T; /* token j + 1's layers */
	double three = f[0] + f[1] + f[2] + T;
	cr_expect(near(pre(c, 3, 8).flops, three, 1e-12), "%.10g vs %.10g", pre(c, 3, 8).flops,
		  three);
	double n = 1001, first = f[0], last = pre(c + n - 1, 1, 8).flops - T;
	double want = n * (first + last) / 2 + T;
	cr_expect(near(pre(c, n, 8).flops, want, 1e-9), "%.10g vs %.10g", pre(c, n, 8).flops, want);
}

/* Bytes at no FLOP energy: the weights once per 8192-token chunk per GPU,
 * and the new tokens' K and V written once (94 layers x 4 heads x 128
 * dimensions x 2 x 1 byte of FP8 = 96,256 B per token). */
Test(prefill, bytes_are_the_weights_per_chunk_and_the_caches_written)
{
	load("qwen3-235b-a22b");
	for (int t = 0; t < DT_N; t++)
		H.e_flop[t] = 0;
	double n = 16384;
	struct prefill p = pre(1000, n, 8);
	double bytes = n / 8192 * model_weight_bytes(&M, 8) + n * 94 * 4 * 128 * 2 * 1;
	cr_expect(near(p.joules, bytes * 8 * H.e_bit, 1e-9), "%.6g J vs %.6g", p.joules,
		  bytes * 8 * H.e_bit);
	cr_expect_gt(p.gpu_s, 0);
	cr_expect_gt(p.a2a_bytes, 0, "MoE experts over 8 GPUs exchange tokens");
}

Test(prefill, nothing_new_costs_nothing_and_bad_counts_are_refused)
{
	load("deepseek-v3.2");
	struct prefill p = pre(5000, 0, 8);
	cr_expect(p.flops == 0 && p.joules == 0 && p.gpu_s == 0 && p.a2a_bytes == 0);
	struct kerr err;
	cr_expect_neq(prefill_cost(&M, NULL, &H, 8, 0, M.max_context, 1, &p, &err), 0);
	cr_expect(strstr(err.msg, "exceed"), "%s", err.msg);
	cr_expect_neq(prefill_cost(&M, NULL, &H, 8, 0, 10, 2.5, &p, &err), 0);
	cr_expect_neq(prefill_cost(&M, NULL, &H, 0, 0, 10, 2, &p, &err), 0);
	/* more new tokens, or more of them cached before, never cost less */
	cr_expect_gt(pre(5000, 2000, 8).joules, pre(5000, 1000, 8).joules);
	cr_expect_gt(pre(9000, 1000, 8).joules, pre(5000, 1000, 8).joules);
}

static char out[1 << 15], errbuf[1 << 12];

/* The value of field name in a query's table ("name   value" lines). */
static double cell(const char *table, const char *name)
{
	for (const char *p = table; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, strlen(name)) && p[strlen(name)] == ' ')
			return atof(p + strlen(name));
	cr_assert_fail("no %s in %s", name, table);
	return NAN;
}

/* With system.prefill_energy = on, joules per token grow by exactly the
 * prefill's, tokens per watt are their inverse, and nothing else moves;
 * GPU-only and GPU + KARAT on the same GPUs pay the same prefill where
 * they reuse alike (every idle cache kept), and otherwise the system that
 * reuses less pays more (GPU-only with its host DRAM alone). */
Test(prefill, the_key_adds_the_prefill_to_the_per_watt_views_alone)
{
	static char off[1 << 15], on[1 << 15];
	const char *q = "query --model deepseek-v3.2 --workload agentic --batch 64 --samples 16 "
			"--microbatches 2 --system %s%s";
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(run_karat_fmt(k ? on : off, sizeof on, errbuf, sizeof errbuf, q, "gpu-karat",
					   k ? " --set system.prefill_energy=on" : ""), 0, "%s", errbuf);
	}
	double pj = cell(off, "prefill_j_per_tok");
	cr_expect_gt(pj, 0);
	cr_expect(near(cell(on, "prefill_j_per_tok"), pj, 1e-12));
	cr_expect(near(cell(on, "energy_activity_j_per_tok"),
		       cell(off, "energy_activity_j_per_tok") + pj, 1e-5));
	cr_expect(near(cell(on, "tok_s_per_w_activity"), 1 / cell(on, "energy_activity_j_per_tok"),
		       1e-5));
	double node_j = 1 / cell(off, "tok_s_per_w_node") + cell(off, "prefill_node_j_per_tok");
	cr_expect(near(cell(on, "tok_s_per_w_node"), 1 / node_j, 1e-5));
	cr_expect_gt(cell(on, "usd_per_mtok"), cell(off, "usd_per_mtok"));
	static const char *const same[] = {"tbt_p99_s", "throughput_tok_s", "tok_s_per_w",
					   "power_activity_w", "power_node_w", "capex_usd"};
	for (int i = 0; i < 6; i++)
		cr_expect_eq(cell(on, same[i]), cell(off, same[i]), "%s moved", same[i]);
	cr_assert_eq(run_karat_fmt(out, sizeof out, errbuf, sizeof errbuf, q, "gpu-only",
				   " --set system.host_ssd=0"), 0, "%s", errbuf);
	cr_expect_lt(cell(out, "prefix_reuse"), cell(off, "prefix_reuse"),
		     "GPU-only without its NVMe has less room");
	cr_expect_gt(cell(out, "prefill_j_per_tok"), pj, "so its admissions bring more new tokens");
	const char *forever = " --set workload.keepalive=forever";
	for (int k = 0; k < 2; k++)
		cr_assert_eq(run_karat_fmt(k ? on : off, sizeof on, errbuf, sizeof errbuf, q,
					   k ? "gpu-only" : "gpu-karat", forever), 0, "%s", errbuf);
	cr_expect(cell(on, "prefix_reuse") == cell(off, "prefix_reuse"));
	cr_expect(near(cell(on, "prefill_j_per_tok"), cell(off, "prefill_j_per_tok"), 1e-12),
		  "%g vs %g", cell(on, "prefill_j_per_tok"), cell(off, "prefill_j_per_tok"));
}
