/* cmd_run.c: `karat run [STUDY...] [--out DIR]`, the main job: the studies
 * in studies/ (its INI files) (or those named), each a grid of models,
 * algorithms, workloads, systems, GPU counts and memory devices per GPU.
 * The study module (study/study.h) lays out the grid, picks each system's
 * best configuration and pairs it with the baseline in three views; this
 * file solves the points on the thread pool (largest batch under the P99
 * TBT SLO, best micro-batch count, OFMS+CMR) and prints and writes the
 * result: DIR/STUDY-points.csv (every point), DIR/STUDY.csv (one row per
 * model, algorithm, workload, system and view) and DIR/STUDY.png. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/pool.h"
#include "cli/run_points.h"
#include "cli/run_summary.h"
#include "cli/run_unc.h"
#include "study/study.h"

struct out {
	struct table csv, shown;
	const struct result *res; /* the grid's results (rows point into them) */
	const char (*bound)[POOL_BOUND_LEN]; /* and what bounds each */
};

/* The study CSV's columns: the first 19 as they always were (tok_s_per_w
 * per TDP; vs_gpu_only in the study's power), then what bounds each side,
 * the power counted the other ways, the cost, and the ratio in every
 * metric with the same picks. */
static const char *const run_head[] = {
	"study", "model", "algo", "workload", "system", "view", "gpus", "memdevs",
	"microbatches", "batch", "tbt_p99_s", "throughput_tok_s", "tdp_w", "tok_s_per_w",
	"baseline_gpus", "baseline_tok_s_per_w", "vs_gpu_only", "reason", "ctx_clipped_share",
	"power", "bound_by", "baseline_bound_by", "power_activity_w", "power_node_w",
	"usd_per_mtok", "baseline_usd_per_mtok", "vs_gpu_only_tdp", "vs_gpu_only_activity",
	"vs_gpu_only_node", "vs_gpu_only_cost", "grow_first", "slo_ms", "gpu", "step",
	"paper_lo", "paper_hi", "attention_tp", "baseline_attention_tp"};
enum { RUN_NCOL = sizeof run_head / sizeof *run_head, RUN_NSHOWN = 14 };

static void out_init(struct out *o, const struct study_def *sd)
{
	static int right[RUN_NCOL];
	for (int k = 6; k < RUN_NCOL; k++)
		right[k] = k != 17 && k != 19 && k != 20 && k != 21 && k != 30 && k != 32 &&
			   k != 33;
	/* the table shown: per watt in the study's power */
	static const char *shead[RUN_NSHOWN] = {"model", "algo", "workload", "system", "view",
						"gpus", "memdevs", "batch", "", "baseline_gpus",
						"baseline", "vs_gpu_only", "bound_by", "grow_first"};
	static const char *const per[] = {"tok_s_per_w", "tok_s_per_w_activity",
					  "tok_s_per_w_node"};
	shead[8] = per[sd->power];
	static const int sright[RUN_NSHOWN] = {[5] = 1, [6] = 1, [7] = 1, [8] = 1, [9] = 1,
					       [10] = 1, [11] = 1};
	memset(o, 0, sizeof *o);
	table_init(&o->csv, RUN_NCOL, run_head, right);
	table_init(&o->shown, RUN_NSHOWN, shead, sright);
}

/* A finite value into a cell, or an empty cell. */
static void num_cell(char *c, double v, const char *fmt)
{
	if (isfinite(v))
		snprintf(c, OUT_CELL, fmt, v);
	else
		c[0] = 0;
}

/* What bounds result r of the grid (empty for an extra baseline point). */
static const char *bound_of(const struct out *o, const struct study_grid *g,
			    const struct result *r)
{
	return r && r >= o->res && r < o->res + g->n ? o->bound[r - o->res] : "";
}

