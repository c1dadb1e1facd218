/* test_study.c: study files (issue 14 item 1) and their views (item 2):
 * strict loading with FILE:LINE, the shipped studies load, and a small
 * study run end to end: its CSV's header, rows and views (the baseline at
 * its best count, at the system's count, at the count of at least the
 * system's TDP). */
#include <criterion/criterion.h>
#include <csv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "karat.h"

#define GOOD "[study]\ntitle = t\nmodels = deepseek-v3.2\nworkloads = agentic\n" \
	     "systems = gpu-only, gpu-karat\nbaseline = gpu-only\ngpus = 8\n"

static char out[1 << 16], errbuf[1 << 12];

/* A bad study stops `karat run` before any point, exit 1, FILE:LINE. */
static void load_fails(const char *text, const char *want, int line)
{
	const char *p = tmp_ini_str(0, text);
	char args[300];
	snprintf(args, sizeof args, "run %s --out /tmp", p);
	cr_expect_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 1, "accepted: %s",
		     text);
	cr_expect(strstr(errbuf, want), "'%s' not in: %s", want, errbuf);
	char where[128];
	snprintf(where, sizeof where, "%s:%d:", p, line);
	cr_expect(strstr(errbuf, where), "'%s' not in: %s", where, errbuf);
}

Test(study, bad_studies_fail_with_file_and_line)
{
	load_fails(GOOD "gpu = 8\n", "unknown key 'gpu' in [study] (did you mean 'gpus'?)", 8);
	load_fails("[studdy]\ntitle = t\n", "unknown section [studdy]", 1);
	load_fails(GOOD "algos = gqa,,quest\n", "study.algos: empty item", 8);
	load_fails(GOOD "memdevs_per_gpu = 0\n", "'0' is not a whole number in [1, 64]", 8);
	load_fails(GOOD "paper = lots\n", "not a range LO-HIx", 8);
	load_fails("[study]\ntitle = t\nmodels = m\n", "missing required key 'workloads' in [study]", 1);
	load_fails("[study]\ntitle = t\nmodels = deepseek-v3.2\nworkloads = agentic\n"
		   "systems = gpu-karat\nbaseline = gpu-only\ngpus = 8\n",
		   "study.baseline 'gpu-only' is not one of study.systems", 6);
	load_fails(GOOD "baseline_gpus_for = gpu-duplex-hbm\n",
		   "study.baseline_gpus_for names 'gpu-duplex-hbm', which is not one of study.systems",
		   8);
	load_fails(GOOD "memdevs_per_gpu = 1, 2, 1\n", "study.memdevs_per_gpu: '1' is given twice", 8);
	load_fails(GOOD "memdevs_fixed = gpu-karta\n",
		   "study.memdevs_fixed names 'gpu-karta', which is not one of study.systems", 8);
	load_fails(GOOD "[steps]\nfair = none\nfree = memdev-select\n",
		   "steps.free: 'memdev-select' is not section.key=value", 10);
	load_fails(GOOD "power = watts\n", "study.power", 8);
	load_fails(GOOD "[steps]\nfair = none\noops = system.gpu_prt=none\n",
		   "steps.oops on gpu-only: --set system.gpu_prt: no such key (did you mean "
		   "'system.gpu_port'?)", 10);
	load_fails(GOOD "slos_ms = 50, 0\n", "study.slos_ms", 8);
	/* issue 29 item 5: growth names its limits, within which the lists lie */
	load_fails(GOOD "saturate = 0.01\n", "study.saturate needs gpus_limit and "
		   "memdevs_per_gpu_limit", 8);
	load_fails(GOOD "saturate = 0.01\ngpus_limit = 4\nmemdevs_per_gpu_limit = 4\n",
		   "study.saturate: a listed count (8) is above its limit (study.gpus_limit = 4)", 8);
	load_fails(GOOD "saturate = 0.01\ngpus_limit = 64\nmemdevs_per_gpu_limit = 4\n"
		   "saturate_systems = gpu-karta\n", "study.saturate_systems names 'gpu-karta'", 11);
	load_fails(GOOD "saturate = 2\n", "study.saturate", 8);
}


