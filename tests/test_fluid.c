/* test_fluid.c: the fluid path (solve/fluid.c, issue 15) against the exact
 * one, which draws and places every request: equal where every request is
 * alike, within 1% of P99 TBT over the zoo where both place every request
 * whole and over a range of batches across GEMM tile edges, and the
 * solver's batch within 1%.  The fluid path stands for the offline
 * longest-first packer (system.placement = offline-lpt), so the designs
 * here place that way, except where online placement (each unit's own mix
 * drawn) is held to the exact path: over the zoo, and the solver's batch. */
#include <criterion/criterion.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <string.h>

#include "karat.h"
#include "solve/plan.h"

#include "helpers.h"
#include "solve_helpers.h"

static int rel_near(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

/* The plans of s's design as it is and with every request placed
 * (design.per_request, the exact path), into *pf and *pe. */
static int keep_placement; /* both_plans leaves the design's placement */

static void both_plans(struct setup *s, struct plan **pf, struct plan **pe)
{
	s->d.sys = &s->sys;
	if (!keep_placement)
		s->sys.placement = PLACE_OFFLINE_LPT; /* the placement the fluid path models */
	struct design exact = s->d;
	exact.per_request = 1;
	struct kerr err;
	*pf = plan(s);
	*pe = plan_new(&exact, &err);
	cr_assert_not_null(*pe, "%s", err.msg);
}

/* With every request alike, the exact placement and CMR split the batch
 * evenly, and the fluid path's sums are exact: the two agree to rounding
 * (the batch divides over every GPU, device and micro-batch), placed
 * online (in turn as they arrive) or longest first alike. */
Test(fluid, equals_exact_when_every_request_is_alike)
{
	static struct setup s;
	const char *systems[] = {"gpu-only", "gpu-karat", "gpu-attacc"};
	for (int k = 0; k < 6; k++) {
		load(&s, "deepseek-v3.2", systems[k % 3], 256, NULL);
		s.d.sys = &s.sys;
		s.sys.placement = k < 3 ? PLACE_ONLINE : PLACE_OFFLINE_LPT;
		keep_placement = 1;
		struct plan *pf, *pe;
		both_plans(&s, &pf, &pe);
		keep_placement = 0;
		for (int m = 1; m <= 4; m *= 4) {
			long B = (long)PLAN_FLUID_MIN * m * pf->devs;
			while (B < (long)PLAN_FLUID_PER_STRATUM * PLAN_FLUID_STRATA)
				B *= 2;
			cr_assert(plan_fluid_ok(pf, pf->ws, B, m), "%s m=%d B=%ld takes the exact path",
				  systems[k % 3], m, B);
			cr_assert(!plan_fluid_ok(pe, pe->ws, B, m), "per_request still took the fluid path");
			struct result f = eval(pf, (double)B, m), e = eval(pe, (double)B, m);
			cr_expect(rel_near(f.tbt_p99, e.tbt_p99, 1e-9) && rel_near(f.tbt_mean, e.tbt_mean, 1e-9),
				  "%s m=%d: fluid %.12g, exact %.12g", systems[k % 3], m, f.tbt_p99, e.tbt_p99);
			cr_expect(rel_near(f.gpu_use, e.gpu_use, 1e-9) && rel_near(f.mem_use, e.mem_use, 1e-9),
				  "%s m=%d: use %.9g/%.9g, exact %.9g/%.9g", systems[k % 3], m, f.gpu_use,
				  f.mem_use, e.gpu_use, e.mem_use);
			cr_expect(rel_near(f.energy_act, e.energy_act, 1e-9), "%s m=%d: energy %.9g, exact %.9g",
				  systems[k % 3], m, f.energy_act, e.energy_act);
			cr_expect(rel_near(f.ctx_mean, 256, 1e-12), "ctx_mean %.9g", f.ctx_mean);
		}
		plan_free(pf), plan_free(pe);
	}
}

/* Below its thresholds, or where the exact path is asked for, the fluid
 * path is not taken. */
Test(fluid, is_not_taken_below_its_thresholds)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-karat", 0, "agentic");
	s.d.sys = &s.sys;
	s.sys.placement = PLACE_OFFLINE_LPT;
	struct plan *p = plan(&s);
	long per = (long)PLAN_FLUID_MIN * p->devs;
	cr_expect(!plan_fluid_ok(p, p->ws, 64, 1));
	cr_expect(!plan_fluid_ok(p, p->ws, per - 1, 1), "one request short of %d per device", PLAN_FLUID_MIN);
	long B = 4 * per + 40L * p->gpus; /* 552 per GPU: no GEMM tile edge near */
	cr_expect(plan_fluid_ok(p, p->ws, B, 1));
	cr_expect(!plan_fluid_ok(p, p->ws, B, 16), "16 micro-batches leave under %d per device",
		  PLAN_FLUID_MIN);
	plan_free(p);
	s.d.sys = &s.sys;
	s.sys.admission = ADMIT_ROUND_ROBIN;
	p = plan(&s);
	cr_expect(!plan_fluid_ok(p, p->ws, 4 * per, 1), "round-robin placement is not modelled");
	plan_free(p);
	s.sys.admission = ADMIT_MEMORY;
	s.sys.placement = PLACE_ONLINE;
	p = plan(&s);
	long on = (long)PLAN_FLUID_MIN_ONLINE * p->devs;
	cr_expect(!plan_fluid_ok(p, p->ws, B, 1), "online placement needs %d per device",
		  PLAN_FLUID_MIN_ONLINE);
	cr_expect(!plan_fluid_ok(p, p->ws, on - 1, 1), "one request short of %d per device",
		  PLAN_FLUID_MIN_ONLINE);
	cr_expect(plan_fluid_ok(p, p->ws, on, 1), "%d per device, placed online",
		  PLAN_FLUID_MIN_ONLINE);
	cr_expect(plan_fluid_ok(p, p->ws, 2 * on, 2), "CMR's micro-batches of online units");
	plan_free(p);
	s.d.sched = SCHED_OFMS; /* arrival order: each GPU's micro-batches are cut by count */
	p = plan(&s);
	cr_expect(!plan_fluid_ok(p, p->ws, 2 * on, 2), "arrival-order micro-batches of online "
		  "units are placed request by request");
	cr_expect(plan_fluid_ok(p, p->ws, on, 1), "one micro-batch has no order to keep");
	plan_free(p);
}

