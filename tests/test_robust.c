/* test_robust.c: regression tests for issue 9: inputs that crashed, gave
 * silent wrong answers or damaged files, and the friction a new user met.
 * Each test names the finding it pins; the crash inputs are fixtures in
 * tests/fixtures/. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/suggest.h"
#include "helpers.h"
#include "karat.h"

static char out[1 << 18], err[1 << 14];

static int run(const char *args)
{
	return run_karat(args, out, sizeof out, err, sizeof err);
}

#define runf(...) run_karat_fmt(out, sizeof out, err, sizeof err, __VA_ARGS__)

static const char *fixture(const char *name)
{
	static char p[8][1024];
	static int k;
	char *s = p[k++ & 7];
	snprintf(s, 1024, "%s/tests/fixtures/%s", KARAT_DATADIR, name);
	return s;
}

/* A fresh empty folder under /tmp. */
static const char *tmp_dir(void)
{
	static char d[64];
	snprintf(d, sizeof d, "/tmp/karat-robust-XXXXXX");
	cr_assert_not_null(mkdtemp(d));
	return d;
}

/* The value of CSV column `col` in the second line of text (no quoting). */
static double csv_value(const char *text, const char *col)
{
	const char *nl = strchr(text, '\n');
	cr_assert_not_null(nl);
	int idx = 0;
	for (const char *h = text; h < nl; idx++) {
		const char *c = strchr(h, ',');
		size_t len = (size_t)((c && c < nl ? c : nl) - h);
		if (len == strlen(col) && strncmp(h, col, len) == 0)
			break;
		h = c && c < nl ? c + 1 : nl;
	}
	const char *v = nl + 1;
	for (int i = 0; i < idx; i++) {
		if (*v == '"') /* a quoted field without inner quotes */
			v = strchr(v + 1, '"') + 1;
		v = strchr(v, ',') + 1;
	}
	return strtod(v, NULL);
}

/* Crash 1: 64 --set plus one [set] key overflowed a stack buffer. */
Test(robust, sweep_with_too_many_overrides_is_refused)
{
	char sets[2000] = "";
	for (int i = 0; i < 64; i++)
		strcat(sets, " --set system.gpus=8");
	cr_expect_eq(runf("sweep %s --output - %s", fixture("sweep-one-set.ini"), sets), 1);
	cr_expect(strstr(err, "65 overrides (64 --set and 1 [set] keys); at most 64"), "%s", err);
	cr_expect(strstr(err, "sweep-one-set.ini:"), "%s", err);
	/* 63 fit */
	sets[strlen(sets) - strlen(" --set system.gpus=8")] = '\0';
	cr_expect_eq(runf("sweep %s --output - %s", fixture("sweep-one-set.ini"), sets), 0, "%s",
		     err);
}

/* Crash 2: GSL's default handler aborted on a gamma it could not invert. */
Test(robust, narrow_gamma_is_drawn_not_aborted)
{
	cr_assert_eq(runf("query --model deepseek-v3.2 --system gpu-only --workload %s "
			  "--batch 8 --microbatches 1 --format csv",
			  fixture("gamma-shape-2000.ini")), 0, "%s", err);
	/* context = 1000 + U(0, output): the length-biased gamma(2000, 1) has
	 * mean 2001, so the mean context is about 2000 */
	double ctx = csv_value(out, "ctx_mean_tokens");
	cr_expect(fabs(ctx - 2000) < 30, "ctx_mean_tokens %g", ctx);
	cr_expect(isfinite(csv_value(out, "tbt_p99_s")));
	cr_expect_eq(runf("show %s", fixture("gamma-shape-2000.ini")), 0, "%s", err);
	cr_expect(strstr(out, "mean 2000") || strstr(out, "mean 1999") || strstr(out, "mean 2001"),
		  "%s", out);
}

