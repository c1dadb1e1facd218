/* cmd_run.c: `karat run [STUDY...] [--out DIR]`, the main job: the studies
 * in studies/ (its INI files) (or those named), each a grid of models, algorithms,
 * workloads, systems, GPU counts and memory devices per GPU (cli/study.h).
 *
 * Every point is solved (largest batch under the P99 TBT SLO, best
 * micro-batch count, OFMS+CMR).  Per model, algorithm and workload, each
 * system is shown at its best configuration (the highest throughput per
 * TDP over the grid) against the baseline in three views:
 * - best: the baseline at its own best GPU count;
 * - same-gpus: the baseline at the system's GPU count;
 * - iso-tdp: the baseline at the GPU count whose TDP is the system's,
 *   rounded up to whole GPUs (whole nodes above one node): the baseline
 *   gets at least the same power.
 * Writes DIR/STUDY-points.csv (every point), DIR/STUDY.csv (one row per
 * model, algorithm, workload, system and view) and DIR/STUDY.png. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/pool.h"
#include "cli/study.h"

/* One point of the grid. */
struct rpt {
	const char *model, *algo, *workload, *system; /* algo NULL: the model's */
	int gpus, memdevs;
};

struct grid {
	struct rpt *pt;
	int n, cap;
	const char *const *user_sets; /* --set, applied to every point */
	int nuser;
};

enum view { V_BEST, V_SAME, V_ISO, V_N };
static const char *const view_names[V_N] = {"best", "same-gpus", "iso-tdp"};

static void make(const void *ctx, long idx, struct point_spec *ps,
		 char sets[][POOL_SET_LEN])
{
	const struct grid *g = ctx;
	const struct rpt *p = &g->pt[idx];
	memset(ps, 0, sizeof *ps);
	ps->model = p->model, ps->algo = p->algo, ps->system = p->system;
	ps->workload = p->workload, ps->schedule = DESIGN_DEFAULT_SCHED_NAME, ps->mb = "auto";
	snprintf(sets[0], POOL_SET_LEN, "system.gpus=%d", p->gpus);
	ps->sets[ps->nsets] = sets[ps->nsets], ps->nsets++;
	if (p->memdevs > 0) {
		snprintf(sets[1], POOL_SET_LEN, "system.memdevs=%d", p->memdevs);
		ps->sets[ps->nsets] = sets[ps->nsets], ps->nsets++;
	}
	for (int i = 0; i < g->nuser; i++) /* cmd_run bounds nuser */
		ps->sets[ps->nsets++] = g->user_sets[i];
}

static int add(struct grid *g, struct rpt p)
{
	if (g->n == g->cap) {
		int cap = g->cap ? 2 * g->cap : 256;
		struct rpt *x = realloc(g->pt, sizeof *x * (size_t)cap);
		if (!x)
			return -1;
		g->pt = x, g->cap = cap;
	}
	g->pt[g->n++] = p;
	return 0;
}

/* Heaviest first (more devices per GPU, more GPUs) so threads finish
 * together; results stay by index. */
static long *order_of(const struct grid *g)
{
	long *o = malloc(sizeof *o * (size_t)(g->n ? g->n : 1));
	if (!o)
		return NULL;
	for (long i = 0; i < g->n; i++)
		o[i] = i;
	for (long i = 1; i < g->n; i++)
		for (long j = i; j > 0; j--) {
			const struct rpt *x = &g->pt[o[j - 1]], *y = &g->pt[o[j]];
			long wx = (long)x->gpus + 8L * x->memdevs, wy = (long)y->gpus + 8L * y->memdevs;
			if (wx >= wy)
				break;
			long t = o[j];
			o[j] = o[j - 1], o[j - 1] = t;
		}
	return o;
}

static int run_pool(const struct grid *g, struct pool *pl, int jobs, const char *what)
{
	long *order = order_of(g);
	if (!order) {
		die_msg("out of memory");
		return 1;
	}
	*pl = (struct pool){.make = make, .ctx = g, .total = g->n,
			    .progress = isatty(2), .what = what, .order = order};
	int rc = pool_run(pl, jobs);
	free(order);
	if (rc)
		die_msg("%s", pl->err.msg);
	return rc;
}

/* Memory devices per GPU in a system file (0: none; a host may serve
 * several GPUs), its GPUs per node; -1 when it does not load. */
static double system_ratio(const char *system, double *per_node)
{
	struct ksystem s;
	struct kerr err;
	if (zoo_load_system(system, &s, NULL, &err) != 0) {
		die_msg("%s", err.msg);
		return -1;
	}
	if (per_node)
		*per_node = s.gpus_per_node;
	return system_has_memdev(&s) ? s.memdevs / s.gpus : 0;
}

