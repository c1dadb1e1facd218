/* test_kernel.c: the kernel-level GPU model (issue 13) on hand cases: each
 * kernel's fixed time, the kernels an operator launches or shares, the
 * p-norm of compute and memory time, GEMM tiles and waves, and selection
 * kernels; and, on the shipped GPUs, time >= every bound and monotone in
 * batch and context. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

/* A made-up GPU with round numbers: 100 TFLOPS BF16, 1 TB/s, every
 * efficiency 0.5, 1 us overhead. */
static const char *const GPU =
	"[device]\nname = g\nkind = gpu\nlink = nvlink4\ntdp = 100 W\n"
	"[compute]\nbf16 = 100 TFLOPS\n[memory]\ncapacity = 10 GB\nbandwidth = 1 TB/s\n"
	"[efficiency]\ngemm_compute = 0.5\ngemm_memory = 0.5\nattention_compute = 0.5\n"
	"attention_memory = 0.5\nscan_compute = 0.5\nscan_memory = 0.5\n"
	"gather_memory = 0.5\nelementwise_memory = 0.5\noverhead = 1 us\n";

static void load_gpu(const char *extra, struct kdevice *d)
{
	char text[4096];
	struct kerr err;
	snprintf(text, sizeof text, "%s%s", GPU, extra);
	cr_assert_eq(zoo_load_device(tmp_ini_str(0, text), d, NULL, &err), 0, "%s", err.msg);
}

static struct op_cost op(enum op_kind k, double flops, double bytes)
{
	struct op_cost o = {.kind = k, .base = k, .cls = op_table[k].cls, .side = op_table[k].side,
			    .dt = DT_BF16, .count = 1, .flops = flops, .bytes = bytes, .groups = 1};
	return o;
}

/* Without [kernel], every kernel pays the overhead: 1e9 B at 0.5 TB/s is
 * 2 ms, plus 1 us per kernel: attention launches 2 (split and combine), an
 * FFN 3, a gather inside attention none. */
Test(kernel, each_kernel_pays_its_fixed_time)
{
	struct kdevice d;
	load_gpu("", &d);
	struct op_cost a = op(OP_ATTENTION, 0, 1e9);
	roofline_op(&a, &d, NULL);
	cr_expect(near(a.time, 2e-3 + 2e-6, 1e-12), "%.17g", a.time);
	struct op_cost f = op(OP_EXPERTS, 0, 1e9);
	roofline_op(&f, &d, NULL);
	cr_expect(near(f.time, 2e-3 + 3e-6, 1e-12), "%.17g", f.time);
	struct op_cost g = op(OP_GATHER, 0, 1e9);
	roofline_op(&g, &d, NULL);
	cr_expect(near(g.time, 2e-3, 1e-12), "%.17g", g.time);
	struct op_cost k = op(OP_KV_DOWN, 0, 1e9); /* one GEMM with q_down */
	roofline_op(&k, &d, NULL);
	cr_expect(near(k.time, 2e-3, 1e-12));
	/* a class's own fixed time replaces the overhead: 1e6 B is 2 us,
	 * under the attention kernel's 5 us, so the bound is the overhead */
	load_gpu("[kernel]\nattention_fixed = 5 us\n", &d);
	struct op_cost s = op(OP_ATTENTION, 0, 1e6);
	roofline_op(&s, &d, NULL);
	cr_expect(near(s.time, 2e-6 + 2 * 5e-6, 1e-12), "%.17g", s.time);
	cr_expect_eq(s.bound, BOUND_OVERHEAD);
	struct op_cost n = op(OP_ATTN_NORM, 0, 1e6); /* others keep the overhead */
	roofline_op(&n, &d, NULL);
	cr_expect(near(n.time, 2e-6 + 1e-6, 1e-12));
	/* a memory device is no GPU: one fixed time per operator */
	struct kdevice k2;
	struct kerr err;
	cr_assert_eq(zoo_load_device("karat", &k2, NULL, &err), 0, "%s", err.msg);
	struct op_cost pa = op(OP_ATTENTION, 0, 1e6);
	roofline_op(&pa, &k2, NULL);
	cr_expect(near(roofline_fixed(&k2, OP_ATTENTION), k2.overhead, 1e-12));
	cr_expect(near(roofline_fixed(&k2, OP_GATHER), k2.overhead, 1e-12));
}