/* The tolerance for the P99 of n samples with spread sd (relative to
 * value v): 1%, or three standard errors of the difference of two
 * independent P99 estimates (each sqrt(0.01 x 0.99 / n) / phi(z_0.99) x sd),
 * whichever is larger.  The two paths draw different random numbers, so
 * they cannot agree more closely than either agrees with itself under
 * another seed. */
static double p99_tol(const double *x, int n, double v)
{
	double sd = gsl_stats_sd(x, 1, (size_t)n);
	double se = sqrt(0.01 * 0.99 / n) / 0.026652 * sd;
	return fmax(0.01, 3 * sqrt(2.0) * se / v);
}

/* A batch above the fluid thresholds for m: per requests per device and
 * micro-batch (tile edges: within_one_percent_across_tile_edges). */
static long batch_for(const struct plan *p, int m, long per)
{
	long B = per * m * p->devs, floor_b = (long)PLAN_FLUID_PER_STRATUM * PLAN_FLUID_STRATA;
	return B < floor_b ? floor_b : B;
}

/* Over every zoo model, system and shipped workload at per requests per
 * (micro-batch, device), placed longest first or online (each design's
 * own): where the fluid path takes the batch, it fits and the exact path
 * splits no request, the mean step time agrees within 1%, and the P99
 * step time and the fullest GPU and device within 1% or the Monte Carlo
 * error of a P99 of 128 samples (p99_tol).  How many were compared. */
