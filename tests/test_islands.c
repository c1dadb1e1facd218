/* test_islands.c: the example docs/solver.md gives of the greedy
 * schedule's two steady patterns at two micro-batches ("What the answer
 * is"): the same GPU work, a step 20% longer where the micro-batches run
 * in lockstep.  The numbers in the doc are checked here against the
 * binary; a schedule that finds the interleaved pattern every time would
 * fail this test, and the doc would change with it. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static char out[8192], err[4096];

/* The value of column name in out's one-row CSV. */
static double column(const char *name)
{
	char v[64];
	cr_assert_eq(csv_cell(out, name, v, sizeof v), 0, "no column %s in %s", name, out);
	return strtod(v, NULL);
}

Test(islands, the_greedy_schedule_settles_into_two_patterns)
{
	static const struct {
		int batch;
		double step_ms, gpu_idle;
	} doc[] = {{410, 72.2, 0.30}, {412, 60.2, 0.16}, {414, 72.3, 0.30}, {418, 60.0, 0.16}};
	for (size_t i = 0; i < sizeof doc / sizeof *doc; i++) {
		cr_assert_eq(run_karat_fmt(out, sizeof out, err, sizeof err,
					   "query --model glm-5.2 --workload agentic --system gpu-karat "
					   "--set system.gpu=b200 --set system.gpus=8 --set system.memdevs=32 "
					   "--slo-ms 70 --microbatches 2 --seed 2 --samples 1 --batch %d "
					   "--format csv",
					   doc[i].batch),
			     0, "%s", err);
		double step = 1e3 * column("tbt_mean_s"), busy = 1e3 * column("busy_gpu_s");
		double idle = column("bubble_gpu");
		cr_expect(fabs(step - doc[i].step_ms) < 0.05, "batch %d: %.2f ms, the doc says %.1f",
			  doc[i].batch, step, doc[i].step_ms);
		cr_expect(fabs(busy - 50.7) < 0.05, "batch %d: GPUs busy %.2f ms, the doc says 50.7",
			  doc[i].batch, busy);
		cr_expect(fabs(idle - doc[i].gpu_idle) < 0.01, "batch %d: GPU idle %.3f, the doc says %.2f",
			  doc[i].batch, idle, doc[i].gpu_idle);
	}
}
