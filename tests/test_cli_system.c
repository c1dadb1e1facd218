/* test_cli_system.c: query, solve, sweep and quantiles from the command
 * line: the CSV contract, --set, exit codes, identical output for
 * identical input, and -j N against -j 1. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

static char out[1 << 18], err[1 << 14], out2[1 << 18];

static int run(const char *args)
{
	return run_karat(args, out, sizeof out, err, sizeof err);
}

#define HEADER15 "model,algo,system,workload,schedule,microbatches,batch,tbt_mean_s,tbt_p99_s," \
		 "throughput_tok_s,tdp_w,tok_s_per_w,energy_j_per_tok,feasible,reason"

Test(cli_system, query_csv_contract)
{
	cr_assert_eq(run("query --model deepseek-v3.2 --system gpu-karat --workload agentic "
			 "--batch 64 --microbatches 2 --format csv"), 0, "%s", err);
	cr_expect(strncmp(out, HEADER15 ",", strlen(HEADER15) + 1) == 0, "%s", out);
	char *row = strchr(out, '\n') + 1;
	cr_expect(strncmp(row, "deepseek-v3.2,dsa,gpu-karat,agentic,ofms+cmr,2,64,", 50) == 0,
		  "%s", row);
	cr_expect(strstr(row, ",true,") != NULL, "%s", row);
	cr_expect_eq(strchr(row, '\n')[1], '\0', "one row");
	/* tdp: 8 x 700 W (H200) + 16 x 150 W (KARAT) */
	cr_expect(strstr(row, ",8000,") != NULL, "%s", row);
}

Test(cli_system, an_infeasible_point_is_still_evaluated)
{
	cr_assert_eq(run("query --model glm-5.2 --system gpu-only --context 1M --batch 8 "
			 "--microbatches 1 --format csv"), 0, "%s", err);
	char *row = strchr(out, '\n') + 1;
	cr_expect(strstr(row, ",false,GPU memory:") != NULL, "%s", row);
	cr_expect(strstr(row, ",nan,") == NULL && strstr(row, ",inf,") == NULL, "%s", row);
}

Test(cli_system, usage_and_input_errors)
{
	const char *base = "query --model deepseek-v3.2 --system gpu-karat --context 64K --batch 8 ";
	char cmd[512];
	cr_expect_eq(run("query --model deepseek-v3.2 --system gpu-karat --context 64K"), 2);
	cr_expect(strstr(err, "--batch is required"), "%s", err);
	cr_expect_eq(run("solve --model deepseek-v3.2 --system nosuch --context 64K"), 2);
	cr_expect(strstr(err, "unknown system 'nosuch'"), "%s", err);
	cr_expect_eq(run("solve --model deepseek-v3.2 --system gpu-karat --workload nosuch"), 2);
	cr_expect_eq(run("solve --model deepseek-v3.2 --system gpu-karat --workload agentic "
			 "--context 4K"), 2);
	snprintf(cmd, sizeof cmd, "%s--set frob.x=1", base);
	cr_expect_eq(run(cmd), 2);
	cr_expect(strstr(err, "unknown section 'frob'"), "%s", err);
	snprintf(cmd, sizeof cmd, "%s--set system.memdevs", base);
	cr_expect_eq(run(cmd), 2);
	snprintf(cmd, sizeof cmd, "%s--set system.nosuch=3", base);
	cr_expect_eq(run(cmd), 2);
	snprintf(cmd, sizeof cmd, "%s--set system.memdevs=12", base);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, "multiple or a divisor"), "%s", err);
	snprintf(cmd, sizeof cmd, "%s--set memdev.bandwidth=fast", base);
	cr_expect_eq(run(cmd), 1);
	snprintf(cmd, sizeof cmd, "%s--set system.gpu=karat", base);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, "is not a GPU"), "%s", err);
	snprintf(cmd, sizeof cmd, "%s--schedule fifo", base);
	cr_expect_eq(run(cmd), 2);
	snprintf(cmd, sizeof cmd, "%s--microbatches 17", base);
	cr_expect_eq(run(cmd), 2);
	snprintf(cmd, sizeof cmd, "%s--mtp-accept 1.5", base);
	cr_expect_eq(run(cmd), 2);
	cr_expect_eq(run("query --model deepseek-v3.2 --system gpu-only --context 64K --batch 8 "
			 "--set memdev.tdp=1W"), 2);
	cr_expect(strstr(err, "no memory device"), "%s", err);
	/* a bad system file: file and line */
	const char *sys = tmp_ini_str(1, "[system]\nname = x\ngpu = h200\ngpus = 8\n"
				      "gpus_per_node = 8\nscaleup_link = nvlink4\n"
				      "scaleout_link = ib-ndr\nmemdev = karat\nmemdevs = 0\n"
				      "memdev_link = cxl3\n");
	snprintf(cmd, sizeof cmd, "solve --model deepseek-v3.2 --system %s --context 4K", sys);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, ".ini:9: system.memdevs"), "%s", err);
}