static int over_the_zoo(long per, int online)
{
	static struct setup s;
	static char models[32][64], systems[32][64], wls[32][64];
	int n[3];
	struct kerr err;
	n[0] = zoo_list(ZOO_MODEL, models, 32, &err);
	n[1] = zoo_list(ZOO_SYSTEM, systems, 32, &err);
	n[2] = zoo_list(ZOO_WORKLOAD, wls, 32, &err);
	cr_assert(n[0] > 0 && n[1] > 0 && n[2] > 0, "the zoo lists nothing");
	int compared = 0, designs = 0;
	double worst = 0;
	keep_placement = online;
	for (int a = 0; a < n[0]; a++)
		for (int b = 0; b < n[1]; b++)
			for (int c = 0; c < n[2]; c++) {
				cr_assert_eq(design_load(&s, models[a], systems[b], wls[c], 0, &err), 0,
					     "%s %s %s: %s", models[a], systems[b], wls[c], err.msg);
				designs++;
				s.d.samples = 128;
				int m = (a + b + c) % 2 ? 4 : 1;
				if ((a + b + c) % 4 == 3) /* arrival order: the longest-first bands */
					s.d.sched = SCHED_OFMS;
				struct plan *pf, *pe;
				both_plans(&s, &pf, &pe);
				long B = batch_for(pf, m, per);
				if (plan_fluid_ok(pf, pf->ws, B, m)) {
					struct result f = eval(pf, (double)B, m), e = eval(pe, (double)B, m);
					if (e.sharded == 0 && e.gpu_use <= 1 && e.mem_use <= 1) {
						int ns = pe->d.samples;
						double d = fabs(f.tbt_p99 / e.tbt_p99 - 1);
						double tol = p99_tol(pe->ws->tbt, ns, e.tbt_p99);
						double tg = p99_tol(pe->ws->use_gpu, ns, e.gpu_use * pe->cap_gpu);
						double tm = e.mem_use > 0
								    ? p99_tol(pe->ws->use_mem, ns, e.mem_use * pe->cap_mem)
								    : 0.01;
						worst = fmax(worst, d);
						compared++;
						cr_expect(d <= tol && rel_near(f.tbt_mean, e.tbt_mean, 0.01),
							  "%s %s %s B=%ld m=%d: P99 fluid %.6g exact %.6g (tolerance "
							  "%.2f%%), mean %.6g %.6g", models[a], systems[b], wls[c],
							  B, m, f.tbt_p99, e.tbt_p99, 100 * tol, f.tbt_mean,
							  e.tbt_mean);
						cr_expect(rel_near(f.gpu_use, e.gpu_use, tg) &&
								  rel_near(f.mem_use, e.mem_use, tm),
							  "%s %s %s B=%ld: use %.6g/%.6g, exact %.6g/%.6g",
							  models[a], systems[b], wls[c], B, f.gpu_use,
							  f.mem_use, e.gpu_use, e.mem_use);
					}
				}
				plan_free(pf), plan_free(pe);
			}
	keep_placement = 0;
	/* the others cannot hold the smallest batch the fluid path takes (or
	 * their exact placement splits requests): both paths then report the
	 * point infeasible for capacity */
	cr_log_info("fluid (%s): %d of %d designs compared, worst P99 difference %.3f%%",
		    online ? "online" : "longest first", compared, designs, 100 * worst);
	return compared;
}

Test(fluid, within_one_percent_of_exact_over_the_zoo, .timeout = 600)
{
	int compared = over_the_zoo(100, 0);
	cr_expect_geq(compared, 50, "only %d designs compared", compared);
}

/* Online placement, each unit's mix drawn (fluid.c online_sample), at
 * PLAN_FLUID_MIN_ONLINE per unit: held to the same tolerances. */
Test(fluid, online_within_one_percent_of_exact_over_the_zoo, .timeout = 600)
{
	int compared = over_the_zoo(PLAN_FLUID_MIN_ONLINE, 1);
	cr_expect_geq(compared, 40, "only %d designs compared", compared);
}

