/* test_robust3.c: regression tests for robustness round 3: each runs the
 * reproducer of one finding (a command nothing else should have run, an
 * output lost or clobbered, a wrong answer let through, a hang) and checks
 * that it is now refused, kept or bounded.  The test names say what each
 * guards. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static char out[1 << 18], err[1 << 14];

#define runf(...) run_karat_fmt(out, sizeof out, err, sizeof err, __VA_ARGS__)

static const char *bin(void)
{
	const char *b = getenv("KARAT_BIN");
	return b ? b : KARAT_DATADIR "/build/karat";
}

/* Runs a shell line (fmt) with $K the binary; its exit status. */
static int shf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int shf(const char *fmt, ...)
{
	char line[4000], cmd[4400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof cmd, "K='%s'; %s", bin(), line);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char dir[64];

static void setup_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/karat-r3-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static int exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int exists(const char *fmt, ...)
{
	char p[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p, sizeof p, fmt, ap);
	va_end(ap);
	struct stat st;
	return lstat(p, &st) == 0;
}

static int have_gnuplot(const char *test)
{
	if (system("command -v gnuplot >/dev/null 2>&1") == 0)
		return 1;
	fprintf(stderr, "%s: skipped: gnuplot is not installed\n", test);
	return 0;
}

/* DIR/bin/gnuplot: a shell script with body, put first on PATH by the
 * commands that name DIR/bin. */
static void fake_gnuplot(const char *body)
{
	char p[128], text[512];
	snprintf(p, sizeof p, "%s/bin", dir);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/bin/gnuplot", dir);
	snprintf(text, sizeof text, "#!/bin/sh\n%s", body);
	cr_assert_eq(write_text(p, text), 0);
	cr_assert_eq(chmod(p, 0755), 0);
}


/* DIR/NAME: a study of DeepSeek-V3.2 on agentic at 8 GPUs over systems;
 * its path. */
static const char *write_study(const char *name, const char *systems)
{
	static char path[128];
	char text[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(text, sizeof text, "[study]\ntitle = t ; assumed: a test\n"
		 "models = deepseek-v3.2 ; assumed: a test\nalgos = native ; assumed: a test\n"
		 "workloads = agentic ; assumed: a test\nsystems = %s ; assumed: a test\n"
		 "baseline = gpu-only ; assumed: a test\ngpus = 8 ; assumed: a test\n", systems);
	cr_assert_eq(write_text(path, text), 0);
	return path;
}

/* Item 1: a folder name reaches gnuplot as data, never through a shell. */
Test(robust3, figure_folder_names_run_no_command, .init = setup_dir, .fini = remove_dir)
{
	if (!have_gnuplot("figure_folder_names_run_no_command"))
		return;
	static const char *const names[] = {"v$(touch PWNED)", "v`touch PWNED`", "it's", "|x",
					    "<y"};
	for (int i = 0; i < 5; i++) {
		setenv("N", names[i], 1); /* the name reaches the shell as data too */
		cr_assert_eq(shf("cd %s && mkdir -p \"$N\" && \"$K\" validate --out \"$N\" >/dev/null "
				 "2>err", dir), 0, "%s", names[i]);
		cr_expect(exists("%s/%s/validation.png", dir, names[i]), "%s", names[i]);
	}
	cr_expect(!exists("%s/PWNED", dir), "a folder name ran a command");
	cr_expect(!exists("%s/v", dir) && !exists("%s/x", dir), "a name was read as a pipe");
}

/* Item 2: a figure's target that is a link is refused, and a planted
 * temporary link is neither followed nor written through. */
Test(robust3, figure_targets_and_temporaries_never_follow_links, .init = setup_dir,
     .fini = remove_dir)
{
	if (!have_gnuplot("figure_targets_and_temporaries_never_follow_links"))
		return;
	cr_assert_eq(shf("cd %s && \"$K\" validate --out . >/dev/null 2>&1", dir), 0);
	cr_assert_eq(shf("cd %s && echo precious > victim && rm validation.png && "
			 "ln -s victim validation.png", dir), 0);
	cr_expect_eq(runf("plot validation --from %s", dir), 1);
	cr_expect(strstr(err, "symbolic link"), "%s", err);
	/* a link at a dead karat's temporary name: left alone, not followed */
	cr_assert_eq(shf("cd %s && rm validation.png && ln -s victim .validation.png.tmp.999999.AbCdEf",
			 dir), 0);
	cr_expect_eq(runf("plot validation --from %s", dir), 0, "%s", err);
	char text[64];
	char p[128];
	snprintf(p, sizeof p, "%s/victim", dir);
	read_text(p, text, sizeof text);
	cr_expect_str_eq(text, "precious\n");
	/* gnuplot's messages come through a pipe: no log file in /tmp */
	cr_expect_eq(shf("ls /tmp/karat-gnuplot-*.log >/dev/null 2>&1"), 2);
}

/* Item 3: a figure that cannot be written whole (a file size limit, or a
 * gnuplot that stops short) leaves the old one and fails. */
Test(robust3, a_figure_not_written_whole_keeps_the_old_one, .init = setup_dir,
     .fini = remove_dir)
{
	if (!have_gnuplot("a_figure_not_written_whole_keeps_the_old_one"))
		return;
	cr_assert_eq(shf("cd %s && \"$K\" validate --out . >/dev/null 2>&1 && cp validation.png old.png",
			 dir), 0);
	cr_expect_eq(shf("cd %s && (ulimit -f 8; \"$K\" plot validation --from . >/dev/null 2>err)",
			 dir), 1);
	cr_expect_eq(shf("cd %s && grep -q 'write failed' err && cmp -s old.png validation.png", dir),
		     0, "the old figure changed");
	cr_expect_eq(shf("cd %s && \"$K\" plot validation --from . --format pdf >/dev/null 2>&1 && "
			 "cp validation.pdf old.pdf && (ulimit -f 4; \"$K\" plot validation --from . "
			 "--format pdf >/dev/null 2>&1); s=$?; cmp -s old.pdf validation.pdf && exit $s",
			 dir), 1);
	/* a gnuplot that writes a PNG cut short and says nothing */
	fake_gnuplot("printf '\\211PNG\\r\\n\\032\\n0123456789abcdef'\n");
	cr_expect_eq(shf("cd %s && PATH=%s/bin:$PATH \"$K\" plot validation --from . >/dev/null 2>err",
			 dir, dir), 1);
	cr_expect_eq(shf("cd %s && grep -q 'cut short' err && cmp -s old.png validation.png", dir), 0);
}

/* Item 4: a point that fails at evaluation gets a row; every other row is
 * written; the exit status and message name the point and its line.  With
 * over 20,000 points --dry-run checks one value of each key at a time, so
 * model x mtp = 1 is first met at evaluation. */
Test(robust3, sweep_keeps_the_rows_of_a_failing_point, .init = setup_dir, .fini = remove_dir)
{
	char ini[2048] = "[sweep]\nmodel = deepseek-v3.2, qwen3-235b-a22b\nsystem = gpu-only\n"
			 "context = 1K\nsamples = 1\nmicrobatches = 1\nmtp = 0, 1\nslo_ms = 100, 200, 300, 400\n"
			 "batch = 1";
	for (int i = 2; i <= 40; i++)
		snprintf(ini + strlen(ini), sizeof ini - strlen(ini), ", %d", i);
	strcat(ini, "\nseed = 1");
	for (int i = 2; i <= 40; i++)
		snprintf(ini + strlen(ini), sizeof ini - strlen(ini), ", %d", i);
	strcat(ini, "\n");
	char path[128];
	snprintf(path, sizeof path, "%s/big.ini", dir);
	cr_assert_eq(write_text(path, ini), 0);
	cr_expect_eq(runf("sweep %s --output %s/big.csv -j 2", path, dir), 1);
	cr_expect(strstr(err, "big.ini:2: point 19201: model Qwen3-235B-A22B has no MTP module"),
		  "%s", err);
	cr_expect(strstr(err, "6400 of 25600 points failed"), "%s", err);
	cr_expect_eq(shf("test $(wc -l < %s/big.csv) = 25601 && test $(grep -c ',false,model Qwen3' "
			 "%s/big.csv) = 6400 && test $(grep -c ',true,' %s/big.csv) -gt 19000", dir, dir,
			 dir), 0);
	/* --dry-run refuses a point that evaluation would refuse */
	snprintf(path, sizeof path, "%s/work.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only\n"
				"workload = azure-conv\nbatch = 8, 600000\nsamples = 256\n"
				"[set]\nsystem.admission = round-robin\n"), 0);
	cr_expect_eq(runf("sweep %s --dry-run", path), 1);
	cr_expect(strstr(err, "work.ini:5: point 2:") && strstr(err, "over the limit"), "%s", err);
}

/* Item 5: a figure that fails fails its command; a study of one system
 * draws. */
Test(robust3, a_failing_figure_fails_the_command, .init = setup_dir, .fini = remove_dir)
{
	if (!have_gnuplot("a_failing_figure_fails_the_command"))
		return;
	const char *path = write_study("one.ini", "gpu-only");
	cr_expect_eq(runf("run %s --out %s", path, dir), 0, "%s", err);
	cr_expect(exists("%s/one.png", dir));
	fake_gnuplot("echo broken >&2\nexit 3\n");
	cr_expect_eq(shf("PATH=%s/bin:$PATH \"$K\" validate --out %s >/dev/null 2>%s/err", dir, dir,
			 dir), 1);
	cr_expect_eq(shf("PATH=%s/bin:$PATH \"$K\" run %s --out %s >/dev/null 2>>%s/err", dir, path,
			 dir, dir), 1);
	cr_expect_eq(shf("grep -c 'gnuplot failed (exit status 3)' %s/err | grep -qx 2", dir), 0);
}

/* Item 6: an output is never one of the command's inputs, and a sweep
 * file's output stays in its folder. */
Test(robust3, outputs_never_replace_inputs, .init = setup_dir, .fini = remove_dir)
{
	char path[128];
	snprintf(path, sizeof path, "%s/s.ini", dir);
	const char *s = "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only\ncontext = 4K\nbatch = 8\n"
			"samples = 4\n";
	cr_assert_eq(write_text(path, s), 0);
	cr_expect_eq(runf("sweep %s --output %s", path, path), 1);
	cr_expect(strstr(err, "one of this command's inputs"), "%s", err);
	char text[512];
	read_text(path, text, sizeof text);
	cr_expect_str_eq(text, s);
	/* the trace a query reads */
	cr_assert_eq(shf("cd %s && printf 'in,out\\n100,10\\n200,20\\n' > t.csv && printf "
			 "'[workload]\\nname = t\\norigin = trace\\ntrace = t.csv\\ninput_column = in\\n"
			 "output_column = out\\n' > w.ini", dir), 0);
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-only --workload %s/w.ini --batch 4 "
			  "--samples 4 --step-times %s/t.csv", dir, dir), 1);
	cr_expect(strstr(err, "t.csv: cannot write: it is one of this command's inputs"), "%s", err);
	cr_expect_eq(shf("head -1 %s/t.csv | grep -qx in,out", dir), 0);
	/* a relative output may not leave the sweep's folder */
	snprintf(path, sizeof path, "%s/o.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only\n"
				"context = 4K\nbatch = 8\noutput = ../notes.txt\n"), 0);
	cr_expect_eq(runf("sweep %s", path), 1);
	cr_expect(strstr(err, "o.ini:6: sweep.output: '../notes.txt' leaves the sweep file's folder"),
		  "%s", err);
}