/* overlap = 3: equal compute and memory time of 2 ms each join to
 * 2 ms x 2^(1/3) = 2.5198 ms; 4 ms against 2 ms to (64 + 8)^(1/3) = 4.1602.
 * Without it, the max. */
Test(kernel, compute_and_memory_join_as_a_p_norm)
{
	struct kdevice d;
	load_gpu("[kernel]\noverlap = 3\n", &d);
	cr_expect(near(roofline_join(&d, 2e-3, 2e-3), 2e-3 * cbrt(2), 1e-12));
	cr_expect(near(roofline_join(&d, 4e-3, 2e-3), 1e-3 * cbrt(72), 1e-12));
	cr_expect_eq(roofline_join(&d, 0, 0), 0);
	cr_expect_eq(roofline_join(&d, 3e-3, 0), 3e-3);
	/* 1e11 FLOPs at 50 TFLOPS and 1e9 B at 0.5 TB/s: both 2 ms */
	struct op_cost o = op(OP_O_PROJ, 1e11, 1e9);
	roofline_op(&o, &d, NULL);
	cr_expect(near(o.time, 2e-3 * cbrt(2) + 1e-6, 1e-12), "%.17g", o.time);
	load_gpu("", &d);
	cr_expect_eq(roofline_join(&d, 4e-3, 2e-3), 4e-3);
}

/* Tiles: 4 SMs, tiles of 128 rows (64 up to 64 rows), widths 128 or 256,
 * 24 extra columns of depth.  A GEMM of 200 x 256 x 1000: 2 row tiles;
 * width 128 gives 2 x 2 = 4 tiles, one wave, 4 x 128 x 128 = 65,536
 * outputs; width 256 gives 2 tiles, one wave of 4 SMs x 128 x 256 =
 * 131,072.  So 65,536 x 2 x (1000 + 24) = 134,217,728 FLOPs against
 * 2 x 200 x 256 x 1000 = 102,400,000 useful. */
Test(kernel, gemm_tiles_fill_whole_waves)
{
	struct kdevice d;
	const char *tiles = "[kernel]\nsms = 4\ngemm_tile_m = 128\ngemm_tile_m_small = 64\n"
			    "gemm_tile_n_max = 256\ngemm_tile_n_step = 128\ngemm_tile_k0 = 24\n";
	load_gpu(tiles, &d);
	struct op_cost o = op(OP_O_PROJ, 2 * 200.0 * 256 * 1000, 1);
	o.gm = 200, o.gn = 256, o.gk = 1000;
	cr_expect(near(roofline_gemm_flops(&d, &o), 134217728, 1e-12), "%.17g",
		  roofline_gemm_flops(&d, &o));
	/* 64 rows take the small tiles: 1 row tile; width 128: 2 tiles, one
	 * wave = 4 x 64 x 128 = 32,768 outputs; width 256: 1 tile, one wave
	 * of 4 x 64 x 256 = 65,536.  32,768 x 2 x 1024 = 67,108,864. */
	o.gm = 64, o.flops = 2 * 64.0 * 256 * 1000;
	cr_expect(near(roofline_gemm_flops(&d, &o), 67108864, 1e-12));
	/* 3 groups of 200 rows: 6 row tiles x 2 = 12 tiles, 3 waves: 3 x 4 x
	 * 128 x 128 x 2 x 1024 = 402,653,184 */
	o.gm = 200, o.groups = 3, o.flops = 3 * 2 * 200.0 * 256 * 1000;
	cr_expect(near(roofline_gemm_flops(&d, &o), 402653184, 1e-12));
	/* no shape, or no tile model: the FLOPs as they are */
	o.gm = 0;
	cr_expect_eq(roofline_gemm_flops(&d, &o), o.flops);
	load_gpu("", &d);
	o.gm = 200;
	cr_expect_eq(roofline_gemm_flops(&d, &o), o.flops);
	/* the tile model is all or nothing */
	char text[4096];
	struct kdevice bad;
	struct kerr err;
	snprintf(text, sizeof text, "%s[kernel]\nsms = 4\n", GPU);
	cr_expect_eq(zoo_load_device(tmp_ini_str(1, text), &bad, NULL, &err), -1);
	cr_expect(strstr(err.msg, "needs all of"), "%s", err.msg);
	cr_expect(strstr(err.msg, ":"), "%s", err.msg);
}