Test(cli_system, set_changes_the_answer_and_is_recorded)
{
	cr_assert_eq(run("query --model deepseek-v3.2 --system gpu-karat --context 64K --batch 64 "
			 "--microbatches 1 --format csv"), 0, "%s", err);
	char a[4096];
	snprintf(a, sizeof a, "%s", out);
	cr_assert_eq(run("query --model deepseek-v3.2 --system gpu-karat --context 64K --batch 64 "
			 "--microbatches 1 --format csv --set memdev.bandwidth=600GB/s "
			 "--set system.memdevs=8"), 0, "%s", err);
	cr_expect(strcmp(a, out) != 0);
	cr_expect(strstr(out, "memdev.bandwidth=600GB/s;system.memdevs=8") != NULL, "%s", out);
	cr_expect(strstr(out, ",6800,") != NULL, "tdp 8 x 700 + 8 x 150: %s", out);
}

Test(cli_system, solve_is_deterministic)
{
	const char *cmd = "solve --model minimax-m3 --system gpu-karat --workload agentic "
			  "--microbatches 2 --format csv";
	cr_assert_eq(run(cmd), 0, "%s", err);
	snprintf(out2, sizeof out2, "%s", out);
	cr_assert_eq(run(cmd), 0, "%s", err);
	cr_expect_str_eq(out, out2);
	cr_assert_eq(run("solve --model minimax-m3 --system gpu-karat --workload agentic "
			 "--microbatches 2 --format csv --seed 7"), 0, "%s", err);
	cr_expect_str_neq(out, out2);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strdup(buf);
}

Test(cli_system, sweep_is_the_cartesian_product_and_jobs_do_not_change_it)
{
	const char *ini = tmp_ini_str(2,
		"[sweep]\nmodel = deepseek-v3.2, minimax-m3\nsystem = gpu-only, gpu-karat\n"
		"workload = agentic\nmicrobatches = 1, 2\nschedule = naive, ofms+cmr\n"
		"algo = dsa:topk=1024,index_heads=32, msa\n"
		"[set]\nsystem.gpus = 8, 16\n");
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "sweep %s -j 1 --output /tmp/karat-sweep-1.csv", ini);
	int rc = run(cmd);
	/* msa is trained-only: it must be refused on DeepSeek (exit 1) */
	cr_expect_eq(rc, 1, "%s", err);
	cr_expect(strstr(err, "point 3:") || strstr(err, "trained-only"), "%s", err);
	ini = tmp_ini_str(2,
		"[sweep]\nmodel = deepseek-v3.2, glm-5.2\nsystem = gpu-only, gpu-karat\n"
		"workload = agentic\nmicrobatches = 1, 2\nschedule = naive, ofms+cmr\n"
		"algo = dsa:topk=1024,index_heads=32, quest\nforce = true\n"
		"[set]\nsystem.gpus = 8, 16\nmemdev.bandwidth = 1.2TB/s\n");
	snprintf(cmd, sizeof cmd, "sweep %s -j 1 --output /tmp/karat-sweep-1.csv", ini);
	cr_assert_eq(run(cmd), 0, "%s", err);
	snprintf(cmd, sizeof cmd, "sweep %s --jobs 2 --output /tmp/karat-sweep-2.csv", ini);
	cr_assert_eq(run(cmd), 0, "%s", err);
	char *a = slurp("/tmp/karat-sweep-1.csv"), *b = slurp("/tmp/karat-sweep-2.csv");
	cr_expect_str_eq(a, b);
	int rows = 0;
	for (char *p = a; *p; p++)
		rows += *p == '\n';
	cr_expect_eq(rows, 1 + 2 * 2 * 2 * 2 * 2 * 2, "header + 64 points");
	cr_expect(strncmp(a, HEADER15, strlen(HEADER15)) == 0);
	cr_expect(strstr(a, "\"dsa:topk=1024,index_heads=32\"") != NULL,
		  "an algorithm spec with commas stays one item, quoted");
	/* order: the last key varies fastest */
	char *r1 = strchr(a, '\n') + 1, *r2 = strchr(r1, '\n') + 1;
	cr_expect(strstr(r1, "system.gpus=8") && strstr(r2, "system.gpus=16"), "%.200s", r1);
	free(a), free(b);
	struct stat st;
	cr_expect_neq(stat("/tmp/karat-sweep-1.csv.tmp", &st), 0);
	unlink("/tmp/karat-sweep-1.csv"), unlink("/tmp/karat-sweep-2.csv");
}