/* DIR/slow.ini: a sweep of 15 solves with 1,024 samples, about 5 s on the
 * development machine: long enough to be caught running. */
static void write_slow_sweep(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/slow.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = glm-5.2\nsystem = gpu-karat\n"
				"workload = agentic\nsamples = 1024\nslo_ms = 50, 60, 70, 80, 90, 95, "
				"100, 105, 110, 115, 120, 125, 130, 135, 140\n"), 0);
}

/* Item 7: SIGTERM removes the temporary being written; a SIGKILLed
 * karat's temporary is removed by the next write to that target. */
Test(robust3, interrupted_writes_leave_no_temporaries, .init = setup_dir, .fini = remove_dir)
{
	char path[128];
	write_slow_sweep();
	for (int k = 0; k < 2; k++) {
		const char *sig = k ? "KILL" : "TERM";
		cr_assert_eq(shf("cd %s && (\"$K\" sweep slow.ini --output o.csv -j 1 2>/dev/null & "
				 "p=$!; n=0; until ls -a | grep -q '^.o.csv.tmp.'; do sleep 0.05; "
				 "n=$((n+1)); [ $n -lt 200 ] || exit 1; done; kill -%s $p; wait $p; "
				 "exit 0)", dir, sig), 0, "%s", sig);
		int left = shf("ls -a %s | grep -q '^.o.csv.tmp.'", dir) == 0;
		cr_expect_eq(left, k, "after SIG%s a temporary is %s", sig, left ? "left" : "gone");
	}
	snprintf(path, sizeof path, "%s/quick.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only\n"
				"context = 4K\nbatch = 8\nsamples = 4\n"), 0);
	cr_expect_eq(runf("sweep %s --output %s/o.csv", path, dir), 0, "%s", err);
	cr_expect_eq(shf("ls -a %s | grep -q '^.o.csv.tmp.'", dir), 1, "the stale one stayed");
}