/* One row of the comparison, into the CSV and the table shown. */
static void row(struct out *o, const struct study_def *sd, const struct study_grid *g,
		const struct study_row *r)
{
	char c[RUN_NCOL][OUT_CELL];
	const struct study_point *p = r->p;
	const struct result *x = r->x, *b = r->b;
	const char *algo = run_algo_name(sd, p);
	const char *txt[] = {sd->name, sd->models.v[p->model], algo ? algo : "native",
			     sd->workloads.v[p->workload], sd->systems.v[p->system],
			     study_view_names[r->v]};
	for (int k = 0; k < RUN_NCOL; k++)
		c[k][0] = 0;
	for (int k = 0; k < 6; k++)
		snprintf(c[k], OUT_CELL, "%s", txt[k]);
	if (x) {
		snprintf(c[6], OUT_CELL, "%d", p->gpus);
		snprintf(c[7], OUT_CELL, "%d", p->memdevs);
		snprintf(c[8], OUT_CELL, "%d", x->mb);
		snprintf(c[9], OUT_CELL, "%.0f", x->batch);
		snprintf(c[10], OUT_CELL, "%.6g", x->tbt_p99);
		snprintf(c[11], OUT_CELL, "%.6g", x->throughput);
		snprintf(c[12], OUT_CELL, "%.6g", x->tdp);
		snprintf(c[13], OUT_CELL, "%.6g", x->tok_per_w);
		snprintf(c[36], OUT_CELL, "%d", p->tp);
		snprintf(c[20], OUT_CELL, "%s", bound_of(o, g, x));
		num_cell(c[22], x->power_act, "%.6g");
		num_cell(c[23], x->power_node, "%.6g");
		num_cell(c[24], x->usd_per_mtok, "%.6g");
		if (x->probed)
			snprintf(c[30], OUT_CELL, "%s", x->grow >= 0 ? probe_names[x->grow] : "none");
	} else {
		snprintf(c[17], OUT_CELL, "infeasible at every configuration");
	}
	snprintf(c[14], OUT_CELL, "%d", r->bgpus);
	snprintf(c[19], OUT_CELL, "%s", study_metric_names[sd->power]);
	snprintf(c[31], OUT_CELL, "%d", sd->slos.n ? sd->slos.v[p->slo] : DESIGN_DEFAULT_SLO_MS);
	snprintf(c[32], OUT_CELL, "%s", sd->gpu_types.n ? sd->gpu_types.v[p->gpu] : "");
	snprintf(c[33], OUT_CELL, "%s", sd->nsteps ? sd->step_name[p->step] : "");
	if (sd->paper_lo > 0) {
		snprintf(c[34], OUT_CELL, "%g", sd->paper_lo);
		snprintf(c[35], OUT_CELL, "%g", sd->paper_hi);
	}
	if (b) {
		snprintf(c[15], OUT_CELL, "%.6g", b->tok_per_w);
		snprintf(c[37], OUT_CELL, "%d", r->btp);
		snprintf(c[21], OUT_CELL, "%s", bound_of(o, g, b));
		num_cell(c[25], b->usd_per_mtok, "%.6g");
	}
	if (x && b) {
		num_cell(c[16], study_metric(x, sd->power) / study_metric(b, sd->power), "%.4g");
		for (int m = 0; m < SM_N; m++)
			num_cell(c[26 + m], study_metric(x, m) / study_metric(b, m), "%.4g");
	} else if (x && r->v == STUDY_BEST) {
		snprintf(c[17], OUT_CELL, "the baseline serves nothing at any GPU count");
	} else if (x) {
		snprintf(c[17], OUT_CELL, "the baseline serves nothing at %d GPUs", r->bgpus);
	}
	/* the share of the workload's requests cut to the model's window (the
	 * same at every configuration of a model and workload) */
	const struct result *any = x ? x : b;
	if (any)
		snprintf(c[18], OUT_CELL, "%.4g", any->clipped);
	const char *cells[RUN_NCOL];
	for (int k = 0; k < RUN_NCOL; k++)
		cells[k] = c[k];
	table_add(&o->csv, cells);
	char sb[32] = "-", sx[32] = "-", sr[32] = "infeasible";
	if (b)
		num_cell(sb, study_metric(b, sd->power), "%.3f");
	if (x)
		num_cell(sx, study_metric(x, sd->power), "%.3f");
	if (x && b)
		snprintf(sr, sizeof sr, "%.2fx", study_metric(x, sd->power) /
						 study_metric(b, sd->power));
	else if (x)
		snprintf(sr, sizeof sr, "-");
	const char *shown[RUN_NSHOWN] = {c[1], c[2], c[3], c[4], c[5], x ? c[6] : "-",
					 x ? c[7] : "-", x ? c[9] : "-", sx, c[14], sb, sr,
					 x ? c[20] : "-", x && c[30][0] ? c[30] : "-"};
	table_add(&o->shown, shown);
}

