/* bench_run.h: running the kernel benchmarks for `bench` and `calibrate`,
 * and printing the conditions they ran under. */
#ifndef KARAT_CLI_BENCH_RUN_H
#define KARAT_CLI_BENCH_RUN_H

#include "cli/cli.h"
#include "karat.h"

#define BENCH_MAX 64
#define BENCH_MAX_KERNELS 16 /* more than the kernel table holds */

struct bench_plan {
	const struct kernel_def *k[BENCH_MAX_KERNELS];
	int nk;
	double min_time;
};

struct bench_data {
	struct cpu_roof roof;
	double clock_res;
	struct kernel_result res[BENCH_MAX];
	int n;
	int untrusted; /* the roof failed its sanity check (warned) */
};

/* Kernels named as positional arguments (all when none) and --min-time. */
int bench_plan_from_args(const struct command *c, const struct args *a,
			 struct bench_plan *p);

/* Measures the roofline, then every kernel at its sizes.  Conditions go
 * to stdout (human = 1) or stderr; a roof that fails roof_check marks the
 * data untrusted, and it and a kernel faster than its roof (result_check)
 * are warned about on stderr. */
int bench_execute(const struct bench_plan *p, struct bench_data *d, int human, int quiet);

#endif
