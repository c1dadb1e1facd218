/* test_analysis.c: a study's analysis (study/analysis.c) on hand-made
 * results: the grid a study file asks for, each system's best point, the
 * baseline's GPU count at the same TDP, and the three views' pairs and
 * ratios, each worked out by hand below. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "karat.h"

/* DeepSeek-V3.2 on agentic, GPU-only at 8 and 16 GPUs against GPU +
 * KARAT at 8 GPUs with 1 and 2 devices per GPU (gpu-karat's file has 2,
 * so it is not fixed). */
static void small_study(struct study_def *sd)
{
	memset(sd, 0, sizeof *sd);
	snprintf(sd->name, sizeof sd->name, "small");
	snprintf(sd->models.v[0], INI_VALUE, "deepseek-v3.2");
	snprintf(sd->algos.v[0], INI_VALUE, "native");
	snprintf(sd->workloads.v[0], INI_VALUE, "agentic");
	snprintf(sd->systems.v[0], INI_VALUE, "gpu-only");
	snprintf(sd->systems.v[1], INI_VALUE, "gpu-karat");
	snprintf(sd->baseline, INI_VALUE, "gpu-only");
	sd->models.n = sd->algos.n = sd->workloads.n = 1, sd->systems.n = 2;
	sd->gpus.v[0] = 8, sd->gpus.v[1] = 16, sd->gpus.n = 2;
	sd->mgpus.v[0] = 8, sd->mgpus.n = 1;
	sd->per_gpu.v[0] = 1, sd->per_gpu.v[1] = 2, sd->per_gpu.n = 2;
}

static struct result ok(double tdp, double tok_per_w)
{
	struct result r = {.feasible = 1, .tdp = tdp, .tok_per_w = tok_per_w};
	return r;
}

Test(analysis, the_grid_is_what_the_study_asks_for)
{
	struct study_def sd;
	small_study(&sd);
	struct study_grid g;
	struct kerr err;
	cr_assert_eq(study_grid(&sd, &g, &err), 0, "%s", err.msg);
	cr_assert_eq(g.n, 4);
	cr_expect_eq(g.baseline, 0);
	cr_expect_eq(g.per_node, 8);
	/* GPU-only at its two counts, then KARAT at 8 GPUs x 1 and 2 per GPU */
	const int gpus[] = {8, 16, 8, 8}, memdevs[] = {0, 0, 8, 16}, sys[] = {0, 0, 1, 1};
	for (int i = 0; i < 4; i++)
		cr_expect(g.pt[i].gpus == gpus[i] && g.pt[i].memdevs == memdevs[i] &&
				  g.pt[i].system == sys[i],
			  "point %d: %d GPUs, %d devices, system %d", i, g.pt[i].gpus,
			  g.pt[i].memdevs, g.pt[i].system);
	cr_expect(g.start[0] == 0 && g.start[1] == 2 && g.start[2] == 4);
	study_grid_free(&g);
}

Test(analysis, iso_tdp_rounds_up_to_gpus_then_nodes)
{
	/* 700 W GPUs, 8 per node */
	cr_expect_eq(study_iso_gpus(4200, 700, 8), 6);  /* exactly 6 GPUs */
	cr_expect_eq(study_iso_gpus(4201, 700, 8), 7);  /* never below the TDP */
	cr_expect_eq(study_iso_gpus(5600, 700, 8), 8);  /* one node */
	cr_expect_eq(study_iso_gpus(6000, 700, 8), 16); /* 8.6 GPUs: two nodes */
	cr_expect_eq(study_iso_gpus(100, 700, 8), 1);   /* at least one GPU */
}

Test(analysis, the_best_is_the_highest_feasible_throughput_per_tdp)
{
	struct result r[4] = {ok(1, 0.5), ok(1, 0.9), ok(1, 0.9), ok(1, 0.2)};
	r[0].tok_per_w = 2, r[0].feasible = 0; /* infeasible: never the best */
	cr_expect_eq(study_best_of(r, 0, 4, SM_TDP), 1); /* the first of equals */
	cr_expect_eq(study_best_of(r, 2, 4, SM_TDP), 2);
	cr_expect_eq(study_best_of(r, 0, 1, SM_TDP), -1);
}