/* Across GEMM tile edges: the exact placement's busiest GPU holds a
 * request or two over an even share, and where one request more costs a
 * whole wave (DeepSeek-V3.2 on 8 H200s at 192 per GPU) the exact path
 * runs.  Every batch of 1,024-2,048 in steps of 8: the evaluation the
 * point gets (fluid or not) agrees with the exact path within 1% (P99 as
 * p99_tol), and some of them take each path. */
Test(fluid, within_one_percent_across_tile_edges, .timeout = 600)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-only", 0, "azure-conv");
	s.d.samples = 128;
	struct plan *pf, *pe;
	both_plans(&s, &pf, &pe);
	int fluid = 0, refused = 0;
	double worst = 0;
	for (long B = 1024; B <= 2048; B += 8) {
		int ok = plan_fluid_ok(pf, pf->ws, B, 1);
		fluid += ok, refused += !ok;
		struct result f = eval(pf, (double)B, 1), e = eval(pe, (double)B, 1);
		cr_assert_eq(f.fluid, ok, "B=%ld: result.fluid says %d", B, f.fluid);
		double d = fabs(f.tbt_p99 / e.tbt_p99 - 1), tol = p99_tol(pe->ws->tbt, 128, e.tbt_p99);
		worst = fmax(worst, d);
		cr_expect(d <= tol && rel_near(f.tbt_mean, e.tbt_mean, 0.01),
			  "B=%ld (%s): P99 %.6g exact %.6g (tolerance %.2f%%), mean %.6g %.6g", B,
			  ok ? "fluid" : "exact", f.tbt_p99, e.tbt_p99, 100 * tol, f.tbt_mean,
			  e.tbt_mean);
	}
	cr_expect(!plan_fluid_ok(pf, pf->ws, 1536, 1), "192 per GPU sits at a tile edge");
	cr_expect(fluid > 0 && refused > 0, "%d batches fluid, %d exact", fluid, refused);
	cr_log_info("tile edges: %d fluid, %d exact, worst P99 difference %.3f%%", fluid, refused,
		    100 * worst);
	plan_free(pf), plan_free(pe);
}

/* The solver's largest batch under the SLO, where it lies in the fluid
 * range: within 1% of the exact path's.  (DeepSeek-V3.2 on GPU-only runs
 * azure-code: on azure-conv its answer, 2,039 requests, sits just below
 * a GEMM tile edge, 256 per GPU, where the fluid path gives way to the
 * exact one.) */
Test(fluid, solved_batch_within_one_percent, .timeout = 600)
{
	static struct setup s;
	static const struct {
		const char *model, *system, *workload;
	} pts[] = {{"deepseek-v3.2", "gpu-only", "azure-code"},
		   {"glm-5.2", "gpu-only", "azure-conv"},
		   {"minimax-m3", "gpu-duplex", "azure-conv"},
		   {"minimax-m3", "gpu-karat-nvlink", "azure-conv"},
		   {"qwen3-235b-a22b", "gpu-duplex", "azure-code"}};
	for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
		load(&s, pts[i].model, pts[i].system, 0, pts[i].workload);
		s.d.samples = 256;
		/* balanced routing: answers that sit in the fluid range */
		s.sys.moe_imbalance = 1;
		struct plan *pf, *pe;
		both_plans(&s, &pf, &pe);
		struct result f, e;
		struct kerr err;
		cr_assert_eq(plan_solve(pf, 1, &f, &err), 0, "%s", err.msg);
		cr_assert_eq(plan_solve(pe, 1, &e, &err), 0, "%s", err.msg);
		cr_expect(plan_fluid_ok(pf, pf->ws, (long)f.batch, 1), "%s %s %s: batch %.0f is below the "
			  "fluid range", pts[i].model, pts[i].system, pts[i].workload, f.batch);
		cr_expect(rel_near(f.batch, e.batch, 0.01), "%s %s %s: batch %.0f, exact %.0f",
			  pts[i].model, pts[i].system, pts[i].workload, f.batch, e.batch);
		plan_free(pf), plan_free(pe);
	}
}

/* At production batches (15,000 and 60,000 requests on 64-128 GPUs, one
 * and two micro-batches): the evaluation each point gets within 1% of the
 * exact path (P99 as p99_tol), where the batch fits and the exact path
 * splits nothing; at least half of them take the fluid path (a point at
 * a tile edge does not: 3 of the 12 here). */
