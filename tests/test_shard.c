/* test_shard.c: `karat sweep --shard K/N` and `karat merge` (issue 15):
 * N = 1, 2, 3 and 7 shards merged are the plain sweep byte for byte; the
 * merge refuses a missing shard, a point twice, a file that is not a shard
 * and shards of different sweeps; the Slurm and GNU parallel example
 * scripts produce the plain sweep too. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static char out[1 << 16], err[1 << 14];

static const char *const SWEEP = "[sweep]\n"
				 "model = deepseek-v3.2, glm-5.2\n"
				 "system = gpu-only, gpu-karat\n"
				 "workload = agentic\n"
				 "batch = 8, 16\n"
				 "samples = 16\n";

/* The whole of file path (at most n - 1 bytes) into buf. */
static void slurp_file(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	size_t len = fread(buf, 1, n - 1, f);
	buf[len] = '\0';
	fclose(f);
}

static char dir[64];

/* The binary the CLI tests run (make sanitize sets KARAT_BIN). */
static const char *bin(void)
{
	const char *b = getenv("KARAT_BIN");
	return b ? b : KARAT_DATADIR "/build/karat";
}

static void setup_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/karat-shard-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char path[128], cmd[256];
	snprintf(path, sizeof path, "%s/s.ini", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(SWEEP, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "sweep %s/s.ini --output %s/plain.csv", dir, dir);
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

static void expect_plain(const char *path)
{
	static char a[1 << 16], b[1 << 16];
	char p[128];
	snprintf(p, sizeof p, "%s/plain.csv", dir);
	slurp_file(p, a, sizeof a);
	slurp_file(path, b, sizeof b);
	cr_expect(strlen(a) > 500, "the plain sweep is empty");
	cr_expect_str_eq(b, a, "%s differs from the plain sweep", path);
}

/* Sweep ini (with extra options) in n shards, DIR/s{k}-{n}.csv, and merge
 * them into DIR/m{n}.csv, its path into merged. */
static void shard_and_merge(const char *ini, int n, const char *extra, char *merged, size_t len)
{
	char cmd[4096];
	snprintf(merged, len, "%s/m%d.csv", dir, n);
	size_t used = (size_t)snprintf(cmd, sizeof cmd, "merge --output %s", merged);
	for (int k = 1; k <= n; k++) {
		char sh[700];
		snprintf(sh, sizeof sh, "sweep %s --shard %d/%d --output %s/s%d-%d.csv -j 2 %s", ini, k,
			 n, dir, k, n, extra);
		cr_assert_eq(run_karat(sh, out, sizeof out, err, sizeof err), 0, "%s", err);
		used += (size_t)snprintf(cmd + used, sizeof cmd - used, " %s/s%d-%d.csv", dir, k, n);
	}
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
}

Test(shard, shards_merged_are_the_plain_sweep, .init = setup_dir, .fini = remove_dir)
{
	const int ns[] = {1, 2, 3, 7};
	char ini[128];
	snprintf(ini, sizeof ini, "%s/s.ini", dir);
	for (int t = 0; t < 4; t++) {
		char m[128];
		shard_and_merge(ini, ns[t], "", m, sizeof m);
		expect_plain(m);
	}
	/* a shard starts with the record of its sweep, then its rows, each with
	 * its point */
	static char s[1 << 16];
	char p[128];
	snprintf(p, sizeof p, "%s/s2-3.csv", dir);
	slurp_file(p, s, sizeof s);
	cr_expect(strncmp(s, "#karat-shard k=2 n=3 points=8 shard_points=", 43) == 0, "%.80s", s);
	const char *nl = strchr(s, '\n');
	cr_expect(nl && strncmp(nl + 1, "point,model,", 12) == 0, "%.200s", s);
}

Test(shard, merge_refuses_what_is_not_one_sweep, .init = setup_dir, .fini = remove_dir)
{
	char cmd[1024];
	for (int k = 1; k <= 3; k++) {
		snprintf(cmd, sizeof cmd, "sweep %s/s.ini --shard %d/3 --output %s/s%d.csv", dir, k, dir, k);
		cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	}
	snprintf(cmd, sizeof cmd, "merge %s/s1.csv %s/s3.csv", dir, dir);
	cr_expect_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "missing 1 of 3 shards: 2/3"), "%s", err);
	snprintf(cmd, sizeof cmd, "merge %s/s1.csv %s/s2.csv %s/s3.csv %s/s2.csv", dir, dir, dir, dir);
	cr_expect_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "shard 2/3 again"), "%s", err);
	snprintf(cmd, sizeof cmd, "merge %s/plain.csv", dir);
	cr_expect_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "plain.csv:1: not a shard of a sweep"), "%s", err);
	/* a shard of an edited sweep (one value more) */
	snprintf(cmd, sizeof cmd, "sed 's/batch = 8, 16/batch = 8, 16, 32/' %s/s.ini > %s/e.ini", dir,
		 dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "sweep %s/e.ini --shard 3/3 --output %s/e3.csv", dir, dir);
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	snprintf(cmd, sizeof cmd, "merge %s/s1.csv %s/s2.csv %s/e3.csv", dir, dir, dir);
	cr_expect_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "e3.csv:1: a shard of another sweep, or of this sweep after its file "
			 "was edited"), "%s", err);
	/* a shard cut short (its last rows lost) */
	snprintf(cmd, sizeof cmd, "head -n -2 %s/s3.csv > %s/c3.csv", dir, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "merge %s/s1.csv %s/s2.csv %s/c3.csv", dir, dir, dir);
	cr_expect_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "c3.csv: shard 3/3 is incomplete"), "%s", err);
	cr_expect_eq(run_karat("sweep x.ini --shard 0/3", out, sizeof out, err, sizeof err), 2);
	cr_expect(strstr(err, "--shard: '0/3' is not K/N"), "%s", err);
	cr_expect_eq(run_karat("merge", out, sizeof out, err, sizeof err), 2);
}