/* GPU-only: 8 GPUs 5,600 W at 0.5 tok/s/W, 16 GPUs 11,200 W at 0.6 (its
 * best).  KARAT: 8 + 8 devices 6,800 W at 1.0, 8 + 16 at 8,000 W at 1.5
 * (its best).  Iso-TDP: 8,000 / 700 = 11.4 GPUs -> 12 -> two nodes = 16,
 * in the grid.  Views of KARAT's best: best 1.5 / 0.6 = 2.5x, same GPUs
 * (8) 1.5 / 0.5 = 3x, iso-TDP (16) 2.5x. */
Test(analysis, the_views_pair_the_best_with_the_baseline)
{
	struct study_def sd;
	small_study(&sd);
	struct study_grid g, extra = {0};
	struct kerr err;
	cr_assert_eq(study_grid(&sd, &g, &err), 0, "%s", err.msg);
	struct result res[4] = {ok(5600, 0.5), ok(11200, 0.6), ok(6800, 1.0), ok(8000, 1.5)};
	struct study_pick pk;
	cr_assert_eq(study_pick(&g, res, SM_TDP, &pk, &extra), 0);
	cr_expect_eq(pk.best[0], 1);
	cr_expect_eq(pk.best[1], 3);
	cr_expect_eq(pk.iso[1], 16);
	cr_expect_eq(extra.n, 0, "16 GPUs is in the grid");
	cr_assert_eq(study_nrows(&g), 4);
	struct study_row rows[4];
	struct study_range rng;
	study_rows(&g, res, &extra, NULL, &pk, SM_TDP, rows, &rng);
	cr_expect(rows[0].p == &g.pt[1] && rows[0].x == &res[1] && rows[0].b == &res[1] &&
		  rows[0].bgpus == 16 && rows[0].v == STUDY_BEST && !rows[0].focus);
	const int bg[] = {16, 8, 16};
	const struct result *b[] = {&res[1], &res[0], &res[1]};
	for (int v = 0; v < STUDY_NVIEW; v++) {
		const struct study_row *r = &rows[1 + v];
		cr_expect(r->p == &g.pt[3] && r->x == &res[3] && r->v == (enum study_view)v &&
				  r->focus,
			  "view %s", study_view_names[v]);
		cr_expect(r->b == b[v] && r->bgpus == bg[v], "view %s: baseline at %d GPUs",
			  study_view_names[v], r->bgpus);
	}
	const double want[] = {2.5, 3, 2.5};
	for (int v = 0; v < STUDY_NVIEW; v++)
		cr_expect(rng.have[v] && fabs(rng.lo[v] - want[v]) < 1e-12 &&
				  fabs(rng.hi[v] - want[v]) < 1e-12,
			  "view %s: %g-%g", study_view_names[v], rng.lo[v], rng.hi[v]);
	study_pick_free(&pk);
	study_grid_free(&g);
}

/* KARAT's best at 12,000 W: 17.1 GPUs -> 18 -> three nodes = 24, not in
 * the grid, so the baseline at 24 GPUs becomes an extra point; solved at
 * 0.4 tok/s/W, iso-TDP is 1.5 / 0.4 = 3.75x.  Where the baseline fails at
 * the system's own count, same-gpus has no ratio. */
