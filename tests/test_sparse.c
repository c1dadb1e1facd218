/* test_sparse.c: the sparse-attention library.  Hand-computed stage counts
 * of every algorithm at two context lengths (written from each algorithm's
 * published formulas, cited in its row, with the numbers filled in), and
 * its invariants: top-k >= L equals dense, page summaries cost 1/page, each
 * parameter moves the bytes the way it should, bad names and values fail. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

/* Cache-side totals of one step for one request: per kind, all layers. */
struct totals {
	double scan_f, scan_b, topk_f, topk_b, gather_b, attn_f, attn_b;
};

static void run_algo(const char *model, const char *spec, double L, struct totals *t)
{
	static struct step s;
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model(model, &m, NULL, &err), 0, "%s", err.msg);
	static struct sparse_cfg sp;
	cr_assert_eq(sparse_parse_spec(spec, &m.sp, &sp, &err), 0, "%s", err.msg);
	struct kbatch b = {.requests = 1, .gpus = 1, .context = L, .sp = &sp};
	cr_assert_eq(step_build(&m, &b, &s, &err), 0, "%s", err.msg);
	struct op_row r[OP_N], tot;
	step_rows(&s, r, &tot);
	*t = (struct totals){r[OP_INDEX_SCAN].flops, r[OP_INDEX_SCAN].bytes, r[OP_TOPK].flops,
			     r[OP_TOPK].bytes, r[OP_GATHER].bytes, r[OP_ATTENTION].flops,
			     r[OP_ATTENTION].bytes};
}

static void expect(const char *what, const struct totals *got, const struct totals *want)
{
	const double *g = &got->scan_f, *w = &want->scan_f;
	static const char *const names[] = {"scan flops", "scan bytes", "topk flops",
					    "topk bytes", "gather bytes", "attention flops",
					    "attention bytes"};
	for (int i = 0; i < 7; i++)
		cr_expect(near(g[i], w[i], 1e-12), "%s: %s %.17g, expected %.17g", what, names[i],
			  g[i], w[i]);
}

/* Llama-3.1-70B: H 64, H_kv 8, d 128, BF16: a K+V row is 4096 B per token
 * per layer, K alone 2048 B; attention 4*64*128 = 32768 FLOPs per token;
 * q in and out 2*64*128*2 = 32768 B.  80 layers. */
#define LL 80.0
#define ROW 4096.0
#define FTOK 32768.0
#define ACT 32768.0

Test(sparse, quest_by_hand)
{
	struct totals t;
	/* page 16, budget 2048 (128 pages), first 2 layers dense, per group */
	double L[2] = {4096, 65536};
	for (int i = 0; i < 2; i++) {
		double np = L[i] / 16;
		run_algo("llama-3.1-70b", "quest", L[i], &t);
		struct totals w = {78 * 2 * 128 * np * 64, 78 * np * 2 * 2048,
				   78 * 8 * np, 78 * 8 * (np * 4 + 128 * 4), 78 * 2048 * ROW,
				   78 * FTOK * 2048 + 2 * FTOK * L[i],
				   78 * ACT + 2 * (L[i] * ROW + ACT)};
		expect("quest", &t, &w);
	}
}

/* DeepSeek-V3.2 (61 layers, no MTP here) at 131,072 tokens, k 2048: a
 * flat top-k ranks 131,072 FP32 scores per layer; with select_block = 8
 * it ranks the 16,384 block maxima, then the 2,048 x 8 = 16,384 tokens of
 * the top blocks: 32,768, a quarter.  The bytes follow (4 B a score, 4 B
 * an index written); the scan and everything after are unchanged.  Where
 * the blocks would rank more than every score (65,536 tokens in blocks of
 * 64: 1,024 + 65,536), the flat top-k runs. */