/* The Slurm array script, run as an array's tasks would run it (N given,
 * so any task reruns alone; a 0-based array numbers its shards from 1);
 * its resume mode names what is left.  scripts/check-slurm.sh runs it on
 * a real Slurm. */
Test(shard, slurm_example_script, .init = setup_dir, .fini = remove_dir)
{
	char cmd[2048];
	for (int k = 0; k < 3; k++) {
		snprintf(cmd, sizeof cmd, "cd %s && SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_ID=%d "
			 "KARAT=%s scripts/sweep-slurm.sh --shards 3 %s/s.ini %s/out 2>/dev/null",
			 KARAT_DATADIR, k, bin(), dir, dir);
		cr_assert_eq(system(cmd), 0, "%s", cmd);
	}
	snprintf(cmd, sizeof cmd, "merge %s/out/s.shard-1-of-3.csv %s/out/s.shard-2-of-3.csv "
		 "%s/out/s.shard-3-of-3.csv --output %s/slurm.csv", dir, dir, dir, dir);
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	char m[128];
	snprintf(m, sizeof m, "%s/slurm.csv", dir);
	expect_plain(m);
	/* one lost: resume names it and the line that reruns it alone */
	snprintf(cmd, sizeof cmd, "cd %s && rm %s/out/s.shard-2-of-3.csv && scripts/sweep-slurm.sh "
		 "--shards 3 --resume %s/s.ini %s/out > %s/resume.txt", KARAT_DATADIR, dir, dir, dir, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	static char text[4096];
	snprintf(m, sizeof m, "%s/resume.txt", dir);
	slurp_file(m, text, sizeof text);
	cr_expect(strstr(text, "shard 2/3: missing") && strstr(text, "rerun: sbatch --array=2 "),
		  "%s", text);
	/* outside an array, or without N, it says so */
	snprintf(cmd, sizeof cmd, "cd %s && scripts/sweep-slurm.sh --shards 3 %s/s.ini %s/out "
		 "2>/dev/null", KARAT_DATADIR, dir, dir);
	cr_expect_neq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "cd %s && SLURM_ARRAY_TASK_ID=1 scripts/sweep-slurm.sh %s/s.ini "
		 "%s/out 2>/dev/null", KARAT_DATADIR, dir, dir);
	cr_expect_eq(system(cmd) >> 8, 2);
}

/* The GNU parallel example, on this machine: a shard that fails shows its
 * error and leaves the finished ones; the same command again runs only
 * it; a missing result folder is found before the work. */