Test(analysis, iso_tdp_adds_the_baseline_point_the_grid_lacks)
{
	struct study_def sd;
	small_study(&sd);
	struct study_grid g, extra = {0};
	struct kerr err;
	cr_assert_eq(study_grid(&sd, &g, &err), 0, "%s", err.msg);
	struct result res[4] = {ok(5600, 0.5), ok(11200, 0.6), ok(6800, 1.0), ok(12000, 1.5)};
	res[0].feasible = 0;
	struct study_pick pk;
	cr_assert_eq(study_pick(&g, res, SM_TDP, &pk, &extra), 0);
	cr_expect_eq(pk.iso[1], 24);
	cr_assert_eq(extra.n, 1);
	cr_expect(extra.pt[0].gpus == 24 && extra.pt[0].system == 0 && extra.pt[0].memdevs == 0);
	struct result res2[1] = {ok(16800, 0.4)};
	struct study_row rows[4];
	struct study_range rng;
	study_rows(&g, res, &extra, res2, &pk, SM_TDP, rows, &rng);
	cr_expect(rows[2].v == STUDY_SAME && rows[2].b == NULL && rows[2].bgpus == 8);
	cr_expect(rows[3].v == STUDY_ISO && rows[3].b == &res2[0] && rows[3].bgpus == 24);
	cr_expect(!rng.have[STUDY_SAME]);
	cr_expect(fabs(rng.lo[STUDY_ISO] - 3.75) < 1e-12);
	study_pick_free(&pk);
	study_grid_free(&g), study_grid_free(&extra);
}

/* attention_tp = 1, 4, 8: MiniMax-M3 (4 KV heads) runs GPU-only at 1 and
 * 4, DeepSeek-V3.2 (MLA) at 1 alone, and GPU + KARAT at 1.  In MiniMax's
 * group, GPU-only at 8 GPUs: 1.0 (tp 1), 1.5 (tp 4); at 16: 1.45, 1.4.
 * KARAT (8 + 8) at 3.0 tok/s/W and 16,000 W: the iso-TDP count is 24
 * GPUs (22.9, whole nodes), which the grid lacks, so the baseline is
 * added there at both degrees: 0.9 (tp 1), 1.2 (tp 4).  Each view takes
 * the baseline's best degree at its count: best 1.5 (8, tp 4), same-gpus
 * 1.5 (tp 4), iso-tdp 1.2 (tp 4); at 16 tp 1 would win. */