Test(sparse, two_level_selection_by_hand)
{
	struct totals flat, two;
	run_algo("deepseek-v3.2", "dsa", 131072, &flat);
	run_algo("deepseek-v3.2", "dsa:select_block=8", 131072, &two);
	cr_expect(near(flat.topk_f, 61 * 131072.0, 1e-12), "%.17g", flat.topk_f);
	cr_expect(near(two.topk_f, 61 * (16384.0 + 16384.0), 1e-12), "%.17g", two.topk_f);
	cr_expect(near(two.topk_b, 61 * (32768.0 * 4 + 2048 * 4), 1e-12), "%.17g", two.topk_b);
	cr_expect(near(two.scan_f, flat.scan_f, 1e-15) && near(two.attn_b, flat.attn_b, 1e-15));
	run_algo("deepseek-v3.2", "dsa:select_block=64", 65536, &two);
	run_algo("deepseek-v3.2", "dsa", 65536, &flat);
	cr_expect(near(two.topk_f, flat.topk_f, 1e-15), "flat: %.17g", two.topk_f);
	cr_expect(near(flat.topk_f, 61 * 65536.0, 1e-12), "%.17g", flat.topk_f);
}

Test(sparse, windows_and_budgets_by_hand)
{
	struct totals t;
	double L[2] = {4096, 65536};
	for (int i = 0; i < 2; i++) {
		run_algo("llama-3.1-70b", "streamingllm", L[i], &t); /* 4 sinks + 2048 */
		struct totals w = {0, 0, 0, 0, 0, LL * FTOK * 2052, LL * (2052 * ROW + ACT)};
		expect("streamingllm", &t, &w);
		run_algo("llama-3.1-70b", "snapkv", L[i], &t); /* 2048 kept */
		struct totals w2 = {0, 0, 0, 0, 0, LL * FTOK * 2048, LL * (2048 * ROW + ACT)};
		expect("snapkv", &t, &w2);
	}
	/* H2O keeps ceil(0.2 L): 820 of 4096, 13108 of 65536; it updates each
	 * kept token's score per query head (C adds, the fp32 score read and
	 * written) and finds the one to evict by an argmin in the same pass (C
	 * more compares), or with evict_topk = 1 by a top-k kernel that ranks
	 * the C scores again (C FLOPs, C x 4 B per head) */
	double C[2] = {820, 13108};
	for (int i = 0; i < 2; i++) {
		run_algo("llama-3.1-70b", "h2o", L[i], &t);
		struct totals w = {LL * 2 * 64 * C[i], LL * 2 * 64 * C[i] * 4, 0, 0, 0,
				   LL * FTOK * C[i], LL * (C[i] * ROW + ACT)};
		expect("h2o", &t, &w);
		run_algo("llama-3.1-70b", "h2o:evict_topk=1", L[i], &t);
		struct totals w2 = {LL * 64 * C[i], LL * 2 * 64 * C[i] * 4, LL * 64 * C[i],
				    LL * 64 * C[i] * 4, 0, LL * FTOK * C[i], LL * (C[i] * ROW + ACT)};
		expect("h2o:evict_topk=1", &t, &w2);
	}
}

Test(sparse, sparq_and_magicpig_by_hand)
{
	struct totals t;
	double L[2] = {4096, 65536};
	for (int i = 0; i < 2; i++) {
		/* r = 128/8 = 16 channels; k = L/16.  Per query head (per_group =
		 * 0, gpt-fast's form): a KV group of 8 heads reads min(8*16, 128) =
		 * all 128 key channels, 64 selections, up to 8k rows gathered */
		double k = L[i] / 16;
		run_algo("llama-3.1-70b", "sparq:per_group=0", L[i], &t);
		struct totals w = {LL * 2 * 16 * L[i] * 64, LL * L[i] * 2048, LL * 64 * L[i],
				   LL * 64 * (L[i] * 4 + k * 4), LL * fmin(L[i], 8 * k) * ROW,
				   LL * FTOK * k, LL * ACT};
		expect("sparq:per_group=0", &t, &w);
		/* per KV group (the default): each head still scores its 16
		 * channels, but a group shares them: 16 of 128 channels of K read
		 * (256 B of a 2048-B K row), 8 selections, k rows gathered */
		run_algo("llama-3.1-70b", "sparq", L[i], &t);
		struct totals w2 = {LL * 2 * 16 * L[i] * 64, LL * L[i] * 256, LL * 8 * L[i],
				    LL * 8 * (L[i] * 4 + k * 4), LL * k * ROW, LL * FTOK * k, LL * ACT};
		expect("sparq", &t, &w2);
	}
	/* 10 bits, 150 tables: walk 150 L / 1024 bucket members per query head;
	 * ceil(0.02 L) sampled (82, 1311), 4 sinks + 64 local */
	double walk[2] = {600, 9600}, ns[2] = {82, 1311};
	for (int i = 0; i < 2; i++) {
		run_algo("llama-3.1-70b", "magicpig", L[i], &t);
		struct totals w = {LL * 2 * 128 * 10 * 150 * 64, LL * 64 * walk[i] * 5,
				   LL * 64 * walk[i], 0, LL * (fmin(L[i], 8 * ns[i]) + 68) * ROW,
				   LL * FTOK * (ns[i] + 68), LL * ACT};
		expect("magicpig", &t, &w);
	}
}

