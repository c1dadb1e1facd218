/* bench_solve.c: `make bench`, the system layer.  (0) Issue 26's speed
 * targets, each as CPU time of the command a user runs, beside its limit.
 * (1) One design point
 * solved on one core: largest batch by exponential search and bisection,
 * P99 over 256 sampled batches, at m = 1, 4, 16 and auto (1-16), for
 * several models and systems.  (2) Cost of one sampled batch.  (3) What-if
 * queries at batches of 64 to 65,536 (process time; the InferSim point of
 * issue 15), and with a trace workload at and just below a tile edge.
 * (4) A sweep with -j 1 and -j 2 (wall clock) and its points per second
 * per core.  Medians of repeated runs; conditions printed with the
 * numbers. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "karat.h"

#include "bench_util.h"

#define setup design_parts

static void die(const struct kerr *err)
{
	fprintf(stderr, "bench: %s\n", err->msg);
	exit(1);
}

static void load(struct setup *s, const char *model, const char *system)
{
	struct kerr err;
	if (design_load(s, model, system, "agentic", 0, &err) != 0)
		die(&err);
}

/* Median seconds to build a plan and solve at m (0 = auto). */
static double solve_time(struct setup *s, int m, int reps, struct result *r)
{
	double t[16];
	struct kerr err;
	for (int k = 0; k < reps; k++) {
		double t0 = now();
		struct plan *p = plan_new(&s->d, &err);
		if (!p || plan_solve(p, m, r, &err) != 0)
			die(&err);
		plan_free(p);
		t[k] = now() - t0;
	}
	return median(t, reps);
}

/* Wall seconds of one run of argv (argv[0] the binary), its output
 * discarded; no shell sees the arguments (a folder name may hold any
 * character).  Exits the benchmark when the run fails. */
static double wall(char *const argv[])
{
	double t0 = now();
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench: failed: %s %s\n", argv[0], argv[1]);
		exit(1);
	}
	return now() - t0;
}

/* Whether files a and b hold the same bytes (0 when either is unreadable). */
static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb, ca, cb;
	while (same && ((ca = getc(fa)) != EOF) | ((cb = getc(fb)) != EOF))
		same = ca == cb;
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* Median process time (user + system) of karat with args (up to 16),
 * over reps runs, or fewer where one run takes over a second; the least
 * into *least (this host's noise only ever adds time). */
static double cmd_time(const char *bin, const char *const *args, int reps, double *least)
{
	char *argv[24] = {(char *)bin};
	int n = 1;
	for (; args[n - 1] && n < 23; n++)
		argv[n] = (char *)args[n - 1];
	argv[n] = NULL;
	double t[9];
	int k = 0;
	do
		t[k++] = process_time(argv);
	while (k < reps && k < 9 && t[0] < 1);
	double med = median(t, k); /* sorts t */
	*least = t[0];
	return med;
}

#define SOLVE "solve", "--model", "deepseek-v3.2", "--system", "gpu-karat", "--workload", "agentic"

/* Issue 26's targets, CPU time on the machine it runs on. */
static void targets(const char *bin)
{
	static const char *const auto8[] = {SOLVE, NULL};
	static const char *const auto64[] = {SOLVE, "--set", "system.gpus=64", "--set",
					     "system.memdevs=256", NULL};
	static const char *const auto1024[] = {SOLVE, "--set", "system.gpus=1024", "--set",
					       "system.memdevs=4096", NULL};
	static const char *const one8[] = {SOLVE, "--microbatches", "1", NULL};
	static const char *const trace[] = {"query", "--model", "deepseek-v3.2", "--system",
					    "gpu-only", "--workload", "azure-conv", "--batch",
					    "16384", "--microbatches", "2", NULL};
	static const struct {
		const char *what;
		const char *const *args;
		double limit; /* s */
		int reps;
	} t[] = {
		{"solve auto, gpu-karat, DeepSeek-V3.2 agentic, 8 GPUs", auto8, 0.025, 7},
		{"solve auto, 64 GPUs, 256 devices", auto64, 0.300, 3},
		{"solve auto, 1,024 GPUs, 4,096 devices", auto1024, 5.0, 1},
		{"solve at one count (m = 1), 8 GPUs", one8, 0.005, 7},
		{"query, trace workload (azure-conv), 16,384 requests", trace, 0.010, 5},
	};
	printf("issue 26 targets: CPU time (user + system) of one command, median (least)\n");
	printf("  %-55s %10s %9s %10s  %s\n", "what", "measured", "least", "target", "");
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		double least, x = cmd_time(bin, t[i].args, t[i].reps, &least);
		printf("  %-55s %8.0f ms (%5.0f ms) %7.0f ms  %s\n", t[i].what, 1e3 * x, 1e3 * least,
		       1e3 * t[i].limit, x <= t[i].limit ? "met" : "NOT MET");
	}
	printf("  where each target's time goes, and what would reach it: "
	       "docs/notes/performance.md, \"Issue 26's speed targets\"\n");
}