/* The shipped studies load (karat list studies reads each). */
Test(study, shipped_studies_load)
{
	cr_assert_eq(run_karat("list studies", out, sizeof out, errbuf, sizeof errbuf), 0, "%s",
		     errbuf);
	cr_expect(strstr(out, "headline "), "%s", out);
	cr_expect(strstr(out, "training-free "), "%s", out);
	cr_expect_eq(run_karat("run no-such-study", out, sizeof out, errbuf, sizeof errbuf), 2);
	cr_expect(strstr(errbuf, "unknown study 'no-such-study'"), "%s", errbuf);
}

struct rows {
	char cell[32][40][128];
	int ncol, nrow;
};

static void on_field(void *f, size_t len, void *data)
{
	struct rows *r = data;
	if (r->nrow < 32 && r->ncol < 40)
		snprintf(r->cell[r->nrow][r->ncol], 128, "%.*s", (int)len, (const char *)f);
	r->ncol++;
}

static void on_row(int c, void *data)
{
	(void)c;
	struct rows *r = data;
	r->nrow++;
	r->ncol = 0;
}

/* Runs study file p into dir and parses its DIR/NAME.csv into r; returns
 * the CSV's text (valid until the next call). */
static const char *run_study_csv(const char *p, const char *dir, struct rows *r)
{
	char args[700], csv[700];
	snprintf(args, sizeof args, "run %s --out %s", p, dir);
	cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	const char *base = strrchr(p, '/') + 1;
	snprintf(csv, sizeof csv, "%s/%.*s.csv", dir, (int)(strlen(base) - 4), base);
	FILE *f = fopen(csv, "r");
	cr_assert(f, "no %s", csv);
	static char text[1 << 15];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	memset(r, 0, sizeof *r);
	struct csv_parser cp;
	csv_init(&cp, CSV_STRICT);
	cr_assert_eq(csv_parse(&cp, text, n, on_field, on_row, r), n);
	csv_fini(&cp, on_field, on_row, r);
	csv_free(&cp);
	return text;
}

/* deepseek-v3.2 on azure-conv (short contexts), GPU-only at 8 GPUs against
 * GPU + KARAT at 8 GPUs with 1 device each.  KARAT's 8 x 700 + 8 x 150 W
 * = 6.8 kW is 9.7 GPUs' TDP: above one node, so the iso-TDP baseline runs
 * on 16 GPUs (a point the grid lacks). */
