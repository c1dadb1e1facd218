/* test_bound.c: what bounds a solved answer (issue 30 item 1).  For each
 * kind of limit, a point bound by it: relaxing that limit raises the
 * answer, relaxing another leaves it as it is. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"
#include "solve/plan.h" /* internal: plan_new_like, plan_pool_same, plan_kept_swap */

static char out[1 << 16], err[1 << 14];

/* Column name of a `solve --format csv` row, into val. */
static void column(const char *name, char *val, size_t n)
{
	cr_assert_eq(csv_cell(out, name, val, n), 0, "no column %s in %s", name, out);
}

/* The answer's batch and bound for a solve with extra options. */
static double solve(const char *extra, char *bound, size_t n)
{
	cr_assert_eq(run_karat_fmt(out, sizeof out, err, sizeof err,
				   "solve --model deepseek-v3.2 --workload agentic --samples 32 "
				   "--format csv %s", extra),
		     0, "%s", err);
	char b[32];
	column("batch", b, sizeof b);
	column("bound_by", bound, n);
	return atof(b);
}

static void check(const char *base, const char *want, const char *relax_it,
		  const char *relax_other)
{
	char bound[64], other[64];
	double b0 = solve(base, bound, sizeof bound);
	cr_expect_str_eq(bound, want, "%s", base);
	char opts[600];
	snprintf(opts, sizeof opts, "%s %s", base, relax_it);
	double b1 = solve(opts, other, sizeof other);
	cr_expect_gt(b1, b0, "%s: relaxing %s moves the answer (%g -> %g)", want, relax_it, b0, b1);
	snprintf(opts, sizeof opts, "%s %s", base, relax_other);
	double b2 = solve(opts, other, sizeof other);
	cr_expect_eq(b2, b0, "%s: relaxing %s leaves the answer (%g -> %g)", want, relax_other, b0,
		     b2);
}

Test(bound, capacity_of_the_hbm)
{
	check("--system gpu-only", "capacity:hbm", "--set gpu.memory.capacity=282GB",
	      "--slo-ms 200");
}

Test(bound, capacity_of_the_memory_devices)
{
	check("--system gpu-karat --set memdev.memory.capacity=30GB", "capacity:memdev",
	      "--set memdev.memory.capacity=60GB", "--slo-ms 200");
}

Test(bound, slo_on_the_busiest_resource)
{
	char bound[64];
	solve("--system gpu-karat", bound, sizeof bound);
	cr_assert(strncmp(bound, "slo:", 4) == 0, "%s", bound);
	check("--system gpu-karat", bound, "--slo-ms 200", "--set memdev.memory.capacity=4TB");
}

/* At a given batch a feasible point is bound by nothing, an infeasible one
 * by what it fails. */
Test(bound, a_query_names_only_a_failure)
{
	cr_assert_eq(run_karat("query --model deepseek-v3.2 --system gpu-only --workload agentic "
			       "--batch 8 --samples 16 --format csv", out, sizeof out, err, sizeof err),
		     0, "%s", err);
	char bound[64];
	column("bound_by", bound, sizeof bound);
	cr_expect_str_eq(bound, "");
	cr_assert_eq(run_karat("query --model deepseek-v3.2 --system gpu-only --workload agentic "
			       "--batch 64 --samples 16 --format csv", out, sizeof out, err, sizeof err),
		     0, "%s", err);
	column("bound_by", bound, sizeof bound);
	cr_expect_str_eq(bound, "capacity:hbm");
}

/* What to grow first (plan_probe): for an answer bound by a capacity, the
 * probe names that capacity, and doubling it (here by --set) really moves
 * the answer past the next batch. */