/* Item 8: a rewritten output keeps the mode of the file it replaces. */
Test(robust3, rewriting_keeps_the_mode, .init = setup_dir, .fini = remove_dir)
{
	char path[128];
	snprintf(path, sizeof path, "%s/q.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only\n"
				"context = 4K\nbatch = 8\nsamples = 4\n"), 0);
	cr_assert_eq(runf("sweep %s --output %s/o.csv", path, dir), 0, "%s", err);
	cr_assert_eq(shf("chmod 600 %s/o.csv", dir), 0);
	cr_assert_eq(runf("sweep %s --output %s/o.csv", path, dir), 0, "%s", err);
	struct stat st;
	char o[128];
	snprintf(o, sizeof o, "%s/o.csv", dir);
	cr_assert_eq(stat(o, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
}

#define Q "query --model deepseek-v3.2 --system gpu-only --context 4K --batch 8 --samples 4 "

/* Item 9: an override is checked with the rest of its file, as the file
 * would be, and named; a distribution switches with several --set. */
Test(robust3, set_is_checked_as_a_file_is)
{
	static const struct {
		const char *set, *says;
	} cases[] = {
		{"moe.experts=1", "--set moe.experts=1: with this override"},
		{"ffn.dense_layers=100", "--set ffn.dense_layers=100: dense_layers (100) exceeds layers (61)"},
		{"gpu.kernel.gemm_tile_m_small=256", "--set gpu.kernel.gemm_tile_m_small=256: with this "
						     "override"},
	};
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(runf(Q "--set %s", cases[i].set), 1, "%s", cases[i].set);
		cr_expect(strstr(err, cases[i].says), "%s: %s", cases[i].set, err);
	}
	cr_expect_eq(runf("query --model qwen3-235b-a22b --system gpu-only --context 4K --batch 8 "
			  "--set attention.kv_heads=7"), 1);
	cr_expect(strstr(err, "kv_heads=7: heads (64) must be a multiple of kv_heads (7)"), "%s", err);
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-karat --context 4K --batch 8 "
			  "--set memdev.select.unit_rate=1e12"), 1);
	cr_expect(strstr(err, "unit_rate=1e12: give select.unit_rate or select.cores"), "%s", err);
	cr_expect_eq(runf("ops --model deepseek-v3.2 --hw h200 --batch 8 --context 4K --set moe.experts=1"),
		     1);
	cr_expect(strstr(err, "active (8) exceeds experts (1)"), "%s", err);
	/* dist = gamma with its own keys, in either order */
	const char *orders[] = {"--set input.dist=gamma --set input.shape=2 --set input.scale=40000",
				"--set input.shape=2 --set input.scale=40000 --set input.dist=gamma"};
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-only --workload agentic "
				  "--batch 8 --samples 8 %s", orders[i]), 0, "%s: %s", orders[i], err);
	}
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-only --workload agentic --batch 8 "
			  "--set input.dist=gamma --set input.shape=2"), 1);
	cr_expect(strstr(err, "gamma needs shape > 0 and scale > 0"), "%s", err);
}