Test(shard, gnu_parallel_example_script, .init = setup_dir, .fini = remove_dir)
{
	if (system("parallel --version 2>/dev/null | grep -q 'GNU parallel'") != 0) {
		fprintf(stderr, "gnu_parallel_example_script: skipped: GNU parallel is not installed\n");
		return;
	}
	char cmd[2048];
	/* a karat that fails shard 2 of 4 the first time */
	snprintf(cmd, sizeof cmd, "printf '#!/bin/sh\\ncase \" $* \" in *\" --shard 2/4 \"*) "
		 "[ -e %s/once ] || { touch %s/once; echo shard-two-broke >&2; exit 1; };; esac\\n"
		 "exec %s \"$@\"\\n' > %s/k && chmod +x %s/k", dir, dir, bin(), dir, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof cmd, "cd %s && KARAT=%s/k JOBS=2 scripts/sweep-parallel.sh %s/s.ini 4 "
		 "%s/par.csv > %s/p.out 2> %s/p.err", KARAT_DATADIR, dir, dir, dir, dir, dir);
	cr_expect_neq(system(cmd), 0, "a failed shard fails the run");
	snprintf(cmd, sizeof cmd, "grep -q shard-two-broke %s/p.err && grep -q 'shards 2 of 4 did not "
		 "finish' %s/p.err && ls %s/par.csv.shards/s.shard-1-of-4.csv %s/par.csv.shards/"
		 "s.shard-4-of-4.csv > /dev/null", dir, dir, dir, dir);
	cr_expect_eq(system(cmd), 0, "its error shown, the finished shards kept");
	/* the rerun through GNU parallel's own --sshlogin (':' is this machine) */
	snprintf(cmd, sizeof cmd, "cd %s && KARAT=%s/k JOBS=2 PARALLEL_ARGS='--sshlogin 2/:' "
		 "scripts/sweep-parallel.sh %s/s.ini 4 %s/par.csv 2> %s/p.err", KARAT_DATADIR, dir, dir,
		 dir, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof cmd, "grep -q 'shards 2 of 4 ->' %s/p.err", dir);
	cr_expect_eq(system(cmd), 0, "the rerun ran shard 2 alone");
	char m[128];
	snprintf(m, sizeof m, "%s/par.csv", dir);
	expect_plain(m);
	snprintf(cmd, sizeof cmd, "cd %s && KARAT=%s scripts/sweep-parallel.sh %s/s.ini 4 "
		 "%s/nope/par.csv 2> %s/p.err; test $? = 1 && grep -q 'no such folder' %s/p.err && "
		 "test ! -e %s/nope", KARAT_DATADIR, bin(), dir, dir, dir, dir, dir);
	cr_expect_eq(system(cmd), 0, "a missing result folder is found first");
}

/* Issue 14 item 9: a sweep's CSV has one column per [set] key (set.KEY),
 * its value on each row, empty where the system cannot apply it; a
 * command-line --set of the same key wins and is marked "(--set)"; the
 * algo_params column gives the specification that ran. */
/* Writes sweep file DIR/NAME.ini (its path into path), runs it with the
 * extra options into DIR/NAME.csv and reads that into text. */