Test(analysis, the_baseline_tries_each_attention_split_its_model_takes)
{
	struct study_def sd;
	small_study(&sd);
	snprintf(sd.models.v[0], INI_VALUE, "minimax-m3");
	snprintf(sd.models.v[1], INI_VALUE, "deepseek-v3.2");
	sd.models.n = 2;
	sd.per_gpu.n = 1;
	sd.tp.v[0] = 1, sd.tp.v[1] = 4, sd.tp.v[2] = 8, sd.tp.n = 3;
	struct study_grid g, extra = {0};
	struct kerr err;
	cr_assert_eq(study_grid(&sd, &g, &err), 0, "%s", err.msg);
	cr_assert_eq(g.n, 8, "4 + 1 for MiniMax-M3, 2 + 1 for DeepSeek-V3.2 (%d)", g.n);
	const int gpus[] = {8, 8, 16, 16, 8, 8, 16, 8}, tp[] = {1, 4, 1, 4, 1, 1, 1, 1};
	const int sys[] = {0, 0, 0, 0, 1, 0, 0, 1};
	for (int i = 0; i < 8; i++)
		cr_expect(g.pt[i].gpus == gpus[i] && g.pt[i].tp == tp[i] && g.pt[i].system == sys[i],
			  "point %d: %d GPUs, tp %d, system %d", i, g.pt[i].gpus, g.pt[i].tp,
			  g.pt[i].system);
	struct result res[8] = {ok(5600, 1.0), ok(5600, 1.5), ok(11200, 1.45), ok(11200, 1.4),
				ok(16000, 3.0), ok(5600, 1.0), ok(11200, 1.0), ok(16000, 2.0)};
	struct study_pick pk;
	cr_assert_eq(study_pick(&g, res, SM_TDP, &pk, &extra), 0);
	cr_expect_eq(pk.iso[1], 24);
	cr_assert_eq(extra.n, 3, "MiniMax's baseline at 24 GPUs at tp 1 and 4, DeepSeek's at 1");
	cr_expect(extra.pt[0].gpus == 24 && extra.pt[0].tp == 1 && extra.pt[0].model == 0);
	cr_expect(extra.pt[1].gpus == 24 && extra.pt[1].tp == 4 && extra.pt[1].model == 0);
	cr_expect(extra.pt[2].gpus == 24 && extra.pt[2].tp == 1 && extra.pt[2].model == 1);
	struct result res2[3] = {ok(16800, 0.9), ok(16800, 1.2), ok(16800, 0.8)};
	struct study_row rows[8];
	struct study_range rng;
	study_rows(&g, res, &extra, res2, &pk, SM_TDP, rows, &rng);
	cr_expect(rows[0].b == &res[1] && rows[0].btp == 4, "the baseline's best: 8 GPUs, tp 4");
	cr_expect(rows[1].v == STUDY_BEST && rows[1].b == &res[1] && rows[1].btp == 4);
	cr_expect(rows[2].v == STUDY_SAME && rows[2].b == &res[1] && rows[2].btp == 4);
	cr_expect(rows[3].v == STUDY_ISO && rows[3].b == &res2[1] && rows[3].btp == 4);
	cr_expect(rows[4].b == &res[5] && rows[4].btp == 1, "DeepSeek-V3.2: data-parallel");
	cr_expect(fabs(rng.lo[STUDY_ISO] - 2.5) < 1e-12, "2.0 / 0.8 for DeepSeek (%g)",
		  rng.lo[STUDY_ISO]);
	cr_expect(fabs(rng.hi[STUDY_ISO] - 2.5) < 1e-12, "3.0 / 1.2 for MiniMax (%g)",
		  rng.hi[STUDY_ISO]);
	/* at 16 GPUs the data-parallel point wins: a same-gpus pairing there */
	res[4].tdp = 5600 * 2 - 1; /* 8 + 8 KARAT now iso at 16 */
	study_pick_free(&pk);
	study_grid_free(&extra);
	extra = (struct study_grid){0};
	cr_assert_eq(study_pick(&g, res, SM_TDP, &pk, &extra), 0);
	cr_expect_eq(pk.iso[1], 16);
	study_rows(&g, res, &extra, res2, &pk, SM_TDP, rows, &rng);
	cr_expect(rows[3].b == &res[2] && rows[3].btp == 1, "16 GPUs: tp 1 at 1.45 beats 1.4");
	study_pick_free(&pk);
	study_grid_free(&g), study_grid_free(&extra);
}

/* The same grid picked per drawn watt, per node watt and per USD: each
 * side's best may change with the accounting.  GPU-only: 8 GPUs at 1.6
 * tok/s/W drawn, 0.8 per node watt, 1e5 tokens per USD (10 USD/Mtok);
 * 16 GPUs at 1.4, 0.9 and 1.25e5 (8 USD/Mtok).  KARAT: 8 + 8 at 1.8,
 * 1.0 and 1e5; 8 + 16 at 1.7, 0.95 and 5e4.  Best against best: drawn
 * 1.8 / 1.6 = 1.125x; node 1.0 / 0.9 = 1.111x; cost 1e5 / 1.25e5 = 0.8x;
 * TDP 1.5 / 0.6 = 2.5x as before.  A point without a figure (NaN) is
 * never the best, and a study picked by node power pairs its rows by it. */