Test(bound, grow_first_names_the_capacity_that_binds)
{
	static const struct {
		const char *base, *grow, *doubled;
	} c[] = {
		{"--system gpu-only", "gpu.memory.capacity", "--set gpu.memory.capacity=282GB"},
		{"--system gpu-karat --set memdev.memory.capacity=30GB", "memdev.memory.capacity",
		 "--set memdev.memory.capacity=60GB"},
	};
	for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
		char bound[64], grow[64], margin[32], opts[300];
		double b0 = solve(c[k].base, bound, sizeof bound);
		column("grow_first", grow, sizeof grow);
		column("grow_first_margin", margin, sizeof margin);
		cr_expect_str_eq(grow, c[k].grow, "%s", c[k].base);
		cr_expect(atof(margin) > 0 && atof(margin) < 1, "%s: margin %s", c[k].base, margin);
		snprintf(opts, sizeof opts, "%s %s", c[k].base, c[k].doubled);
		double b1 = solve(opts, bound, sizeof bound);
		cr_expect_geq(b1, b0 + 1, "%s: doubled, %g -> %g", c[k].base, b0, b1);
	}
	/* a query has no answer to grow */
	cr_assert_eq(run_karat("query --model deepseek-v3.2 --system gpu-only --workload agentic "
			       "--batch 8 --samples 16 --format csv", out, sizeof out, err, sizeof err),
		     0, "%s", err);
	char grow[64];
	column("grow_first", grow, sizeof grow);
	cr_expect_str_eq(grow, "");
}

/* In the library: for an answer bound by the SLO, the next batch fails
 * (base above 1), the best doubling has the lowest margin, a resource the
 * design lacks is not probed, and doubling what does not bound it (the
 * HBM's capacity, for an answer on the devices' time) leaves the margin
 * exactly where it was. */
Test(bound, the_probe_ranks_every_resource_the_design_has)
{
	static struct design_parts dp;
	struct kerr e;
	cr_assert_eq(design_load(&dp, "deepseek-v3.2", "gpu-karat", "agentic", 0, &e), 0, "%s",
		     e.msg);
	dp.d.samples = 32;
	struct plan *p = plan_new(&dp.d, &e);
	cr_assert_not_null(p, "%s", e.msg);
	struct result r;
	cr_assert_eq(plan_solve(p, 0, &r, &e), 0, "%s", e.msg);
	cr_assert(r.feasible && r.bound == PB_SLO, "bound %d", r.bound);
	struct probe pb;
	cr_assert_eq(plan_probe(&dp.d, NULL, &r, &pb, &e), 0, "%s", e.msg);
	cr_expect_gt(pb.base, 1, "batch %g + 1 fails", r.batch);
	cr_assert_geq(pb.best, 0);
	for (int k = 0; k < PR_N; k++)
		if (isfinite(pb.margin[k]))
			cr_expect_leq(pb.margin[pb.best], pb.margin[k], "%s", probe_names[k]);
	cr_expect(isnan(pb.margin[PR_OUT]), "one node: no scale-out link to grow");
	/* the HBM's capacity, probed last, stops once it cannot beat the best */
	cr_expect(pb.margin[pb.best] < pb.base && isinf(pb.margin[PR_GPU_CAP]), "%g",
		  pb.margin[PR_GPU_CAP]);
	{ /* and evaluated in full, it leaves the next batch's margin exactly */
		struct kdevice g = *dp.d.gpu;
		struct design d2 = dp.d;
		g.mem_capacity *= 2, d2.gpu = &g, d2.samples = 32; /* the probe's: all 32 */
		struct plan *q = plan_new(&d2, &e);
		cr_assert_not_null(q, "%s", e.msg);
		struct result x;
		cr_assert_eq(plan_eval_at(q, q->ws, r.batch + 1, r.mb, &x, 0, 1, &e), 0, "%s", e.msg);
		cr_expect_eq(fmax(fmax(x.tbt_p99 / d2.slo, x.gpu_use), x.mem_use), pb.base);
		plan_free(q);
	}
	/* an answer bound by the search's own cap is not probed at all: its
	 * base stays NaN, so the CLI leaves grow_first empty, not "none" */
	struct result capped = r;
	capped.bound = PB_CAP;
	cr_assert_eq(plan_probe(&dp.d, NULL, &capped, &pb, &e), 0, "%s", e.msg);
	cr_expect(pb.best == -1 && isnan(pb.base), "base %g", pb.base);
	plan_free(p);
	design_free(&dp);
}