Test(robust, gamma_gsl_cannot_compute_is_file_line_error)
{
	const char *f = fixture("gamma-huge-shape.ini");
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-only --workload %s "
			  "--batch 8", f), 1);
	char want[1100];
	snprintf(want, sizeof want, "karat: %s:10: output: gamma with shape 1e+06", f);
	cr_expect(strstr(err, want), "%s", err);
	cr_expect_eq(runf("show %s", f), 1);
	/* the same values through --set: no line to name, still an error */
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-only --workload %s "
			  "--batch 8 --set output.max=1001 --set output.scale=1e-3 "
			  "--set output.shape=1e6", fixture("gamma-shape-2000.ini")), 1);
	cr_expect(strstr(err, "cannot be drawn from"), "%s", err);
	/* a lognormal without a finite mean (finding 12) */
	f = fixture("lognormal-sigma-1e9.ini");
	cr_expect_eq(runf("show %s", f), 1);
	snprintf(want, sizeof want, "%s:9: output: lognormal", f);
	cr_expect(strstr(err, want), "%s", err);
	cr_expect(!strstr(out, "nan"), "%s", out);
}

/* Findings 3, 4, 10: output files. */
Test(robust, output_onto_a_device_or_symlink_is_refused)
{
	struct stat st;
	cr_expect_eq(runf("sweep %s --output /dev/null", fixture("sweep-one-set.ini")), 1);
	cr_expect(strstr(err, "/dev/null: not a regular file (a device"), "%s", err);
	cr_assert_eq(stat("/dev/null", &st), 0);
	cr_expect(S_ISCHR(st.st_mode), "/dev/null is still a device");
	const char *d = tmp_dir();
	char target[128], link[128];
	snprintf(target, sizeof target, "%s/target.csv", d);
	snprintf(link, sizeof link, "%s/link.csv", d);
	FILE *fp = fopen(target, "w");
	fputs("keep me\n", fp);
	fclose(fp);
	cr_assert_eq(symlink(target, link), 0);
	cr_expect_eq(runf("sweep %s --output %s", fixture("sweep-one-set.ini"), link), 1);
	cr_expect(strstr(err, "a symbolic link"), "%s", err);
	cr_assert_eq(lstat(link, &st), 0);
	cr_expect(S_ISLNK(st.st_mode), "the link is still a link");
	char buf[32] = "";
	fp = fopen(target, "r");
	cr_assert_not_null(fgets(buf, sizeof buf, fp));
	fclose(fp);
	cr_expect_str_eq(buf, "keep me\n");
	unlink(link);
	unlink(target);
	rmdir(d);
}

Test(robust, output_is_written_atomically_and_leaves_no_temporary)
{
	const char *d = tmp_dir();
	cr_assert_eq(runf("sweep %s --output %s/x.csv", fixture("sweep-one-set.ini"), d), 0, "%s",
		     err);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "ls -A %s", d);
	FILE *ls = popen(cmd, "r");
	char names[512] = "";
	size_t got = fread(names, 1, sizeof names - 1, ls);
	names[got] = '\0';
	pclose(ls);
	cr_expect_str_eq(names, "x.csv\n", "only the result remains");
	/* a FIFO is written in place (a reader drains it) */
	char fifo[128];
	snprintf(fifo, sizeof fifo, "%s/f.csv", d);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(cmd, sizeof cmd, "cat %s > %s/drained &", fifo, d);
	cr_assert_eq(system(cmd), 0);
	cr_expect_eq(runf("sweep %s --output %s", fixture("sweep-one-set.ini"), fifo), 0, "%s", err);
	snprintf(cmd, sizeof cmd, "sleep 0.2; grep -q '^deepseek-v3.2,' %s/drained; rm -rf %s", d, d);
	cr_expect_eq(system(cmd), 0, "the FIFO's reader got the rows");
}