/* A selection kernel: 1e9 scores at 1e11 scores/s = 10 ms plus its own
 * 30 us; the scan beside it keeps its class's fixed time. */
Test(kernel, selection_has_its_own_fixed_time)
{
	struct kdevice d;
	load_gpu("[select]\nunit_rate = 1e11\nfixed = 30 us\n", &d);
	struct op_cost t = op(OP_TOPK, 1e9, 4e9);
	t.dt = DT_FP32;
	roofline_op(&t, &d, NULL);
	cr_expect(near(t.time, 1e9 / 1e11 + 30e-6, 1e-12), "%.17g", t.time);
	cr_expect(near(roofline_fixed(&d, OP_INDEX_SCAN), 1e-6, 1e-12));
}

static double op_time(const struct step *s, enum op_kind k)
{
	double t = 0;
	for (int i = 0; i < s->n; i++)
		if (s->op[i].kind == k)
			t += s->op[i].count * s->op[i].time;
	return t;
}

/* On every shipped GPU with a kernel model: each operator's time is at
 * least its fixed time and every bound, and the attention and GEMMs grow
 * with batch and context. */
Test(kernel, shipped_gpus_are_monotone_and_bounded)
{
	static const char *const GPUS[] = {"h800", "h100", "h200"};
	static struct step s;
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("deepseek-v3", &m, NULL, &err), 0, "%s", err.msg);
	for (size_t g = 0; g < sizeof GPUS / sizeof *GPUS; g++) {
		struct kdevice d;
		struct klink l;
		cr_assert_eq(zoo_load_device(GPUS[g], &d, NULL, &err), 0, "%s", err.msg);
		cr_assert_eq(zoo_load_link(d.link, &l, NULL, &err), 0, "%s", err.msg);
		cr_expect(d.sms > 0, "%s has a tile model", GPUS[g]);
		double prev_b[OP_N] = {0};
		for (double B = 1; B <= 256; B *= 2) {
			struct kbatch b = {.requests = B, .gpus = 1, .context = 4096};
			cr_assert_eq(step_build(&m, &b, &s, &err), 0, "%s", err.msg);
			step_time(&s, &d, &l);
			for (int i = 0; i < s.n; i++) {
				const struct op_cost *o = &s.op[i];
				if (o->side != SIDE_LINK)
					cr_expect(o->time >= fmax(o->t_compute, o->t_memory) +
								     roofline_op_fixed(&d, o) - 1e-18);
			}
			static const enum op_kind K[] = {OP_ATTENTION, OP_Q_UP, OP_EXPERTS, OP_O_PROJ};
			for (size_t k = 0; k < 4; k++) {
				double t = op_time(&s, K[k]);
				cr_expect(t >= prev_b[K[k]] * (1 - 1e-12), "%s %s at batch %g: %g < %g",
					  GPUS[g], op_table[K[k]].name, B, t, prev_b[K[k]]);
				prev_b[K[k]] = t;
			}
		}
		double prev = 0;
		for (double L = 1024; L <= 131072; L *= 2) {
			struct kbatch b = {.requests = 32, .gpus = 1, .context = L};
			cr_assert_eq(step_build(&m, &b, &s, &err), 0, "%s", err.msg);
			step_time(&s, &d, &l);
			double t = op_time(&s, OP_ATTENTION);
			cr_expect(t > prev, "%s attention at context %g", GPUS[g], L);
			prev = t;
		}
	}
}

/* A GPU whose sparse kernel takes a fixed-size index list attends to all
 * 2048 slots even at context 1000: DeepSeek-V3.2's attention FLOPs per
 * token slot are 2 x 128 x (576 + 512) = 278,528, so 4 requests cost
 * 4 x 278,528 x 2048 FLOPs instead of x 1000; the rows read stay 1000. */