Test(fluid, within_one_percent_at_large_batches, .timeout = 600)
{
	static struct setup s;
	static const struct {
		const char *model, *system, *workload;
		double gpus;
	} pts[] = {{"deepseek-v3", "gpu-only", "azure-conv", 128},
		   {"deepseek-v3.2", "gpu-karat", "azure-code", 64},
		   {"glm-5.2", "gpu-duplex", "azure-conv", 64}};
	static const long batches[] = {15000, 60000};
	int compared = 0, fluid = 0;
	double worst = 0;
	for (size_t i = 0; i < sizeof pts / sizeof *pts; i++)
		for (size_t k = 0; k < sizeof batches / sizeof *batches; k++)
			for (int m = 1; m <= 2; m++) {
				load(&s, pts[i].model, pts[i].system, 0, pts[i].workload);
				s.d.samples = 64;
				s.d.sys = &s.sys;
				s.sys.memdevs *= pts[i].gpus / s.sys.gpus; /* devices per GPU kept */
				s.sys.gpus = pts[i].gpus;
				struct plan *pf, *pe;
				both_plans(&s, &pf, &pe);
				long B = batches[k];
				struct result f = eval(pf, (double)B, m), e = eval(pe, (double)B, m);
				if (e.sharded == 0 && e.gpu_use <= 1 && e.mem_use <= 1) {
					fluid += f.fluid;
					cr_log_info("%s %s B=%ld m=%d: %s", pts[i].model, pts[i].system, B,
						    m, f.fluid ? "fluid" : "exact (tile edge)");
					double d = fabs(f.tbt_p99 / e.tbt_p99 - 1);
					double tol = p99_tol(pe->ws->tbt, 64, e.tbt_p99);
					worst = fmax(worst, d);
					compared++;
					cr_expect(d <= tol && rel_near(f.tbt_mean, e.tbt_mean, 0.01),
						  "%s %s B=%ld m=%d: P99 %.6g exact %.6g (tolerance %.2f%%), "
						  "mean %.6g %.6g", pts[i].model, pts[i].system, B, m,
						  f.tbt_p99, e.tbt_p99, 100 * tol, f.tbt_mean, e.tbt_mean);
				}
				plan_free(pf), plan_free(pe);
			}
	cr_log_info("large batches: %d compared (%d fluid), worst P99 difference %.3f%%", compared,
		    fluid, 100 * worst);
	cr_expect_geq(compared, 8, "only %d of 12 points hold their batch", compared);
	cr_expect_geq(2 * fluid, compared, "only %d of %d points take the fluid path", fluid,
		      compared);
}

/* Past the exact path's work limit, a batch at a tile edge is refused with
 * a reason that names the edge; a few requests per GPU below it, the
 * fluid path evaluates it. */
Test(fluid, a_tile_edge_past_the_work_limit_says_why)
{
	static struct setup s;
	load(&s, "deepseek-v3", "gpu-only", 0, "azure-conv");
	s.d.samples = 256;
	s.d.sys = &s.sys;
	s.sys.gpus = 128;
	s.sys.placement = PLACE_OFFLINE_LPT;
	struct plan *p = plan(&s);
	long B = 1048576, below = B - 2L * 128 * 8; /* 4,096 and 4,088 per GPU and micro-batch */
	cr_assert(plan_fluid_edge(p, p->ws, B, 2) && !plan_fluid_ok(p, p->ws, B, 2));
	struct result r;
	struct kerr err;
	cr_expect_eq(plan_eval(p, (double)B, 2, &r, &err), -1);
	cr_expect(strstr(err.msg, "over the limit") && strstr(err.msg, "tile edge"), "%s", err.msg);
	cr_assert(plan_fluid_ok(p, p->ws, below, 2));
	r = eval(p, (double)below, 2);
	cr_expect(r.fluid && r.tbt_p99 > 0);
	plan_free(p);
}