/* Item 10: an efficiency small enough to overflow a time is refused. */
Test(robust3, efficiencies_keep_times_finite)
{
	cr_expect_eq(runf(Q "--set gpu.efficiency.gemm_compute=1e-300"), 1);
	cr_expect(strstr(err, "'1e-300' is out of range [0.001, 1]"), "%s", err);
	cr_expect_eq(runf(Q "--set gpu.efficiency.gemm_compute=0.001"), 0, "%s", err);
	cr_expect(!strstr(out, "inf") && !strstr(out, "e+29"), "%s", out);
}

/* Item 11: ROLE[NAME] names a device there is. */
Test(robust3, a_role_name_must_exist)
{
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-karat --context 4K --batch 8 "
			  "--set 'memdev[atacc].memory.bandwidth=1TB/s'"), 2);
	cr_expect(strstr(err, "unknown device 'atacc' (did you mean 'attacc'?)"), "%s", err);
}

/* Item 12: merge reads its shards as the trace reader reads a trace: a NUL
 * byte is refused with its line, a byte order mark skipped. */
Test(robust3, merge_reads_as_the_trace_reader, .init = setup_dir, .fini = remove_dir)
{
	char path[128];
	snprintf(path, sizeof path, "%s/s.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only\n"
				"context = 4K, 8K\nbatch = 8\nsamples = 4\n"), 0);
	cr_assert_eq(runf("sweep %s --output %s/all.csv", path, dir), 0, "%s", err);
	for (int k = 1; k <= 2; k++)
		cr_assert_eq(runf("sweep %s --shard %d/2 --output %s/s%d.csv", path, k, dir, k), 0);
	cr_assert_eq(shf("cd %s && { printf '\\357\\273\\277'; cat s1.csv; } > bom.csv", dir), 0);
	cr_expect_eq(runf("merge %s/bom.csv %s/s2.csv --output %s/m.csv", dir, dir, dir), 0, "%s", err);
	cr_expect_eq(shf("cmp -s %s/m.csv %s/all.csv", dir, dir), 0);
	cr_assert_eq(shf("cd %s && sed '3s/gpu-only/gpu\\x00only/' s1.csv > nul.csv", dir), 0);
	cr_expect_eq(runf("merge %s/nul.csv %s/s2.csv", dir, dir), 1);
	cr_expect(strstr(err, "nul.csv:3: a NUL byte"), "%s", err);
}