/* Write errors name the path the user gave, before any work is done. */
Test(robust, output_folder_is_checked_before_the_work)
{
	cr_expect_eq(runf("sweep %s --output /nonexistent-karat/deeper/x.csv",
			  fixture("sweep-one-set.ini")), 1);
	cr_expect(strstr(err, "karat: /nonexistent-karat/deeper/x.csv: cannot write: folder "
			      "/nonexistent-karat/deeper does not exist"), "%s", err);
	cr_expect(!strstr(err, ".tmp"), "%s", err);
}

/* Finding 5: list items and the algo column are never cut. */
Test(robust, long_sweep_items_and_algo_labels_are_kept_whole)
{
	static const char spec[] = "dsa:index_heads=64.000000,index_dim=128.000000,"
				   "index_dtype=fp8,index_scale_bytes=4.0000000000B,"
				   "score_bytes=4.0000000000B,topk=512";
	cr_assert_gt(strlen(spec), 127);
	cr_assert_eq(runf("sweep %s --output -", fixture("sweep-long-algo.ini")), 0, "%s", err);
	cr_expect(strstr(out, spec), "the algo column holds the whole spec: %s", out);
	double sweep_tbt = csv_value(out, "tbt_p99_s");
	cr_assert_eq(runf("query --model deepseek-v3.2 --system gpu-karat --workload agentic "
			  "--batch 32 --microbatches 1 --algo '%s' --format csv", spec), 0, "%s", err);
	cr_expect(strstr(out, spec), "%s", out);
	cr_expect_eq(csv_value(out, "tbt_p99_s"), sweep_tbt);
	cr_assert_eq(run("query --model deepseek-v3.2 --system gpu-karat --workload agentic "
			 "--batch 32 --microbatches 1 --format csv"), 0, "%s", err);
	cr_expect_neq(csv_value(out, "tbt_p99_s"), sweep_tbt, "topk=512 took effect");
}

/* Finding 6: the trace reader refuses what is not a regular file. */
Test(robust, quantiles_of_a_device_is_refused_at_once)
{
	cr_expect_eq(run("quantiles /dev/zero --input-column a --output-column b"), 1);
	cr_expect(strstr(err, "/dev/zero: not a regular file"), "%s", err);
}

/* Finding 7: values that would make a figure non-finite are refused. */
Test(robust, tiny_rates_are_refused_where_read)
{
	static const char *const sets[] = {"gpu.bandwidth=1e-300B/s", "gpu.compute.fp8=1e-300FLOPS",
					   "memdev.bandwidth=1e-300B/s", "gpu.tdp=1e-300W"};
	for (int i = 0; i < 4; i++) {
		cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-karat --workload agentic "
				  "--batch 8 --set %s", sets[i]), 1, "%s", sets[i]);
		cr_expect(strstr(err, "below the smallest meaningful value"), "%s", err);
		cr_expect(!strstr(out, "nan") && !strstr(out, "inf"), "%s", out);
	}
}

/* Finding 8: run refuses more overrides than it can carry. */
Test(robust, run_refuses_overrides_it_would_drop)
{
	char sets[2000] = "";
	for (int i = 0; i < 63; i++)
		strcat(sets, " --set system.gpus_per_node=8");
	cr_expect_eq(runf("run %s", sets), 2);
	cr_expect(strstr(err, "63 --set options; karat run takes at most 60"), "%s", err);
}

/* Finding 9: work over the limit is refused with the limit named, fast.
 * A batch placed request by request (round-robin and online placement
 * have no fluid path where requests differ) counts; the same batch from
 * its sums (the longest-first packer's) does not grow with it. */
