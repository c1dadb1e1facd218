/* cmd_point.c: `karat query` (one design point at a given batch) and
 * `karat solve` (the largest batch under the SLO). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/point.h"
#include "cli/progress.h"
#include "karat.h"

/* Fills a spec from a command's options. */
static void spec_from_args(const struct command *c, const struct args *a,
			   struct point_spec *ps)
{
	memset(ps, 0, sizeof *ps);
	ps->model = arg_get(c, a, "model");
	ps->algo = arg_get(c, a, "algo");
	ps->system = arg_get(c, a, "system");
	ps->workload = arg_get(c, a, "workload");
	ps->context = arg_get(c, a, "context");
	ps->batch = arg_get(c, a, "batch");
	ps->mb = arg_get(c, a, "microbatches");
	ps->schedule = arg_get(c, a, "schedule");
	ps->mtp = arg_get(c, a, "mtp");
	ps->accept = arg_get(c, a, "mtp-accept");
	ps->slo_ms = arg_get(c, a, "slo-ms");
	ps->samples = arg_get(c, a, "samples");
	ps->seed = arg_get(c, a, "seed");
	ps->force = arg_get(c, a, "force") != NULL;
	ps->exact = arg_get(c, a, "exact") != NULL;
	for (int i = 0; i < a->nmany; i++)
		ps->sets[ps->nsets++] = a->many[i];
}

static int print_result(const struct loaded *ld, const struct result *r, int csv)
{
	static char cells[OUT_MAX_COLS][OUT_CELL];
	const char *row[OUT_MAX_COLS];
	point_cells(ld, r, cells, row);
	struct table t;
	int rc;
	if (csv) {
		table_init(&t, point_ncols, point_head, NULL);
		rc = table_add(&t, row);
	} else { /* one line per field reads better than 35 columns */
		static const char *const head[] = {"field", "value"};
		table_init(&t, 2, head, NULL);
		rc = 0;
		for (int i = 0; i < point_ncols && rc == 0; i++) {
			const char *pair[2] = {point_head[i], row[i]};
			rc = table_add(&t, pair);
		}
	}
	rc = rc || table_write(&t, stdout, csv) != 0;
	table_free(&t);
	/* what bounds it, in one line (the bound_by column) */
	char bound[64];
	double share;
	const char *busiest = point_busiest(ld, r, &share);
	point_bound(ld, r, busiest, bound, sizeof bound);
	if (!rc && !csv && bound[0])
		printf("bound by: %s (the busiest resource, %s, is busy %.0f%% of the step)\n", bound,
		       busiest, 100 * share);
	if (!rc && !csv && r->probed && r->grow >= 0)
		printf("grow first: %s (doubled alone, batch %.0f comes to %.2f of its limit)\n",
		       probe_names[r->grow], r->batch + 1, r->grow_margin);
	else if (!rc && !csv && r->probed)
		printf("grow first: none (no resource doubled alone brings batch %.0f closer to "
		       "its limit)\n", r->batch + 1);
	/* a workload cut short by the model's window says so in words */
	if (!rc && !csv && r->clipped > CLIP_NOTE)
		printf("note: %.0f%% of the sampled requests are longer than %s's %.0f-token window "
		       "and are cut to it (ctx_clipped_share)\n", 100 * r->clipped, ld->p.m.name,
		       ld->p.m.max_context);
	return rc ? 1 : 0;
}

/* The solver's progress (cli/progress.h): the count and batch it tries. */
static void show_progress(void *ctx, int m, double batch)
{
	char detail[96];
	snprintf(detail, sizeof detail, "trying %d micro-batch%s at batch %.0f", m,
		 m == 1 ? "" : "es", batch);
	progress_update(ctx, 0, detail);
}

/* Closes the memory stream fp (which sets *text) and writes the text to
 * path ("-": standard output), atomically; frees it.  rc: a failure while
 * filling it. */