Test(study, a_small_study_runs_with_its_views)
{
	const char *p = tmp_ini_str(1, "[study]\ntitle = small\nmodels = deepseek-v3.2\n"
					"workloads = azure-conv\nsystems = gpu-only, gpu-karat\n"
					"baseline = gpu-only\ngpus = 8\nmemdevs_per_gpu = 1\n");
	char dir[] = "/tmp/karat-study-XXXXXX";
	cr_assert(mkdtemp(dir));
	static struct rows r;
	const char *text = run_study_csv(p, dir, &r);
	cr_expect(strstr(out, "gpu-karat over gpu-only"), "%s", out);
	const char *head = "study,model,algo,workload,system,view,gpus,memdevs,microbatches,"
			   "batch,tbt_p99_s,throughput_tok_s,tdp_w,tok_s_per_w,baseline_gpus,"
			   "baseline_tok_s_per_w,vs_gpu_only,reason,ctx_clipped_share,power,bound_by,"
			   "baseline_bound_by,power_activity_w,power_node_w,usd_per_mtok,"
			   "baseline_usd_per_mtok,vs_gpu_only_tdp,vs_gpu_only_activity,"
			   "vs_gpu_only_node,vs_gpu_only_cost,grow_first,slo_ms,gpu,step,paper_lo,"
			   "paper_hi,attention_tp,baseline_attention_tp\n";
	cr_assert(strncmp(text, head, strlen(head)) == 0, "%.200s", text);
	cr_assert_eq(r.nrow, 5, "header + gpu-only best + 3 views of gpu-karat");
	cr_expect_str_eq(r.cell[1][4], "gpu-only");
	cr_expect_str_eq(r.cell[1][5], "best");
	static const char *const views[] = {"best", "same-gpus", "iso-tdp"};
	static const char *const bgpus[] = {"8", "8", "16"};
	for (int i = 0; i < 3; i++) {
		const char(*c)[128] = r.cell[2 + i];
		cr_expect_str_eq(c[4], "gpu-karat");
		cr_expect_str_eq(c[5], views[i]);
		cr_expect_str_eq(c[6], "8");
		cr_expect_str_eq(c[7], "8");
		cr_expect_str_eq(c[14], bgpus[i], "%s: baseline on %s GPUs", views[i], c[14]);
		double x = atof(c[13]), b = atof(c[15]), v = atof(c[16]);
		cr_expect(x > 0 && b > 0 && near(v, x / b, 1e-3), "%s: %g / %g vs %g", views[i], x,
			  b, v);
		/* the study's power is tdp: its ratio is the TDP one; every other
		 * accounting has its own, and what bounds each side is named */
		cr_expect_str_eq(c[19], "tdp");
		cr_expect_str_eq(c[26], c[16]);
		for (int k = 27; k < 30; k++)
			cr_expect(atof(c[k]) > 0, "%s: column %d empty", views[i], k);
		cr_expect(strncmp(c[20], "slo:", 4) == 0 || strncmp(c[20], "capacity:", 9) == 0,
			  "%s: bound_by %s", views[i], c[20]);
		cr_expect(atof(c[23]) > atof(c[22]), "node power above drawn power");
		cr_expect(strchr(c[30], '.') || strcmp(c[30], "none") == 0, "%s: grow_first %s",
			  views[i], c[30]);
	}
	/* the run's summary says the best-against-best ratio of the CSV, in
	 * every accounting, and what bounds each side */
	char want[200];
	snprintf(want, sizeof want, "deepseek-v3.2, gpu-karat over gpu-only: throughput per TDP "
		 "%.2fx\n    per drawn watt %.2fx, per watt counted whole %.2fx",
		 atof(r.cell[2][16]), atof(r.cell[2][27]), atof(r.cell[2][28]));
	cr_expect(strstr(out, want), "'%s' not in: %s", want, out);
	snprintf(want, sizeof want, "bound by: gpu-karat %s; gpu-only %s", r.cell[2][20],
		 r.cell[1][20]);
	cr_expect(strstr(out, want), "'%s' not in: %s", want, out);
	/* azure-conv fits DeepSeek-V3.2's 160K window: nothing is cut */
	cr_expect_str_eq(r.cell[1][18], "0");
	/* the iso-TDP baseline has at least the system's TDP (H200: 700 W) */
	cr_expect(atof(r.cell[4][14]) * 700 >= atof(r.cell[4][12]));
	cr_expect(near(atof(r.cell[4][12]), 8 * 700 + 8 * 150.0, 1e-9), "%s", r.cell[4][12]);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/* karat plot (issue 14 item 7): every figure renders from its CSV alone,
 * to PNG and SVG, with no gnuplot warning (plot fails on any); a missing
 * CSV names the file; a CSV without a column the script reads names the
 * column. */
Test(study, plot_renders_every_figure_from_its_csv)
{
	char dir[] = "/tmp/karat-plot-XXXXXX", args[700], path[700];
	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/headline.ini", dir);
	cr_assert_eq(write_text(path, "[study]\ntitle = small\nmodels = deepseek-v3.2\nworkloads = azure-conv\n"
	      "systems = gpu-only, gpu-karat\nbaseline = gpu-only\ngpus = 8\n"), 0);
	const char *steps[] = {"run %s/headline.ini --out %s", "validate --out %s%s",
			       "query --model deepseek-v3.2 --system gpu-karat --context 4096 "
			       "--batch 16 --microbatches 2 --schedule naive --timeline "
			       "%s/timeline-naive.csv%s",
			       "query --model deepseek-v3.2 --system gpu-karat --context 4096 "
			       "--batch 16 --microbatches 2 --schedule ofms+cmr --timeline "
			       "%s/timeline-ofms-cmr.csv%s"};
	for (int i = 0; i < 4; i++) {
		snprintf(args, sizeof args, steps[i], dir, i ? "" : dir);
		cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s: %s",
			     args, errbuf);
	}
	snprintf(path, sizeof path, "%s/abl.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-karat\nworkload = agentic\n"
	      "schedule = naive, ofms+cmr\nmicrobatches = 1, 2\nbatch = 16\nsamples = 4\n"), 0);
	for (int k = 0; k < 2; k++) {
		snprintf(args, sizeof args, "sweep %s/abl.ini --output %s/ablation%s.csv", dir, dir,
			 k ? "-ep" : "");
		cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	}
	snprintf(path, sizeof path, "%s/sens.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2, minimax-m3\nsystem = gpu-karat\nworkload = agentic\n"
	      "batch = 16\nmicrobatches = 2\nsamples = 4\n[vary]\n"
	      "bandwidth_0.5x = memdev.memory.bandwidth=600GB/s & memdev.tdp=130W\n"
	      "bandwidth_2x = memdev.memory.bandwidth=2400GB/s\n"), 0);
	snprintf(args, sizeof args, "sweep %s/sens.ini --output %s/sensitivity.csv", dir, dir);
	cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	for (int k = 0; k < 2; k++) {
		snprintf(args, sizeof args, "query --model deepseek-v3.2 --system %s --context 4096 "
			 "--batch 16 --samples 16 --step-times %s/steps-%s.csv", k ? "gpu-karat" : "gpu-only",
			 dir, k ? "gpu-karat" : "gpu-only");
		cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	}
	for (int k = 0; k < 2; k++) {
		snprintf(args, sizeof args, "ops --model deepseek-v3.2 --hw %s --batch 8 --context 4096 "
			 "--roofline %s/roofline-%s.csv", k ? "karat" : "h200", dir, k ? "karat" : "h200");
		cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	}
	snprintf(path, sizeof path, "%s/tb.ini", dir);
	cr_assert_eq(write_text(path, "[sweep]\nmodel = deepseek-v3.2\nsystem = gpu-only, gpu-karat\n"
				      "workload = agentic\nbatch = 8, 64\nmicrobatches = 1\n"
				      "samples = 4\n"), 0);
	snprintf(args, sizeof args, "sweep %s/tb.ini --output %s/tbt-batch.csv", dir, dir);
	cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	snprintf(path, sizeof path, "%s/axes.ini", dir);
	cr_assert_eq(write_text(path, "[study]\ntitle = axes\nmodels = deepseek-v3.2\n"
				      "workloads = azure-conv\nsystems = gpu-only, gpu-karat\n"
				      "baseline = gpu-only\ngpus = 8\nslos_ms = 50, 100\n"
				      "gpu_types = h200, b200\n"), 0);
	snprintf(args, sizeof args, "run %s/axes.ini --out %s", dir, dir);
	cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	cr_expect(strstr(out, "along the axes:\n  50 ms on h200 ") &&
			  strstr(out, "\n  100 ms on b200 "),
		  "%s", out);
	snprintf(path, sizeof path, "%s/reconcile.ini", dir);
	cr_assert_eq(write_text(path, "[study]\ntitle = steps\nmodels = deepseek-v3.2\n"
				      "workloads = azure-conv\nsystems = gpu-only, gpu-karat\n"
				      "baseline = gpu-only\ngpus = 8\nsamples = 16\nprobe = off\n"
				      "paper = 2-6x\n[steps]\nfair = none\n"
				      "no-mtp = decode.mtp_draft_tokens=0\n"
				      "free = memdev.select.core_rate=1e15 & system.gpu_port=none\n"), 0);
	snprintf(args, sizeof args, "run %s/reconcile.ini --out %s", dir, dir);
	cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	cr_expect(strstr(out, "step by step, each switch added to those before it:\n  fair ") &&
			  strstr(out, "\n  free "),
		  "%s", out);
	static const char *const figs[] = {"headline", "validation", "timeline", "ablation",
					   "sensitivity", "tbt-batch", "pareto", "cdf", "ops-roofline",
					   "axes", "reconcile"};
	static const char *const fmts[] = {"png", "svg"};
	for (int i = 0; i < 11; i++)
		for (int k = 0; k < 2; k++) {
			snprintf(args, sizeof args, "plot %s --from %s --format %s", figs[i], dir, fmts[k]);
			cr_expect_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s: %s",
				     args, errbuf);
			snprintf(path, sizeof path, "%s/%s.%s", dir, figs[i], fmts[k]);
			cr_expect_eq(access(path, R_OK), 0, "no %s", path);
		}
	snprintf(args, sizeof args, "plot training-free --from %s", dir);
	cr_expect_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 1);
	cr_expect(strstr(errbuf, "training-free.csv") && strstr(errbuf, "karat run training-free"),
		  "%s", errbuf);
	snprintf(path, sizeof path, "%s/validation.csv", dir);
	cr_assert_eq(write_text(path, "kernel,predicted,measure,unit\ngemm,1,1,us\n"), 0);
	snprintf(args, sizeof args, "plot validation --from %s", dir);
	cr_expect_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 1);
	cr_expect(strstr(errbuf, "validation.csv:1: no column 'measured'"), "%s", errbuf);
	/* a render that fails (a CSV of no rows: gnuplot warns) keeps the
	 * figure drawn before and leaves no temporary beside it */
	snprintf(path, sizeof path, "%s/headline.png", dir);
	struct stat before, after;
	cr_assert_eq(stat(path, &before), 0);
	char csvp[700];
	snprintf(csvp, sizeof csvp, "%s/headline.csv", dir);
	cr_assert_eq(write_text(csvp, "study,model,algo,workload,system,view,tok_s_per_w,vs_gpu_only,"
				      "baseline_tok_s_per_w,paper_lo,paper_hi\n"), 0);
	snprintf(args, sizeof args, "plot headline --from %s", dir);
	cr_expect_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 1);
	cr_expect(strstr(errbuf, "gnuplot"), "%s", errbuf);
	cr_assert_eq(stat(path, &after), 0, "the previous figure was removed");
	cr_expect_eq(after.st_size, before.st_size, "the previous figure was overwritten");
	snprintf(args, sizeof args, "ls -a %s | grep -q tmp-", dir);
	cr_expect_neq(system(args), 0, "a temporary was left in %s", dir);
	snprintf(args, sizeof args, "rm -rf %s", dir);
	cr_expect_eq(system(args), 0);
}

