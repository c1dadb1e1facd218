/* test_kernels.c: every validation kernel against its naive reference over
 * several sizes and the edge cases (k >= N, N = 1, ties, lengths that are
 * not a multiple of the page or tile); the FP8 decode; the timing harness;
 * the calibration fit on data with a known answer. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "karat.h"
#include "kernels/common.h"

static void run_and_check(const char *name, double size)
{
	const struct kernel_def *k = kernel_find(name);
	cr_assert(k, "kernel %s missing", name);
	struct kerr err;
	void *s = k->setup(size, &err);
	cr_assert(s, "%s setup(%g): %s", name, size, err.msg);
	k->run(s);
	char why[256] = "";
	cr_expect_eq(k->check(s, why, sizeof why), 0, "%s at %g: %s", name, size, why);
	cr_expect(k->flops(size) >= 0 && k->bytes(size) > 0);
	k->teardown(s);
}

Test(kernels, indexer_matches_reference)
{
	run_and_check("indexer", 1);    /* N = 1 */
	run_and_check("indexer", 17);   /* odd, not a multiple of the pair */
	run_and_check("indexer", 1000);
}

Test(kernels, scoring_kernels_match_reference)
{
	run_and_check("quest_score", 1);    /* one partial page */
	run_and_check("quest_score", 100);  /* 6.25 pages */
	run_and_check("quest_score", 4096);
	run_and_check("msa_score", 1);
	run_and_check("msa_score", 300);    /* 2 full blocks + a partial one */
	run_and_check("msa_score", 4096);
}

Test(kernels, attention_kernels_match_reference)
{
	run_and_check("gqa_dense", 1);
	run_and_check("gqa_dense", 37);     /* partial 16-token page */
	run_and_check("gqa_dense", 1000);
	run_and_check("mla_sparse", 1);
	run_and_check("mla_sparse", 33);
	run_and_check("mla_sparse", 300);
	run_and_check("mla_sparse", 16);    /* whole scoring and value blocks */
}

Test(kernels, gather_and_topk_match_reference)
{
	run_and_check("gather", 1);
	run_and_check("gather", 1000);
	run_and_check("topk", 100);         /* k = 2048 >= N: everything */
	run_and_check("topk", 2048);        /* k = N exactly */
	run_and_check("topk", 50000);
	run_and_check("topk_simd", 100);
	run_and_check("topk_simd", 2048);
	run_and_check("topk_simd", 50000);
}

/* Selected values as a sorted multiset. */
static int cmp_desc(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x < y) - (x > y);
}

static void topk_case(const float *x, int n, int k, int simd)
{
	int *out = malloc(sizeof(int) * (size_t)(k < n ? k : n) + 4);
	float *wv = malloc(sizeof(float) * ((size_t)n + 16)), *ref = malloc(sizeof(float) * (size_t)n);
	float *got = malloc(sizeof(float) * (size_t)n);
	int *wi = malloc(sizeof(int) * ((size_t)n + 16));
	int m = k < n ? k : n;
	if (simd)
		cr_expect_geq(topk_simd_select(x, n, k, out, wv, wi), m, "n=%d k=%d", n, k);
	else
		topk_select(x, n, k, out, wv, wi);
	topk_reference(x, n, k, ref);
	for (int i = 0; i < m; i++) {
		cr_assert(out[i] >= 0 && out[i] < n);
		got[i] = x[out[i]];
	}
	qsort(got, (size_t)m, sizeof *got, cmp_desc);
	for (int i = 0; i < m; i++)
		cr_expect_eq(got[i], ref[i], "%s n=%d k=%d rank %d: %g vs %g",
			     simd ? "simd" : "scalar", n, k, i, got[i], ref[i]);
	/* no index twice */
	char *seen = calloc((size_t)n, 1);
	for (int i = 0; i < m; i++) {
		cr_expect_eq(seen[out[i]], 0, "n=%d k=%d: index %d twice", n, k, out[i]);
		seen[out[i]] = 1;
	}
	free(seen);
	free(out), free(wv), free(ref), free(got), free(wi);
}

/* Both selections, scalar and vector, on the cases that break selects. */
Test(kernels, topk_edge_cases)
{
	for (int simd = 0; simd < 2; simd++) {
		float one = 3.5f;
		topk_case(&one, 1, 1, simd);      /* N = 1 */
		topk_case(&one, 1, 2048, simd);   /* k > N */
		static float x[100000];
		for (int i = 0; i < 100000; i++)
			x[i] = 7.0f;            /* all tied */
		topk_case(x, 100000, 2048, simd);
		for (int i = 0; i < 100000; i++)
			x[i] = (float)(i % 3);  /* three values, heavy ties at the cut */
		topk_case(x, 100000, 2048, simd);
		for (int i = 0; i < 100000; i++)
			x[i] = (float)i;        /* sorted ascending: the sample sees the trend */
		topk_case(x, 100000, 2048, simd);
		for (int i = 0; i < 100000; i++)
			x[i] = (float)(100000 - i);
		topk_case(x, 100000, 1, simd);
		topk_case(x, 100000, 99999, simd);
		for (int i = 0; i < 100000; i++) /* negatives, zeros of both signs, a spike */
			x[i] = (i % 7 == 0) ? -0.0f : (i % 5 == 0) ? 0.0f : -(float)(i % 1000) / 7;
		x[77777] = 1e30f;
		topk_case(x, 100000, 2048, simd);
		for (int i = 0; i < 100000; i++) /* the top hides between the sample's strides */
			x[i] = (i % 32 == 7) ? 1.0f + (float)i : 0.5f;
		topk_case(x, 100000, 3000, simd);
		topk_case(x, 17, 5, simd);       /* shorter than a vector */
		topk_case(x, 100000, 50000, simd);
	}
}

