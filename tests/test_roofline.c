/* test_roofline.c: invariants of the roofline and of the step model:
 * time >= every bound, the bound flips at the ridge, time is monotone in
 * batch, sparse with k >= L equals dense, MTP scales FLOPs not bytes, and
 * the per-request path equals the uniform fast path. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

/* A device file of 20 lines with every required value and no [select]
 * section, for the selection keys' checks (their line numbers count on
 * it). */
#define BARE_DEVICE                                                            \
	"[device]\nname = x\nkind = cpu\nlink = pcie5\ntdp = 100 W\n"          \
	"[compute]\nbf16 = 1 TFLOPS\n[memory]\ncapacity = 1 GB\n"              \
	"bandwidth = 100 GB/s\n[efficiency]\ngemm_compute = 0.5\n"             \
	"gemm_memory = 0.5\nattention_compute = 0.5\nattention_memory = 0.5\n" \
	"scan_compute = 0.5\nscan_memory = 0.5\ngather_memory = 0.5\n"         \
	"elementwise_memory = 0.5\noverhead = 1 us\n"

static const char *const MODELS[] = {"deepseek-v3.2", "deepseek-v3", "glm-5", "glm-5.2",
				     "minimax-m3", "kimi-k2", "qwen3-235b-a22b",
				     "llama-3.1-70b", "llama-3.1-405b"};
static const char *const DEVICES[] = {"a100-80gb", "h100", "h800", "h200", "b200",
				      "gb200", "gb300", "b300", "mi300x", "mi355x", "host-ddr5",
				      "grace", "attacc", "duplex", "cxl-pnm",
				      "lpddr-pim", "karat"};
#define NM (sizeof MODELS / sizeof *MODELS)
#define ND (sizeof DEVICES / sizeof *DEVICES)

static void load(const char *model, const char *dev, struct kmodel *m,
		 struct kdevice *d, struct klink *l)
{
	struct kerr err;
	cr_assert_eq(zoo_load_model(model, m, NULL, &err), 0, "%s", err.msg);
	if (dev) {
		cr_assert_eq(zoo_load_device(dev, d, NULL, &err), 0, "%s", err.msg);
		cr_assert_eq(zoo_load_link(d->link, l, NULL, &err), 0, "%s", err.msg);
	}
}

static double step_at(const struct kmodel *m, const struct kdevice *d,
		      const struct klink *l, double B, double L, double G, struct step *s)
{
	struct kbatch b = {.requests = B, .gpus = G, .context = L, .mtp = 0};
	struct kerr err;
	cr_assert_eq(step_build(m, &b, s, &err), 0, "%s", err.msg);
	return step_time(s, d, l);
}

Test(roofline, time_is_at_least_every_bound_everywhere)
{
	static struct step s;
	for (size_t i = 0; i < NM; i++)
		for (size_t j = 0; j < ND; j++) {
			struct kmodel m;
			struct kdevice d;
			struct klink l;
			load(MODELS[i], DEVICES[j], &m, &d, &l);
			double total = step_at(&m, &d, &l, 32, 32768, 8, &s), sum = 0;
			for (int k = 0; k < s.n; k++) {
				const struct op_cost *o = &s.op[k];
				sum += o->count * o->time;
				if (o->bound == BOUND_UNSUPPORTED) {
					cr_expect(isinf(o->time));
					cr_expect_eq(d.kind, DEV_PIM, "%s: only PIM refuses ops", DEVICES[j]);
					continue;
				}
				cr_expect(o->time >= o->t_compute && o->time >= o->t_memory &&
						  o->time >= o->t_link,
					  "%s on %s: %s time below a bound", MODELS[i], DEVICES[j],
					  op_table[o->kind].name);
				/* the model's law: the joined bounds plus the fixed
				 * time of the kernels the operator launches */
				double top = fmax(o->t_compute, fmax(o->t_memory, o->t_link));
				double af = o->kind == OP_DISPATCH && l.a2a_floor_dispatch > 0
						    ? l.a2a_floor_dispatch
						    : l.a2a_floor; /* the dispatch's own, where given */
				double extra = o->side == SIDE_LINK ? fmax(l.latency, af)
								    : roofline_op_fixed(&d, o);
				if (o->side == SIDE_LINK) { /* the share of the shorter that overlaps */
					cr_expect(o->time >= fmax(top, extra) - 1e-15 * top);
					/* and at least the transfer's own fixed part */
					extra = fmax(extra - l.a2a_overlap * fmin(top, extra),
						     l.a2a_latency);
				}
				cr_expect(o->time >= top + extra - 1e-15 * top);
				double joined = o->side == SIDE_LINK
							? top
							: roofline_join(&d, o->t_compute, o->t_memory);
				double floor = o->side == SIDE_LINK ? 0 : roofline_floor(&d, o->base);
				cr_expect(near(o->time, fmax(floor, joined + extra), 1e-12));
			}
			cr_expect(isinf(total) ? isinf(sum) : near(total, sum, 1e-12));
		}
}

