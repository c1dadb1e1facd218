/* cmd_bench.c: `karat bench [KERNEL...]`: the validation kernels timed on
 * this CPU against the roofline of its own microbenchmarks. */
#include <string.h>

#include "cli/bench_run.h"

int cmd_bench(const struct args *a)
{
	const struct command *c = command_find("bench");
	const char *fmt = arg_get(c, a, "format");
	int csv = fmt && strcmp(fmt, "csv") == 0;
	if (fmt && !csv && strcmp(fmt, "table") != 0)
		return usage_error(c, "--format must be table or csv, not '%.20s'", fmt);
	struct bench_plan plan;
	int rc = bench_plan_from_args(c, a, &plan);
	if (rc)
		return rc;
	struct bench_data data;
	if (bench_execute(&plan, &data, !csv, arg_get(c, a, "quiet") != NULL) != 0)
		return 1;
	static const char *const head[] = {"kernel", "size", "threads", "time_s", "predicted_s",
					   "bytes_per_s", "flops_per_s", "efficiency"};
	static const int right[] = {0, 1, 1, 1, 1, 1, 1, 1};
	struct table t;
	table_init(&t, 8, head, csv ? NULL : right);
	for (int i = 0; i < data.n; i++) {
		const struct kernel_result *r = &data.res[i];
		char cell[8][OUT_CELL];
		snprintf(cell[0], OUT_CELL, "%s", r->k->name);
		snprintf(cell[1], OUT_CELL, "%.0f", r->size);
		snprintf(cell[2], OUT_CELL, "%d", data.roof.threads);
		snprintf(cell[3], OUT_CELL, csv ? "%.9g" : "%.4g", r->t.median_s);
		snprintf(cell[4], OUT_CELL, csv ? "%.9g" : "%.4g", r->predicted);
		snprintf(cell[5], OUT_CELL, csv ? "%.9g" : "%.4g", r->bytes / r->t.median_s);
		snprintf(cell[6], OUT_CELL, csv ? "%.9g" : "%.4g", r->flops / r->t.median_s);
		snprintf(cell[7], OUT_CELL, csv ? "%.6g" : "%.3f", r->predicted / r->t.median_s);
		const char *cells[8] = {cell[0], cell[1], cell[2], cell[3], cell[4], cell[5],
					cell[6], cell[7]};
		table_add(&t, cells);
	}
	rc = table_write(&t, stdout, csv) != 0;
	table_free(&t);
	if (!csv)
		printf("\ntime_s is the median per run; predicted_s = max(FLOPs / peak, bytes / "
		       "bandwidth)\nfrom the kernel's declared counts; efficiency = predicted / "
		       "measured.\n");
	return rc;
}