Test(sparse, block_methods_by_hand)
{
	struct totals t;
	/* MoBA, block 4096, top-12, per query head.  L = 4096: one block. */
	run_algo("llama-3.1-70b", "moba", 4096, &t);
	struct totals w1 = {LL * 2 * 128 * 1 * 64, LL * 1 * 2048, LL * 64 * 1, LL * 64 * (4 + 4),
			    LL * 4096 * ROW, LL * FTOK * 4096, LL * ACT};
	expect("moba 4K", &t, &w1);
	/* L = 65536: 16 blocks, 12 picked per head, the group's union is all 16 */
	run_algo("llama-3.1-70b", "moba", 65536, &t);
	struct totals w2 = {LL * 2 * 128 * 16 * 64, LL * 16 * 2048, LL * 64 * 16,
			    LL * 64 * (16 * 4 + 12 * 4), LL * 65536 * ROW, LL * FTOK * 49152,
			    LL * ACT};
	expect("moba 64K", &t, &w2);

	/* NSA: stride 16 compressed K+V, 16 blocks of 64 + window 512 */
	double L[2] = {4096, 65536};
	for (int i = 0; i < 2; i++) {
		double nc = L[i] / 16, nb = L[i] / 64;
		run_algo("llama-3.1-70b", "nsa:", L[i], &t);
		struct totals w = {LL * FTOK * nc, LL * nc * ROW, LL * 8 * nb,
				   LL * 8 * (nb * 4 + 16 * 4), LL * 1536 * ROW, LL * FTOK * 1536,
				   LL * ACT};
		expect("nsa", &t, &w);
	}
	/* InfLLM-V2: dense up to 8192 tokens */
	run_algo("llama-3.1-70b", "infllm-v2", 4096, &t);
	struct totals d = {0, 0, 0, 0, 0, LL * FTOK * 4096, LL * (4096 * ROW + ACT)};
	expect("infllm-v2 4K", &t, &d);
	/* 65536: 4096 compressed keys, 64 of 1024 blocks + 64 + 2048 tokens */
	run_algo("llama-3.1-70b", "infllm-v2", 65536, &t);
	struct totals w3 = {LL * 2 * 128 * 4096 * 64, LL * 4096 * 2048, LL * 8 * 1024,
			    LL * 8 * (1024 * 4 + 64 * 4), LL * 6208 * ROW, LL * FTOK * 6208,
			    LL * ACT};
	expect("infllm-v2 64K", &t, &w3);
	/* MSA forced onto Llama: 4 index heads x 128, FP8 keys (128 B), blocks
	 * of 128, top-16 per KV head = 2048 tokens */
	for (int i = 0; i < 2; i++) {
		double nb = L[i] / 128;
		run_algo("llama-3.1-70b", "msa", L[i], &t);
		struct totals w = {LL * 2 * 4 * 128 * L[i], LL * (L[i] * 128 + 4 * nb * 4 + 4 * 128),
				   LL * 4 * nb, LL * 4 * (nb * 4 + 16 * 4), LL * 2048 * ROW,
				   LL * FTOK * 2048, LL * ACT};
		expect("msa", &t, &w);
	}
}

/* DeepSeek-V3.2: FP8 MLA rows of 656 B; attention 128 x (2*576 + 2*512) =
 * 278528 FLOPs per token; q in and out 128 x 1088 x 2 = 278528 B; 61 layers. */
#define DL 61.0
#define DROW 656.0
#define DFTOK 278528.0
#define DACT 278528.0