/* The probe's plans borrow their base's pool (plan_new_like): where only
 * a rate or a capacity differs the pool is the same, and the plan answers
 * as one built afresh, bit for bit; where the draws differ (another seed)
 * it is not borrowed. */
Test(bound, a_plan_that_borrows_the_pool_answers_as_a_fresh_one)
{
	static const struct {
		const char *model, *system, *workload;
		double batch;
	} pts[] = {{"deepseek-v3.2", "gpu-karat", "agentic", 200},
		   {"glm-5.2", "gpu-only", "azure-conv", 900},
		   {"minimax-m3", "gpu-host-offload", "agentic", 60},
		   {"qwen3-235b-a22b", "gpu-duplex", "azure-code", 1500},
		   {"deepseek-v3.2", "gpu-attacc", "agentic", 100}, /* index keys in HBM */
		   {"glm-5.2", "gpu-host-gather", "agentic", 100}}; /* dense layers in HBM */
	int borrowed = 0;
	for (size_t i = 0; i < sizeof pts / sizeof *pts; i++)
		for (int v = 0; v < 6; v++) {
			static struct design_parts dp;
			struct kerr e;
			cr_assert_eq(design_load(&dp, pts[i].model, pts[i].system, pts[i].workload, 0,
						 &e), 0, "%s", e.msg);
			dp.d.samples = 16;
			struct plan *base = plan_new(&dp.d, &e);
			cr_assert_not_null(base, "%s", e.msg);
			switch (v) { /* one change to the design */
			case 0: dp.gpu.mem_bw *= 2; break;
			case 1: dp.gpu.mem_capacity *= 0.9; break;
			case 2: dp.up.bw *= 2; break;
			case 3: if (dp.d.mem) dp.mem.mem_bw *= 2, dp.mem.mem_capacity *= 2; break;
			case 4: if (dp.d.mlink) dp.ml.bw *= 0.5; break;
			default: dp.d.seed += 1; break;
			}
			struct plan *like = plan_new_like(&dp.d, base, &e);
			cr_assert_not_null(like, "%s", e.msg);
			struct plan *fresh = plan_new(&dp.d, &e);
			cr_assert_not_null(fresh, "%s", e.msg);
			int same = plan_pool_same(fresh, base);
			cr_expect_eq(same, v < 5, "%s %s change %d: the pool is%s the base's",
				     pts[i].model, pts[i].system, v, same ? "" : " not");
			borrowed += same;
			struct result a, b;
			for (int m = 1; m <= 2; m++) {
				cr_assert_eq(plan_eval(like, pts[i].batch, m, &a, &e), 0, "%s", e.msg);
				cr_assert_eq(plan_eval(fresh, pts[i].batch, m, &b, &e), 0, "%s", e.msg);
				cr_expect(a.tbt_p99 == b.tbt_p99 && a.tbt_mean == b.tbt_mean &&
						  a.gpu_use == b.gpu_use &&
						  (a.mem_use == b.mem_use || (isnan(a.mem_use) && isnan(b.mem_use))) &&
						  (a.energy_act == b.energy_act ||
						   (isnan(a.energy_act) && isnan(b.energy_act))) &&
						  a.feasible == b.feasible,
					  "%s %s change %d m=%d: P99 %.17g against %.17g", pts[i].model,
					  pts[i].system, v, m, a.tbt_p99, b.tbt_p99);
			}
			plan_free(base), plan_free(like), plan_free(fresh);
			design_free(&dp);
		}
	cr_expect_geq(borrowed, 16, "only %d plans borrowed the pool", borrowed);
}

/* A sweep probes its solved points only when asked (--probe: about twice
 * the time), and says so in its shard identity. */
