/* cmd_run.c: `karat run`, the main job: the headline study (DESIGN.md
 * section 7; issue 5 item 7).
 *
 * Part A: DeepSeek-V3.2, GLM-5.2 and MiniMax-M3 on the agentic workload.
 * Every system uses the same GPUs: the smallest count of H200s (8, 16 or
 * 32) at which GPU-only serves at least one request under the SLO.  The
 * baselines keep their files' memory devices per GPU; KARAT tries 1 to 4
 * devices per GPU.  Each point is solved (largest batch under the 100 ms
 * P99 SLO, best micro-batch count, OFMS+CMR) and the best throughput per
 * TDP of each system is compared with GPU-only.
 * Part B: the training-free algorithms on a dense-attention model
 * (Qwen3-235B-A22B, GQA) on agentic-128k, GPU-only vs GPU + KARAT.
 * Writes results/headline-points.csv (every point), results/headline.csv
 * (the summary) and results/headline.png (gnuplot). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/pool.h"

static const char *const a_models[] = {"deepseek-v3.2", "glm-5.2", "minimax-m3"};
#define NA (int)(sizeof a_models / sizeof *a_models)
static const char *const a_systems[] = {"gpu-only", "gpu-host-offload", "gpu-attacc",
					"gpu-duplex", "gpu-cxl-pnm", "gpu-karat"};
#define NS (int)(sizeof a_systems / sizeof *a_systems)
static const char *const b_model = "qwen3-235b-a22b";
static const char *const b_algos[] = {"gqa", "quest", "sparq", "magicpig",
				      "streamingllm", "h2o", "snapkv"};
#define NB (int)(sizeof b_algos / sizeof *b_algos)
static const int gpu_counts[] = {8, 16, 32};
#define NG (int)(sizeof gpu_counts / sizeof *gpu_counts)
#define KARAT_MAX_PER_GPU 4
#define MAX_POINTS 256

/* One study point. */
struct spt {
	const char *model, *algo, *system, *workload;
	int gpus, memdevs;
};

struct study {
	struct spt pt[MAX_POINTS];
	int n;
	const char *const *user_sets; /* --set, applied to every point */
	int nuser;
};

static void make(const void *ctx, long idx, struct point_spec *ps,
		 char sets[][POOL_SET_LEN])
{
	const struct study *st = ctx;
	const struct spt *p = &st->pt[idx];
	memset(ps, 0, sizeof *ps);
	ps->model = p->model, ps->algo = p->algo, ps->system = p->system;
	ps->workload = p->workload, ps->schedule = DESIGN_DEFAULT_SCHED_NAME, ps->mb = "auto";
	snprintf(sets[0], POOL_SET_LEN, "system.gpus=%d", p->gpus);
	ps->sets[ps->nsets] = sets[ps->nsets], ps->nsets++;
	if (p->memdevs > 0) {
		snprintf(sets[1], POOL_SET_LEN, "system.memdevs=%d", p->memdevs);
		ps->sets[ps->nsets] = sets[ps->nsets], ps->nsets++;
	}
	for (int i = 0; i < st->nuser; i++) /* cmd_run bounds nuser */
		ps->sets[ps->nsets++] = st->user_sets[i];
}

static int add(struct study *st, const char *model, const char *algo,
	       const char *system, const char *workload, int gpus, int memdevs)
{
	if (st->n == MAX_POINTS)
		return -1;
	st->pt[st->n++] = (struct spt){model, algo, system, workload, gpus, memdevs};
	return 0;
}

/* Points with more memory devices hold bigger batches and take longest:
 * start them first so the threads finish together. */
static int heavier(const void *a, const void *b, const struct study *st)
{
	const struct spt *x = &st->pt[*(const long *)a], *y = &st->pt[*(const long *)b];
	int kx = x->memdevs / x->gpus, ky = y->memdevs / y->gpus;
	if (kx != ky)
		return ky - kx;
	return *(const long *)a < *(const long *)b ? -1 : 1;
}

static int run_pool(struct study *st, struct pool *pl, int jobs, const char *what)
{
	static long order[MAX_POINTS];
	for (long i = 0; i < st->n; i++)
		order[i] = i;
	for (long i = 1; i < st->n; i++) /* insertion sort: a few dozen points */
		for (long j = i; j > 0 && heavier(&order[j - 1], &order[j], st) > 0; j--) {
			long t = order[j];
			order[j] = order[j - 1], order[j - 1] = t;
		}
	*pl = (struct pool){.make = make, .ctx = st, .total = st->n,
			    .progress = isatty(2), .what = what, .order = order};
	int rc = pool_run(pl, jobs);
	if (rc)
		die_msg("%s", pl->err.msg);
	return rc;
}