Test(sparse, deepseek_v4_family_by_hand)
{
	struct totals t;
	/* V4 CSA: one entry per 4 tokens, FP4 index keys 64 + 4 = 68 B, top-512
	 * entries + 128 window tokens; query 64*128*0.5 + 64*4 = 4352 B */
	double L[2] = {4096, 65536};
	for (int i = 0; i < 2; i++) {
		double ne = L[i] / 4;
		run_algo("deepseek-v3.2", "dsv4-csa", L[i], &t);
		struct totals w = {DL * 2 * 64 * 128 * ne, DL * (ne * 68 + ne * 4 + 4352),
				   DL * ne, DL * (ne * 4 + 512 * 4), DL * 640 * DROW,
				   DL * DFTOK * 640, DL * DACT};
		expect("dsv4-csa", &t, &w);
		/* HCA: dense over L/128 entries + 128 window tokens */
		run_algo("deepseek-v3.2", "dsv4-hca", L[i], &t);
		double n = L[i] / 128 + 128;
		struct totals h = {0, 0, 0, 0, 0, DL * DFTOK * n, DL * (n * DROW + DACT)};
		expect("dsv4-hca", &t, &h);
	}
	/* V4.1 on 61 layers: round(6.1) = 6 full-scan, 6 re-index, 49 reuse.
	 * FP4 keys 68 B, 32 x 128 index heads (query 32*128*0.5 + 32*4 = 2176 B);
	 * candidates: 2048 blocks of 8 = 16384 tokens. */
	run_algo("deepseek-v3.2", "dsv41", 4096, &t);
	double full_b = 4096 * 68 + 4096 * 4 + 2176, full_f = 2 * 32 * 128 * 4096.0;
	struct totals w1 = {12 * full_f, 12 * full_b,
			    6 * (4096 + 512) + 6 * 4096,
			    6 * (4096 * 4 + 512 * 4 + 512 * 4 + 512 * 4) + 6 * (4096 * 4 + 512 * 4),
			    DL * 640 * DROW, DL * DFTOK * 640, DL * DACT};
	expect("dsv41 4K", &t, &w1);
	run_algo("deepseek-v3.2", "dsv41", 65536, &t);
	struct totals w2 = {6 * 2 * 32 * 128 * 65536.0 + 6 * 2 * 32 * 128 * 16384.0,
			    6 * (65536 * 72 + 2176.0) + 6 * (16384 * 72 + 2176.0),
			    6 * (65536 + 8192.0) + 6 * 16384.0,
			    6 * (65536 * 4 + 512 * 4 + 8192 * 4 + 2048 * 4.0) +
				    6 * (16384 * 4 + 512 * 4.0),
			    DL * 640 * DROW, DL * DFTOK * 640, DL * DACT};
	expect("dsv41 64K", &t, &w2);
	/* DSA itself at two lengths: 2048 picked of 4096 and of 65536 */
	for (int i = 0; i < 2; i++) {
		run_algo("deepseek-v3.2", "dsa", L[i], &t);
		struct totals w = {DL * 16384 * L[i], DL * (L[i] * 132 + L[i] * 4 + 64 * 128 + 256),
				   DL * L[i], DL * (L[i] * 4 + 2048 * 4), DL * 2048 * DROW,
				   DL * DFTOK * 2048, DL * DACT};
		expect("dsa", &t, &w);
	}
}

/* gather + attention, and everything a step reads from the cache */
static double selected_bytes(const struct totals *t) { return t->gather_b + t->attn_b; }

Test(sparse, selection_covering_the_context_equals_dense)
{
	struct totals dense, t;
	double L = 30000;
	run_algo("llama-3.1-70b", "gqa", L, &dense);
	static const char *const gqa_specs[] = {
		"quest:budget=30000,dense_layers=0", "moba:topk_blocks=100,per_group=1",
		"msa:topk_blocks=1000", "nsa:topk_blocks=1000", "infllm-v2:topk_blocks=1000",
		"snapkv:budget=30000", "streamingllm:window=30000", "h2o:keep=1",
		"dsa:topk=30000", "index-share:topk=30000"};
	for (size_t i = 0; i < sizeof gqa_specs / sizeof *gqa_specs; i++) {
		run_algo("llama-3.1-70b", gqa_specs[i], L, &t);
		cr_expect(near(t.attn_f, dense.attn_f, 1e-12), "%s: attention FLOPs %g vs dense %g",
			  gqa_specs[i], t.attn_f, dense.attn_f);
		cr_expect(near(selected_bytes(&t), selected_bytes(&dense), 1e-12),
			  "%s: rows read %g vs dense %g", gqa_specs[i], selected_bytes(&t),
			  selected_bytes(&dense));
	}
	run_algo("deepseek-v3.2", "mla", L, &dense);
	static const char *const mla_specs[] = {"dsa:topk=30000", "dsv41:topk=30000,window=0"};
	for (size_t i = 0; i < 2; i++) {
		run_algo("deepseek-v3.2", mla_specs[i], L, &t);
		cr_expect(near(t.attn_f, dense.attn_f, 1e-12), "%s", mla_specs[i]);
		cr_expect(near(selected_bytes(&t), selected_bytes(&dense), 1e-12), "%s", mla_specs[i]);
	}
}

