/* test_help.c: help where hands reach for it (--help and -h on every
 * command, did-you-mean for commands), counts with K and M, and folders
 * and destinations checked or made before the work. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

static char out[1 << 16], err[1 << 14];

#define runf(...) run_karat_fmt(out, sizeof out, err, sizeof err, __VA_ARGS__)

/* Every command answers --help and -h with its own usage, exit 0, even
 * among other options. */
Test(help, every_command_takes_help_and_h)
{
	static const char *const cmds[] = {"list", "show", "ops", "query", "solve", "sweep", "merge",
					   "quantiles", "bench", "calibrate", "validate", "plot", "run"};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		for (int h = 0; h < 2; h++) {
			cr_expect_eq(runf("%s %s", cmds[i], h ? "-h" : "--help"), 0, "%s: %s", cmds[i],
				     err);
			char want[64];
			snprintf(want, sizeof want, "usage: karat %s ", cmds[i]);
			cr_expect(strstr(out, want) == out, "%s: %s", cmds[i], out);
		}
	}
	cr_expect_eq(runf("query --model deepseek-v3.2 --help"), 0, "%s", err);
	cr_expect(strstr(out, "--slo-ms"), "%s", out);
	/* after --, --help is an argument */
	cr_expect_eq(runf("show -- --help"), 2);
}

Test(help, a_mistyped_command_gets_the_nearest)
{
	cr_expect_eq(runf("qurey"), 2);
	cr_expect(strstr(err, "unknown command 'qurey' (did you mean 'query'?)"), "%s", err);
	cr_expect_eq(runf("help sovle"), 2);
	cr_expect(strstr(err, "did you mean 'solve'?"), "%s", err);
}

Test(help, batch_takes_k_and_m)
{
	cr_assert_eq(runf("query --model deepseek-v3.2 --system gpu-only --context 4K --batch 1K "
			  "--samples 4 --format csv"), 0, "%s", err);
	cr_expect(strstr(out, ",1024,"), "%s", out);
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-only --context 4K --batch 1.3K"), 2);
	cr_expect(strstr(err, "whole"), "%s", err);
}

Test(help, run_makes_its_folder)
{
	char dir[64], sub[96], study[128];
	snprintf(dir, sizeof dir, "/tmp/karat-help-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(study, sizeof study, "%s/one.ini", dir);
	cr_assert_eq(write_text(study, "[study]\ntitle = t ; assumed: a test\n"
				"models = deepseek-v3.2 ; assumed: a test\nalgos = native ; assumed: a test\n"
				"workloads = agentic ; assumed: a test\nsystems = gpu-only ; assumed: a test\n"
				"baseline = gpu-only ; assumed: a test\ngpus = 8 ; assumed: a test\n"), 0);
	snprintf(sub, sizeof sub, "%s/new", dir);
	cr_expect_eq(runf("run %s --out %s", study, sub), 0, "%s", err);
	struct stat st;
	snprintf(sub, sizeof sub, "%s/new/one.csv", dir);
	cr_expect_eq(stat(sub, &st), 0);
	cr_expect_eq(runf("run %s --out %s/a/b", study, dir), 1);
	cr_expect(strstr(err, "cannot create"), "%s", err);
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

Test(help, a_query_checks_where_it_writes_before_the_work)
{
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-karat --workload agentic --batch 8 "
			  "--timeline /nonexistent/t.csv"), 1);
	cr_expect(strstr(err, "/nonexistent/t.csv: cannot write: folder /nonexistent does not exist"),
		  "%s", err);
	cr_expect_str_eq(out, "", "the result was computed first");
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-karat --workload agentic --batch 8 "
			  "--step-times /nonexistent/s.csv"), 1);
	cr_expect_str_eq(out, "");
}