Test(roofline, bound_flips_at_the_ridge_point)
{
	struct kmodel m;
	struct kdevice d;
	struct klink l;
	load("deepseek-v3.2", "h200", &m, &d, &l);
	/* the plain roofline: no fixed time, no p-norm, no tiles */
	d.overhead = 0, d.overlap = 0, d.sms = 0;
	memset(d.fixed, 0, sizeof d.fixed);
	double ridge = roofline_ridge(&d, OC_GEMM, DT_FP8);
	cr_expect(near(ridge, 1978.9e12 * 0.72 / (4800e9 * 0.84), 1e-12));
	struct op_cost o = {.kind = OP_Q_UP, .base = OP_Q_UP, .cls = OC_GEMM, .side = SIDE_GPU,
			    .dt = DT_FP8, .count = 1, .bytes = 1e9};
	o.flops = 0.99 * ridge * o.bytes;
	roofline_op(&o, &d, &l);
	cr_expect_eq(o.bound, BOUND_MEMORY);
	cr_expect(near(o.time, 1e9 / (4800e9 * 0.84), 1e-12));
	o.flops = 1.01 * ridge * o.bytes;
	roofline_op(&o, &d, &l);
	cr_expect_eq(o.bound, BOUND_COMPUTE);
	cr_expect(near(o.time, o.flops / (1978.9e12 * 0.72), 1e-12));
	/* a tiny operator is overhead-bound */
	d.overhead = 2e-6;
	o.flops = 1e3, o.bytes = 1e3;
	roofline_op(&o, &d, &l);
	cr_expect_eq(o.bound, BOUND_OVERHEAD);
	/* no FP8 on A100: FP8 work runs at the BF16 rate */
	struct kdevice a;
	struct kerr err;
	cr_assert_eq(zoo_load_device("a100-80gb", &a, NULL, &err), 0);
	enum dtype used;
	cr_expect_eq(device_peak(&a, DT_FP8, &used), 312e12);
	cr_expect_eq(used, DT_BF16);
	cr_expect_eq(device_peak(&a, DT_FP32, &used), 312e12);
}

Test(roofline, step_time_is_monotone_in_batch)
{
	static struct step s;
	for (size_t i = 0; i < NM; i++) {
		struct kmodel m;
		struct kdevice d;
		struct klink l;
		load(MODELS[i], "h200", &m, &d, &l);
		for (double G = 1; G <= 8; G *= 8) {
			double prev = 0;
			for (double B = G; B <= 512; B += G) {
				double t = step_at(&m, &d, &l, B, 8192, G, &s);
				cr_expect(t >= prev * (1 - 1e-12), "%s G=%g: t(%g)=%g < %g",
					  MODELS[i], G, B, t, prev);
				prev = t;
			}
		}
	}
}

/* Sum of attention + gather flops and bytes. */
static void attn_cost(const struct step *s, double *f, double *b)
{
	struct op_row r[OP_N], t;
	step_rows(s, r, &t);
	*f = r[OP_ATTENTION].flops + r[OP_GATHER].flops;
	*b = r[OP_ATTENTION].bytes + r[OP_GATHER].bytes;
}

