/* test_ops.c: hand-computed FLOPs and bytes of every operator of one decode
 * step, written down before the code (the shapes in docs/model.md), for
 * DeepSeek-V3.2 (MLA + DSA + MoE) and Llama-3.1-70B (dense GQA). */
#include <criterion/criterion.h>
#include <math.h>

#include "helpers.h"
#include "karat.h"

static struct step S;
static struct op_row R[OP_N], TOT;

static void build(const char *model, double B, double L, double G, double mtp)
{
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model(model, &m, NULL, &err), 0, "%s", err.msg);
	struct kbatch b = {.requests = B, .gpus = G, .context = L, .mtp = mtp};
	cr_assert_eq(step_build(&m, &b, &S, &err), 0, "%s", err.msg);
	step_rows(&S, R, &TOT);
}

/* The same for a model already loaded (and changed), without MTP. */
static void build_model(const struct kmodel *m, double B, double L, double G)
{
	struct kerr err;
	struct kbatch b = {.requests = B, .gpus = G, .context = L};
	cr_assert_eq(step_build(m, &b, &S, &err), 0, "%s", err.msg);
	step_rows(&S, R, &TOT);
}

/* Row k must run `count` times at (flops, bytes) each. */
static void expect_op(enum op_kind k, double count, double flops, double bytes)
{
	const char *n = op_table[k].name;
	cr_assert(R[k].present, "%s missing", n);
	cr_expect_eq(R[k].count, count, "%s count %g, expected %g", n, R[k].count, count);
	cr_expect(near(R[k].flops, count * flops, 1e-12), "%s flops %.17g, expected %.17g",
		  n, R[k].flops, count * flops);
	cr_expect(near(R[k].bytes, count * bytes, 1e-12), "%s bytes %.17g, expected %.17g",
		  n, R[k].bytes, count * bytes);
}

Test(ops, deepseek_v32_every_operator_by_hand)
{
	build("deepseek-v3.2", 4, 10000, 1, 0); /* T = 4 tokens, q = 1 */
	expect_op(OP_ATTN_NORM, 61, 114688, 129024);
	expect_op(OP_Q_DOWN, 61, 88080384, 11079680);
	expect_op(OP_Q_NORM, 61, 4.0 * 4 * 1536, 9.0 * 1536 * 2);
	expect_op(OP_Q_UP, 61, 301989888, 37957632);
	expect_op(OP_KV_DOWN, 61, 33030144, 4190720);
	expect_op(OP_KV_NORM, 61, 4.0 * 4 * 512, 9.0 * 512 * 2);
	expect_op(OP_Q_ABSORB, 61, 67108864, 9043968);
	expect_op(OP_INDEX_Q_PROJ, 61, 100663296, 12660736);
	expect_op(OP_INDEX_K_PROJ, 61, 7340032, 975872);
	expect_op(OP_INDEX_W_PROJ, 61, 3670016, 975360);
	expect_op(OP_ROPE, 61, 3.0 * 4 * 129 * 64, 2.0 * 4 * 129 * 64 * 2);
	/* cache rows: 656 B KV on 61 layers, 132 B index keys on 61 layers */
	cr_expect_eq(R[OP_CACHE_WRITE].count, 122);
	cr_expect(near(R[OP_CACHE_WRITE].bytes, 61.0 * 4 * 656 + 61.0 * 4 * 132, 1e-12));
	/* index scan: 2*64*128*L*4 FLOPs; 132 B keys + fp32 scores + queries */
	expect_op(OP_INDEX_SCAN, 61, 655360000, 5280000 + 160000 + 33792);
	expect_op(OP_TOPK, 61, 40000, 160000 + 32768);
	expect_op(OP_GATHER, 61, 0, 4.0 * 2048 * 656);
	/* absorbed MLA over 2048 rows: 2176 FLOPs per head per row */
	expect_op(OP_ATTENTION, 61, 2281701376.0, 1114112);
	expect_op(OP_V_ABSORB, 61, 67108864, 9043968);
	expect_op(OP_O_PROJ, 61, 939524096, 117628928);
	expect_op(OP_FFN_NORM, 61, 114688, 129024);
	expect_op(OP_DENSE_FFN, 3, 3170893824.0, 396918784);
	expect_op(OP_ROUTER, 58, 14680064, 3729408);
	/* 4 tokens x top-8 of 256: expected distinct experts */
	double active = 256 * (1 - pow(248.0 / 256, 4));
	expect_op(OP_EXPERTS, 58, 2818572288.0, active * 44040192 + 1310720);
	expect_op(OP_SHARED_EXPERT, 58, 352321536, 44204032);
	expect_op(OP_FINAL_NORM, 1, 114688, 129024);
	expect_op(OP_LM_HEAD, 1, 7413432320.0, 1854449664.0);
	expect_op(OP_SAMPLING, 1, 3.0 * 4 * 129280, 4.0 * 129280 * 2);
	cr_expect(!R[OP_DISPATCH].present && !R[OP_COMBINE].present,
		  "no all-to-all on one GPU");
	cr_expect(!R[OP_MTP].present && !R[OP_QKV_PROJ].present);
}