/* query --step-times: one row per sample, ascending, cdf up to 1, and
 * their mean is the reported tbt_mean_s (at the micro-batch count the
 * query reports, though auto evaluates others after it). */
/* Runs karat with cmd (a point command) and --step-times into a fresh
 * file, whose name goes to path (of PATH_LEN bytes). */
#define PATH_LEN 32
static void run_steps(const char *cmd, char *path)
{
	snprintf(path, PATH_LEN, "/tmp/karat-steps-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	char args[400];
	snprintf(args, sizeof args, "%s --format csv --step-times %s", cmd, path);
	cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
}

Test(study, step_times_are_the_samples)
{
	char path[PATH_LEN];
	run_steps("query --model deepseek-v3.2 --system gpu-karat --workload agentic --batch 64 "
		  "--samples 16", path);
	const char *row = strchr(out, '\n') + 1; /* tbt_mean_s: column 8 of the point CSV */
	for (int k = 0; k < 7; k++)
		row = strchr(row, ',') + 1;
	double mean = atof(row);
	FILE *f = fopen(path, "r");
	cr_assert(f);
	char line[512];
	cr_assert(fgets(line, sizeof line, f));
	cr_expect_str_eq(line, "rank,tbt_s,cdf,point\n");
	int n = 0;
	double prev = 0, sum = 0, cdf = 0;
	while (fgets(line, sizeof line, f)) {
		int rank;
		double t;
		cr_assert_eq(sscanf(line, "%d,%lf,%lf", &rank, &t, &cdf), 3, "%s", line);
		/* the point it comes from, as asked (the count is auto's choice) */
		cr_expect(strstr(line, ",\"DeepSeek-V3.2 on gpu-karat: 8 GPUs, 16 devices, batch 64, "),
			  "%s", line);
		cr_expect_eq(rank, ++n);
		cr_expect(t >= prev, "sorted");
		prev = t, sum += t;
	}
	fclose(f);
	unlink(path);
	cr_expect_eq(n, 16);
	cr_expect(cdf == 1);
	cr_expect(mean > 0 && near(sum / n, mean, 1e-5), "%g against %g", sum / n, mean);
}

/* solve --step-times writes the samples of its own answer: the batch and
 * count it printed, every sample. */
Test(study, solve_writes_the_step_times_of_its_answer)
{
	char path[PATH_LEN];
	run_steps("solve --model deepseek-v3.2 --system gpu-only --workload agentic --samples 32", path);
	const char *row = strchr(out, '\n') + 1; /* microbatches, batch: columns 6 and 7 */
	for (int k = 0; k < 5; k++)
		row = strchr(row, ',') + 1;
	int m = atoi(row);
	double batch = atof(strchr(row, ',') + 1);
	FILE *f = fopen(path, "r");
	cr_assert(f);
	char line[512], want[200];
	/* the point, then (agentic is longer than DeepSeek-V3.2's window) its
	 * clipping */
	snprintf(want, sizeof want, "DeepSeek-V3.2 on gpu-only: 8 GPUs, batch %.0f, %d micro-batch%s, "
		 "ofms+cmr; 62%% of requests cut to the 160K window\"\n", batch, m,
		 m == 1 ? "" : "es");
	int n = 0;
	cr_assert(fgets(line, sizeof line, f));
	while (fgets(line, sizeof line, f)) {
		n++;
		size_t l = strlen(line), w = strlen(want);
		cr_expect(l > w && strcmp(line + l - w, want) == 0, "%s does not end in %s", line, want);
	}
	fclose(f);
	unlink(path);
	cr_expect_eq(n, 32);
	cr_expect(batch > 1);
}


/* A panel's title is its CSV's own words (plots/figures.ini: title1 =
 * {point}): a quote and braces in them reach gnuplot as text; a CSV
 * without the column a title reads is refused, naming it. */
Test(study, plot_titles_come_from_the_csvs)
{
	char dir[] = "/tmp/karat-titles-XXXXXX", path[200], args[300];
	cr_assert(mkdtemp(dir));
	const char *names[] = {"steps-gpu-only.csv", "steps-gpu-karat.csv"};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		cr_assert_eq(write_text(path, "rank,tbt_s,cdf,point\n1,0.05,0.5,\"it's {odd}, @_^\"\n"
					      "2,0.06,1,\"it's {odd}, @_^\"\n"), 0);
	}
	snprintf(args, sizeof args, "plot cdf --from %s", dir);
	cr_expect_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	snprintf(path, sizeof path, "%s/cdf.png", dir);
	cr_expect_eq(access(path, F_OK), 0, "no %s", path);
	unlink(path);
	snprintf(path, sizeof path, "%s/%s", dir, names[1]);
	cr_assert_eq(write_text(path, "rank,tbt_s,cdf\n1,0.05,1\n"), 0);
	cr_expect_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 1);
	cr_expect(strstr(errbuf, "steps-gpu-karat.csv:1: no column 'point'") &&
			  strstr(errbuf, "title2"),
		  "%s", errbuf);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* The waterfall's steps, applied by hand: a step's point is the same as
 * a solve with every override of the steps up to it. */