int main(int argc, char **argv)
{
	const char *bin = argc > 1 ? argv[1] : "build/karat";
	targets(bin);
	printf("\n");
	printf("bench_solve: %ld online CPUs; plan + solve on one thread; agentic workload, "
	       "256 sampled batches, ofms+cmr, SLO 100 ms, seed 1\n\n", sysconf(_SC_NPROCESSORS_ONLN));
	static const struct {
		const char *model, *system;
	} pts[] = {{"deepseek-v3.2", "gpu-only"}, {"deepseek-v3.2", "gpu-attacc"},
		   {"deepseek-v3.2", "gpu-karat"}, {"glm-5.2", "gpu-karat"},
		   {"minimax-m3", "gpu-karat"}};
	static const int ms[] = {1, 4, 16, 0};
	printf("%-14s %-11s %6s %7s %10s %14s\n", "model", "system", "m", "batch", "solve_ms",
	       "us_per_sample");
	static struct setup s;
	for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
		load(&s, pts[i].model, pts[i].system);
		for (size_t k = 0; k < sizeof ms / sizeof *ms; k++) {
			struct result r;
			double t = solve_time(&s, ms[k], ms[k] ? 5 : 3, &r);
			/* one evaluation at the answer: cost per sampled batch */
			struct kerr err;
			struct plan *p = plan_new(&s.d, &err);
			double ts[5];
			for (int rep = 0; rep < 5; rep++) {
				double t0 = now();
				struct result x;
				if (plan_eval(p, r.batch, r.mb, &x, &err) != 0)
					die(&err);
				ts[rep] = (now() - t0) / s.d.samples;
			}
			plan_free(p);
			char mm[8];
			snprintf(mm, sizeof mm, ms[k] ? "%d" : "auto", ms[k]);
			printf("%-14s %-11s %6s %7.0f %10.2f %14.2f\n", pts[i].model, pts[i].system, mm,
			       r.batch, 1e3 * t, 1e6 * median(ts, 5));
		}
		workload_free(&s.wl);
	}
	/* what-if queries at production batches: process time (user + system),
	 * median of 7; the point InferSim computes for DeepSeek-V3 on 128 H800s
	 * (issue 15) */
	printf("\nquery process time: DeepSeek-V3, GPU-only, 128 H800s, context 4989, "
	       "2 micro-batches, ofms, no MTP\n");
	static const char *const batches[] = {"64", "1024", "16384", "65536"};
	for (int k = 0; k < 4; k++) {
		char *cmd[] = {(char *)bin, "query", "--model", "deepseek-v3", "--system", "gpu-only",
				"--set", "system.gpu=h800", "--set", "system.gpus=128", "--context",
				"4989", "--batch", (char *)batches[k], "--microbatches", "2",
				"--schedule", "ofms", "--mtp", "0", "--format", "csv", NULL};
		double t[7];
		int reps = 0;
		do /* 7 runs, or 3 of a slow one */
			t[reps++] = process_time(cmd);
		while (reps < (t[0] > 1 ? 3 : 7));
		printf("  batch %6s: %9.2f ms (median of %d)\n", batches[k], 1e3 * median(t, reps), reps);
	}
	/* a trace workload: a power-of-two batch puts each GPU's even share
	 * just below a GEMM tile edge, where every request is placed
	 * (docs/notes/performance.md); three below the edge takes the fluid
	 * path */
	printf("\nquery process time: DeepSeek-V3.2, GPU-only, 8 H200s, azure-conv, 2 micro-batches\n");
	static const char *const tb[] = {"1024", "16320", "16384"};
	for (int k = 0; k < 3; k++) {
		char *cmd[] = {(char *)bin, "query", "--model", "deepseek-v3.2", "--system", "gpu-only",
				"--workload", "azure-conv", "--batch", (char *)tb[k], "--microbatches", "2",
				"--format", "csv", NULL};
		double t[7];
		int reps = 0;
		do
			t[reps++] = process_time(cmd);
		while (reps < (t[0] > 0.2 ? 3 : 7));
		printf("  batch %6s: %9.2f ms (median of %d)\n", tb[k], 1e3 * median(t, reps), reps);
	}
	/* sweep scaling: 48 solves (auto micro-batches), in a folder of its own */
	const char *tmp = getenv("TMPDIR");
	char dir[4096], ini[4200], o1[4200], o2[4200];
	snprintf(dir, sizeof dir, "%s/karat-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("bench: a temporary folder");
		return 1;
	}
	snprintf(ini, sizeof ini, "%s/sweep.ini", dir);
	snprintf(o1, sizeof o1, "%s/j1.csv", dir);
	snprintf(o2, sizeof o2, "%s/j2.csv", dir);
	FILE *f = fopen(ini, "w");
	if (!f)
		return 1;
	fputs("[sweep]\nmodel = deepseek-v3.2, glm-5.2, minimax-m3\n"
	      "system = gpu-only, gpu-attacc, gpu-duplex, gpu-karat\nworkload = agentic\n"
	      "microbatches = auto\n[set]\nsystem.gpus = 8, 16\nsystem.memdevs = 16, 32\n", f);
	fclose(f);
	char *c1[] = {(char *)bin, "sweep", ini, "-j", "1", "--output", o1, NULL};
	char *c2[] = {(char *)bin, "sweep", ini, "-j", "2", "--output", o2, NULL};
	double w1[3], w2[3];
	for (int k = 0; k < 3; k++)
		w1[k] = wall(c1), w2[k] = wall(c2);
	double a = median(w1, 3), b = median(w2, 3);
	int same = same_file(o1, o2);
	printf("\nsweep of 48 points (3 models x 4 systems x 2 GPU counts x 2 device counts, "
	       "auto micro-batches): -j 1 %.2f s, -j 2 %.2f s, speed-up %.2fx (median of 3); "
	       "outputs %s; %.2f points solved per second per core\n", a, b, a / b,
	       same ? "identical" : "DIFFER", 48 / a);
	printf("issue 26 target: a sweep solves at least 100 points per second per core: %s\n",
	       48 / a >= 100 ? "met" : "NOT MET");
	unlink(ini);
	unlink(o1);
	unlink(o2);
	rmdir(dir);
	return same ? 0 : 1;
}