/* Index of the best feasible point in [lo, hi) by throughput per TDP. */
static int best_of(const struct pool *pl, int lo, int hi)
{
	int b = -1;
	for (int i = lo; i < hi; i++)
		if (pl->res[i].feasible && (b < 0 || pl->res[i].tok_per_w > pl->res[b].tok_per_w))
			b = i;
	return b;
}

/* A study's grid: per group (model, algo, workload) and system, the range
 * of its points. */
struct layout {
	int ngroup;
	int *start; /* [group * nsystem + system], and one past the last */
};

/* One system's points for one group: each GPU count, and with memory
 * devices each count per GPU (or its file's ratio r, when fixed). */
static int add_system(const struct study_def *sd, struct grid *g, struct rpt p, double r,
		      int fixed, int wide)
{
	int narrow = r > 0 && !wide; /* memdev_gpus, not the baseline's gpus */
	int nG = narrow ? sd->nmgpus : sd->ngpus, nd = r > 0 && !fixed ? sd->nper : 1;
	for (int k = 0; k < nG; k++) {
		p.gpus = narrow ? sd->mgpus[k] : sd->gpus[k];
		for (int d = 0; d < nd; d++) {
			p.memdevs = r <= 0 ? 0
				    : fixed ? (int)fmax(1, p.gpus * r + 0.5)
					    : p.gpus * sd->per_gpu[d];
			if (add(g, p) != 0)
				return die_msg("out of memory"), 1;
		}
	}
	return 0;
}

static int build(const struct study_def *sd, struct grid *g, struct layout *lay)
{
	int ns = sd->nsystem;
	double ratio[STUDY_MAX_LIST]; /* each system file loaded once */
	for (int s = 0; s < ns; s++)
		if ((ratio[s] = system_ratio(sd->system[s], NULL)) < 0)
			return 1;
	lay->ngroup = sd->nmodel * sd->nalgo * sd->nworkload;
	lay->start = malloc(sizeof(int) * (size_t)(lay->ngroup * ns + 1));
	if (!lay->start)
		return die_msg("out of memory"), 1;
	for (int gi = 0; gi < lay->ngroup; gi++) {
		int m = gi / (sd->nalgo * sd->nworkload), a = gi / sd->nworkload % sd->nalgo,
		    w = gi % sd->nworkload;
		const char *algo = strcmp(sd->algo[a], "native") ? sd->algo[a] : NULL;
		for (int s = 0; s < ns; s++) {
			lay->start[gi * ns + s] = g->n;
			struct rpt p = {sd->model[m], algo, sd->workload[w], sd->system[s], 0, 0};
			if (add_system(sd, g, p, ratio[s], study_fixed(sd, sd->system[s]),
				       study_wide(sd, sd->system[s])) != 0)
				return 1;
		}
	}
	lay->start[lay->ngroup * ns] = g->n;
	return 0;
}

/* The baseline's GPU count at the TDP of x: whole GPUs, whole nodes above
 * one node, never below x's TDP. */
static int iso_gpus(double tdp_x, double tdp_gpu, double per_node)
{
	int G = (int)ceil(tdp_x / tdp_gpu - 1e-9);
	if (G < 1)
		G = 1;
	if (G > per_node)
		G = (int)(ceil(G / per_node) * per_node);
	return G;
}

struct out {
	struct table csv, shown;
	double lo[V_N], hi[V_N]; /* the focus system's range of ratios */
	int have[V_N];
};

static void out_init(struct out *o)
{
	static const char *const head[] = {
		"study", "model", "algo", "workload", "system", "view", "gpus", "memdevs",
		"microbatches", "batch", "tbt_p99_s", "throughput_tok_s", "tdp_w", "tok_s_per_w",
		"baseline_gpus", "baseline_tok_s_per_w", "vs_gpu_only", "reason"};
	static const int right[18] = {[6] = 1, [7] = 1, [8] = 1, [9] = 1, [10] = 1, [11] = 1,
				      [12] = 1, [13] = 1, [14] = 1, [15] = 1, [16] = 1};
	static const char *const shead[] = {"model", "algo", "workload", "system", "view",
					    "gpus", "memdevs", "batch", "tok_s_per_w",
					    "baseline_gpus", "baseline_tok_s_per_w", "vs_gpu_only"};
	static const int sright[12] = {[5] = 1, [6] = 1, [7] = 1, [8] = 1, [9] = 1, [10] = 1,
				       [11] = 1};
	memset(o, 0, sizeof *o);
	table_init(&o->csv, 18, head, right);
	table_init(&o->shown, 12, shead, sright);
}