/* Item 13: a bare reserve below one byte (vLLM's 0.9) is refused. */
Test(robust3, a_reserve_below_a_byte_is_refused)
{
	cr_expect_eq(runf(Q "--set gpu.memory_reserve=0.9"), 1);
	cr_expect(strstr(err, "less than one byte: write a share with % (10%)"), "%s", err);
	cr_expect_eq(runf(Q "--set gpu.memory_reserve=10%%"), 0, "%s", err);
}

/* Item 14: a length distribution whose tail passes the token limit. */
Test(robust3, lengths_past_the_token_limit_are_refused)
{
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-only --workload agentic --batch 8 "
			  "--set output.sigma=15 --set output.max=8192"), 0, "max cuts it: %s", err);
	const char *w = tmp_ini_str(0, "[workload]\nname = w\norigin = synthetic\n[input]\n"
				       "dist = fixed\nvalue = 4K\n[output]\ndist = lognormal\n"
				       "median = 300\nsigma = 12\n");
	cr_expect_eq(runf("show %s", w), 1);
	cr_expect(strstr(err, ":8: output: lognormal's 99.9th percentile is 3.82e+18 tokens, over "
			 "the limit"), "%s", err);
	unlink(w);
	/* a narrow gamma of huge shape is fine (GSL's inverse fails there) */
	w = tmp_ini_str(0, "[workload]\nname = w\norigin = synthetic\n[input]\ndist = gamma\n"
			   "shape = 3e5\nscale = 0.1\n[output]\ndist = fixed\nvalue = 100\n");
	cr_expect_eq(runf("show %s", w), 0, "%s", err);
	unlink(w);
}

/* Item 15: Duplex in an HBM the weights overfill shows no negative use. */
Test(robust3, duplex_in_full_hbm_shows_no_negative_use)
{
	cr_expect_eq(runf("query --model glm-5.2 --system gpu-duplex-hbm --set system.gpu=h100 "
			  "--context 4K --batch 8 --samples 4 --format csv"), 0, "%s", err);
	cr_expect(strstr(out, ",weights ") && !strstr(out, ",-0."), "%s", out);
}