Test(cli_system, sweep_errors_name_file_and_line)
{
	const char *ini = tmp_ini_str(3, "[sweep]\nmodel = deepseek-v3.2\nsytem = gpu-only\n");
	char cmd[512];
	snprintf(cmd, sizeof cmd, "sweep %s", ini);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, ".ini:3: unknown key 'sytem' in [sweep] (did you mean 'system'?)"), "%s",
		  err);
	ini = tmp_ini_str(3, "[sweep]\nmodel = deepseek-v3.2\nbatch = 8, 16, 8\n");
	snprintf(cmd, sizeof cmd, "sweep %s", ini);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, ".ini:3: sweep.batch: '8' is given twice"), "%s", err);
	ini = tmp_ini_str(3, "[sweep]\nmodel = deepseek-v3.2,,glm-5.2\n");
	snprintf(cmd, sizeof cmd, "sweep %s", ini);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, ".ini:2:"), "%s", err);
	cr_expect_eq(run("sweep /nonexistent.ini"), 1);
	cr_expect_eq(run("sweep"), 2);
}

Test(cli_system, quantiles_of_a_trace)
{
	const char *csv = "/tmp/karat-q.csv";
	FILE *f = fopen(csv, "w");
	fputs("in,out\r\n", f);
	for (int i = 1; i <= 101; i++)
		fprintf(f, "%d,%d\r\n", i * 10, i);
	fclose(f);
	cr_assert_eq(run("quantiles /tmp/karat-q.csv --input-column in --output-column out"), 0,
		     "%s", err);
	cr_expect(strstr(out, "[input]\ndist = quantiles") != NULL, "%s", out);
	cr_expect(strstr(out, "p50    = 510 ;") != NULL, "%s", out);
	cr_expect(strstr(out, "p100   = 101 ;") != NULL, "%s", out);
	unlink(csv);
}

Test(cli_system, list_and_show_systems_and_workloads)
{
	cr_assert_eq(run("list systems"), 0, "%s", err);
	static const char *const sys[] = {"gpu-only", "gpu-host-offload", "gpu-attacc",
					  "gpu-duplex", "gpu-cxl-pnm", "gpu-karat"};
	for (int i = 0; i < 6; i++)
		cr_expect(strstr(out, sys[i]) != NULL, "%s missing", sys[i]);
	cr_assert_eq(run("list workloads"), 0, "%s", err);
	/* agentic's row names it scaled (the column's width follows the longest name) */
	const char *row = strstr(out, "\nagentic ");
	cr_expect(row && strstr(row, " scaled ") && strstr(row, " scaled ") < strchr(row + 1, '\n'),
		  "%s", out);
	cr_assert_eq(run("show gpu-karat"), 0, "%s", err);
	cr_expect(strstr(out, "system.memdevs") != NULL, "%s", out);
	cr_assert_eq(run("show agentic"), 0, "%s", err);
	cr_expect(strstr(out, "decode contexts over 100000 draws") != NULL, "%s", out);
	cr_expect_eq(run("list frob"), 2);
}

Test(cli_system, ops_takes_set_too)
{
	cr_assert_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 64 --context 128K "
			 "--format csv"), 0, "%s", err);
	snprintf(out2, sizeof out2, "%s", out);
	cr_assert_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 64 --context 128K "
			 "--format csv --set hw.bandwidth=9.6TB/s"), 0, "%s", err);
	cr_expect_str_neq(out, out2, "twice the bandwidth must change the step");
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 64 --context 128K "
			 "--set system.gpus=8"), 2);
	cr_expect(strstr(err, "unknown section 'system' for ops"), "%s", err);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 64 --context 128K "
			 "--set sparse.topk=0"), 1);
	cr_expect_eq(run("ops --model deepseek-v3.2 --hw h200 --batch 64 --context 128K "
			 "--set hw.ops=gemm"), 2);
}

Test(cli_system, query_writes_its_timeline)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/karat-timeline-%d.csv", (int)getpid());
	char cmd[256];
	snprintf(cmd, sizeof cmd, "query --model deepseek-v3.2 --system gpu-karat --workload "
		 "agentic --batch 32 --microbatches 2 --timeline %s", path);
	cr_assert_eq(run(cmd), 0, "%s", err);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	char line[256];
	cr_assert_not_null(fgets(line, sizeof line, f));
	cr_expect_str_eq(line, "sample,microbatch,layer,task,resource,start_s,end_s,point\n");
	long rows = 0;
	while (fgets(line, sizeof line, f))
		rows++;
	fclose(f);
	unlink(path);
	cr_expect_eq(rows, 2 * (61 * 8 + 3), "%ld rows", rows);
}

/* solve -j N: the same answer, byte for byte, on any number of threads;
 * a count out of range is a usage error. */