Test(sparse, page_summaries_cost_one_page_th_of_the_cache)
{
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("llama-3.1-70b", &m, NULL, &err), 0);
	struct totals dense, t;
	double L = 131072;
	run_algo("llama-3.1-70b", "gqa", L, &dense);
	for (double S = 8; S <= 64; S *= 2) {
		char spec[64];
		snprintf(spec, sizeof spec, "quest:block=%g,dense_layers=0", S);
		run_algo("llama-3.1-70b", spec, L, &t);
		/* min and max keys per page vs full K and V per token */
		cr_expect(near(t.scan_b, (dense.attn_b - LL * ACT) / S, 1e-12), "page %g", S);
		struct sparse_cfg sp;
		cr_assert_eq(sparse_parse_spec(spec, &m.sp, &sp, &err), 0);
		double kv, idx;
		attn_storage(&m, &sp, L, 0, &kv, &idx);
		cr_expect(near(idx, kv / S, 1e-12), "quest summaries are 1/%g of the KV cache", S);
	}
	/* MoBA keeps one mean key per block: 1/(2B) of K+V */
	run_algo("llama-3.1-70b", "moba:block=512", L, &t);
	cr_expect(near(t.scan_b, (dense.attn_b - LL * ACT) / 1024, 1e-12));
}

/* Every cache-side byte of one step (index, top-k, gather, attention,
 * writes), for two requests. */
static double cache_bytes(const struct kmodel *m, const struct sparse_cfg *sp, double L)
{
	static struct step s;
	struct kerr err;
	struct kbatch b = {.requests = 2, .gpus = 1, .context = L, .sp = sp};
	cr_assert_eq(step_build(m, &b, &s, &err), 0, "%s", err.msg);
	double bytes = 0;
	for (int i = 0; i < s.n; i++)
		if (s.op[i].side == SIDE_CACHE)
			bytes += s.op[i].count * s.op[i].bytes;
	return bytes;
}

Test(sparse, every_parameter_moves_bytes_the_published_way)
{
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("llama-3.1-70b", &m, NULL, &err), 0);
	int checked = 0;
	for (int a = 0; a < ALGO_N; a++) {
		const struct algo_info *info = &algo_table[a];
		const struct algo_row *row = info->row;
		for (int i = 0; i < row->nparams; i++) {
			const struct algo_param *p = &row->params[i];
			if (!p->bytes_dir)
				continue;
			struct sparse_cfg lo, hi;
			sparse_cfg_init(&lo, a);
			hi = lo;
			double v = p->value;
			double up = p->p == SP_PER_GROUP ? 1 : p->p == SP_INDEX_DTYPE ? v + 1
							  : v > 0 ? 2 * v : v + 1;
			if (p->p == SP_PER_GROUP)
				lo.p[p->p] = 0;
			if (p->p == SP_KEEP || p->p == SP_SAMPLE || p->p == SP_FULL_SHARE)
				up = fmin(1, 1.5 * v);
			hi.p[p->p] = up;
			double L = p->p == SP_DENSE_BELOW ? 1.5 * v : 131072;
			double b0 = cache_bytes(&m, &lo, L), b1 = cache_bytes(&m, &hi, L);
			if (p->bytes_dir > 0)
				cr_expect(b1 > b0, "%s.%s %g -> %g should raise bytes (%g -> %g)",
					  info->name, sp_params[p->p].key, lo.p[p->p], up, b0, b1);
			else
				cr_expect(b1 < b0, "%s.%s %g -> %g should lower bytes (%g -> %g)",
					  info->name, sp_params[p->p].key, lo.p[p->p], up, b0, b1);
			checked++;
		}
	}
	cr_expect_geq(checked, 40, "only %d parameter directions checked", checked);
}