static int finish_csv(FILE *fp, char **text, int rc, const char *path, const char *what)
{
	if ((fp && fclose(fp) != 0) || rc || !*text)
		rc = (die_msg("out of memory writing %s", what), 1);
	else if (strcmp(path, "-") == 0)
		rc = fputs(*text, stdout) < 0;
	else
		rc = write_text_atomic(path, *text) != 0;
	free(*text);
	return rc;
}

/* The point a timeline or step-time CSV comes from, in words, for its
 * `point` column (karat plot's titles read it): the model, the system and
 * its devices, the batch, the micro-batches and the schedule. */
static void describe(const struct loaded *ld, const struct result *r, char *buf, size_t n)
{
	const struct design *d = &ld->p.d;
	char devs[48] = "";
	if (d->mem)
		snprintf(devs, sizeof devs, ", %.0f device%s", d->sys->memdevs,
			 d->sys->memdevs == 1 ? "" : "s");
	size_t used = (size_t)snprintf(buf, n, "%s on %s: %.0f GPU%s%s, batch %.0f, %d micro-batch%s, %s",
				       d->m->name, ld->label[2], d->sys->gpus,
				       d->sys->gpus == 1 ? "" : "s", devs, r->batch, r->mb,
				       r->mb == 1 ? "" : "es", sched_names[d->sched]);
	if (r->clipped > CLIP_NOTE && used < n) /* the figure says it too */
		snprintf(buf + used, n - used, "; %.0f%% of requests cut to the %.0fK window",
			 100 * r->clipped, d->m->max_context / 1024);
}

/* The schedule of sampled batch 0 as a CSV (--timeline): one row per task,
 * `sample,microbatch,layer,task,resource,start_s,end_s,point`. */
