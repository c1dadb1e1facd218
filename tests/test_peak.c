/* test_peak.c: the slowest unit of a side (solve/price.c, plan_side_peak).
 * Without energy it prices, of the units with each request count, the one
 * with the most summed context and those with a sum above its; with
 * energy it walks every unit.  Both must find the same slowest times, bit
 * for bit, over the zoo's systems and models. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "karat.h"
#include "solve/plan.h"

#include "solve_helpers.h"

/* Micro-batch i of the sample w holds: side sd's slowest times (units of
 * it, cnt its counts) both ways; returns how many units had a count that
 * another unit shares (where the skip can apply). */
static int same_both_ways(const struct plan *p, const struct plan_side *sd,
			  const struct plan_buckets *bk, int i, int units, const int *cnt, int where,
			  const char *what)
{
	double t_skip[LC_N], t_all[LC_N], tm_skip, tm_all, e = 0;
	plan_side_peak(p, sd, bk, i, units, cnt, where, t_skip, &tm_skip, NULL, 0);
	plan_side_peak(p, sd, bk, i, units, cnt, where, t_all, &tm_all, &e, 0);
	for (int c = 0; c < LC_N; c++)
		cr_expect(t_skip[c] == t_all[c], "%s, micro-batch %d, class %d: %.17g by count, %.17g "
			  "over every unit", what, i, c, t_skip[c], t_all[c]);
	cr_expect(tm_skip == tm_all, "%s, micro-batch %d, MTP: %.17g, %.17g", what, i, tm_skip,
		  tm_all);
	int shared = 0;
	for (int u = 0; u < units; u++)
		for (int v = 0; v < units; v++)
			if (v != u && cnt[i * units + u] > 0 && cnt[i * units + u] == cnt[i * units + v]) {
				shared++;
				break;
			}
	return shared;
}

Test(peak, skipping_by_count_finds_the_slowest_unit_of_every_walk)
{
	static struct setup s;
	const char *models[] = {"deepseek-v3.2", "glm-5.2", "kimi-k2"};
	const char *systems[] = {"gpu-only", "gpu-karat", "gpu-attacc", "gpu-cxl-pnm",
				 "gpu-duplex", "gpu-duplex-hbm", "gpu-host-gather",
				 "gpu-host-offload", "gpu-karat-nvlink"};
	int shared = 0, walks = 0;
	const char *workloads[] = {"agentic", "azure-conv"};
	for (size_t a = 0; a < sizeof models / sizeof *models; a++)
		for (size_t b = 0; b < sizeof systems / sizeof *systems; b++)
		for (int wl = 0; wl < 2; wl++) {
			load(&s, models[a], systems[b], 0, workloads[wl]);
			struct plan *p = plan(&s);
			char what[128];
			snprintf(what, sizeof what, "%s on %s, %s", models[a], systems[b], workloads[wl]);
			cr_expect(p->mem_side.monotone && (!p->gpu_side.k || p->gpu_side.monotone),
				  "%s: the skip is off (a value falls with the context)", what);
			struct plan_ws *w = p->ws;
			for (int m = 1; m <= 3; m += 2) {
				long B = 6L * m * (p->devs > p->gpus ? p->devs : p->gpus);
				cr_assert_eq(plan_ensure_batch(p, w, B), 0);
				cr_assert_eq(plan_ensure_memo(p, w, B), 0);
				for (int smp = 0; smp < 4; smp++) {
					struct pipe_out po;
					double ug, um;
					double t = plan_sample(p, w, B, m, smp, 0, 0, &po, &ug, &um);
					cr_assert(!isnan(t), "%s: %s", what, w->fail.msg);
					for (int i = 0; i < m; i++) {
						shared += same_both_ways(p, &p->mem_side, &w->mem_bk, i, p->devs,
									 w->dev_count, W_DEVICE, what);
						walks++;
						if (p->has_mem && p->gpu_side.k)
							shared += same_both_ways(p, &p->gpu_side, &w->gpu_bk, i,
										 p->gpus, w->gpu_count,
										 W_GPU_PRE, what);
						if (p->has_post && !p->hot)
							shared += same_both_ways(p, &p->gpu_side, &w->gpu_bk, i,
										 p->gpus, w->gpu_count,
										 W_GPU_POST, what);
					}
				}
			}
			plan_free(p);
		}
	/* the skip had units to skip: most walks hold counts that repeat */
	cr_expect_gt(shared, 4 * walks, "%d units shared a count over %d walks", shared, walks);
}