Test(kernels, fp8_decode_agrees_with_the_table)
{
	const float *t = fp8_e4m3_table();
	cr_expect_eq(t[0x00], 0.0f);
	cr_expect_eq(t[0x38], 1.0f);        /* exponent 7 = bias */
	cr_expect_eq(t[0x7E], 448.0f);      /* largest normal */
	cr_expect_eq(t[0x01], 0x1p-9f);     /* smallest subnormal */
	cr_expect_eq(t[0xB8], -1.0f);
	cr_expect(isnan(t[0x7F]) && isnan(t[0xFF]));
	for (int b = 0; b < 256; b++)
		if (!isnan(t[b]))
			cr_expect_eq(fp8_e4m3_value((uint8_t)b), t[b], "code 0x%02x", b);
	uint8_t codes[256];
	float vec[256];
	for (int b = 0; b < 256; b++)
		codes[b] = (uint8_t)b;
	fp8_e4m3_decode(codes, 256, 1.0f, vec); /* the kernels' FP16 route */
	for (int b = 0; b < 256; b++)
		if (!isnan(t[b]))
			cr_expect_eq(vec[b], t[b], "vector decode of 0x%02x: %g", b, vec[b]);
	fp8_e4m3_decode(codes, 256, 0.75f, vec);
	for (int b = 0; b < 256; b++)
		if (!isnan(t[b]))
			cr_expect_eq(vec[b], t[b] * 0.75f, "scaled decode of 0x%02x", b);
	cr_expect_eq(fp8_e4m3_encode(1.0f), 0x38);
	cr_expect_eq(fp8_e4m3_encode(1000.0f), 0x7E, "saturates at 448");
}

static void spin(void *state)
{
	volatile double *x = state;
	for (int i = 0; i < 20000; i++)
		*x += 1e-9 * i;
}

Test(kernels, timing_harness_is_sane)
{
	double x = 0;
	struct timing t;
	struct kerr err;
	cr_assert_eq(time_run(spin, &x, 0.02, &t, &err), 0);
	cr_expect(t.min_s > 0 && t.median_s >= t.min_s);
	cr_expect_geq(t.reps, 5);
	cr_expect(t.clock_res_s > 0 && t.clock_res_s < 1e-3);
	cr_expect_geq(t.batch, 1);
	/* a repetition lasts at least 1000 clock ticks */
	cr_expect(t.median_s * t.batch >= 1000 * t.clock_res_s * 0.5);
}

Test(kernels, calibration_fit_recovers_a_known_efficiency)
{
	const struct kernel_def *k = kernel_find("quest_score");
	struct cpu_roof roof = {.bw = 20e9, .peak = 200e12 / 1000, .threads = 2};
	struct kernel_result r[3];
	double sizes[3] = {1e5, 4e5, 9e5};
	for (int i = 0; i < 3; i++) {
		r[i] = (struct kernel_result){.k = k, .size = sizes[i], .flops = k->flops(sizes[i]),
					      .bytes = k->bytes(sizes[i])};
		/* best runs at 60% of bandwidth plus 5 us fixed; the medians of a
		 * busy host 10-30% slower, which the fit must not follow (the roof
		 * is a best run too) */
		r[i].t.min_s = r[i].bytes / (0.6 * roof.bw) + 5e-6;
		r[i].t.median_s = r[i].t.min_s * (1.1 + 0.1 * i);
	}
	struct kernel_fit f;
	struct kerr err;
	cr_assert_eq(fit_kernel(r, 3, &roof, &f, &err), 0, "%s", err.msg);
	cr_expect_eq(f.compute_bound, 0);
	cr_expect(fabs(f.efficiency - 0.6) < 1e-9, "efficiency %g", f.efficiency);
	cr_expect(fabs(f.overhead_s - 5e-6) < 1e-12, "overhead %g", f.overhead_s);
	for (int i = 0; i < 3; i++)
		cr_expect(fabs(fit_predict(&f, &r[i], &roof) - r[i].t.min_s) < 1e-12);
	/* time that does not grow with work cannot be fitted */
	for (int i = 0; i < 3; i++)
		r[i].t.min_s = 1e-3;
	cr_expect_eq(fit_kernel(r, 3, &roof, &f, &err), -1);
}