Test(analysis, every_power_accounting_picks_its_own_best)
{
	struct study_def sd;
	small_study(&sd);
	struct study_grid g, extra = {0};
	struct kerr err;
	cr_assert_eq(study_grid(&sd, &g, &err), 0, "%s", err.msg);
	struct result res[4] = {ok(5600, 0.5), ok(11200, 0.6), ok(6800, 1.0), ok(8000, 1.5)};
	const double act[] = {1.6, 1.4, 1.8, 1.7}, node[] = {0.8, 0.9, 1.0, 0.95};
	const double usd[] = {10, 8, 10, 20};
	for (int i = 0; i < 4; i++)
		res[i].tok_per_w_act = act[i], res[i].tok_per_w_node = node[i],
		res[i].usd_per_mtok = usd[i];
	cr_expect(fabs(study_metric(&res[1], SM_COST) - 1.25e5) < 1e-9);
	cr_expect_eq(study_best_of(res, 0, 2, SM_ACTIVITY), 0);
	cr_expect_eq(study_best_of(res, 0, 2, SM_NODE), 1);
	cr_expect_eq(study_best_of(res, 2, 4, SM_COST), 2);
	struct study_pick pk;
	cr_assert_eq(study_pick(&g, res, SM_NODE, &pk, &extra), 0);
	cr_expect(pk.best[0] == 1 && pk.best[1] == 2);
	struct study_row rows[4];
	struct study_range rng;
	study_rows(&g, res, &extra, NULL, &pk, SM_NODE, rows, &rng);
	cr_expect(fabs(rng.lo[STUDY_BEST] - 1.0 / 0.9) < 1e-12);
	cr_expect(fabs(rng.lo[STUDY_SAME] - 1.0 / 0.8) < 1e-12, "the baseline at 8 GPUs");
	const double want[SM_N] = {2.5, 1.125, 1.0 / 0.9, 0.8};
	for (int m = 0; m < SM_N; m++)
		cr_expect(rng.mhave[m] && fabs(rng.mlo[m] - want[m]) < 1e-12 &&
				  fabs(rng.mhi[m] - want[m]) < 1e-12,
			  "%s: %g-%g, by hand %g", study_metric_names[m], rng.mlo[m], rng.mhi[m],
			  want[m]);
	study_pick_free(&pk);
	/* no node figure at all: never a best, no range */
	for (int i = 0; i < 4; i++)
		res[i].tok_per_w_node = NAN;
	cr_expect_eq(study_best_of(res, 0, 4, SM_NODE), -1);
	cr_assert_eq(study_pick(&g, res, SM_TDP, &pk, &extra), 0);
	study_rows(&g, res, &extra, NULL, &pk, SM_TDP, rows, &rng);
	cr_expect(!rng.mhave[SM_NODE] && rng.mhave[SM_TDP]);
	study_pick_free(&pk);
	study_grid_free(&g);
}

/* Hand-made metrics of a saturating study: GPU-only's tok/s/W at G GPUs,
 * and KARAT's at d devices per GPU (8 GPUs), both concave: each rises
 * while a step gains, then falls. */
static double gpu_only_at(int G) { return 1 + 0.1 * log2(G / 8.0) - 0.012 * pow(log2(G / 8.0), 2); }
static double karat_at(int d) { return 2 + 0.3 * log2(d) - 0.06 * pow(log2(d), 2); }

static void fill(const struct study_grid *g, struct result *res)
{
	for (int i = 0; i < g->n; i++) {
		const struct study_point *p = &g->pt[i];
		res[i] = p->system == 0 ? ok(700.0 * p->gpus, gpu_only_at(p->gpus))
					: ok(700.0 * p->gpus, karat_at(p->memdevs / p->gpus));
	}
}

/* Grows sd's grid round by round until no system grows: the last grid
 * in g, its results in res, the growth in gr (zeroed here).  With
 * flat_wl >= 0, GPU-only gains nothing past 8 GPUs in that workload. */
static void saturate(const struct study_def *sd, struct study_grow *gr, struct study_grid *g,
		     struct result *res, int flat_wl)
{
	struct kerr err;
	memset(gr, 0, sizeof *gr);
	for (int rounds = 0;; rounds++) {
		cr_assert_eq(study_grid_grown(sd, gr, g, &err), 0, "%s", err.msg);
		cr_assert_leq(g->n, 4096);
		fill(g, res);
		for (int i = 0; i < g->n; i++)
			if (g->pt[i].workload == flat_wl && g->pt[i].system == 0)
				res[i].tok_per_w = 1;
		if (study_grow_step(sd, g, res, gr) == 0)
			break;
		study_grid_free(g);
		cr_assert_lt(rounds, 20, "never saturates");
	}
}