Test(roofline, sparse_with_topk_at_least_context_equals_dense)
{
	static struct step s;
	struct kerr err;
	struct kmodel m;
	struct sparse_cfg dense_mla, dense_gqa;
	sparse_cfg_init(&dense_mla, ALGO_MLA);
	sparse_cfg_init(&dense_gqa, ALGO_GQA);
	load("deepseek-v3.2", NULL, &m, NULL, NULL);
	struct kbatch b = {.requests = 3, .gpus = 1, .context = 2048};
	double fs, bs, fd, bd;
	cr_assert_eq(step_build(&m, &b, &s, &err), 0);
	attn_cost(&s, &fs, &bs);
	b.sp = &dense_mla;
	cr_assert_eq(step_build(&m, &b, &s, &err), 0);
	attn_cost(&s, &fd, &bd);
	cr_expect(near(fs, fd, 1e-12) && near(bs, bd, 1e-12), "dsa %g/%g vs mla %g/%g",
		  fs, bs, fd, bd);
	/* above k the sparse cost stops growing, the dense one does not */
	b.context = 100000;
	b.sp = NULL;
	cr_assert_eq(step_build(&m, &b, &s, &err), 0);
	attn_cost(&s, &fs, &bs);
	cr_expect(near(fs, fd, 1e-12), "sparse attention FLOPs fixed at k");

	/* MSA: 16 blocks x 128 = 2048 tokens per KV head */
	load("minimax-m3", NULL, &m, NULL, NULL);
	b = (struct kbatch){.requests = 2, .gpus = 1, .context = 2000};
	cr_assert_eq(step_build(&m, &b, &s, &err), 0);
	attn_cost(&s, &fs, &bs);
	b.sp = &dense_gqa;
	cr_assert_eq(step_build(&m, &b, &s, &err), 0);
	attn_cost(&s, &fd, &bd);
	cr_expect(near(fs, fd, 1e-12) && near(bs, bd, 1e-12), "msa %g/%g vs gqa %g/%g",
		  fs, bs, fd, bd);
}

Test(roofline, index_share_on_every_layer_is_dsa)
{
	static struct step s1, s2;
	struct kerr err;
	struct kmodel m;
	load("glm-5.2", NULL, &m, NULL, NULL);
	struct sparse_cfg all = m.sp, dsa = m.sp;
	all.p[SP_INDEX_FREQ] = 1, all.p[SP_INDEX_OFFSET] = 0;
	cr_expect_eq(sparse_index_layers(&all, m.layers), m.layers);
	dsa.algo = ALGO_DSA;
	struct kbatch b = {.requests = 5, .gpus = 2, .context = 50000, .sp = &all};
	cr_assert_eq(step_build(&m, &b, &s1, &err), 0);
	b.sp = &dsa;
	cr_assert_eq(step_build(&m, &b, &s2, &err), 0);
	struct op_row r1[OP_N], r2[OP_N], t1, t2;
	step_rows(&s1, r1, &t1);
	step_rows(&s2, r2, &t2);
	cr_expect(near(t1.flops, t2.flops, 1e-12) && near(t1.bytes, t2.bytes, 1e-12));
	/* and with 21 of 78 layers the scan shrinks by exactly 21/78 */
	cr_expect_eq(sparse_index_layers(&m.sp, m.layers), 21);
	b.sp = NULL;
	cr_assert_eq(step_build(&m, &b, &s1, &err), 0);
	step_rows(&s1, r1, &t1);
	cr_expect(near(r1[OP_INDEX_SCAN].flops, r2[OP_INDEX_SCAN].flops * 21 / 78, 1e-12));
	cr_expect(near(r1[OP_GATHER].bytes, r2[OP_GATHER].bytes, 1e-12));
}

Test(roofline, dsa_scan_intensity_is_about_125)
{
	static struct step s;
	struct kerr err;
	struct kmodel m;
	load("deepseek-v3.2", NULL, &m, NULL, NULL);
	struct kbatch b = {.requests = 1, .gpus = 1, .context = 131072};
	cr_assert_eq(step_build(&m, &b, &s, &err), 0);
	struct op_row r[OP_N], t;
	step_rows(&s, r, &t);
	double i = r[OP_INDEX_SCAN].flops / r[OP_INDEX_SCAN].bytes;
	cr_expect(i > 115 && i < 130, "scan intensity %g FLOP/B", i);
	/* MTP: two query tokens double scan FLOPs; the keys are read once */
	double f1 = r[OP_INDEX_SCAN].flops, keys = 61.0 * 131072 * 132;
	b.mtp = 1;
	cr_assert_eq(step_build(&m, &b, &s, &err), 0);
	step_rows(&s, r, &t);
	cr_expect(near(r[OP_INDEX_SCAN].flops, 2 * f1, 1e-12));
	cr_expect(r[OP_INDEX_SCAN].bytes < 1.1 * keys + 61.0 * 2 * 131072 * 4);
	cr_expect(r[OP_MTP].present && r[OP_MTP].count == 1);
}