Test(bound, a_sweep_probes_when_asked)
{
	char dir[] = "/tmp/karat-probe-XXXXXX", ini[64];
	cr_assert(mkdtemp(dir));
	snprintf(ini, sizeof ini, "%s/s.ini", dir);
	FILE *f = fopen(ini, "w");
	cr_assert(f);
	fputs("[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only\nworkload = agentic\n"
	      "samples = 16\n", f);
	fclose(f);
	for (int probe = 0; probe < 2; probe++) {
		cr_assert_eq(run_karat_fmt(out, sizeof out, err, sizeof err, "sweep %s -q --output - %s",
					   ini, probe ? "--probe" : ""),
			     0, "%s", err);
		char grow[64];
		column("grow_first", grow, sizeof grow);
		cr_expect_str_eq(grow, probe ? "gpu.memory.capacity" : "", "--probe %d", probe);
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/* The probe borrows the solver's plan: its pool, and each sample's online
 * placement of the batches below the next one (plan_kept_swap), given
 * back after.  Its margins are those of a probe that places every batch
 * afresh, bit for bit; the solver's plan answers as before; and plans
 * lend placements only where they place alike (a rate changed, not a
 * capacity). */
Test(bound, a_probe_on_the_solvers_placements_ranks_as_one_afresh)
{
	static const struct {
		const char *model, *system, *workload;
	} pts[] = {{"deepseek-v3.2", "gpu-karat", "agentic"},
		   {"glm-5.2", "gpu-only", "azure-conv"},
		   {"deepseek-v3.2", "gpu-attacc", "agentic"}};
	for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
		static struct design_parts dp;
		struct kerr e;
		cr_assert_eq(design_load(&dp, pts[i].model, pts[i].system, pts[i].workload, 0, &e),
			     0, "%s", e.msg);
		dp.d.samples = 32;
		struct plan *p = plan_new(&dp.d, &e);
		cr_assert_not_null(p, "%s", e.msg);
		struct result r, again;
		cr_assert_eq(plan_solve(p, 2, &r, &e), 0, "%s", e.msg);
		struct probe lent, fresh;
		cr_assert_eq(plan_probe(&dp.d, p, &r, &lent, &e), 0, "%s", e.msg);
		cr_assert_eq(plan_probe(&dp.d, NULL, &r, &fresh, &e), 0, "%s", e.msg);
		cr_expect(isfinite(lent.base), "%s %s: probed", pts[i].model, pts[i].system);
		cr_expect(lent.best == fresh.best && (lent.base == fresh.base ||
						      (isnan(lent.base) && isnan(fresh.base))),
			  "%s %s: base %.17g against %.17g", pts[i].model, pts[i].system, lent.base,
			  fresh.base);
		for (int k = 0; k < PR_N; k++)
			cr_expect(lent.margin[k] == fresh.margin[k] ||
					  (isnan(lent.margin[k]) && isnan(fresh.margin[k])),
				  "%s %s %s: %.17g against %.17g", pts[i].model, pts[i].system,
				  probe_names[k], lent.margin[k], fresh.margin[k]);
		cr_assert_eq(plan_eval(p, r.batch, r.mb, &again, &e), 0, "%s", e.msg);
		cr_expect(again.tbt_p99 == r.tbt_p99 && again.tbt_mean == r.tbt_mean,
			  "%s %s: the solver's plan answers as before", pts[i].model, pts[i].system);
		dp.gpu.mem_bw *= 2; /* a rate: the same placements */
		struct plan *q = plan_new_like(&dp.d, p, &e);
		cr_assert_not_null(q, "%s", e.msg);
		cr_expect_eq(plan_kept_swap(q, p), 1, "%s %s: a rate changed", pts[i].model,
			     pts[i].system);
		plan_kept_swap(q, p);
		plan_free(q);
		dp.gpu.mem_capacity *= 0.9; /* a capacity: another placement */
		q = plan_new_like(&dp.d, p, &e);
		cr_assert_not_null(q, "%s", e.msg);
		cr_expect_eq(plan_kept_swap(q, p), 0, "%s %s: a capacity changed", pts[i].model,
			     pts[i].system);
		plan_free(q);
		plan_free(p);
		design_free(&dp);
	}
}