/* Memory devices per GPU in a system file (a host may serve several GPUs;
 * 0: none), or -1 when the file does not load (the message is printed). */
static double memdev_ratio(const char *system)
{
	struct ksystem s;
	struct kerr err;
	if (zoo_load_system(system, &s, NULL, &err) != 0) {
		die_msg("%s", err.msg);
		return -1;
	}
	return system_has_memdev(&s) ? s.memdevs / s.gpus : 0;
}

/* Index of the best feasible result among points [lo, hi), or -1. */
static int best_of(const struct pool *pl, int lo, int hi)
{
	int b = -1;
	for (int i = lo; i < hi; i++)
		if (pl->res[i].feasible &&
		    (b < 0 || pl->res[i].tok_per_w > pl->res[b].tok_per_w))
			b = i;
	return b;
}

struct summary {
	struct table t;
	double lo, hi; /* range of improvements over GPU-only */
	int have;
};

static void sum_row(struct summary *s, const char *part, const struct spt *p,
		    const struct result *r, double base)
{
	char c[12][OUT_CELL];
	snprintf(c[0], OUT_CELL, "%s", part);
	snprintf(c[1], OUT_CELL, "%s", p->model);
	snprintf(c[2], OUT_CELL, "%s", p->algo ? p->algo : "native");
	snprintf(c[3], OUT_CELL, "%s", p->system);
	snprintf(c[4], OUT_CELL, "%d", p->gpus);
	snprintf(c[5], OUT_CELL, "%d", p->memdevs);
	if (r && r->feasible) {
		snprintf(c[6], OUT_CELL, "%d", r->mb);
		snprintf(c[7], OUT_CELL, "%.0f", r->batch);
		snprintf(c[8], OUT_CELL, "%.1f", 1e3 * r->tbt_p99);
		snprintf(c[9], OUT_CELL, "%.0f", r->throughput);
		snprintf(c[10], OUT_CELL, "%.4f", r->tok_per_w);
		if (base > 0) {
			double x = r->tok_per_w / base;
			snprintf(c[11], OUT_CELL, "%.2f", x);
			if (strcmp(p->system, "gpu-only") != 0 && strstr(p->system, "karat")) {
				s->lo = s->have && s->lo < x ? s->lo : x;
				s->hi = s->have && s->hi > x ? s->hi : x;
				s->have = 1;
			}
		} else {
			snprintf(c[11], OUT_CELL, "-");
		}
	} else {
		for (int k = 6; k < 11; k++)
			snprintf(c[k], OUT_CELL, "-");
		snprintf(c[11], OUT_CELL, "infeasible");
	}
	const char *cells[12];
	for (int k = 0; k < 12; k++)
		cells[k] = c[k];
	table_add(&s->t, cells);
}

static void init_summary(struct summary *s)
{
	static const char *const head[] = {"part", "model", "algo", "system", "gpus",
					   "memdevs", "microbatches", "batch", "tbt_p99_ms",
					   "throughput_tok_s", "tok_s_per_w", "vs_gpu_only"};
	static const int right[] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
	memset(s, 0, sizeof *s);
	table_init(&s->t, 12, head, right);
}

/* Appends the rows of pl to the text buffer (all points CSV). */
static int append_rows(FILE *fp, const struct pool *pl)
{
	for (long i = 0; i < pl->total; i++)
		if (fputs(pl->rows[i], fp) < 0)
			return -1;
	return 0;
}

static void plot(const char *dir, const char *csv)
{
	char png[1200], cmd[4000];
	snprintf(png, sizeof png, "%s/headline.png", dir);
	if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
		printf("gnuplot not found: skipped %s (apt-get install gnuplot-nox)\n", png);
		return;
	}
	snprintf(cmd, sizeof cmd,
		 "gnuplot -e \"datafile='%s'; outfile='%s'\" '%s/plots/headline.gp'", csv,
		 png, zoo_home());
	if (system(cmd) == 0)
		printf("wrote %s\n", png);
	else
		die_msg("gnuplot failed drawing %s", png);
}