Test(sparse, every_algorithm_is_sourced_and_costs_something)
{
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("llama-3.1-70b", &m, NULL, &err), 0);
	for (int a = 0; a < ALGO_N; a++) {
		const struct algo_info *info = &algo_table[a];
		const struct algo_row *row = info->row;
		cr_expect_eq((int)info->id, a, "table row %d out of order", a);
		cr_expect_str_eq(algo_names[a], info->name);
		cr_expect(row->source && *row->source && row->desc && *row->desc);
		cr_expect(row->stages != NULL, "%s has no stage function", info->name);
		cr_expect(row->nparams >= 0 && row->nparams <= ALGO_MAX_PARAMS, "%s", info->name);
		unsigned long seen = 0;
		for (int i = 0; i < row->nparams; i++) {
			cr_expect(row->params[i].source && *row->params[i].source, "%s param %d",
				  info->name, i);
			cr_expect(!(seen & 1ul << row->params[i].p), "%s lists %s twice", info->name,
				  sp_params[row->params[i].p].key);
			seen |= 1ul << row->params[i].p;
		}
		/* an indexer needs its shape; a row that owns index layers keeps keys */
		if (row->indexer.classes)
			cr_expect((seen & 1ul << SP_INDEX_HEADS) && (seen & 1ul << SP_INDEX_DIM) &&
					  (seen & 1ul << SP_INDEX_DTYPE) && row->has_index,
				  "%s projects an indexer without its shape", info->name);
		if (row->index_layers)
			cr_expect(row->has_index, "%s owns index layers but keeps no index",
				  info->name);
		for (int b = 0; b < a; b++)
			cr_expect_str_neq(algo_names[b], info->name, "two rows named %s", info->name);
		if (row->layout == LAYOUT_MLA)
			continue;
		struct sparse_cfg sp;
		sparse_cfg_init(&sp, a);
		cr_expect(cache_bytes(&m, &sp, 65536) > 0, "%s", info->name);
	}
}

Test(sparse, bad_names_and_parameters)
{
	struct sparse_cfg sp;
	struct kerr err = {""};
	cr_expect_eq(sparse_parse_spec("questt", NULL, &sp, &err), -1);
	cr_expect(strstr(err.msg, "unknown algorithm 'questt' (known: gqa, mla, dsa"), "%s", err.msg);
	cr_expect_eq(sparse_parse_spec("quest:page=16", NULL, &sp, &err), -1);
	cr_expect(strstr(err.msg, "'page' is not a parameter of quest (its parameters: block, budget"),
		  "%s", err.msg);
	cr_expect_eq(sparse_parse_spec("quest:budget=lots", NULL, &sp, &err), -1);
	cr_expect(strstr(err.msg, "budget"), "%s", err.msg);
	cr_expect_eq(sparse_parse_spec("quest:budget", NULL, &sp, &err), -1);
	cr_expect(strstr(err.msg, "not key=value"), "%s", err.msg);
	cr_expect_eq(sparse_parse_spec("h2o:keep=2", NULL, &sp, &err), -1);
	cr_expect(strstr(err.msg, "out of range"), "%s", err.msg);
	cr_expect_eq(sparse_parse_spec("dsa:index_dtype=int4", NULL, &sp, &err), -1);
	cr_expect_eq(sparse_parse_spec("quest:budget=8", NULL, &sp, &err), -1);
	cr_expect(strstr(err.msg, "smaller than one page"), "%s", err.msg);
	cr_expect_eq(sparse_parse_spec("dsa:index_dtype=fp4,topk=1K", NULL, &sp, &err), 0, "%s",
		     err.msg);
	cr_expect_eq(sp.p[SP_TOPK], 1024);
	cr_expect(near(sparse_index_key_bytes(&sp), 68, 1e-12));

	/* the model's own settings are the base for its own algorithm */
	struct kmodel m;
	cr_assert_eq(zoo_load_model("glm-5.2", &m, NULL, &err), 0);
	cr_assert_eq(sparse_parse_spec("index-share:topk=1024", &m.sp, &sp, &err), 0);
	cr_expect_eq(sp.p[SP_INDEX_HEADS], 32);
	cr_expect_eq(sp.p[SP_TOPK], 1024);
	/* trained-only algorithms need --force on other models */
	cr_assert_eq(zoo_load_model("llama-3.1-70b", &m, NULL, &err), 0);
	sparse_cfg_init(&sp, ALGO_DSA);
	cr_expect_eq(attn_applicable(&m, &sp, 0, &err), -2);
	cr_expect(strstr(err.msg, "trained-only"), "%s", err.msg);
	cr_expect_eq(attn_applicable(&m, &sp, 1, &err), 0);
	sparse_cfg_init(&sp, ALGO_QUEST);
	cr_expect_eq(attn_applicable(&m, &sp, 0, &err), 0);
	sparse_cfg_init(&sp, ALGO_MLA);
	cr_expect_eq(attn_applicable(&m, &sp, 1, &err), -1);
	cr_expect(strstr(err.msg, "needs mla attention"), "%s", err.msg);
}