/* Item 16: names an INI cannot carry are refused by quantiles. */
Test(robust3, quantiles_refuses_names_an_ini_cannot_carry, .init = setup_dir, .fini = remove_dir)
{
	cr_assert_eq(shf("printf 'a,\"b\\n[x]\\ny = 1\"\\n1,2\\n3,4\\n' > %s/t.csv", dir), 0);
	cr_expect_eq(shf("\"$K\" quantiles %s/t.csv --input-column a --output-column \"$(printf "
			 "'b\\n[x]\\ny = 1')\" > %s/o 2> %s/e", dir, dir, dir), 1);
	cr_expect_eq(shf("grep -q 'control character' %s/e && ! grep -q '^\\[x\\]' %s/o", dir, dir), 0);
}

/* Item 17: a GPU brings its own scale-up link and port; the CSV names the
 * links that ran and show prints them. */
Test(robust3, a_gpu_brings_its_own_links)
{
	cr_assert_eq(runf("query --model deepseek-v3.2 --system gpu-karat --context 4K --batch 8 "
			  "--samples 4 --set system.gpu=b300 --format csv"), 0, "%s", err);
	cr_expect(strstr(out, ",scaleup_link,scaleout_link,gpu_port,bound_by,busiest_resource,"
			      "busiest_share,power_node_w,tok_s_per_w_node,capex_usd,usd_per_mtok,"
			      "grow_first,grow_first_margin,prefill_j_per_tok,prefill_node_j_per_tok,prefix_reuse,keepalive_s,"
			      "reload_bytes_per_step,gpu_time_fitted_share\n"),
		  "%s", out);
	cr_expect(strstr(out, ",nvlink5,ib-ndr,pcie6,"), "%s", out);
	cr_assert_eq(runf("query --model deepseek-v3.2 --system gpu-only --context 4K --batch 8 "
			  "--samples 4 --format csv"), 0);
	cr_expect(strstr(out, ",nvlink4,ib-ndr,,"), "%s", out);
	cr_assert_eq(runf("show gpu-only --set system.gpu=b200"), 0, "%s", err);
	cr_expect(strstr(out, "links in use: scale-up nvlink5 (the GPU's device.link)"), "%s", out);
	cr_assert_eq(runf("show gpu-attacc"), 0);
	cr_expect(strstr(out, "GPU port nvlink4 (the scale-up link)"), "%s", out);
	/* a system's own link still wins */
	cr_assert_eq(runf("query --model deepseek-v3.2 --system gpu-only --context 4K --batch 8 "
			  "--samples 4 --set system.gpu=b200 --set system.scaleup_link=nvlink4 "
			  "--format csv"), 0, "%s", err);
	cr_expect(strstr(out, ",nvlink4,ib-ndr,,"), "%s", out);
}

/* Item 18: a FIFO where a file is read is refused at once. */
Test(robust3, readers_refuse_a_fifo_at_once, .init = setup_dir, .fini = remove_dir)
{
	cr_assert_eq(shf("mkfifo %s/f.ini %s/f.csv %s/results.csv && mkdir %s/p && mkfifo "
			 "%s/p/validation.csv", dir, dir, dir, dir, dir), 0);
	static const char *const cmds[] = {
		"show %s/f.ini", "sweep %s/f.ini --dry-run", "run %s/f.ini",
		"ops --model deepseek-v3.2 --hw %s/f.ini --batch 8 --context 4K",
		"merge %s/f.csv", "plot validation --from %s/p",
		"ops --model deepseek-v3.2 --hw h200 --batch 8 --context 4K --eff-from %s/f.ini",
		"query --model %s/f.ini --system gpu-only --context 4K --batch 8",
		"quantiles %s/f.csv --input-column a --output-column b"};
	for (int i = 0; i < 9; i++) {
		char cmd[512];
		snprintf(cmd, sizeof cmd, cmds[i], dir);
		time_t t0 = time(NULL);
		int rc = shf("timeout 10 \"$K\" %s >/dev/null 2>%s/e", cmd, dir);
		cr_expect(rc == 1 || rc == 2, "%s: exit %d", cmd, rc);
		cr_expect(time(NULL) - t0 < 5, "%s waited", cmd);
		cr_expect_eq(shf("grep -q 'not a regular file' %s/e", dir), 0, "%s", cmd);
	}
}

/* Item 19: the work limit counts the pipeline, so a million samples is
 * refused up front, not run for minutes. */