int cmd_run(const struct args *a)
{
	const struct command *c = command_find("run");
	double jobs = (double)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	const char *j = arg_get(c, a, "jobs");
	if (j && parse_count("jobs", j, 0, 1, 256, &jobs))
		return EXIT_USAGE;
	char dir[1100];
	snprintf(dir, sizeof dir, "%s/results", zoo_home());
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		die_msg("%s: cannot create: %s", dir, strerror(errno));
		return 1;
	}
	char chk[1200];
	snprintf(chk, sizeof chk, "%s/headline-points.csv", dir);
	if (out_check(chk) != 0) /* before the long work */
		return 1;
	snprintf(chk, sizeof chk, "%s/headline.csv", dir);
	if (out_check(chk) != 0)
		return 1;
	if (a->nmany > MAX_MANY - 2) /* two slots hold system.gpus and system.memdevs */
		return usage_error(c, "%d --set options; karat run takes at most %d", a->nmany,
				   MAX_MANY - 2);
	static struct study probe, st;
	probe.user_sets = st.user_sets = a->many;
	probe.nuser = st.nuser = a->nmany;
	/* 1: GPU-only at 8, 16 and 32 GPUs: each model's GPU count is the first
	 * at which GPU-only serves; the others show how the baseline scales */
	const char *pmodel[NA + 1];
	const char *palgo[NA + 1];
	const char *pwork[NA + 1];
	for (int m = 0; m < NA; m++)
		pmodel[m] = a_models[m], palgo[m] = NULL, pwork[m] = "agentic";
	pmodel[NA] = b_model, palgo[NA] = "gqa", pwork[NA] = "agentic-128k";
	static struct pool pp, pl;
	for (int m = 0; m <= NA; m++)
		for (int g = 0; g < NG; g++)
			add(&probe, pmodel[m], palgo[m], "gpu-only", pwork[m], gpu_counts[g], 0);
	int rc = run_pool(&probe, &pp, (int)jobs, "run (GPU counts)");
	if (rc) {
		pool_free(&pp);
		return rc == 2 ? EXIT_USAGE : 1;
	}
	int G[NA + 1];
	for (int m = 0; m <= NA; m++) {
		G[m] = gpu_counts[NG - 1];
		for (int g = NG - 1; g >= 0; g--)
			if (pp.res[m * NG + g].feasible)
				G[m] = gpu_counts[g];
	}
	/* 2: every system at that count */
	int start[NA][NS];
	for (int m = 0; m < NA; m++)
		for (int s = 0; s < NS; s++) {
			start[m][s] = st.n;
			double r = memdev_ratio(a_systems[s]);
			if (r < 0) {
				pool_free(&pp);
				return 1;
			}
			int karat = strcmp(a_systems[s], "gpu-karat") == 0;
			for (int k = 1; k <= (karat ? KARAT_MAX_PER_GPU : 1); k++) {
				int md = karat ? G[m] * k : (int)(G[m] * r + 0.5);
				if (r > 0 && md < 1)
					md = 1;
				add(&st, a_models[m], NULL, a_systems[s], "agentic", G[m], md);
			}
		}
	int bstart[NB][2];
	for (int b = 0; b < NB; b++) {
		bstart[b][0] = st.n;
		add(&st, b_model, b_algos[b], "gpu-only", "agentic-128k", G[NA], 0);
		bstart[b][1] = st.n;
		for (int k = 1; k <= KARAT_MAX_PER_GPU; k++)
			add(&st, b_model, b_algos[b], "gpu-karat", "agentic-128k", G[NA], G[NA] * k);
	}
	int end = st.n;
	if ((rc = run_pool(&st, &pl, (int)jobs, "run")) != 0) {
		pool_free(&pp);
		return rc == 2 ? EXIT_USAGE : 1;
	}
	/* summary */
	struct summary A, B;
	init_summary(&A);
	init_summary(&B);
	printf("karat run: the headline study (%s, micro-batches 1-%d, P99 TBT "
	       "SLO %d ms, %d sampled batches, seed %d)\n\n", DESIGN_DEFAULT_SCHED_NAME,
	       PIPE_MAX_MB, DESIGN_DEFAULT_SLO_MS, DESIGN_DEFAULT_SAMPLES, DESIGN_DEFAULT_SEED);
	printf("A. Sparse-attention models on the agentic workload (synthetic, scaled), "
	       "same H200s for every system:\n\n");
	for (int m = 0; m < NA; m++) {
		int g0 = best_of(&pl, start[m][0], start[m][1]);
		double base = g0 >= 0 ? pl.res[g0].tok_per_w : 0;
		for (int s = 0; s < NS; s++) {
			int hi = s + 1 < NS ? start[m][s + 1] : (m + 1 < NA ? start[m + 1][0] : bstart[0][0]);
			int b = best_of(&pl, start[m][s], hi);
			sum_row(&A, "A", &st.pt[b >= 0 ? b : start[m][s]], b >= 0 ? &pl.res[b] : NULL,
				base);
		}
	}
	table_write(&A.t, stdout, 0);
	printf("\nB. Training-free algorithms on %s (dense GQA attention), agentic-128k:\n\n",
	       b_model);
	for (int b = 0; b < NB; b++) {
		int g0 = best_of(&pl, bstart[b][0], bstart[b][1]);
		double base = g0 >= 0 ? pl.res[g0].tok_per_w : 0;
		sum_row(&B, "B", &st.pt[bstart[b][0]], g0 >= 0 ? &pl.res[g0] : NULL, base);
		int hi = b + 1 < NB ? bstart[b + 1][0] : end;
		int k = best_of(&pl, bstart[b][1], hi);
		sum_row(&B, "B", &st.pt[k >= 0 ? k : bstart[b][1]], k >= 0 ? &pl.res[k] : NULL,
			base);
	}
	table_write(&B.t, stdout, 0);
	printf("\nGPU + KARAT over GPU-only, throughput per TDP:\n");
	printf("  A (native sparse attention): %.2f-%.2fx   paper: 2.09-6.13x\n", A.lo, A.hi);
	printf("  B (training-free, KARAT rows only, incl. dense gqa): %.2f-%.2fx   paper: 1.36-3.21x\n",
	       B.lo, B.hi);
	/* the baseline with more GPUs: KARAT (at the fixed count) over the best
	 * GPU-only at any count */
	printf("\nC. GPU-only with more GPUs (tok/s/W; KARAT at the study's count over the best of them):\n");
	for (int m = 0; m < NA; m++) {
		double best = 0;
		printf("  %-14s", a_models[m]);
		for (int g = 0; g < NG; g++) {
			const struct result *r = &pp.res[m * NG + g];
			if (r->feasible)
				printf("  %2d GPUs %.3f", gpu_counts[g], r->tok_per_w);
			else
				printf("  %2d GPUs   -  ", gpu_counts[g]);
			if (r->feasible && r->tok_per_w > best)
				best = r->tok_per_w;
		}
		int k = best_of(&pl, start[m][NS - 1], m + 1 < NA ? start[m + 1][0] : bstart[0][0]);
		if (k >= 0 && best > 0)
			printf("   KARAT %.2fx\n", pl.res[k].tok_per_w / best);
		else
			printf("\n");
	}
	/* files */
	char path[1200], spath[1200];
	snprintf(path, sizeof path, "%s/headline-points.csv", dir);
	snprintf(spath, sizeof spath, "%s/headline.csv", dir);
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	rc = !fp || csv_write_row(fp, point_ncols, point_head) != 0 ||
	     append_rows(fp, &pp) != 0 || append_rows(fp, &pl) != 0;
	if (fp && fclose(fp) != 0)
		rc = 1;
	if (!rc)
		rc = write_text_atomic(path, text) != 0;
	free(text);
	struct summary S;
	init_summary(&S); /* same header */
	struct table all = S.t;
	for (int i = 0; i < A.t.nrows + B.t.nrows; i++) {
		const struct table *t = i < A.t.nrows ? &A.t : &B.t;
		int r = i < A.t.nrows ? i : i - A.t.nrows;
		const char *cells[12];
		for (int k = 0; k < 12; k++)
			cells[k] = t->cell[r][k];
		table_add(&all, cells);
	}
	rc |= write_atomic(spath, &all, 1) != 0;
	if (!rc) {
		printf("\nwrote %s and %s\n", path, spath);
		plot(dir, spath);
	}
	table_free(&all);
	table_free(&A.t);
	table_free(&B.t);
	pool_free(&pp);
	pool_free(&pl);
	return rc ? 1 : 0;
}