static int write_timeline(struct plan *p, const struct loaded *ld, const struct result *r,
			  const char *path)
{
	if (strcmp(path, "-") != 0 && out_check(path) != 0)
		return 1;
	const struct design *d = plan_design(p);
	long nev = (long)r->mb * ((long)d->m->layers * T_LAYER + (T_ALL - T_LAYER)), n;
	struct pipe_event *ev = malloc(sizeof *ev * (size_t)nev);
	double span;
	struct kerr err;
	if (!ev)
		return die_msg("out of memory for the timeline"), 1;
	if (plan_timeline(p, r->batch, r->mb, 0, ev, nev, &n, &span, &err) != 0) {
		free(ev);
		return die_msg("--timeline: %s", err.msg), 1;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	static const char *const head[] = {"sample", "microbatch", "layer", "task", "resource",
					   "start_s", "end_s", "point"};
	char point[OUT_CELL];
	describe(ld, r, point, sizeof point);
	int rc = !fp || csv_write_row(fp, 8, head) != 0;
	for (long i = 0; i < n && !rc; i++) {
		char c[4][32];
		snprintf(c[0], sizeof c[0], "%d", ev[i].mb);
		snprintf(c[1], sizeof c[1], "%d", ev[i].layer);
		snprintf(c[2], sizeof c[2], "%.9g", ev[i].start);
		snprintf(c[3], sizeof c[3], "%.9g", ev[i].end);
		const char *row[8] = {"0", c[0], c[1], pipe_task_names[ev[i].task],
				      pipe_res_names[ev[i].res], c[2], c[3], point};
		rc = csv_write_row(fp, 8, row) != 0;
	}
	rc = finish_csv(fp, &text, rc, path, "the timeline");
	free(ev);
	return rc;
}

/* The sorted step times of the samples (--step-times): one row per
 * sample, `rank,tbt_s,cdf,point` (cdf = rank / samples). */
static int write_steps(struct plan *p, const struct loaded *ld, const struct result *r,
		       const char *path)
{
	if (strcmp(path, "-") != 0 && out_check(path) != 0)
		return 1;
	/* at the micro-batch count reported (auto evaluated others after it) */
	struct result again;
	struct kerr err;
	if (plan_eval(p, r->batch, r->mb, &again, &err) != 0)
		return die_msg("--step-times: %s", err.msg), 1;
	int n;
	const double *t = plan_step_times(p, &n);
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	static const char *const head[] = {"rank", "tbt_s", "cdf", "point"};
	char point[OUT_CELL];
	describe(ld, r, point, sizeof point);
	int rc = !fp || csv_write_row(fp, 4, head) != 0;
	for (int i = 0; i < n && !rc; i++) {
		char c[3][32];
		snprintf(c[0], sizeof c[0], "%d", i + 1);
		snprintf(c[1], sizeof c[1], "%.9g", t[i]);
		snprintf(c[2], sizeof c[2], "%.9g", (double)(i + 1) / n);
		const char *row[4] = {c[0], c[1], c[2], point};
		rc = csv_write_row(fp, 4, row) != 0;
	}
	return finish_csv(fp, &text, rc, path, "the step times");
}

static int run_point(const char *name, const struct args *a, int solve)
{
	const struct command *c = command_find(name);
	const char *fmt = arg_get(c, a, "format");
	int csv = fmt && strcmp(fmt, "csv") == 0;
	if (fmt && !csv && strcmp(fmt, "table") != 0)
		return usage_error(c, "--format must be table or csv, not '%.20s'", fmt);
	struct point_spec ps;
	spec_from_args(c, a, &ps);
	if (!solve && !ps.batch)
		return usage_error(c, "--batch is required");
	static struct loaded ld;
	struct kerr err;
	int rc = point_load(&ps, &ld, &err);
	if (rc) {
		point_free(&ld);
		return rc == 2 ? usage_error(c, "%s", err.msg) : (die_msg("%s", err.msg), 1);
	}
	/* the files it will write, before the work (and after its inputs are
	 * read: neither may replace one) */
	const char *timeline = arg_get(c, a, "timeline"), *steps = arg_get(c, a, "step-times");
	const char *outs[] = {timeline, steps};
	for (int i = 0; i < 2; i++)
		if (outs[i] && strcmp(outs[i], "-") != 0 && out_check(outs[i]) != 0) {
			point_free(&ld);
			return 1;
		}
	const char *jobs = arg_get(c, a, "jobs");
	double threads = 1;
	if (jobs && parse_count("jobs", jobs, 0, 1, PLAN_MAX_THREADS, &threads)) {
		point_free(&ld);
		return EXIT_USAGE;
	}
	ld.p.d.threads = (int)threads;
	static struct progress pg;
	progress_begin(&pg, solve ? "karat solve" : "karat query", NULL, 0,
		       arg_get(c, a, "quiet") != NULL);
	ld.p.d.progress = show_progress, ld.p.d.progress_ctx = &pg;
	struct plan *p = plan_new(&ld.p.d, &err);
	struct result r;
	if (!p)
		rc = 1;
	else
		rc = (solve ? plan_solve(p, ld.mb, &r, &err)
			    : plan_eval(p, ld.batch, ld.mb, &r, &err)) != 0;
	if (!rc && solve)
		point_probe(&ld, p, &r);
	char done[96] = "";
	if (!rc)
		snprintf(done, sizeof done, "batch %.0f at %d micro-batch%s", r.batch, r.mb,
			 r.mb == 1 ? "" : "es");
	progress_end(&pg, rc ? "failed" : done);
	if (rc)
		die_msg("%s", err.msg);
	else
		rc = print_result(&ld, &r, csv);
	/* at the answer for solve (nothing to show where nothing fits) */
	if (!rc && solve && !r.feasible && (timeline || steps))
		rc = (die_msg("%s: nothing fits (%s), so there is no batch to write %s for",
			      name, r.reason, timeline ? "--timeline" : "--step-times"), 1);
	if (!rc && timeline)
		rc = write_timeline(p, &ld, &r, timeline);
	if (!rc && steps)
		rc = write_steps(p, &ld, &r, steps);
	plan_free(p);
	point_free(&ld);
	return rc;
}

int cmd_query(const struct args *a)
{
	return run_point("query", a, 0);
}

int cmd_solve(const struct args *a)
{
	return run_point("solve", a, 1);
}