static void sweep_to_text(const char *name, const char *ini, const char *extra, char *path,
			  size_t np, char *text, size_t nt)
{
	char csvp[128], args[600];
	snprintf(path, np, "%s/%s.ini", dir, name);
	snprintf(csvp, sizeof csvp, "%s/%s.csv", dir, name);
	cr_assert_eq(write_text(path, ini), 0);
	snprintf(args, sizeof args, "sweep %s --output %s %s", path, csvp, extra);
	cr_assert_eq(run_karat(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	slurp_file(csvp, text, nt);
}

Test(shard, sweep_columns_name_their_keys, .init = setup_dir, .fini = remove_dir)
{
	char path[128];
	static char text[1 << 16];
	sweep_to_text("s", "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only, gpu-karat\nworkload = agentic\n"
		      "batch = 16\nmicrobatches = 1\nsamples = 8\n[set]\n"
		      "memdev.memory.bandwidth = 1TB/s, 2TB/s\nsystem.gpus = 8\n",
		      "--set system.gpus=16", path, sizeof path, text, sizeof text);
	const char *nl = strchr(text, '\n');
	cr_assert(nl);
	const char *tail = ",overrides,algo_params,evaluation,scaleup_link,scaleout_link,gpu_port,"
			   "bound_by,busiest_resource,busiest_share,power_node_w,tok_s_per_w_node,"
			   "capex_usd,usd_per_mtok,grow_first,grow_first_margin,prefill_j_per_tok,"
			   "prefill_node_j_per_tok,prefix_reuse,keepalive_s,reload_bytes_per_step,"
			   "gpu_time_fitted_share,"
			   "set.memdev.memory.bandwidth,set.system.gpus\n";
	cr_expect(strncmp(nl + 1 - strlen(tail), tail, strlen(tail)) == 0, "%.*s",
		  (int)(nl - text), text);
	cr_expect(strstr(text, "gpu-only,agentic") && strstr(text, ",,16 (--set)\n"),
		  "gpu-only cannot apply the memory device's bandwidth: %s", text);
	cr_expect(strstr(text, ",1TB/s,16 (--set)\n") && strstr(text, ",2TB/s,16 (--set)\n"), "%s",
		  text);
	cr_expect(strstr(text, "\"dsa:topk=2048,index_heads=64,"), "%s", text);
	/* the command line's value ran: 16 GPUs on every row */
	int rows = 0;
	for (const char *p = nl + 1; *p; p = strchr(p, '\n') + 1, rows++)
		cr_expect(strstr(p, ",16,") && strstr(p, ",16,") < strchr(p, '\n'), "row %d", rows);
	/* issue 14 item 9: GPU-only at the two bandwidths is one point it
	 * cannot tell apart, written once (4 points, 3 rows) */
	cr_expect_eq(rows, 3);
	cr_expect(strstr(err, "4 points, 3 rows"), "%s", err);
	/* the shards hold every point; their merge drops the same row */
	char merged[128];
	shard_and_merge(path, 2, "--set system.gpus=16", merged, sizeof merged);
	static char m[1 << 16];
	slurp_file(merged, m, sizeof m);
	cr_expect_str_eq(m, text, "the merge of two shards differs from the plain sweep");
}

/* Issue 14 item 6: [vary] labels run one at a time beside the base point
 * (2 models x (1 + 2 labels) = 6 rows, the label fastest), each label's
 * overrides together, the label in the vary column; a bad label is
 * refused with its line. */
Test(shard, vary_runs_one_label_at_a_time, .init = setup_dir, .fini = remove_dir)
{
	char path[128], args[600];
	static char text[1 << 16];
	sweep_to_text("v", "[sweep]\nmodel = deepseek-v3.2, minimax-m3\nsystem = gpu-karat\nworkload = agentic\n"
		      "batch = 16\nmicrobatches = 1\nsamples = 4\n[vary]\n"
		      "slow = memdev.memory.bandwidth=600GB/s & memdev.tdp=130W\n"
		      "hot = memdev.tdp=300W\n", "", path, sizeof path, text, sizeof text);
	const char *want[] = {"deepseek-v3.2", "base", "deepseek-v3.2", "slow", "deepseek-v3.2",
			      "hot", "minimax-m3", "base", "minimax-m3", "slow", "minimax-m3", "hot"};
	const char *p = strchr(text, '\n') + 1;
	for (int r = 0; r < 6; r++) {
		const char *end = strchr(p, '\n');
		cr_assert(end, "row %d missing", r);
		cr_expect(strncmp(p, want[2 * r], strlen(want[2 * r])) == 0, "row %d: %.60s", r, p);
		size_t lw = strlen(want[2 * r + 1]);
		cr_expect((size_t)(end - p) > lw && strncmp(end - lw, want[2 * r + 1], lw) == 0 &&
				  end[-(long)lw - 1] == ',',
			  "row %d ends %.*s", r, 20, end - 20);
		if (r == 1) /* both of its overrides reached it: 8 x 700 + 16 x 130 W */
			cr_expect(strstr(p, ",7680,") && strstr(p, "memdev.memory.bandwidth=600GB/s;"
								   "memdev.tdp=130W"),
				  "%.*s", (int)(end - p), p);
		p = end + 1;
	}
	cr_expect_eq(*p, '\0');
	FILE *f = fopen(path, "a");
	cr_assert(f);
	fputs("bad = memdev.tdp\n", f);
	fclose(f);
	snprintf(args, sizeof args, "sweep %s --output %s/v.csv", path, dir);
	cr_expect_eq(run_karat(args, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "v.ini:11: vary.bad: 'memdev.tdp' is not section.key=value"), "%s",
		  err);
}

/* A shard killed part-way leaves NAME.partial; run again, it keeps the
 * rows there and computes the rest, to the same file; a partial file of
 * another sweep is refused, not mixed in. */
Test(shard, a_shard_goes_on_where_it_stopped, .init = setup_dir, .fini = remove_dir)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "sweep %s/s.ini --shard 2/2 --output %s/s2.csv --log %s/s2.log", dir,
		 dir, dir);
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	/* as a kill would leave it: two rows lost and half a row */
	snprintf(cmd, sizeof cmd, "cd %s && cp s2.csv whole.csv && head -n -2 s2.csv > s2.csv.partial "
		 "&& tail -n 1 s2.csv | head -c 20 >> s2.csv.partial && rm s2.csv", dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "sweep %s/s.ini --shard 2/2 --output %s/s2.csv --log %s/s2.log", dir,
		 dir, dir);
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(err, "kept from"), "%s", err);
	static char a[1 << 16], b[1 << 16];
	char p[128];
	snprintf(p, sizeof p, "%s/whole.csv", dir);
	slurp_file(p, a, sizeof a);
	snprintf(p, sizeof p, "%s/s2.csv", dir);
	slurp_file(p, b, sizeof b);
	cr_expect_str_eq(b, a);
	snprintf(cmd, sizeof cmd, "test ! -e %s/s2.csv.partial && test $(grep -c '^point=' %s/s2.log) "
		 "-eq $(( $(wc -l < %s/s2.csv) - 2 + 2 ))", dir, dir, dir);
	cr_expect_eq(system(cmd), 0, "the log has a line per point computed");
	/* a partial of shard 1 is no partial of shard 2 */
	snprintf(cmd, sizeof cmd, "cd %s && head -n 3 whole.csv | sed 's/k=2/k=1/' > s2.csv.partial",
		 dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "sweep %s/s.ini --shard 2/2 --output %s/s2.csv", dir, dir);
	cr_expect_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "s2.csv.partial: a partial shard of another sweep, of another shard"),
		  "%s", err);
}