/* Issue 12: GLM-5.2's MTP pass reuses the indexer's selection
 * (index_share_for_mtp_iteration): its layer scans nothing, unless the
 * model says otherwise. */
/* With one query head per KV head (MHA), selecting per KV group is
 * selecting per head: every operator of the step is the same. */
Test(sparse, sparq_per_group_at_group_size_one_is_per_head)
{
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("qwen3-235b-a22b", &m, NULL, &err), 0, "%s", err.msg);
	m.kv_heads = m.heads; /* G = 1 */
	static struct step s[2];
	for (int g = 0; g < 2; g++) {
		static struct sparse_cfg sp;
		cr_assert_eq(sparse_parse_spec(g ? "sparq:per_group=1" : "sparq:per_group=0", &m.sp,
					       &sp, &err), 0, "%s", err.msg);
		struct kbatch b = {.requests = 4, .gpus = 1, .context = 32768, .sp = &sp};
		cr_assert_eq(step_build(&m, &b, &s[g], &err), 0, "%s", err.msg);
	}
	cr_assert_eq(s[0].n, s[1].n);
	for (int i = 0; i < s[0].n; i++)
		cr_expect(s[0].op[i].kind == s[1].op[i].kind && s[0].op[i].flops == s[1].op[i].flops &&
				  s[0].op[i].bytes == s[1].op[i].bytes && s[0].op[i].count == s[1].op[i].count,
			  "op %d differs", i);
	/* with Qwen3's own 16 heads per KV head, per group selects 16 times fewer */
	cr_assert_eq(zoo_load_model("qwen3-235b-a22b", &m, NULL, &err), 0, "%s", err.msg);
	double topk[2];
	for (int g = 0; g < 2; g++) {
		static struct sparse_cfg sp;
		cr_assert_eq(sparse_parse_spec(g ? "sparq" : "sparq:per_group=0", &m.sp, &sp, &err), 0);
		struct kbatch b = {.requests = 1, .gpus = 1, .context = 32768, .sp = &sp};
		cr_assert_eq(step_build(&m, &b, &s[g], &err), 0, "%s", err.msg);
		struct op_row r[OP_N], tot;
		step_rows(&s[g], r, &tot);
		topk[g] = r[OP_TOPK].flops;
	}
	cr_expect(near(topk[0], 16 * topk[1], 1e-12), "%g vs %g", topk[0], topk[1]);
}

/* H2O's argmin keeps the same set as ranking it, and is never slower: on
 * a GPU and on KARAT, the step with evict_topk = 1 takes at least as
 * long.  Qwen3-235B's KV is FP8 (one byte per element): 94 layers x 4 KV
 * heads x 128 x 2 = 96,256 B per token. */