/* Issue 29 item 5: growing while one more step gains at least 1% ends on
 * the best a brute-force scan up to the limits finds.  By hand:
 * GPU-only's steps from 8 GPUs gain 8.8%, 5.9%, 3.5%, 1.3%, then -0.7%
 * at 256: its best is 128, and growth stops after trying 256; KARAT's
 * from 1 device per GPU gain 12%, 5.4%, then 0% at 8: its best is 4
 * (the first of equals), and growth stops after trying 8.  A limit stops
 * growth too. */
Test(analysis, saturating_search_equals_a_brute_force_scan)
{
	struct study_def sd;
	small_study(&sd);
	sd.saturate = 0.01, sd.gpus_limit = 4096, sd.per_gpu_limit = 64;
	struct study_grow gr;
	struct study_grid g;
	static struct result res[4096];
	saturate(&sd, &gr, &g, res, -1);
	int b0 = study_best_of(res, g.start[0], g.start[1], SM_TDP);
	int b1 = study_best_of(res, g.start[1], g.start[2], SM_TDP);
	cr_assert(b0 >= 0 && b1 >= 0);
	cr_expect_eq(g.pt[b0].gpus, 128, "GPU-only's best at %d GPUs", g.pt[b0].gpus);
	cr_expect_eq(g.pt[b1].memdevs / g.pt[b1].gpus, 4, "KARAT's best at %d a GPU",
		     g.pt[b1].memdevs / g.pt[b1].gpus);
	cr_expect_eq(gr.gpus[0], 256, "one step past the best, which gained less");
	cr_expect_eq(gr.per_gpu[1], 8);
	/* the brute-force scan over every doubling to the limits */
	double bestG = 0, bestd = 0;
	int atG = 0, atd = 0;
	for (int G = 8; G <= 4096; G *= 2)
		if (gpu_only_at(G) > bestG)
			bestG = gpu_only_at(G), atG = G;
	for (int d = 1; d <= 64; d *= 2)
		if (karat_at(d) > bestd)
			bestd = karat_at(d), atd = d;
	cr_expect_eq(g.pt[b0].gpus, atG);
	cr_expect_eq(g.pt[b1].memdevs / g.pt[b1].gpus, atd);
	cr_expect(fabs(res[b0].tok_per_w - bestG) < 1e-12 && fabs(res[b1].tok_per_w - bestd) < 1e-12);
	study_grid_free(&g);
	/* a limit stops it: no more than 32 GPUs and 2 devices a GPU */
	study_grow_free(&gr);
	sd.gpus_limit = 32, sd.per_gpu_limit = 2;
	saturate(&sd, &gr, &g, res, -1);
	cr_expect_eq(gr.gpus[0], 32);
	cr_expect_eq(gr.per_gpu[1], 0, "the list already reaches the limit of 2");
	study_grid_free(&g);
	study_grow_free(&gr);
}

/* Growth is per group: a workload whose GPU-only best stops gaining keeps
 * its lists while another's grows (the grid solves no point the first
 * does not need). */
Test(analysis, each_group_grows_on_its_own)
{
	struct study_def sd;
	small_study(&sd);
	snprintf(sd.workloads.v[1], INI_VALUE, "azure-conv");
	sd.workloads.n = 2;
	sd.saturate = 0.01, sd.gpus_limit = 4096, sd.per_gpu_limit = 64;
	struct study_grow gr;
	struct study_grid g;
	static struct result res[4096];
	saturate(&sd, &gr, &g, res, 1); /* workload 1: GPU-only gains nothing past 8 */
	int ns = g.nsystem, top[2] = {0, 0};
	for (int i = 0; i < g.n; i++)
		if (g.pt[i].system == 0 && g.pt[i].gpus > top[g.pt[i].workload])
			top[g.pt[i].workload] = g.pt[i].gpus;
	cr_expect_eq(gr.gpus[0 * ns + 0], 256, "workload 0 grows");
	cr_expect_eq(gr.gpus[1 * ns + 0], 0, "workload 1 keeps its list");
	cr_expect_eq(top[0], 256);
	cr_expect_eq(top[1], 16, "no point past its list for workload 1");
	study_grid_free(&g);
	study_grow_free(&gr);
}