Test(study, a_step_is_its_overrides_applied_by_hand)
{
	const char *p = tmp_ini_str(1, "[study]\ntitle = steps\nmodels = deepseek-v3.2\n"
				       "workloads = azure-conv\nsystems = gpu-only, gpu-karat\n"
				       "baseline = gpu-only\ngpus = 8\nsamples = 16\nprobe = off\n"
				       "[steps]\nfair = none\nno-mtp = decode.mtp_draft_tokens=0\n"
				       "free = memdev.select.core_rate=1e15 & system.gpu_port=none\n");
	char dir[] = "/tmp/karat-steps-XXXXXX", args[700];
	cr_assert(mkdtemp(dir));
	static struct rows r;
	run_study_csv(p, dir, &r);
	static const char *const by_hand[] = {
		"", "--set decode.mtp_draft_tokens=0",
		"--set decode.mtp_draft_tokens=0 --set memdev.select.core_rate=1e15 "
		"--set system.gpu_port=none"};
	static const char *const names[] = {"fair", "no-mtp", "free"};
	int seen = 0;
	for (int i = 1; i < r.nrow; i++) {
		const char(*c)[128] = r.cell[i];
		if (strcmp(c[4], "gpu-karat") || strcmp(c[5], "best"))
			continue;
		cr_assert_lt(seen, 3);
		cr_expect_str_eq(c[33], names[seen]);
		snprintf(args, sizeof args, "solve --model deepseek-v3.2 --workload azure-conv "
			 "--system gpu-karat --samples 16 --set system.gpus=%s --set system.memdevs=%s "
			 "%s --format csv", c[6], c[7], by_hand[seen]);
		cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s",
			     errbuf);
		/* the solve's batch: its 7th column (model, algo, system, workload,
		 * schedule and microbatches come first, none quoted) */
		const char *row = strchr(out, '\n') + 1;
		for (int k = 0; k < 6 && row; k++)
			row = strchr(row, ',') ? strchr(row, ',') + 1 : NULL;
		cr_assert_not_null(row, "%s", out);
		cr_expect(strncmp(row, c[9], strlen(c[9])) == 0 && row[strlen(c[9])] == ',',
			  "step %s: study batch %s, by hand %.20s", names[seen], c[9], row);
		seen++;
	}
	cr_expect_eq(seen, 3);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}
