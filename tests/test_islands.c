/* test_islands.c: the examples docs/solver.md gives of the schedule's
 * steady patterns at several micro-batches ("What the answer is").  Two
 * patterns made the P99 meet the SLO, miss it and meet it again as the
 * batch grew, each with the same GPU work: lockstep at two micro-batches
 * (GLM-5.2, a step 20% longer) and a four-layer pattern at three
 * (DeepSeek-V3.2, 10% longer).  OFMS now also times the greedy schedules
 * that rank the GPU's tasks (a layer's earlier task first; the micro-
 * batch furthest along first), and both are gone.  The numbers in the
 * doc are checked here against the binary. */
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

struct row {
	int batch;
	double step_ms, busy_ms, gpu_idle;
};

/* One sampled step at each of the doc's batches against its numbers. */
static void check(const char *args, const struct row *doc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(run_karat_fmt(out, sizeof out, err, sizeof err,
					   "query %s --samples 1 --batch %d --format csv", args,
					   doc[i].batch),
			     0, "%s", err);
		double step = 1e3 * column("tbt_mean_s"), busy = 1e3 * column("busy_gpu_s");
		double idle = column("bubble_gpu");
		cr_expect(fabs(step - doc[i].step_ms) < 0.05, "batch %d: %.2f ms, the doc says %.1f",
			  doc[i].batch, step, doc[i].step_ms);
		cr_expect(fabs(busy - doc[i].busy_ms) < 0.05,
			  "batch %d: GPUs busy %.2f ms, the doc says %.1f", doc[i].batch, busy,
			  doc[i].busy_ms);
		cr_expect(fabs(idle - doc[i].gpu_idle) < 0.001,
			  "batch %d: GPU idle %.4f, the doc says %.3f", doc[i].batch, idle,
			  doc[i].gpu_idle);
	}
}

Test(islands, two_micro_batches_no_longer_run_in_lockstep)
{
	/* were 72.2, 60.2, 72.3 and 60.0 ms, the GPU idle 30% or 16% */
	static const struct row doc[] = {
		{410, 60.0, 50.7, 0.155}, {412, 60.2, 50.7, 0.157},
		{414, 60.0, 50.7, 0.155}, {418, 60.0, 50.7, 0.155}};
	check("--model glm-5.2 --workload agentic --system gpu-karat --set system.gpu=b200 "
	      "--set system.gpus=8 --set system.memdevs=32 --slo-ms 70 --microbatches 2 --seed 2",
	      doc, sizeof doc / sizeof *doc);
}

Test(islands, three_micro_batches_no_longer_settle_into_a_slower_pattern)
{
	/* were 96.2, 106.3, 106.4 and 96.2 ms, the GPU idle 2.6%, 11.8%,
	 * 11.9% and 2.5% */
	static const struct row doc[] = {
		{820, 95.9, 93.7, 0.023}, {830, 96.1, 93.8, 0.024},
		{850, 96.1, 93.8, 0.024}, {860, 96.2, 93.9, 0.025}};
	check("--model deepseek-v3.2 --workload azure-code --system gpu-karat --microbatches 3 "
	      "--seed 86",
	      doc, sizeof doc / sizeof *doc);
}