Test(ops, deepseek_v32_cache_bytes_per_token)
{
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("deepseek-v3.2", &m, NULL, &err), 0, "%s", err.msg);
	cr_expect_eq(model_kv_bytes_layer(&m), 656);
	cr_expect_eq(model_kv_bytes_token(&m), 40016);
	double kv, idx;
	attn_bytes_per_token(&m, &m.sp, &kv, &idx);
	cr_expect_eq(kv, 40016);
	cr_expect_eq(idx, 8052);
	/* by hand: at 128K one request's scan reads ~1.06 GB, its gather 82 MB */
	build("deepseek-v3.2", 1, 131072, 1, 0);
	double keys = 131072.0 * 8052;
	cr_expect(near(keys, 1.0554e9, 1e-3));
	cr_expect(R[OP_INDEX_SCAN].bytes >= keys);
	cr_expect(near(R[OP_GATHER].bytes, 2048.0 * 40016, 1e-12), "gather %.0f",
		  R[OP_GATHER].bytes);
}

Test(ops, llama_70b_every_operator_by_hand)
{
	build("llama-3.1-70b", 2, 4096, 1, 0);
	expect_op(OP_ATTN_NORM, 80, 4.0 * 2 * 8192, 5.0 * 8192 * 2);
	expect_op(OP_QKV_PROJ, 80, 335544320, 167845888);
	expect_op(OP_ROPE, 80, 55296, 73728);
	expect_op(OP_CACHE_WRITE, 80, 0, 2.0 * 4096);
	expect_op(OP_ATTENTION, 80, 268435456, 33619968);
	expect_op(OP_O_PROJ, 80, 268435456, 134283264);
	expect_op(OP_FFN_NORM, 80, 4.0 * 2 * 8192, 5.0 * 8192 * 2);
	expect_op(OP_DENSE_FFN, 80, 2818572288.0, 1409695744.0);
	expect_op(OP_LM_HEAD, 1, 4202692608.0, 2101892096.0);
	cr_expect(!R[OP_INDEX_SCAN].present && !R[OP_GATHER].present &&
		  !R[OP_EXPERTS].present && !R[OP_ROUTER].present);
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("llama-3.1-70b", &m, NULL, &err), 0, "%s", err.msg);
	cr_expect_eq(model_kv_bytes_token(&m), 327680);
}

Test(ops, expert_parallel_all_to_all_by_hand)
{
	/* B = 64 over G = 8: 8 local tokens; each sends 8 routed copies of a
	 * 7168-wide FP8 row with its FP32 scale per 128 channels (56 x 4 B,
	 * DeepEP's FP8 dispatch), 7/8 of them leave the GPU; combine in BF16. */
	build("deepseek-v3.2", 64, 4096, 8, 0);
	expect_op(OP_DISPATCH, 58, 0, 8.0 * 8 * (7168 * 1 + 56 * 4) * 7 / 8);
	expect_op(OP_COMBINE, 58, 0, 8.0 * 8 * 7168 * 2 * 7 / 8);
	/* 64 tokens x 8 picks spread over 8 GPUs: 64 pairs per GPU, over its
	 * 32 experts of which 32 (1 - (31/32)^... ) are touched */
	double active = 32 * (1 - pow(1 - 8.0 / 256, 64));
	expect_op(OP_EXPERTS, 58, 6.0 * 64 * 7168 * 2048,
		  active * 3 * 7168 * 2048 + 64.0 * (2 * 7168 + 3 * 2048) * 2);
}

Test(ops, totals_add_up)
{
	build("glm-5.2", 16, 65536, 4, 1);
	double f = 0, b = 0, c = 0;
	for (int k = 0; k < OP_N; k++)
		if (R[k].present) {
			f += R[k].flops;
			b += R[k].bytes;
			c += R[k].count;
		}
	cr_expect(near(f, TOT.flops, 1e-12));
	cr_expect(near(b, TOT.bytes, 1e-12));
	cr_expect_eq(c, TOT.count);
}