Test(roofline, per_request_contexts_match_the_fast_path)
{
	static struct step s1, s2;
	struct kerr err;
	const char *const models[] = {"deepseek-v3.2", "minimax-m3", "llama-3.1-70b"};
	for (int i = 0; i < 3; i++) {
		struct kmodel m;
		load(models[i], NULL, &m, NULL, NULL);
		double ctx[6] = {3000, 3000, 3000, 3000, 3000, 3000};
		struct kbatch u = {.requests = 6, .gpus = 1, .context = 3000};
		struct kbatch p = u;
		p.ctx = ctx, p.nctx = 6;
		cr_assert_eq(step_build(&m, &u, &s1, &err), 0, "%s", err.msg);
		cr_assert_eq(step_build(&m, &p, &s2, &err), 0, "%s", err.msg);
		cr_assert_eq(s1.n, s2.n);
		for (int k = 0; k < s1.n; k++) {
			cr_expect(near(s1.op[k].flops, s2.op[k].flops, 1e-12));
			cr_expect(near(s1.op[k].bytes, s2.op[k].bytes, 1e-12));
		}
		/* mixed contexts: cache-side totals are the sums of single requests */
		double mixed[3] = {500, 70000, 9000};
		p.ctx = mixed, p.nctx = 3, p.requests = 3;
		cr_assert_eq(step_build(&m, &p, &s2, &err), 0);
		struct op_row rm[OP_N], tm, r1[OP_N], t1;
		step_rows(&s2, rm, &tm);
		double scan = 0, attn = 0;
		for (int j = 0; j < 3; j++) {
			struct kbatch one = {.requests = 1, .gpus = 1, .context = mixed[j]};
			cr_assert_eq(step_build(&m, &one, &s1, &err), 0);
			step_rows(&s1, r1, &t1);
			scan += r1[OP_INDEX_SCAN].flops;
			attn += r1[OP_ATTENTION].flops;
		}
		cr_expect(near(rm[OP_INDEX_SCAN].flops, scan, 1e-12));
		cr_expect(near(rm[OP_ATTENTION].flops, attn, 1e-12));
	}
}

Test(roofline, bad_batches_are_refused)
{
	static struct step s;
	struct kerr err;
	struct kmodel m;
	load("deepseek-v3.2", NULL, &m, NULL, NULL);
	struct kbatch b = {.requests = 0, .gpus = 1, .context = 100};
	cr_expect_eq(step_build(&m, &b, &s, &err), -1);
	cr_expect(strstr(err.msg, "batch"));
	b.requests = 4, b.context = 200000;
	cr_expect_eq(step_build(&m, &b, &s, &err), -1);
	cr_expect(strstr(err.msg, "exceeds"), "%s", err.msg);
	b.context = 100, b.gpus = 0.5;
	cr_expect_eq(step_build(&m, &b, &s, &err), -1);
	load("llama-3.1-70b", NULL, &m, NULL, NULL);
	b = (struct kbatch){.requests = 1, .gpus = 1, .context = 100, .mtp = 1};
	cr_expect_eq(step_build(&m, &b, &s, &err), -1);
	cr_expect(strstr(err.msg, "no MTP"), "%s", err.msg);
}

/* Issue 11: an expert all-to-all pays the link's measured floor (a
 * kernel at one token per GPU) where it exceeds the latency; issue 28
 * item 4: a share (a2a_overlap) of the shorter of the floor and the
 * transfer hides under the longer.  1 MB over NVLink 4: x = 1e6 /
 * (450e9 x 0.8) = 2.78 us, f = 41.6 us, overlap 0.39: x + f - 0.39 x. */