Test(robust, huge_work_is_refused_with_the_limit)
{
	cr_expect_eq(run("query --model deepseek-v3.2 --system gpu-karat --workload agentic "
			 "--batch 1048576 --microbatches 1 --set system.admission=round-robin"), 1);
	cr_expect(strstr(err, "over the limit of"), "%s", err);
	/* online placement: arrival-order micro-batches place every request;
	 * one micro-batch (or CMR's) is evaluated from its sums */
	cr_expect_eq(run("query --model deepseek-v3.2 --system gpu-karat --workload agentic "
			 "--batch 1048576 --microbatches 2 --schedule ofms"), 1);
	cr_expect(strstr(err, "over the limit of") &&
			  strstr(err, "or with --set system.placement=offline-lpt, a batch this "
				      "large is evaluated from its sums"),
		  "%s", err);
	cr_expect_eq(run("query --model deepseek-v3.2 --system gpu-karat --workload agentic "
			 "--batch 1048576 --microbatches 1 --format csv"), 0, "%s", err);
	cr_expect(strstr(out, ",fluid,"), "%s", out);
	cr_expect_eq(run("query --model deepseek-v3.2 --system gpu-karat --workload agentic "
			 "--batch 1048576 --microbatches 1 --set system.placement=offline-lpt"), 0,
		     "%s", err);
	cr_expect_eq(run("solve --model deepseek-v3.2 --system gpu-only --workload agentic "
			 "--set system.gpus=1000000"), 1);
	cr_expect(strstr(err, "1000000 GPUs"), "%s", err);
	cr_expect_eq(run("query --model deepseek-v3.2 --system gpu-only --workload agentic "
			 "--samples 1000000 --batch 100 --microbatches 1"), 1);
	cr_expect(strstr(err, "over the limit of"), "%s", err);
}

/* Finding 11: overrides that do nothing, duplicate parameters, clipping. */
Test(robust, ineffective_or_ambiguous_inputs_are_refused)
{
	cr_expect_eq(run("query --model deepseek-v3.2 --system gpu-only --context 8K --batch 8 "
			 "--set input.median=64K"), 2);
	cr_expect(strstr(err, "the context is fixed"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 1 --context 8K "
			 "--algo dsa:topk=5,topk=6"), 2);
	cr_expect(strstr(err, "parameter 'topk' given twice"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 1 --context 8K "
			 "--algo dsa:,,"), 2);
	cr_expect(strstr(err, "empty parameter"), "%s", err);
	cr_expect_eq(run("query --model deepseek-v3.2 --system gpu-only --context 200K "
			 "--batch 1"), 1);
	cr_expect(strstr(err, "exceeds DeepSeek-V3.2's maximum"), "%s", err);
	cr_expect_eq(run("solve --model deepseek-v3.2 --system gpu-only --context 200K"), 1);
}

/* Finding 12: an empty sweep file names the file and line; no -0. */
Test(robust, empty_sweep_file_names_its_line)
{
	const char *f = fixture("sweep-empty.ini");
	cr_expect_eq(runf("sweep %s --output -", f), 1);
	char want[1100];
	snprintf(want, sizeof want, "karat: %s:1: [sweep] needs the keys model, system", f);
	cr_expect(strstr(err, want), "%s", err);
	cr_expect(!strstr(err, "--model"), "no command-line words: %s", err);
}

Test(robust, no_negative_zero_in_csv)
{
	cr_assert_eq(run("query --model deepseek-v3.2 --system gpu-only --workload agentic "
			 "--batch 8 --mtp-accept -0 --format csv"), 0, "%s", err);
	cr_expect(!strstr(out, ",-0,") && !strstr(out, ",-0\n"), "%s", out);
	cr_expect(strstr(out, ",0,"), "%s", out);
}

/* Finding 13: every point is checked first; --dry-run. */
Test(robust, sweep_typo_fails_before_any_work)
{
	const char *f = fixture("sweep-typo.ini");
	cr_expect_eq(runf("sweep %s --output -", f), 1);
	char want[1100];
	snprintf(want, sizeof want, "karat: %s:6: point 4: unknown model 'qwen3-235b-a22c' "
		 "(did you mean 'qwen3-235b-a22b'?)", f);
	cr_expect(strstr(err, want), "%s", err);
	cr_expect_eq(out[0], '\0', "nothing evaluated or written: %s", out);
	cr_expect_eq(runf("sweep %s --dry-run", fixture("sweep-one-set.ini")), 0, "%s", err);
	cr_expect(strstr(out, "1 points, every one loaded and checked"), "%s", out);
	cr_expect_eq(runf("sweep %s --dry-run", f), 1);
}