Test(kernel, fixed_topk_kernels_attend_to_every_slot)
{
	static struct step s;
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("deepseek-v3.2", &m, NULL, &err), 0, "%s", err.msg);
	double f[2] = {0}, g[2] = {0};
	for (int pad = 0; pad < 2; pad++) {
		struct kbatch b = {.requests = 4, .gpus = 1, .context = 1000, .pad_topk = pad};
		cr_assert_eq(step_build(&m, &b, &s, &err), 0, "%s", err.msg);
		for (int i = 0; i < s.n; i++) {
			if (s.op[i].kind == OP_ATTENTION && s.op[i].flops > f[pad])
				f[pad] = s.op[i].flops;
			if (s.op[i].kind == OP_GATHER)
				g[pad] = s.op[i].bytes;
		}
	}
	cr_expect(near(f[0], 4 * 278528.0 * 1000, 1e-12), "%.17g", f[0]);
	cr_expect(near(f[1], 4 * 278528.0 * 2048, 1e-12), "%.17g", f[1]);
	cr_expect(g[0] > 0 && near(g[0], g[1], 1e-12));
	/* the solver's per-request pricing pads the same way */
	struct attn_layout lay;
	attn_layout(&m, &m.sp, m.layers, 0, 1, &lay);
	double fs[ATTN_MAX_SLOTS], bs[ATTN_MAX_SLOTS], fp[ATTN_MAX_SLOTS], bp[ATTN_MAX_SLOTS];
	attn_request(&m, &m.sp, &lay, 0, 1000, 1, fs, bs);
	lay.pad_topk = 1;
	attn_request(&m, &m.sp, &lay, 0, 1000, 1, fp, bp);
	int seen = 0;
	for (int i = 0; i < lay.n; i++)
		if (lay.s[i].kind == OP_ATTENTION && lay.s[i].lc == LC_SPARSE) {
			cr_expect(near(fs[i], 278528.0 * 1000, 1e-12), "%.17g", fs[i]);
			cr_expect(near(fp[i], 278528.0 * 2048, 1e-12), "%.17g", fp[i]);
			seen++;
		}
	cr_expect_eq(seen, 1);
	/* above the top-k nothing changes */
	attn_request(&m, &m.sp, &lay, 0, 100000, 1, fp, bp);
	lay.pad_topk = 0;
	attn_request(&m, &m.sp, &lay, 0, 100000, 1, fs, bs);
	for (int i = 0; i < lay.n; i++)
		cr_expect(fs[i] == fp[i] && bs[i] == bp[i]);
}

/* A floor is a least time, not an added one: attention_floor = 20 us.
 * 1e6 B (2 us) plus two kernels of 1 us = 4 us: the floor, 20 us.  1e9 B
 * (2 ms) plus 2 us: 2.002 ms, the floor not added.  The gather inside the
 * attention kernel has no floor of its own. */
Test(kernel, a_floor_is_a_least_time)
{
	struct kdevice d;
	load_gpu("[kernel]\nattention_floor = 20 us\n", &d);
	struct op_cost s = op(OP_ATTENTION, 0, 1e6);
	roofline_op(&s, &d, NULL);
	cr_expect(near(s.time, 20e-6, 1e-12), "%.17g", s.time);
	cr_expect_eq(s.bound, BOUND_OVERHEAD);
	struct op_cost b = op(OP_ATTENTION, 0, 1e9);
	roofline_op(&b, &d, NULL);
	cr_expect(near(b.time, 2e-3 + 2e-6, 1e-12), "%.17g", b.time);
	cr_expect_eq(b.bound, BOUND_MEMORY);
	cr_expect_eq(roofline_floor(&d, OP_GATHER), 0);
	struct op_cost g = op(OP_GATHER, 0, 1e3);
	roofline_op(&g, &d, NULL);
	cr_expect(near(g.time, 1e3 / 0.5e12, 1e-12), "%.17g", g.time);
}

/* The p = 3 join's cube root against libm's on a grid of ratios. */
Test(kernel, the_p3_join_matches_cbrt)
{
	struct kdevice d;
	load_gpu("[kernel]\noverlap = 3\n", &d);
	for (int i = 0; i <= 10000; i++) {
		double lo = i / 10000.0;
		double want = cbrt(1 + lo * lo * lo);
		cr_assert(near(roofline_join(&d, 1, lo), want, 2e-15), "lo %g: %.17g vs %.17g", lo,
			  roofline_join(&d, 1, lo), want);
		cr_assert(near(roofline_join(&d, 7 * lo, 7), 7 * want, 2e-15));
	}
}