/* One summary row: x (NULL: nothing feasible) against the baseline b
 * (NULL: infeasible there) in view v. */
static void row(struct out *o, const struct study_def *sd, const struct rpt *p,
		const struct result *x, int bg, const struct result *b, enum view v, int focus)
{
	char c[18][OUT_CELL];
	const char *txt[] = {sd->name, p->model, p->algo ? p->algo : "native", p->workload,
			     p->system, view_names[v]};
	for (int k = 0; k < 6; k++)
		snprintf(c[k], OUT_CELL, "%s", txt[k]);
	for (int k = 6; k < 18; k++)
		c[k][0] = 0;
	if (x) {
		snprintf(c[6], OUT_CELL, "%d", p->gpus);
		snprintf(c[7], OUT_CELL, "%d", p->memdevs);
		snprintf(c[8], OUT_CELL, "%d", x->mb);
		snprintf(c[9], OUT_CELL, "%.0f", x->batch);
		snprintf(c[10], OUT_CELL, "%.6g", x->tbt_p99);
		snprintf(c[11], OUT_CELL, "%.6g", x->throughput);
		snprintf(c[12], OUT_CELL, "%.6g", x->tdp);
		snprintf(c[13], OUT_CELL, "%.6g", x->tok_per_w);
	} else {
		snprintf(c[17], OUT_CELL, "infeasible at every configuration");
	}
	snprintf(c[14], OUT_CELL, "%d", bg);
	if (b)
		snprintf(c[15], OUT_CELL, "%.6g", b->tok_per_w);
	if (x && b) {
		double r = x->tok_per_w / b->tok_per_w;
		snprintf(c[16], OUT_CELL, "%.4g", r);
		if (focus) {
			o->lo[v] = o->have[v] && o->lo[v] < r ? o->lo[v] : r;
			o->hi[v] = o->have[v] && o->hi[v] > r ? o->hi[v] : r;
			o->have[v] = 1;
		}
	} else if (x && v == V_BEST) {
		snprintf(c[17], OUT_CELL, "the baseline serves nothing at any GPU count");
	} else if (x) {
		snprintf(c[17], OUT_CELL, "the baseline serves nothing at %d GPUs", bg);
	}
	const char *cells[18];
	for (int k = 0; k < 18; k++)
		cells[k] = c[k];
	table_add(&o->csv, cells);
	char sb[32] = "-", sx[32] = "-", sr[32] = "infeasible";
	if (b)
		snprintf(sb, sizeof sb, "%.3f", b->tok_per_w);
	if (x)
		snprintf(sx, sizeof sx, "%.3f", x->tok_per_w);
	if (x && b)
		snprintf(sr, sizeof sr, "%.2fx", x->tok_per_w / b->tok_per_w);
	else if (x)
		snprintf(sr, sizeof sr, "-");
	const char *shown[] = {c[1], c[2], c[3], c[4], c[5], x ? c[6] : "-", x ? c[7] : "-",
			       x ? c[9] : "-", sx, c[14], sb, sr};
	table_add(&o->shown, shown);
}

/* The study's figure: 0, or 1 when gnuplot failed (said why). */
static int plot(const char *dir, const char *name, const char *csv)
{
	char png[1200];
	snprintf(png, sizeof png, "%s/%s.png", dir, name);
	return gnuplot_figure("headline.gp", csv, png);
}

/* Says how many points each --set reached (it may name a device, ROLE[NAME],
 * or set what only some systems have).  The user's overrides follow the
 * point's own one or two (system.gpus, system.memdevs). */
static void reach(const struct grid *g, const struct pool *p1, const struct grid *e,
		  const struct pool *p2)
{
	for (int u = 0; u < g->nuser; u++) {
		long hit = 0, all = 0;
		for (int k = 0; k < 2; k++) {
			const struct grid *gg = k ? e : g;
			const struct pool *p = k ? p2 : p1;
			for (int i = 0; p && p->applied && i < gg->n; i++) {
				int own = gg->pt[i].memdevs > 0 ? 2 : 1;
				hit += (p->applied[i] >> (own + u)) & 1;
				all++;
			}
		}
		printf("  --set %s reached %ld of %ld points\n", g->user_sets[u], hit, all);
	}
}

static int write_points(const char *path, const struct pool *p1, const struct pool *p2)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	int rc = !fp || csv_write_row(fp, point_ncols, point_head) != 0;
	for (int k = 0; k < 2 && !rc; k++) {
		const struct pool *p = k ? p2 : p1;
		for (long i = 0; i < p->total && !rc; i++)
			rc = fputs(p->rows[i], fp) < 0;
	}
	if (fp && fclose(fp) != 0)
		rc = 1;
	if (!rc)
		rc = write_text_atomic(path, text) != 0;
	free(text);
	return rc;
}