/* Finding 14: did you mean, unit case, --version. */
Test(robust, names_get_a_suggestion)
{
	cr_expect_eq(run("ops --model deepseek-v32 --hw h200 --batch 1 --context 1K"), 2);
	cr_expect(strstr(err, "unknown model 'deepseek-v32' (did you mean 'deepseek-v3.2'?)"), "%s",
		  err);
	cr_expect_eq(run("ops --model DeepSeek-V3.2 --hw h200 --batch 1 --context 1K"), 2);
	cr_expect(strstr(err, "(did you mean 'deepseek-v3.2'?)"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 1 --context 1K --algo Quest"),
		     2);
	cr_expect(strstr(err, "did you mean 'quest'?"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 1 --context 128k"), 2);
	cr_expect(strstr(err, "case-sensitive: did you mean 'K'?"), "%s", err);
	cr_expect_eq(run("--version"), 0);
	cr_expect(strncmp(out, "karat ", 6) == 0 && strstr(out, "data: "), "%s", out);
	/* no suggestion for a name far from every candidate */
	static const char *const c[] = {"gpu-only", "gpu-karat"};
	cr_expect_null(suggest_name("llama", c, 2));
	cr_expect_str_eq(suggest_name("GPU_Karat", c, 2), "gpu-karat");
}

/* Finding 16: a trace as a workload. */
Test(robust, quantiles_prints_a_whole_workload_file)
{
	const char *d = tmp_dir();
	char csv[128], ini[128];
	snprintf(csv, sizeof csv, "%s/t.csv", d);
	snprintf(ini, sizeof ini, "%s/t.ini", d);
	FILE *fp = fopen(csv, "w");
	fputs("in,out\n", fp);
	for (int i = 1; i <= 200; i++)
		fprintf(fp, "%d,%d\n", 100 * i, 10 + i);
	fclose(fp);
	cr_assert_eq(runf("quantiles %s --input-column in --output-column out", csv), 0, "%s", err);
	fp = fopen(ini, "w");
	fputs(out, fp);
	fclose(fp);
	cr_expect_eq(runf("show %s", ini), 0, "the printed file loads as a workload: %s", err);
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-only --workload %s --batch 1",
			  csv), 2);
	cr_expect(strstr(err, "a trace is not a workload file"), "%s", err);
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", d);
	cr_expect_eq(system(cmd), 0);
}

/* Finding 15: a roof that cannot be right is caught. */
Test(robust, broken_roofline_is_detected)
{
	char why[400];
	struct cpu_roof r = {.bw = 40e9, .bw_triad = 40e9, .bw_read = 38e9, .peak = 14.8e9,
			     .peak1 = 172e9, .threads = 2};
	cr_expect_eq(roof_check(&r, why, sizeof why), -1);
	cr_expect(strstr(why, "busy"), "%s", why);
	r.peak = 330e9;
	cr_expect_eq(roof_check(&r, why, sizeof why), 0);
	r.bw = NAN;
	cr_expect_eq(roof_check(&r, why, sizeof why), -1);
	struct kernel_def k = {.name = "quest_score"};
	struct kernel_result kr = {.k = &k, .size = 65536, .predicted = 1.57e-3};
	kr.t.median_s = 1e-3;
	cr_expect_eq(result_check(&kr, why, sizeof why), -1);
	cr_expect(strstr(why, "1.57 times its roof"), "%s", why);
	kr.t.median_s = 1.6e-3;
	cr_expect_eq(result_check(&kr, why, sizeof why), 0);
}