Test(robust3, the_work_limit_bounds_time)
{
	time_t t0 = time(NULL);
	cr_expect_eq(runf("query --model deepseek-v3.2 --system gpu-only --workload azure-conv "
			  "--batch 40 --samples 1000000"), 1);
	cr_expect(time(NULL) - t0 < 5);
	cr_expect(strstr(err, "units of work per evaluation (samples x (requests placed + devices + "
			 "layers x micro-batches)), over the limit"), "%s", err);
}

/* Item 20: a sweep streams its rows to its output as points finish, and
 * plot reads only a CSV's header (gnuplot reads the rest). */
Test(robust3, sweep_rows_stream_to_the_output, .init = setup_dir, .fini = remove_dir)
{
	write_slow_sweep();
	/* while it runs, its temporary holds more than the header */
	cr_expect_eq(shf("cd %s && (\"$K\" sweep slow.ini --output o.csv -j 1 2>/dev/null & p=$!; "
			 "n=0; until [ \"$(cat .o.csv.tmp.* 2>/dev/null | wc -l)\" -ge 3 ]; do "
			 "sleep 0.05; n=$((n+1)); [ $n -lt 400 ] || { kill $p; exit 1; }; done; "
			 "kill -0 $p 2>/dev/null; r=$?; kill $p 2>/dev/null; wait $p; exit $r)", dir), 0,
		     "no rows before the end");
}

/* Item 21: a solve reads no uninitialised memory (valgrind). */
Test(robust3, a_solve_reads_no_uninitialised_memory)
{
	if (system("command -v valgrind >/dev/null 2>&1") != 0) {
		fprintf(stderr, "a_solve_reads_no_uninitialised_memory: skipped: valgrind is not "
			"installed (make memcheck installs it)\n");
		return;
	}
	if (shf("grep -q __asan_init \"$K\"") == 0) {
		fprintf(stderr, "a_solve_reads_no_uninitialised_memory: skipped: the binary is built "
			"with AddressSanitizer, which valgrind cannot run\n");
		return;
	}
	cr_expect_eq(shf("valgrind -q --error-exitcode=99 \"$K\" solve --model minimax-m3 --system "
			 "gpu-karat --workload agentic --samples 16 --microbatches 2 >/dev/null 2>&1"), 0);
}

/* Item 22: the search stays inside its work limit and says when the limit
 * or its batch cap stopped it. */
Test(robust3, the_search_says_what_stopped_it)
{
	cr_expect_eq(runf("solve --model deepseek-v3.2 --system gpu-only --context 1K --samples 100000 "
			  "--slo-ms 1000 --microbatches 1 --exact"), 0, "%s", err);
	cr_expect(strstr(out, " 593\n"), "%s", out);
	cr_expect(strstr(out, "feasible; batch 594 is past the work limit"), "%s", out);
	cr_expect_eq(runf("solve --model deepseek-v3.2 --system gpu-only --context 64 --set "
			  "system.gpus=512 --samples 1 --slo-ms 100000 --microbatches 1"), 0, "%s", err);
	cr_expect(strstr(out, "feasible at the search's cap of 1048576 requests"), "%s", out);
}

/* Item 23: messages that say what is wrong. */
Test(robust3, messages_say_what_is_wrong, .init = setup_dir, .fini = remove_dir)
{
	cr_expect_eq(runf(Q "--set gpu.fp8=1PFLOP/s"), 2);
	cr_expect(strstr(err, "gpu.fp8: ambiguous: compute.fp8 or energy.fp8"), "%s", err);
	cr_expect_eq(runf(Q "--set gpu.memory.bandwidth=2e16B/s"), 1);
	cr_expect(strstr(err, "out of range (0, 1e+16]"), "%s", err);
	cr_expect_eq(runf("show DeepSeek-V3.2"), 2);
	cr_expect(strstr(err, "did you mean 'deepseek-v3.2'?"), "%s", err);
	cr_expect_eq(runf("query --slo 30"), 2);
	cr_expect(strstr(err, "did you mean '--slo-ms'?"), "%s", err);
	cr_expect_eq(runf("show -- gpu-only"), 0, "%s", err);
	/* [set] takes ROLE[NAME] keys */
	char path[128];
	snprintf(path, sizeof path, "%s/r.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-karat\n"
				"context = 4K\nbatch = 8\nsamples = 4\n[set]\n"
				"memdev[karat].memory.bandwidth = 1TB/s, 2TB/s\n"), 0);
	cr_expect_eq(runf("sweep %s --output -", path), 0, "%s", err);
	cr_expect(strstr(out, ",set.memdev[karat].memory.bandwidth\n"), "%s", out);
	/* a study names each system and count once */
	cr_expect_eq(runf("run %s --out %s", write_study("d.ini", "gpu-only, gpu-only"), dir), 1);
	cr_expect(strstr(err, "d.ini:6: study.systems: 'gpu-only' is given twice"), "%s", err);
	/* what went to stdout before an error comes first, whole lines */
	cr_expect_eq(shf("\"$K\" validate %s/validation/deepgemm-h800.csv %s/nope.csv > %s/both 2>&1",
			 KARAT_DATADIR, dir, dir), 1);
	cr_expect_eq(shf("grep -q '^karat: ' %s/both", dir), 0);
}