/* A GPU-side-only step is the full step less its cache-side operators, in
 * the same order, for every algorithm (with MTP, where the model has it). */
Test(ops, gpu_only_step_is_the_full_step_without_the_cache_side)
{
	static struct step full, gpu;
	struct kerr err;
	const char *models[] = {"deepseek-v3.2", "qwen3-235b-a22b"};
	for (int mi = 0; mi < 2; mi++) {
		struct kmodel m;
		cr_assert_eq(zoo_load_model(models[mi], &m, NULL, &err), 0, "%s", err.msg);
		for (int a = 0; a < ALGO_N; a++) {
			struct sparse_cfg sp;
			sparse_cfg_init(&sp, a);
			if (attn_applicable(&m, &sp, 1, &err) != 0)
				continue;
			struct kbatch b = {.requests = 16, .gpus = 4, .context = 50000,
					   .mtp = m.mtp_layers > 0, .sp = &sp};
			cr_assert_eq(step_build(&m, &b, &full, &err), 0, "%s", err.msg);
			b.gpu_only = 1;
			cr_assert_eq(step_build(&m, &b, &gpu, &err), 0, "%s", err.msg);
			int j = 0, cache = 0;
			for (int i = 0; i < full.n; i++) {
				const struct op_cost *o = &full.op[i];
				if (o->side == SIDE_CACHE) {
					cache++;
					continue;
				}
				cr_assert_lt(j, gpu.n, "%s/%s: GPU-side step too short", models[mi],
					     algo_names[a]);
				cr_expect(gpu.op[j].kind == o->kind && gpu.op[j].count == o->count &&
						  gpu.op[j].flops == o->flops && gpu.op[j].bytes == o->bytes,
					  "%s/%s: operator %d differs", models[mi], algo_names[a], j);
				j++;
			}
			cr_expect_eq(j, gpu.n, "%s/%s: GPU-side step has extra operators",
				     models[mi], algo_names[a]);
			cr_expect_gt(cache, 0, "%s/%s: the full step has no cache side",
				     models[mi], algo_names[a]);
		}
	}
}

/* Issue 12: a step priced layer kind by layer kind is the whole step: for
 * every model and algorithm, the layer sequence has attn_classes' counts,
 * and the kinds' one-layer steps times their counts plus the tail give
 * the whole step's FLOPs and bytes, operator kind by operator kind. */
Test(ops, layer_kinds_add_up_to_the_whole_step)
{
	static struct step whole, part;
	static unsigned char seq[PIPE_MAX_LAYERS];
	struct kerr err;
	char names[64][64];
	int nm = zoo_list(ZOO_MODEL, names, 64, &err);
	cr_assert_gt(nm, 5);
	int checked = 0;
	for (int mi = 0; mi < nm; mi++) {
		struct kmodel m;
		cr_assert_eq(zoo_load_model(names[mi], &m, NULL, &err), 0, "%s", err.msg);
		for (int a = 0; a < ALGO_N; a++) {
			struct sparse_cfg sp;
			if (a == m.sp.algo)
				sp = m.sp;
			else
				sparse_cfg_init(&sp, a);
			if (attn_applicable(&m, &sp, 1, &err) != 0)
				continue;
			struct layer_kind kinds[PIPE_MAX_CLASSES];
			double counts[PIPE_MAX_CLASSES];
			int nk = step_layer_kinds(&m, &sp, seq, kinds, counts);
			/* the sequence counted is attn_classes */
			struct lcount lc[LC_N];
			int nc = attn_classes(&m, &sp, m.layers, 0, lc);
			for (int c = 0; c < nc; c++) {
				double n = 0;
				for (int k = 0; k < nk; k++)
					n += kinds[k].cls == lc[c].cls ? counts[k] : 0;
				cr_expect_eq(n, lc[c].layers, "%s/%s: class %d has %g layers in the "
					     "sequence, %g counted", names[mi], algo_names[a], lc[c].cls,
					     n, lc[c].layers);
			}
			struct kbatch b = {.requests = 16, .gpus = 4, .context = 30000,
					   .mtp = m.mtp_layers > 0, .sp = &sp};
			cr_assert_eq(step_build(&m, &b, &whole, &err), 0, "%s", err.msg);
			struct op_row rw[OP_N], rp[OP_N], tw, tp;
			step_rows(&whole, rw, &tw);
			double f[OP_N] = {0}, by[OP_N] = {0};
			for (int k = 0; k <= nk; k++) {
				b.part = k < nk ? STEP_LAYER : STEP_TAIL;
				if (k < nk)
					b.kind = kinds[k];
				cr_assert_eq(step_build(&m, &b, &part, &err), 0, "%s", err.msg);
				step_rows(&part, rp, &tp);
				for (int o = 0; o < OP_N; o++) {
					f[o] += (k < nk ? counts[k] : 1) * rp[o].flops;
					by[o] += (k < nk ? counts[k] : 1) * rp[o].bytes;
				}
			}
			for (int o = 0; o < OP_N; o++)
				cr_expect(near(f[o], rw[o].flops, 1e-12) && near(by[o], rw[o].bytes, 1e-12),
					  "%s/%s %s: kinds %g FLOPs %g B, whole %g FLOPs %g B", names[mi],
					  algo_names[a], op_table[o].name, f[o], by[o], rw[o].flops,
					  rw[o].bytes);
			checked++;
		}
	}
	cr_expect_gt(checked, 50, "only %d model x algorithm pairs", checked);
}