/* The baseline's point at G GPUs for group gi: in the grid, or among the
 * extra points. */
static int baseline_at(const struct grid *g, const struct layout *lay, int gi, int bs, int ns,
		       const struct grid *extra, int G, const struct pool *p1, const struct pool *p2,
		       const struct result **r)
{
	*r = NULL; /* p1 NULL: whether the point exists, nothing else */
	for (int i = lay->start[gi * ns + bs]; i < lay->start[gi * ns + bs + 1]; i++)
		if (g->pt[i].gpus == G) {
			*r = p1 && p1->res[i].feasible ? &p1->res[i] : NULL;
			return 0;
		}
	const struct rpt *q = &g->pt[lay->start[gi * ns + bs]];
	for (int i = 0; extra && i < extra->n; i++)
		if (extra->pt[i].gpus == G && extra->pt[i].model == q->model &&
		    extra->pt[i].algo == q->algo && extra->pt[i].workload == q->workload) {
			*r = p2 && p2->res[i].feasible ? &p2->res[i] : NULL;
			return 0;
		}
	return -1;
}

static int run_study(const struct study_def *sd, const struct args *a, int jobs,
		     const char *dir)
{
	char path[1200], spath[1200];
	snprintf(path, sizeof path, "%s/%s-points.csv", dir, sd->name);
	snprintf(spath, sizeof spath, "%s/%s.csv", dir, sd->name);
	if (out_check(path) != 0 || out_check(spath) != 0) /* before the long work */
		return 1;
	struct grid g = {.user_sets = a->many, .nuser = a->nmany};
	struct grid extra = {.user_sets = a->many, .nuser = a->nmany};
	struct layout lay = {0};
	struct pool p1 = {0}, p2 = {0};
	struct out o;
	out_init(&o);
	int ns = sd->nsystem, bs = 0, rc = build(sd, &g, &lay);
	while (strcmp(sd->system[bs], sd->baseline))
		bs++;
	double per_node = 0;
	if (!rc && system_ratio(sd->baseline, &per_node) < 0)
		rc = 1;
	if (!rc && (rc = run_pool(&g, &p1, jobs, sd->name)) != 0)
		rc = rc == 2 ? EXIT_USAGE : 1;
	/* each system's best, and the baseline counts its views need */
	int nbest = lay.ngroup * ns, *best = rc ? NULL : malloc(sizeof(int) * (size_t)nbest);
	int *iso = rc ? NULL : malloc(sizeof(int) * (size_t)nbest);
	if (!rc && (!best || !iso))
		rc = (die_msg("out of memory"), 1);
	for (int gi = 0; !rc && gi < lay.ngroup; gi++) {
		int b0 = lay.start[gi * ns + bs];
		double tdp_gpu = p1.res[b0].tdp / g.pt[b0].gpus;
		for (int s = 0; s < ns && !rc; s++) {
			int k = gi * ns + s;
			best[k] = best_of(&p1, lay.start[k], lay.start[k + 1]);
			iso[k] = 0;
			if (best[k] < 0 || s == bs)
				continue;
			iso[k] = iso_gpus(p1.res[best[k]].tdp, tdp_gpu, per_node);
			const struct result *r;
			if (baseline_at(&g, &lay, gi, bs, ns, &extra, iso[k], NULL, NULL, &r) != 0) {
				struct rpt q = g.pt[b0];
				q.gpus = iso[k];
				if (add(&extra, q) != 0)
					rc = (die_msg("out of memory"), 1);
			}
		}
	}
	if (!rc && extra.n > 0 && (rc = run_pool(&extra, &p2, jobs, sd->name)) != 0)
		rc = rc == 2 ? EXIT_USAGE : 1;
	for (int gi = 0; !rc && gi < lay.ngroup; gi++) {
		int kb = gi * ns + bs, b = best[kb];
		const struct result *rb = b >= 0 ? &p1.res[b] : NULL;
		const struct rpt *pb = &g.pt[b >= 0 ? b : lay.start[kb]];
		row(&o, sd, pb, rb, rb ? pb->gpus : 0, rb, V_BEST, 0);
		for (int s = 0; s < ns; s++) {
			int k = gi * ns + s;
			if (s == bs)
				continue;
			const struct rpt *px = &g.pt[best[k] >= 0 ? best[k] : lay.start[k]];
			const struct result *rx = best[k] >= 0 ? &p1.res[best[k]] : NULL;
			int focus = strcmp(sd->system[s], sd->system[ns - 1]) == 0;
			row(&o, sd, px, rx, rb ? pb->gpus : 0, rb, V_BEST, focus);
			const struct result *same = NULL, *isor = NULL;
			if (rx)
				baseline_at(&g, &lay, gi, bs, ns, &extra, px->gpus, &p1, &p2, &same);
			row(&o, sd, px, rx, px->gpus, same, V_SAME, focus);
			if (rx)
				baseline_at(&g, &lay, gi, bs, ns, &extra, iso[k], &p1, &p2, &isor);
			row(&o, sd, px, rx, iso[k], isor, V_ISO, focus);
		}
	}
	if (!rc) {
		printf("%s (%s): %s\n", sd->name, sd->path, sd->title);
		printf("each system at its best configuration over the study's GPU counts and "
		       "memory devices per GPU, against %s at its best GPU count, at the same "
		       "GPUs and at the same TDP\n\n", sd->baseline);
		table_write(&o.shown, stdout, 0);
		printf("\n%s over %s, throughput per TDP:", sd->system[ns - 1], sd->baseline);
		for (int v = 0; v < V_N; v++)
			if (o.have[v])
				printf("  %s %.2f-%.2fx", view_names[v], o.lo[v], o.hi[v]);
		if (sd->paper_lo > 0)
			printf("   paper: %.2f-%.2fx", sd->paper_lo, sd->paper_hi);
		printf("\n");
		reach(&g, &p1, &extra, extra.n ? &p2 : NULL);
		rc = write_points(path, &p1, &p2) != 0 || write_atomic(spath, &o.csv, 1) != 0;
	}
	if (!rc) {
		printf("wrote %s and %s\n", path, spath);
		rc = plot(dir, sd->name, spath);
		printf("\n");
	}
	free(best), free(iso), free(lay.start), free(g.pt), free(extra.pt);
	table_free(&o.csv), table_free(&o.shown);
	if (p1.res)
		pool_free(&p1);
	if (p2.res)
		pool_free(&p2);
	return rc;
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
	if (a->nmany > ARGS_MAX_MANY - 2) /* two slots hold system.gpus and system.memdevs */
		return usage_error(c, "%d --set options; karat run takes at most %d", a->nmany,
				   ARGS_MAX_MANY - 2);
	const char *out = arg_get(c, a, "out");
	char dir[1100];
	snprintf(dir, sizeof dir, "%s", out ? out : "");
	if (!out)
		snprintf(dir, sizeof dir, "%s/results", zoo_home());
	/* the folder is made when missing (its parent must exist), as
	 * sweep --output does */
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		die_msg("%s: cannot create: %s", dir, strerror(errno));
		return 1;
	}
	static char names[STUDY_MAX_LIST * 4][64]; /* the zoo's studies, sorted */
	int n = a->npos;
	if (n == 0) {
		struct kerr err;
		if ((n = zoo_list(ZOO_STUDY, names, STUDY_MAX_LIST * 4, &err)) <= 0) {
			die_msg("%s", n < 0 ? err.msg : "no studies in the studies/ folder");
			return 1;
		}
	}
	printf("karat run: %d stud%s (%s, micro-batches 1-%d or auto, P99 TBT SLO %d ms, %d "
	       "sampled batches, seed %d)\n", n, n == 1 ? "y" : "ies", DESIGN_DEFAULT_SCHED_NAME,
	       PIPE_MAX_MB, DESIGN_DEFAULT_SLO_MS, DESIGN_DEFAULT_SAMPLES, DESIGN_DEFAULT_SEED);
	if (a->nmany > 0) {
		printf("overrides (each point's are in the points CSV's overrides column):");
		for (int i = 0; i < a->nmany; i++)
			printf(" %s", a->many[i]);
		printf("\n");
		if (!out)
			printf("note: these results replace the shipped ones in %s; --out DIR "
			       "writes them elsewhere\n", dir);
	}
	printf("\n");
	int rc = 0;
	static struct study_def sd;
	for (int i = 0; i < n && rc == 0; i++) {
		struct kerr err;
		char path[1100];
		const char *name = a->npos ? a->pos[i] : names[i];
		int r = zoo_resolve(ZOO_STUDY, name, path, sizeof path, &err);
		if (r != 0) {
			if (r == ZOO_BAD_NAME)
				rc = usage_error(c, "%s", err.msg);
			else
				rc = (die_msg("%s", err.msg), 1);
			break;
		}
		if (study_load(path, &sd, &err) != 0) {
			die_msg("%s", err.msg);
			rc = 1;
			break;
		}
		rc = run_study(&sd, a, (int)jobs, dir);
	}
	return rc;
}