Test(roofline, all_to_all_pays_its_measured_floor)
{
	struct klink l;
	struct kerr err;
	cr_assert_eq(zoo_load_link("nvlink4", &l, NULL, &err), 0, "%s", err.msg);
	double x = 1e6 / (450e9 * 0.8);
	cr_expect(near(roofline_a2a(&l, 1e6, 0), x + 41.6e-6 - 0.39 * x, 1e-12));
	cr_expect_eq(roofline_a2a(&l, 0, 0), 0);
	l.a2a_overlap = 0; /* they add */
	cr_expect(near(roofline_a2a(&l, 1e6, 0), x + 41.6e-6, 1e-12));
	l.a2a_overlap = 1; /* the longer alone, here the floor; then the transfer */
	cr_expect(near(roofline_a2a(&l, 1e6, 0), 41.6e-6, 1e-12));
	cr_expect(near(roofline_a2a(&l, 1e9, 0), 1e9 / (450e9 * 0.8), 1e-12));
	l.a2a_floor = 0, l.a2a_overlap = 0; /* none measured: the latency */
	cr_expect(near(roofline_a2a(&l, 1e6, 0), x + 800e-9, 1e-12));
	/* a dispatch floor of its own applies to the dispatch alone */
	l.a2a_floor = 41.6e-6, l.a2a_floor_dispatch = 102.7e-6, l.a2a_overlap = 0.39;
	cr_expect(near(roofline_a2a(&l, 1e6, 1), x + 102.7e-6 - 0.39 * x, 1e-12));
	cr_expect(near(roofline_a2a(&l, 1e6, 0), x + 41.6e-6 - 0.39 * x, 1e-12));
	l.a2a_floor_dispatch = 0; /* none given: the shared floor */
	cr_expect_eq(roofline_a2a(&l, 1e6, 1), roofline_a2a(&l, 1e6, 0));
}

/* InfiniBand NDR's form: the floor hides whole (a2a_overlap 1) and the
 * transfer pays its own fixed part (link.a2a_latency), so the longer of
 * the floor and the transfer plus it.  50 GB/s x 0.92 = 46 GB/s, latency
 * 30.4 us, floor 55.4 us: 1 MB moves in 21.74 us, under the floor less
 * the latency (25 us), so it takes the floor; 10 MB in 217.4 us, so
 * 247.8 us.  With half the floor hidden, 1 MB takes 21.74 + 55.4 -
 * 10.87 = 66.27 us. */