/* The study's figure (the bars of each system's best, or the ratio along
 * the axes for a study that has them): 0, or 1 when gnuplot failed (said
 * why). */
static int plot(const char *dir, const struct study_def *sd, const char *csv)
{
	char png[1200];
	snprintf(png, sizeof png, "%s/%s.png", dir, sd->name);
	const char *script = sd->nsteps ? "reconcile.gp"
			     : sd->slos.n || sd->gpu_types.n ? "axes.gp" : "headline.gp";
	return gnuplot_figure(script, csv, NULL, png);
}

/* Says how many points each --set reached (it may name a device, ROLE[NAME],
 * or set what only some systems have).  The user's overrides follow the
 * point's own one or two (system.gpus, system.memdevs). */
static void reach(const struct run_points *g, const struct pool *p1, const struct run_points *e,
		  const struct pool *p2)
{
	for (int u = 0; u < g->nuser; u++) {
		long hit = 0, all = 0;
		for (int k = 0; k < 2; k++) {
			const struct study_grid *gg = k ? e->g : g->g;
			const struct pool *p = k ? p2 : p1;
			for (int i = 0; p && p->applied && i < gg->n; i++) {
				int own = 1 + (gg->pt[i].memdevs > 0) + (gg->pt[i].tp > 1) +
					  (g->sd->gpu_types.n > 0) +
					  (g->sd->nsteps ? study_step_sets(g->sd, gg->pt[i].step) : 0) +
					  (g->unc && gg->pt[i].step > 0 ? g->unc->nset[gg->pt[i].system] : 0);
				hit += (p->applied[i] >> (own + u)) & 1;
				all++;
			}
		}
		printf("  --set %s reached %ld of %ld points\n", g->user_sets[u], hit, all);
	}
}

/* The focus system's ranges over the baseline, beside the paper's: in
 * the study's power, each view; then in the best view in every power
 * accounting and in cost, each side picked at its best in that one. */
static void summary(const struct study_def *sd, const struct study_range *rng, char *buf,
		    size_t n)
{
	static const char *const per[] = {"TDP", "drawn watt", "watt counted whole (node)"};
	const char *focus = sd->systems.v[sd->systems.n - 1];
	size_t used = (size_t)snprintf(buf, n, "%s over %s, throughput per %s:", focus,
				       sd->baseline, per[sd->power]);
	for (int v = 0; v < STUDY_NVIEW && used < n; v++)
		if (rng->have[v])
			used += (size_t)snprintf(buf + used, n - used, "  %s %.2f-%.2fx",
						 study_view_names[v], rng->lo[v], rng->hi[v]);
	if (sd->paper_lo > 0 && used < n)
		used += (size_t)snprintf(buf + used, n - used, "   paper: %.2f-%.2fx",
					 sd->paper_lo, sd->paper_hi);
	if (used < n)
		used += (size_t)snprintf(buf + used, n - used, "\n%s over %s, each at its best "
					 "(power = tdp | activity | node; cost = tokens per USD):",
					 focus, sd->baseline);
	for (int m = 0; m < SM_N && used < n; m++)
		if (rng->mhave[m])
			used += (size_t)snprintf(buf + used, n - used, "  %s %.2f-%.2fx",
						 study_metric_names[m], rng->mlo[m], rng->mhi[m]);
		else
			used += (size_t)snprintf(buf + used, n - used, "  %s -", study_metric_names[m]);
}

/* After the ranges: each model and workload whose requests are cut to the
 * model's window more than CLIP_NOTE of the time, in words. */