Test(cli_system, solve_on_threads_prints_the_same)
{
	static char one[8192];
	cr_assert_eq(run("solve --model glm-5.2 --system gpu-karat --workload azure-conv --samples 64 "
			 "--format csv -j 1"), 0, "%s", err);
	snprintf(one, sizeof one, "%s", out);
	cr_assert_eq(run("solve --model glm-5.2 --system gpu-karat --workload azure-conv --samples 64 "
			 "--format csv --jobs 3"), 0, "%s", err);
	cr_expect_str_eq(out, one);
	cr_expect_eq(run("solve --model glm-5.2 --system gpu-karat --workload agentic -j 0"), 2);
	cr_expect(strstr(err, "jobs"), "%s", err);
}

/* A failing point blames what the user wrote: a [set] key's or a [vary]
 * label's own line, in those words, and no line of the file for the
 * command line's --set. */
Test(cli_system, sweep_blames_the_set_line_it_came_from)
{
	const char *ini = tmp_ini_str(4, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only\n"
				      "workload = agentic\nbatch = 8\n[set]\nsystem.gpuz = 8\n"
				      "[vary]\nhalf = system.gpus=0\n");
	char cmd[512];
	snprintf(cmd, sizeof cmd, "sweep %s --dry-run", ini);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, ".ini:7: point 1: [set] system.gpuz: no such key"), "%s", err);
	ini = tmp_ini_str(4, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only\n"
			  "workload = agentic\nbatch = 8\n[vary]\nnone = system.gpus=0\n");
	snprintf(cmd, sizeof cmd, "sweep %s --dry-run", ini);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, ".ini:7: point 2: [vary] none: system.gpus: '0' must be greater"),
		  "%s", err);
	snprintf(cmd, sizeof cmd, "sweep %s --dry-run --set system.gpu=h2000", ini);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, "karat: point 1: unknown device 'h2000'") && !strstr(err, ".ini:"),
		  "%s", err);
}

/* Progress: off a terminal, a stage that runs past 2 s (here 0 s, by
 * KARAT_PROGRESS_AFTER) ends with one line on stderr; --quiet says
 * nothing; stdout is the same either way; a short stage says nothing. */
Test(cli_system, long_work_reports_its_stage_unless_quiet)
{
	static char loud[8192];
	const char *cmd = "solve --model deepseek-v3.2 --system gpu-karat --workload agentic "
			  "--format csv";
	setenv("KARAT_PROGRESS_AFTER", "0", 1); /* every stage, however short */
	cr_assert_eq(run(cmd), 0, "%s", err);
	snprintf(loud, sizeof loud, "%s", out);
	cr_expect(strstr(err, "karat solve: batch ") && strstr(err, " micro-batch"), "stderr: %s",
		  err);
	char quiet[512];
	snprintf(quiet, sizeof quiet, "%s --quiet", cmd);
	cr_assert_eq(run(quiet), 0, "%s", err);
	cr_expect_str_eq(err, "");
	cr_expect_str_eq(out, loud);
	unsetenv("KARAT_PROGRESS_AFTER");
	cr_assert_eq(run(cmd), 0, "%s", err); /* 0.1 s: nothing to report */
	cr_expect_str_eq(err, "");
}

/* A device or link a system file names by a relative path is found beside
 * that file, whatever the current folder; a missing one is an error at
 * the system file's line. */
Test(cli_system, system_paths_are_relative_to_their_file)
{
	char dir[] = "/tmp/karat-rel-XXXXXX", path[200], cmd[600];
	static char text[1 << 16];
	cr_assert_not_null(mkdtemp(dir));
	read_text(KARAT_DATADIR "/hw/h200.ini", text, sizeof text);
	snprintf(path, sizeof path, "%s/mygpu.ini", dir);
	cr_assert_eq(write_text(path, text), 0);
	snprintf(path, sizeof path, "%s/sys.ini", dir);
	cr_assert_eq(write_text(path, "[system]\nname = x ; assumed: test\ngpu = mygpu.ini ; assumed: "
				      "test\ngpus = 8 ; assumed: test\ngpus_per_node = 8 ; assumed: "
				      "test\nscaleout_link = ib-ndr ; assumed: test\nmemdev = none ; "
				      "assumed: test\n"), 0);
	snprintf(cmd, sizeof cmd, "query --model deepseek-v3.2 --system %s --context 1K --batch 1 "
		 "--format csv", path);
	cr_expect_eq(run(cmd), 0, "%s", err);
	snprintf(path, sizeof path, "%s/mygpu.ini", dir);
	unlink(path);
	cr_expect_eq(run(cmd), 1);
	cr_expect(strstr(err, "sys.ini:3: system.gpu: no file ") &&
			  strstr(err, "relative to this file's folder"),
		  "%s", err);
	snprintf(path, sizeof path, "%s/sys.ini", dir);
	unlink(path);
	rmdir(dir);
}