Test(roofline, all_to_all_with_a_latency_takes_the_longer_of_floor_and_transfer)
{
	struct klink l;
	struct kerr err;
	cr_assert_eq(zoo_load_link("ib-ndr", &l, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(l.a2a_overlap, 1);
	cr_expect(near(roofline_a2a(&l, 1e6, 0), 55.4e-6, 1e-12));
	cr_expect(near(roofline_a2a(&l, 1e7, 0), 1e7 / 46e9 + 30.4e-6, 1e-12));
	cr_expect(near(roofline_a2a(&l, 1e7, 0), 247.79e-6, 1e-4));
	/* continuous where the two meet: the transfer at 25 us */
	double b = 25e-6 * 46e9;
	cr_expect(near(roofline_a2a(&l, b * (1 - 1e-9), 1), 55.4e-6, 1e-8));
	cr_expect(near(roofline_a2a(&l, b * (1 + 1e-9), 1), 55.4e-6, 1e-8));
	cr_expect_eq(roofline_a2a(&l, 0, 0), 0);
	l.a2a_overlap = 0.5; /* both parts of the form at once */
	cr_expect(near(roofline_a2a(&l, 1e6, 0), 1e6 / 46e9 * 0.5 + 55.4e-6, 1e-12));
	cr_expect(near(roofline_a2a(&l, 1e6, 0), 66.27e-6, 1e-4));
}

/* A hierarchical all-to-all crosses once to each other node a token's
 * experts reach.  DeepSeek-V3's 8 of 256 experts on 16 GPUs, 8 a node:
 * sent a copy per expert, the 8 x 8/15 copies bound for the other node
 * carry 2 (1 - 2^-8) / 8 crossings each (placed at random); sent a copy
 * per GPU, the other node is reached with 1 - C(128, 8) / C(256, 8) and
 * each of its GPUs with 1 - C(240, 8) / C(256, 8), 8 of them.  Flat, or
 * on one node, every copy crosses. */
Test(roofline, a_hierarchical_all_to_all_crosses_once_a_node)
{
	double node = 1, gpu = 1; /* no expert on the other node, on one GPU */
	for (int i = 0; i < 8; i++)
		node *= (128.0 - i) / (256 - i), gpu *= (240.0 - i) / (256 - i);
	cr_expect(near(roofline_a2a_reached(256, 8, 2), 2 * (1 - node), 1e-12));
	cr_expect(near(roofline_a2a_reached(256, 8, 16), 16 * (1 - gpu), 1e-12));
	cr_expect(near(roofline_a2a_cross(16, 8, 256, 8, 1, 0), 2 * (1 - pow(0.5, 8)) / 8, 1e-12));
	double per_gpu = (1 - node) / (8 * (1 - gpu));
	cr_expect(near(roofline_a2a_cross(16, 8, 256, 8, 1, 1), per_gpu, 1e-12), "%g, want %g",
		  roofline_a2a_cross(16, 8, 256, 8, 1, 1), per_gpu);
	cr_expect_gt(per_gpu, 2 * (1 - pow(0.5, 8)) / 8, "fewer copies, each more likely to cross");
	cr_expect_lt(per_gpu, 1);
	cr_expect_eq(roofline_a2a_cross(16, 8, 256, 8, 0, 1), 1);
	cr_expect_eq(roofline_a2a_cross(8, 8, 256, 8, 1, 1), 1);
}

/* Issue 12: top-k ranks its scores at the device's selection rate where it
 * declares one.  KARAT: 16 cores x 2.4e9 scores/s = 3.84e10.  A top-k of
 * 1e9 scores with 4e9 B: its scan roofline is 4e9 / (1.2e12 x 0.8) =
 * 4.17 ms, its selection 1e9 / 3.84e10 = 26.0 ms: compute-bound at the
 * selection rate.  The Hopper GPUs declare the radix select measured in flashinfer PR #3009. */
Test(roofline, topk_runs_at_the_selection_rate)
{
	struct kdevice k, h;
	struct klink l;
	struct kerr err;
	cr_assert_eq(zoo_load_device("karat", &k, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link(k.link, &l, NULL, &err), 0, "%s", err.msg);
	cr_expect_eq(device_select_rate(&k), 16 * 2.4e9);
	k.overhead = 0;
	struct op_cost o = {.kind = OP_TOPK, .base = OP_TOPK, .cls = OC_SCAN, .side = SIDE_CACHE,
			    .dt = DT_FP32, .count = 1, .flops = 1e9, .bytes = 4e9};
	roofline_op(&o, &k, &l);
	cr_expect_eq(o.bound, BOUND_COMPUTE);
	cr_expect(near(o.time, 1e9 / 3.84e10, 1e-12), "%.17g", o.time);
	/* the draft module's top-k is a top-k too */
	o.kind = OP_MTP;
	roofline_op(&o, &k, &l);
	cr_expect(near(o.time, 1e9 / 3.84e10, 1e-12));
	/* a scan is not a selection */
	o.kind = o.base = OP_INDEX_SCAN;
	roofline_op(&o, &k, &l);
	cr_expect(near(o.time, 4e9 / (1.2e12 * 0.8), 1e-12), "%.17g", o.time);
	cr_assert_eq(zoo_load_device("h200", &h, NULL, &err), 0, "%s", err.msg);
	cr_expect_eq(device_select_rate(&h), 3.85e11); /* flashinfer PR #3009 */
	/* rows side by side: 4 rows of 65,536 take one row's pass, 65,536 /
	 * 9.05e9 = 7.24 us, plus the 4.13 us fixed time (the HBM read of the
	 * 1 MB of scores, 0.26 us, joins it in the H200's p-norm); the split
	 * kernel, faster here, is left out (few_long_rows_take_the_split_kernel) */
	h.select_split = 0;
	double tm = 4 * 4 * 65536 / (4.8e12 * h.eff_m[OC_SCAN]);
	struct op_cost r = {.kind = OP_TOPK, .base = OP_TOPK, .cls = OC_SCAN, .side = SIDE_CACHE,
			    .dt = DT_FP32, .count = 1, .flops = 4 * 65536, .bytes = 4 * 4 * 65536,
			    .rows = 4};
	roofline_op(&r, &h, &l);
	cr_expect(near(r.time, 4.13e-6 + roofline_join(&h, 65536 / 9.05e9, tm), 1e-12), "%.17g",
		  r.time);
	cr_expect(near(r.time, 11.37e-6, 1e-3), "%.17g", r.time);
	r.rows = 0; /* without rows, the throughput alone */
	roofline_op(&r, &h, &l);
	cr_expect(near(r.time, 4.13e-6 + roofline_join(&h, 4 * 65536 / 3.85e11, tm), 1e-12),
		  "%.17g", r.time);
	/* select.overlap joins the row pass and the throughput: 1 adds them,
	 * 7.241 + 0.681 us (the MI355X's fit), 2 their root sum of squares */
	r.rows = 4, h.select_overlap = 1;
	roofline_op(&r, &h, &l);
	cr_expect(near(r.time, 4.13e-6 + roofline_join(&h, 65536 / 9.05e9 + 4 * 65536 / 3.85e11, tm),
		       1e-12), "%.17g", r.time);
	cr_expect(near(r.time, 12.05e-6, 1e-3), "%.17g", r.time);
	h.select_overlap = 2;
	roofline_op(&r, &h, &l);
	cr_expect(near(r.time, 4.13e-6 + roofline_join(&h, hypot(65536 / 9.05e9, 4 * 65536 / 3.85e11),
							 tm), 1e-12), "%.17g", r.time);
	/* a device file must give cores with their rate, or a unit's rate */
	const char *base = BARE_DEVICE;
	char text[2048];
	struct kdevice d;
	snprintf(text, sizeof text, "%s[select]\ncores = 4\n", base);
	cr_expect_eq(zoo_load_device(tmp_ini_str(0, text), &d, NULL, &err), -1);
	cr_expect(strstr(err.msg, "go together"), "%s", err.msg);
	snprintf(text, sizeof text, "%s[select]\ncores = 4\ncore_rate = 1e9\nunit_rate = 1e11\n", base);
	cr_expect_eq(zoo_load_device(tmp_ini_str(0, text), &d, NULL, &err), -1);
	cr_expect(strstr(err.msg, "not both"), "%s", err.msg);
	snprintf(text, sizeof text, "%s[select]\nunit_rate = 1e11\noverlap = 1\n", base);
	cr_expect_eq(zoo_load_device(tmp_ini_str(0, text), &d, NULL, &err), -1);
	cr_expect(strstr(err.msg, "needs select.row_rate") && strstr(err.msg, ":23:"), "%s",
		  err.msg);
	snprintf(text, sizeof text, "%s[select]\nunit_rate = 1e11\n", base);
	cr_expect_eq(zoo_load_device(tmp_ini_str(0, text), &d, NULL, &err), 0, "%s", err.msg);
	cr_expect_eq(device_select_rate(&d), 1e11);
}

/* A few long rows take the split kernel where it is faster (select.split
 * = 8 SMs a row, select.split_fixed = 7.94 us on the H200, as the B200).
 * By hand, rows of 262,144 scores (a row's own pass 28.97 us on one SM,
 * 3.62 us on eight; 0.68 us of throughput a row):
 *   1 row:   4.13 + 28.97 = 33.10 against 7.94 + 3.62 = 11.56: split;
 *   8 rows:  4.13 + 28.97 = 33.10 against 7.94 + 5.45 = 13.39: split;
 *   64 rows: 4.13 + 43.58 = 47.71 against 7.94 + 43.58 = 51.52: one SM
 * a row.  The HBM reads (1-67 MB at 0.85 x 4.8 TB/s: 0.26, 2.06 and
 * 16.45 us) join the compute time in the H200's p-norm (p = 3): 11.56,
 * 13.48 and 48.47 us. */
Test(roofline, few_long_rows_take_the_split_kernel)
{
	struct kdevice h;
	struct klink l;
	struct kerr err;
	cr_assert_eq(zoo_load_device("h200", &h, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link("nvlink4", &l, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(h.select_split, 8);
	cr_assert(near(h.select_split_fixed, 7.94e-6, 1e-9));
	const double n = 262144, rows[] = {1, 8, 64}, want[] = {11.56e-6, 13.48e-6, 48.47e-6};
	const int split[] = {1, 1, 0};
	for (int i = 0; i < 3; i++) {
		double r = rows[i], tm = 4 * r * n / (4.8e12 * h.eff_m[OC_SCAN]);
		struct op_cost o = {.kind = OP_TOPK, .base = OP_TOPK, .cls = OC_SCAN,
				    .side = SIDE_CACHE, .dt = DT_FP32, .count = 1, .flops = r * n,
				    .bytes = 4 * r * n, .rows = r};
		roofline_op(&o, &h, &l);
		double through = r * n / 3.85e11, pass = n / 9.05e9 / (split[i] ? 8 : 1);
		double fixed = split[i] ? 7.94e-6 : 4.13e-6;
		cr_expect(near(o.time, fixed + roofline_join(&h, fmax(through, pass), tm), 1e-12),
			  "%g rows: %.17g", r, o.time);
		cr_expect(near(o.time, want[i], 3e-3), "%g rows: %.4g us, by hand %.4g", r,
			  o.time * 1e6, want[i] * 1e6);
		cr_expect(near(o.t_compute, fmax(through, pass), 1e-12), "%g rows: compute %g", r,
			  o.t_compute);
	}
	/* without the split kernel, the one row takes its pass on one SM */
	h.select_split = 0;
	struct op_cost o = {.kind = OP_TOPK, .base = OP_TOPK, .cls = OC_SCAN, .side = SIDE_CACHE,
			    .dt = DT_FP32, .count = 1, .flops = n, .bytes = 4 * n, .rows = 1};
	roofline_op(&o, &h, &l);
	cr_expect(near(o.time, 33.10e-6, 3e-3), "%.4g us", o.time * 1e6);
	/* the two keys go together, and spread a row's pass: they need it */
	const char *base = BARE_DEVICE "[select]\nunit_rate = 1e11\n";
	char text[2048];
	struct kdevice d;
	snprintf(text, sizeof text, "%srow_rate = 1e9\nsplit = 8\n", base);
	cr_expect_eq(zoo_load_device(tmp_ini_str(0, text), &d, NULL, &err), -1);
	cr_expect(strstr(err.msg, "go together") && strstr(err.msg, ":24:"), "%s", err.msg);
	snprintf(text, sizeof text, "%ssplit = 8\nsplit_fixed = 20 us\n", base);
	cr_expect_eq(zoo_load_device(tmp_ini_str(0, text), &d, NULL, &err), -1);
	cr_expect(strstr(err.msg, "needs select.row_rate") && strstr(err.msg, ":23:"), "%s",
		  err.msg);
	snprintf(text, sizeof text, "%srow_rate = 1e9\nsplit = 1\nsplit_fixed = 20 us\n", base);
	cr_expect_eq(zoo_load_device(tmp_ini_str(0, text), &d, NULL, &err), -1);
	cr_expect(strstr(err.msg, "split") && strstr(err.msg, ":24:"), "%s", err.msg);
	snprintf(text, sizeof text, "%srow_rate = 1e9\nsplit = 8\nsplit_fixed = 20 us\n", base);
	cr_expect_eq(zoo_load_device(tmp_ini_str(0, text), &d, NULL, &err), 0, "%s", err.msg);
	cr_expect_eq(d.select_split, 8);
	cr_expect(near(d.select_split_fixed, 20e-6, 1e-12));
}

/* Issue 28 item 1: a GEMM in FP4 reaches its own share of the FP4 peak
 * where the file gives efficiency.gemm_compute_fp4 (GB200: 0.75 of 10
 * PFLOPS against 0.57 of 5 at FP8); other classes, other dtypes, and a
 * device without an FP4 peak (FP4 runs at its FP8 rate) keep
 * gemm_compute. */
Test(roofline, a_gemm_in_fp4_takes_its_own_efficiency)
{
	struct kdevice d;
	struct kerr err;
	cr_assert_eq(zoo_load_device("gb200", &d, NULL, &err), 0, "%s", err.msg);
	double f, b;
	roofline_rates(&d, OC_GEMM, DT_FP4, &f, &b);
	cr_expect(near(f, 1 / (10000e12 * 0.75), 1e-12), "FP4 GEMM: %g s/FLOP", f);
	roofline_rates(&d, OC_GEMM, DT_FP8, &f, &b);
	cr_expect(near(f, 1 / (5000e12 * 0.57), 1e-12), "FP8 GEMM: %g s/FLOP", f);
	roofline_rates(&d, OC_SCAN, DT_FP4, &f, &b);
	cr_expect(near(f, 1 / (10000e12 * d.eff_c[OC_SCAN]), 1e-12), "an FP4 scan: gemm's FP4 share is a GEMM's");
	d.peak[DT_FP4] = 0; /* no FP4 units: its FP8 rate at gemm_compute */
	roofline_rates(&d, OC_GEMM, DT_FP4, &f, &b);
	cr_expect(near(f, 1 / (5000e12 * 0.57), 1e-12), "FP4 on FP8 units: %g s/FLOP", f);
	cr_expect(near(roofline_ridge(&d, OC_GEMM, DT_FP8), 5000e12 * 0.57 / (d.mem_bw * d.eff_m[OC_GEMM]),
		       1e-12));
}