static void clip_notes(const struct study_def *sd, const struct study_grid *g,
		       const struct result *res, char *buf, size_t n)
{
	size_t used = strlen(buf);
	int ns = g->nsystem;
	for (int gi = 0; gi < g->ngroup && used < n; gi++) {
		double clip = 0;
		for (int i = g->start[gi * ns]; i < g->start[gi * ns + ns]; i++)
			clip = res[i].clipped > clip ? res[i].clipped : clip;
		const struct study_point *p = &g->pt[g->start[gi * ns]];
		if (clip > CLIP_NOTE && p->algo == 0 && p->slo == 0 && p->gpu == 0 &&
		    p->step == 0) /* once per model and workload */
			used += (size_t)snprintf(buf + used, n - used, "\nnote: %.0f%% of %s's requests "
						 "are longer than %s's window and are cut to it",
						 100 * clip, sd->workloads.v[p->workload],
						 sd->models.v[p->model]);
	}
}

/* DIR/STUDY.md: the table shown and the summary, as Markdown (make docs
 * puts it in docs/results.md). */
static int write_md(const char *path, const struct study_def *sd, const struct table *shown,
		    const char *range)
{
	char head[2048];
	snprintf(head, sizeof head, "## %s: %s\n\nEach system at its best configuration over the "
		 "study's GPU counts and memory devices per GPU, against %s at its best GPU count, "
		 "at the same GPUs and at the same TDP (`studies/%s.ini`; `karat run %s`).  "
		 "`tok_s_per_w` is throughput per TDP.\n\n", sd->name, sd->title, sd->baseline,
		 sd->name, sd->name);
	return write_md_table(path, head, shown, range);
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

static int run_study(const struct study_def *sd, const struct args *a, int jobs,
		     const char *dir, struct run_summary *sum)
{
	char path[1200], spath[1200], mdpath[1200];
	snprintf(path, sizeof path, "%s/%s-points.csv", dir, sd->name);
	snprintf(spath, sizeof spath, "%s/%s.csv", dir, sd->name);
	snprintf(mdpath, sizeof mdpath, "%s/%s.md", dir, sd->name);
	if (out_check(path) != 0 || out_check(spath) != 0 || out_check(mdpath) != 0)
		return 1; /* before the long work */
	struct study_unc unc = {0};
	struct kerr err;
	if (sd->draws > 0 && study_unc_setup(sd, &unc, &err) != 0) {
		die_msg("%s", err.msg);
		return 1;
	}
	int most = 0; /* the most overrides a draw puts on one system's points */
	for (int i = 0; sd->draws > 0 && i < sd->systems.n; i++)
		most = unc.nset[i] > most ? unc.nset[i] : most;
	int room = ARGS_MAX_MANY - 4 - (sd->nsteps ? study_step_sets(sd, sd->nsteps - 1) : 0) -
		   (sd->draws > 0 ? most + 2 : 0);
	if (a->nmany > room) {
		die_msg("%s: %d --set options; its [steps] or draws leave room for %d", sd->path,
			a->nmany, room);
		study_unc_free(&unc);
		return EXIT_USAGE;
	}
	struct study_grid g = {0}, extra = {0};
	struct study_pick pk = {0};
	struct run_points rg = {.sd = sd, .g = &g, .user_sets = a->many, .nuser = a->nmany,
			       .unc = unc.x ? &unc : NULL},
			  re = {.sd = sd, .g = &extra, .user_sets = a->many, .nuser = a->nmany};
	struct pool p1 = {0}, p2 = {0};
	struct study_row *rows = NULL;
	struct study_range rng;
	struct out o;
	out_init(&o, sd);
	int rc = 0, quiet = arg_get(command_find("run"), a, "quiet") != NULL;
	char what[128], what2[140];
	snprintf(what, sizeof what, "run %s", sd->name);
	snprintf(what2, sizeof what2, "run %s (baseline at the same TDP)", sd->name);
	if ((rc = run_grid(&rg, &g, &p1, jobs, what, quiet)) != 0)
		rc = rc == 2 ? EXIT_USAGE : 1;
	if (!rc && rg.unc) { /* an uncertainty study: its own table, files and figure */
		rc = write_points(path, &p1, &p2) != 0 ||
		     run_unc_report(sd, &unc, &g, p1.res, dir, sum) != 0;
		if (!rc)
			printf("wrote %s\n\n", path);
		goto done;
	}
	/* each system's best, and the baseline points its views need */
	if (!rc && study_pick(&g, p1.res, sd->power, &pk, &extra) != 0)
		rc = (die_msg("out of memory"), 1);
	/* what to grow first, for each system's best (one probe each) */
	long nbest = 0, *best = rc ? NULL : malloc(sizeof *best * (size_t)(g.n + 1));
	if (!rc && !best)
		rc = (die_msg("out of memory"), 1);
	for (int k = 0; !rc && !sd->no_probe && k < g.ngroup * g.nsystem; k++)
		if (pk.best[k] >= 0)
			best[nbest++] = pk.best[k];
	if (!rc && pool_probe_all(&p1, best, nbest, jobs, &err) != 0)
		rc = (die_msg("%s", err.msg), 1);
	free(best);
	if (!rc && extra.n > 0 && (rc = run_pool(&re, &p2, jobs, what2, quiet)) != 0)
		rc = rc == 2 ? EXIT_USAGE : 1;
	if (!rc && !(rows = malloc(sizeof *rows * (size_t)study_nrows(&g))))
		rc = (die_msg("out of memory"), 1);
	if (!rc) {
		study_rows(&g, p1.res, &extra, extra.n ? p2.res : NULL, &pk, sd->power, rows, &rng);
		o.res = p1.res, o.bound = (const char (*)[POOL_BOUND_LEN])p1.bound;
		for (int i = 0; i < study_nrows(&g); i++)
			row(&o, sd, &g, &rows[i]);
		char range[4000];
		summary(sd, &rng, range, sizeof range);
		run_axes(sd, rows, study_nrows(&g), range, sizeof range);
		clip_notes(sd, &g, p1.res, range, sizeof range);
		printf("%s (%s): %s\n", sd->name, sd->path, sd->title);
		printf("each system at its best configuration over the study's GPU counts and "
		       "memory devices per GPU, against %s at its best GPU count, at the same "
		       "GPUs and at the same TDP%s\n\n", sd->baseline,
		       sd->samples > 0 ? " (study.samples: fewer sampled batches than the run's)" : "");
		table_write(&o.shown, stdout, 0);
		printf("\n%s\n", range);
		reach(&rg, &p1, &re, extra.n ? &p2 : NULL);
		run_summary_add(sum, sd, &g, p1.res, (const char (*)[POOL_BOUND_LEN])p1.bound);
		rc = write_points(path, &p1, &p2) != 0 || write_atomic(spath, &o.csv, 1) != 0 ||
		     write_md(mdpath, sd, &o.shown, range) != 0;
	}
	if (!rc) {
		printf("wrote %s, %s and %s\n", path, spath, mdpath);
		rc = plot(dir, sd, spath);
		printf("\n");
	}
done:
	free(rows);
	study_unc_free(&unc);
	study_pick_free(&pk);
	study_grid_free(&g), study_grid_free(&extra);
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
	/* four slots hold system.gpus, system.memdevs, system.attention_tp and
	 * system.gpu (gpu_types) */
	if (a->nmany > ARGS_MAX_MANY - 4)
		return usage_error(c, "%d --set options; karat run takes at most %d", a->nmany,
				   ARGS_MAX_MANY - 4);
	const char *out = arg_get(c, a, "out");
	char dir[1100];
	snprintf(dir, sizeof dir, "%s", out ? out : "");
	if (!out)
		snprintf(dir, sizeof dir, "results"); /* in the current folder */
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
	static struct run_summary sum;
	sum.n = 0;
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
		rc = run_study(&sd, a, (int)jobs, dir, &sum);
	}
	if (rc == 0)
		run_summary_print(&sum, stdout);
	return rc;
}