/* Item 5: every figure draws the smallest CSV its command can write (one
 * point, one sample, one request), and pareto a sweep where nothing fits. */
Test(robust3, every_figure_draws_the_smallest_csv, .init = setup_dir, .fini = remove_dir)
{
	if (!have_gnuplot("every_figure_draws_the_smallest_csv"))
		return;
	char path[128];
	snprintf(path, sizeof path, "%s/one.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-karat\n"
				"context = 4K\nbatch = 8\nsamples = 1\nmicrobatches = 1\nschedule = naive\n"),
		     0);
	snprintf(path, sizeof path, "%s/sens.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-karat\n"
				"context = 4K\nbatch = 8\nsamples = 1\n[vary]\n"
				"bw_2x = memdev.memory.bandwidth=1TB/s\n"), 0);
	write_study("study.ini", "gpu-only");
	snprintf(path, sizeof path, "%s/unc.ini", dir);
	cr_assert_eq(write_text(path, "[study]\ntitle = u\nmodels = deepseek-v3.2\nworkloads = azure-conv\n"
				"systems = gpu-only, gpu-karat\nbaseline = gpu-only\ngpus = 8\n"
				"draws = 2\nsamples = 1\n"), 0);
	cr_assert_eq(shf("cd %s && set -e; "
			 "\"$K\" sweep one.ini --output ablation.csv 2>/dev/null; cp ablation.csv ablation-ep.csv; "
			 "cp ablation.csv tbt-batch.csv; \"$K\" sweep sens.ini --output sensitivity.csv 2>/dev/null; "
			 "Q='--model deepseek-v3.2 --context 4K --batch 1 --samples 1 --microbatches 1'; "
			 "\"$K\" query $Q --system gpu-only --step-times steps-gpu-only.csv >/dev/null; "
			 "cp steps-gpu-only.csv steps-gpu-karat.csv; "
			 "\"$K\" query $Q --system gpu-karat --timeline timeline-naive.csv >/dev/null; "
			 "cp timeline-naive.csv timeline-ofms-cmr.csv; "
			 "\"$K\" ops --model deepseek-v3.2 --hw h200 --batch 1 --context 1K --roofline roofline-h200.csv >/dev/null; "
			 "\"$K\" ops --model deepseek-v3.2 --hw karat --batch 1 --context 1K --roofline roofline-karat.csv >/dev/null; "
			 "\"$K\" run study.ini --out . >/dev/null; cp study.csv headline.csv; cp study.csv training-free.csv; cp study.csv axes.csv; cp study.csv reconcile.csv; "
			 "\"$K\" run unc.ini --out . >/dev/null; cp unc.csv uncertainty.csv; cp unc-drivers.csv uncertainty-drivers.csv; "
			 "head -2 %s/validation/deepgemm-h800.csv > t.csv; \"$K\" validate t.csv --out . >/dev/null",
			 dir, KARAT_DATADIR), 0);
	cr_expect_eq(runf("plot --from %s", dir), 0, "%s", err);
	/* a sweep where no batch fits: pareto says so */
	cr_assert_eq(shf("cd %s && sed -i 's/,true,,/,false,memdev memory: too much,/' tbt-batch.csv",
			 dir), 0);
	cr_expect_eq(runf("plot pareto --from %s", dir), 0, "%s", err);
}