/* --shards N --dry-run: the plan for a cluster. */
Test(shard, the_plan_for_n_shards, .init = setup_dir, .fini = remove_dir)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "sweep %s/s.ini --shards 3 --dry-run", dir);
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "3 shards: 2-3 points each") && strstr(out, "  shard 3/3: ") &&
		  strstr(out, "run:   sbatch --array=1-3 ") && strstr(out, "merge: karat merge "),
		  "%s", out);
	snprintf(cmd, sizeof cmd, "sweep %s/s.ini --shards 20 --dry-run", dir);
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "warning: 20 shards for 8 points"), "%s", out);
	snprintf(cmd, sizeof cmd, "sweep %s/s.ini --shards 3", dir);
	cr_expect_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 2);
}

/* More shards than points: the extra ones hold none, and the merge still
 * wants every one of them (a cancelled empty shard is named). */
Test(shard, more_shards_than_points, .init = setup_dir, .fini = remove_dir)
{
	char cmd[4096];
	size_t u = (size_t)snprintf(cmd, sizeof cmd, "merge --output %s/m.csv", dir);
	for (int k = 1; k <= 10; k++) {
		char sh[512];
		snprintf(sh, sizeof sh, "sweep %s/s.ini --shard %d/10 --output %s/t%d.csv", dir, k, dir, k);
		cr_assert_eq(run_karat(sh, out, sizeof out, err, sizeof err), 0, "%s", err);
		if (k < 10)
			u += (size_t)snprintf(cmd + u, sizeof cmd - u, " %s/t%d.csv", dir, k);
	}
	cr_expect_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "missing 1 of 10 shards: 10/10"), "%s", err);
	snprintf(cmd + u, sizeof cmd - u, " %s/t10.csv", dir);
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	char m[128];
	snprintf(m, sizeof m, "%s/m.csv", dir);
	expect_plain(m);
}

/* A sweep whose fastest keys have 2 x 4 values (micro-batches 1 and 16,
 * four batches) at 8 shards: the stride gave one shard 55% of the work;
 * the deal gives none more than a quarter over the mean (by estimate). */
Test(shard, shards_share_the_work, .init = setup_dir, .fini = remove_dir)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "printf '[sweep]\\nmodel = deepseek-v3.2, glm-5.2\\nsystem = gpu-karat\\n"
		 "workload = agentic\\nmicrobatches = 1, 16\\nbatch = 64, 128, 256, 512\\n' > %s/b.ini", dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "sweep %s/b.ini --shards 8 --dry-run", dir);
	cr_assert_eq(run_karat(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	const char *p = strstr(out, "the busiest holds ");
	cr_assert_not_null(p, "%s", out);
	double most = strtod(p + 18, NULL);
	cr_expect(most > 100 && most <= 125, "the busiest shard: %g%% of the mean", most);
}
