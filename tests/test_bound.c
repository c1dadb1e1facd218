/* test_bound.c: what bounds a solved answer (issue 30 item 1).  For each
 * kind of limit, a point bound by it: relaxing that limit raises the
 * answer, relaxing another leaves it as it is. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static char out[1 << 16], err[1 << 14];

/* Column name of a `solve --format csv` row, into val. */
static void column(const char *name, char *val, size_t n)
{
	char *nl = strchr(out, '\n');
	cr_assert_not_null(nl, "%s", out);
	int idx = 0;
	for (const char *h = out; h < nl; idx++) {
		size_t len = strcspn(h, ",\n");
		if (len == strlen(name) && strncmp(h, name, len) == 0)
			break;
		h += len + 1;
		cr_assert(h <= nl + 1, "no column %s", name);
	}
	const char *v = nl + 1;
	for (int k = 0; k < idx; k++) {
		if (*v == '"') /* a quoted cell */
			v = strchr(v + 1, '"') + 1;
		v = strchr(v, ',') + 1;
	}
	snprintf(val, n, "%.*s", (int)strcspn(v, ",\n"), v);
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