/* Issue 28 item 6: each operator group's weights at their own dtype.
 * DeepSeek-V3.2 at B = 4 on one GPU, L = 10,000, as above, with experts in
 * FP4, attention projections in BF16 and the LM head in FP8 (the dense
 * FFN keeps the file's FP8): each operator's bytes by hand. */
Test(ops, operator_groups_take_their_own_weight_dtypes)
{
	struct kmodel m;
	struct ini_doc *doc;
	struct kerr err;
	cr_assert_eq(zoo_load_model("deepseek-v3.2", &m, &doc, &err), 0, "%s", err.msg);
	cr_expect(m.attn_w_dt == m.w_dt && m.dense_w_dt == m.w_dt && m.expert_w_dt == m.w_dt &&
		  m.head_dt == m.emb_dt, "without the keys, the file's weights and embedding");
	/* the weights the file gives, as before the groups: embedding and LM
	 * head in BF16, the routed experts spread over the GPUs, the rest FP8 */
	struct param_count p;
	model_params(&m, &p);
	double routed = 59.0 * 256 * 3 * 7168 * 2048; /* 58 MoE layers and the MTP module's */
	double rest = p.total - p.embed - p.lm_head - routed;
	cr_expect(near(model_weight_bytes(&m, 8), (p.embed + p.lm_head) * 2 + rest + routed / 8,
		       1e-12));
	m.expert_w_dt = DT_FP4, m.attn_w_dt = DT_BF16, m.head_dt = DT_FP8;
	build_model(&m, 4, 10000, 1);
	double active = 256 * (1 - pow(248.0 / 256, 4));
	expect_op(OP_EXPERTS, 58, 2818572288.0, active * 44040192 / 2 + 1310720);
	expect_op(OP_SHARED_EXPERT, 58, 352321536, 44040192 / 2 + 163840);
	expect_op(OP_O_PROJ, 61, 939524096, 2 * 117440512.0 + 188416);
	expect_op(OP_DENSE_FFN, 3, 3170893824.0, 396918784);
	expect_op(OP_LM_HEAD, 1, 7413432320.0, 129280.0 * 7168 + 1091584);
	/* and the weights one GPU of 8 holds: attention (every layer's, the
	 * indexer's and the MTP module's) twice, experts (routed and shared)
	 * half, the LM head half */
	double shared = 59.0 * 3 * 7168 * 2048, attn = 62 * (p.attn_layer + p.index_layer);
	double want = (p.embed + p.lm_head) * 2 + rest + routed / 8 + attn - shared / 2 -
		      routed / 16 - p.lm_head;
	cr_expect(near(model_weight_bytes(&m, 8), want, 1e-12), "%.17g vs %.17g",
		  model_weight_bytes(&m, 8), want);
	/* an FP4 dispatch carries an FP8 scale per 16 values (NVFP4) */
	m.dispatch_dt = DT_FP4;
	build_model(&m, 64, 4096, 8);
	expect_op(OP_DISPATCH, 58, 0, 8.0 * 8 * (7168 / 2 + 7168 / 16) * 7 / 8);
	/* a group the file does not give follows an override of weights; one
	 * it gives keeps its own */
	cr_assert_eq(ini_doc_put(doc, "dtypes", "attention_weights", "bf16", 999), 0);
	m.w_dt = DT_FP4, m.attn_w_dt = DT_BF16;
	cr_assert_eq(model_validate(&m, doc, &err), 0, "%s", err.msg);
	cr_expect(m.expert_w_dt == DT_FP4 && m.dense_w_dt == DT_FP4 && m.attn_w_dt == DT_BF16);
	ini_doc_free(doc);
}