Test(sparse, h2o_argmin_never_costs_more_and_qwen3_kv_is_fp8)
{
	struct kmodel m;
	struct kdevice d[2];
	struct kerr err;
	cr_assert_eq(zoo_load_model("qwen3-235b-a22b", &m, NULL, &err), 0, "%s", err.msg);
	cr_expect(near(model_kv_bytes_token(&m), 94.0 * 4 * 128 * 2, 1e-12), "%g",
		  model_kv_bytes_token(&m));
	cr_assert_eq(zoo_load_device("h200", &d[0], NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_device("karat", &d[1], NULL, &err), 0, "%s", err.msg);
	static struct step s;
	for (int k = 0; k < 2; k++) {
		double t[2];
		for (int e = 0; e < 2; e++) {
			static struct sparse_cfg sp;
			cr_assert_eq(sparse_parse_spec(e ? "h2o:evict_topk=1" : "h2o", &m.sp, &sp, &err),
				     0);
			struct kbatch b = {.requests = 16, .gpus = 1, .context = 65536, .sp = &sp};
			cr_assert_eq(step_build(&m, &b, &s, &err), 0, "%s", err.msg);
			double tt = 0;
			for (int i = 0; i < s.n; i++)
				if (s.op[i].side == SIDE_CACHE) {
					roofline_op(&s.op[i], &d[k], NULL);
					tt += s.op[i].count * s.op[i].time;
				}
			t[e] = tt;
		}
		cr_expect_lt(t[0], t[1], "%s: argmin %g s, top-k %g s", d[k].name, t[0], t[1]);
	}
}

Test(sparse, glm52_mtp_layer_reuses_the_index)
{
	struct kmodel m;
	struct kerr err;
	cr_assert_eq(zoo_load_model("glm-5.2", &m, NULL, &err), 0, "%s", err.msg);
	cr_expect_eq(m.sp.p[SP_MTP_SHARE], 1);
	struct lcount lc[LC_N];
	cr_assert_eq(attn_classes(&m, &m.sp, 1, 1, lc), 1);
	cr_expect_eq(lc[0].cls, LC_SHARE);
	struct sparse_cfg own = m.sp;
	char why[200];
	cr_assert_eq(sparse_cfg_set(&own, "mtp_share", "0", why, sizeof why), 0, "%s", why);
	cr_assert_eq(attn_classes(&m, &own, 1, 1, lc), 1);
	cr_expect_eq(lc[0].cls, LC_SPARSE);
	/* the MTP layer's slots: a scan only when it owns its index */
	struct attn_layout a, b;
	attn_layout(&m, &m.sp, 1, 1, 2, &a);
	attn_layout(&m, &own, 1, 1, 2, &b);
	double fa[ATTN_MAX_SLOTS], ba[ATTN_MAX_SLOTS], fb[ATTN_MAX_SLOTS], bb[ATTN_MAX_SLOTS];
	attn_request(&m, &m.sp, &a, 1, 100000, 2, fa, ba);
	attn_request(&m, &own, &b, 1, 100000, 2, fb, bb);
	double scan_a = 0, scan_b = 0;
	for (int s = 0; s < a.n; s++)
		scan_a += a.s[s].kind == OP_INDEX_SCAN ? ba[s] : 0;
	for (int s = 0; s < b.n; s++)
		scan_b += b.s[s].kind == OP_INDEX_SCAN ? bb[s] : 0;
	cr_expect_eq(scan_a, 0);
	/* 100,000 keys of 132 B, 2 x 100,000 fp32 scores, 2 queries of 32 x 128 B + 32 x 4 B */
	cr_expect(near(scan_b, 100000 * 132.0 + 2 * 100000 * 4.0 + 2 * (32 * 128 + 32 * 4), 1e-12),
		  "%.17g", scan_b);
}

/* Issue 14 item 9: the specification that ran (the algo_params column)
 * names every parameter and parses back to the same configuration, for
 * every algorithm at its defaults and with one parameter changed. */
Test(sparse, format_spec_round_trips)
{
	for (int a = 0; a < ALGO_N; a++) {
		struct sparse_cfg cfg, back;
		struct kerr err;
		sparse_cfg_init(&cfg, a);
		char spec[512];
		cr_assert(sparse_format_spec(&cfg, spec, sizeof spec) < (int)sizeof spec);
		cr_assert_eq(sparse_parse_spec(spec, NULL, &back, &err), 0, "%s: %s", spec, err.msg);
		cr_expect_eq(back.algo, a);
		for (int p = 0; p < SP_N; p++)
			cr_expect(back.p[p] == cfg.p[p] || (isnan(back.p[p]) && isnan(cfg.p[p])),
				  "%s: parameter %d", spec, p);
		cr_expect_eq(strncmp(spec, algo_names[a], strlen(algo_names[a])), 0, "%s", spec);
	}
	struct sparse_cfg cfg, back;
	struct kerr err;
	cr_assert_eq(sparse_parse_spec("dsa:topk=1024", NULL, &cfg, &err), 0);
	char spec[512];
	sparse_format_spec(&cfg, spec, sizeof spec);
	cr_expect(strstr(spec, "topk=1024,"), "%s", spec);
	cr_assert_eq(sparse_parse_spec(spec, NULL, &back, &err), 0, "%s", err.msg);
	cr_expect_eq(back.p[SP_TOPK], 1024);
}
