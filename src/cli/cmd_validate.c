/* cmd_validate.c: `karat validate [TABLE.csv...] [--out DIR]`: the model
 * against every published measurement in the validation folder (or the tables
 * named): per table the model's time, the measured time and the error,
 * the mean absolute error per table, per kernel and overall; writes
 * DIR/validation.csv and DIR/validation.png (gnuplot): by default
 * results/ for the whole set, nowhere for tables named without --out. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "karat.h"

static void conditions(const struct vrow *r, char *buf, size_t n)
{
	if (r->kernel == VK_GEMM)
		snprintf(buf, n, "%s m=%g n=%g k=%g", r->dtype, r->m, r->n, r->k);
	else if (r->kernel == VK_GROUPED)
		snprintf(buf, n, "%s %gx m=%g n=%g k=%g", r->dtype, r->groups, r->m, r->n, r->k);
	else if (r->kernel == VK_SERVING)
		snprintf(buf, n, "%s %g GPUs, %g req/GPU, L=%g, q=%g", r->model, r->gpus, r->batch,
			 r->context, r->q_len);
	else if (r->kernel == VK_TOPK)
		snprintf(buf, n, "rows=%g scores=%g k=%g", r->batch, r->context, r->topk);
	else if (valid_is_a2a(r->kernel))
		snprintf(buf, n, "%s %g tokens/GPU, EP%g", r->model, r->batch, r->gpus);
	else {
		char k[32] = "", h[32] = "";
		if (!isnan(r->topk))
			snprintf(k, sizeof k, " k=%g", r->topk);
		if (!isnan(r->heads))
			snprintf(h, sizeof h, " h=%g", r->heads);
		snprintf(buf, n, "%s b=%g L=%g%s q=%g%s", r->model, r->batch, r->context, h,
			 r->q_len, k);
	}
}

static void cell_num(char *c, double v)
{
	if (isnan(v))
		c[0] = 0;
	else
		snprintf(c, OUT_CELL, "%.6g", v);
}

/* The family a row's device belongs to (device.family), else its name;
 * the device file is read again only when the device changes (a table's
 * rows share one). */
static void family_of(const struct vrow *r, char *buf, size_t n)
{
	static struct kdevice d;
	static char last[sizeof r->device], family[sizeof r->device];
	if (strcmp(last, r->device) != 0) {
		struct kerr err;
		int ok = zoo_load_device(r->device, &d, NULL, &err) == 0 && d.family[0];
		snprintf(family, sizeof family, "%s", ok ? d.family : r->device);
		snprintf(last, sizeof last, "%s", r->device);
	}
	snprintf(buf, n, "%s", family);
}

#define VALID_MAX_FAMILIES 32 /* families summarised (far above the zoo's 5); a row of any
			       * further one is in the CSV and the overall error only */

/* The figure: 0, or 1 when gnuplot failed (said why). */
static int plot(const char *dir, const char *csv)
{
	char png[1200];
	snprintf(png, sizeof png, "%s/validation.png", dir);
	return gnuplot_figure("validation.gp", csv, NULL, png);
}

/* The rows of one role (fit: a table a shipped value is fitted on;
 * check: the rest, out of sample): their error overall, with the worst,
 * and per family. */
struct split {
	struct verr all;
	double gsum[VALID_MAX_FAMILIES];
	int gn[VALID_MAX_FAMILIES];
};

static void split_add(struct split *o, int g, double e, const char *table, int line)
{
	verr_add(&o->all, e, table, line);
	if (g < VALID_MAX_FAMILIES)
		o->gsum[g] += fabs(e), o->gn[g]++;
}

#define VALID_FIT_GOAL 0.10 /* a family's mean error on its own tables: issue 28's bar */

static void split_print(const struct split *o, char gname[][32], int ng, int fit)
{
	const struct verr *a = &o->all;
	if (fit)
		printf("mean absolute error in sample (the fit tables: shipped values are "
		       "fitted on them; the goal is %.0f%% or less per family):\n",
		       100 * VALID_FIT_GOAL);
	else
		printf("mean absolute error out of sample (the check tables: no shipped value is "
		       "fitted on them):\n");
	if (!a->n) {
		printf("  none: %s\n", fit ? "no row's table is fitted on"
					   : "every row's table is fitted on");
		return;
	}
	printf("  %-18s %5.1f%%  (%d rows; worst %+.0f%%, %s:%d)\n", "all", 100 * a->sum / a->n,
	       a->n, 100 * a->worst, a->worst_table, a->worst_line);
	for (int g = 0; g < ng; g++) {
		if (!o->gn[g])
			continue;
		double mean = o->gsum[g] / o->gn[g];
		printf("  %-18s %5.1f%%  (%d rows)%s\n", gname[g], 100 * mean, o->gn[g],
		       fit && mean > VALID_FIT_GOAL ? "  over the goal" : "");
	}
}

static int report(const struct command *c, const struct args *a, struct vtable *t, int nt)
{
	static const char *const head[] = {"table", "line", "kernel", "model", "device", "dtype",
					   "batch", "context", "heads", "q_len", "topk", "m", "n",
					   "k", "groups", "gpus", "predicted", "measured", "error_pct",
					   "unit", "source", "family", "role"};
	static const char *const shown[] = {"kernel", "device", "conditions", "predicted",
					    "measured", "unit", "error"};
	static const int right[23] = {[1] = 1, [6] = 1, [7] = 1, [8] = 1, [9] = 1, [10] = 1,
				      [11] = 1, [12] = 1, [13] = 1, [14] = 1, [15] = 1, [16] = 1,
				      [17] = 1, [18] = 1};
	static const int sright[7] = {[3] = 1, [4] = 1, [6] = 1};
	struct table csv;
	table_init(&csv, 23, head, right);
	double fam_sum[VK_N] = {0}, all_sum = 0;
	int fam_n[VK_N] = {0}, all_n = 0, rc = 0, ng = 0;
	struct split in = {0}, out = {0};
	static struct vfits fits; /* 8 KB */
	struct kerr ferr;
	if (valid_fits_load(&fits, &ferr) != 0) {
		die_msg("%s", ferr.msg);
		table_free(&csv);
		return 1;
	}
	char gname[VALID_MAX_FAMILIES][32];
	long rows = 0, done = 0;
	for (int i = 0; i < nt; i++)
		rows += t[i].n;
	struct progress pg;
	progress_begin(&pg, "karat validate", "rows", rows, arg_get(c, a, "quiet") != NULL);
	for (int i = 0; i < nt && rc == 0; i++) {
		struct table tab;
		table_init(&tab, 7, shown, sright);
		double sum = 0;
		int fit = valid_fits_has(&fits, valid_shown(t[i].path));
		for (int j = 0; j < t[i].n; j++) {
			const struct vrow *r = &t[i].rows[j];
			double us;
			struct kerr err;
			progress_update(&pg, done++, t[i].path);
			if (valid_model(r, &us, &err) != 0) {
				die_msg("%s:%d: %s", t[i].path, r->line, err.msg);
				rc = 1;
				break;
			}
			double e = (us - r->measured) / r->measured;
			sum += fabs(e), fam_sum[r->kernel] += fabs(e), all_sum += fabs(e);
			fam_n[r->kernel]++, all_n++;
			char cells[23][OUT_CELL];
			family_of(r, cells[21], OUT_CELL);
			int g = 0;
			while (g < ng && strcmp(gname[g], cells[21]) != 0)
				g++;
			if (g == ng && ng < VALID_MAX_FAMILIES)
				snprintf(gname[ng++], sizeof gname[0], "%.31s", cells[21]);
			split_add(fit ? &in : &out, g, e, valid_shown(t[i].path), r->line);
			snprintf(cells[0], OUT_CELL, "%s", valid_shown(t[i].path));
			snprintf(cells[1], OUT_CELL, "%d", r->line);
			snprintf(cells[2], OUT_CELL, "%s", vkernel_names[r->kernel]);
			snprintf(cells[3], OUT_CELL, "%s", r->model);
			snprintf(cells[4], OUT_CELL, "%s", r->device);
			snprintf(cells[5], OUT_CELL, "%s", r->dtype);
			const double v[] = {r->batch, r->context, r->heads, r->q_len, r->topk,
					    r->m, r->n, r->k, r->groups, r->gpus, us, r->measured,
					    100 * e};
			for (int k = 0; k < 13; k++)
				cell_num(cells[6 + k], v[k]);
			snprintf(cells[19], OUT_CELL, "%s", r->unit);
			snprintf(cells[20], OUT_CELL, "%s", r->source);
			snprintf(cells[22], OUT_CELL, "%s", fit ? "fit" : "check");
			const char *row[23];
			for (int k = 0; k < 23; k++)
				row[k] = cells[k];
			char cond[OUT_CELL], mu[32], me[32], er[32];
			conditions(r, cond, sizeof cond);
			snprintf(mu, sizeof mu, "%.1f", us);
			snprintf(me, sizeof me, "%.1f", r->measured);
			snprintf(er, sizeof er, "%+.0f%%", 100 * e);
			const char *srow[] = {vkernel_names[r->kernel], r->device, cond, mu, me, r->unit, er};
			if (table_add(&csv, row) != 0 || table_add(&tab, srow) != 0) {
				die_msg("out of memory");
				rc = 1;
				break;
			}
		}
		if (rc == 0) {
			progress_clear(&pg); /* the table goes where the line was */
			printf("%s (%d rows, %s): mean absolute error %.1f%%\n", valid_shown(t[i].path),
			       t[i].n, fit ? "fit" : "check", 100 * sum / t[i].n);
			table_write(&tab, stdout, 0);
			printf("\n");
		}
		table_free(&tab);
	}
	progress_end(&pg, rc ? "failed" : "every row priced");
	if (rc == 0) {
		printf("mean absolute error by kernel:\n");
		for (int k = 0; k < VK_N; k++)
			if (fam_n[k])
				printf("  %-18s %5.1f%%  (%d rows)\n", vkernel_names[k],
				       100 * fam_sum[k] / fam_n[k], fam_n[k]);
		printf("  %-18s %5.1f%%  (%d rows)\n", "all", 100 * all_sum / all_n, all_n);
		printf("mean absolute error by family (device.family):\n");
		for (int g = 0; g < ng; g++) { /* both roles' rows */
			int n = in.gn[g] + out.gn[g];
			printf("  %-18s %5.1f%%  (%d rows)\n", gname[g],
			       100 * (in.gsum[g] + out.gsum[g]) / n, n);
		}
		split_print(&in, gname, ng, 1);
		split_print(&out, gname, ng, 0);
		const char *dir = arg_get(c, a, "out");
		char def[1100], path[1200];
		if (!dir && a->npos) { /* a few tables: results/ holds the whole set's */
			printf("not written: with tables named, --out DIR writes DIR/validation.csv\n");
			table_free(&csv);
			return 0;
		}
		if (!dir) { /* results/ in the current folder */
			snprintf(def, sizeof def, "results");
			dir = def;
		}
		/* made when missing (its parent must exist), as run --out is */
		if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
			die_msg("%s: cannot create: %s", dir, strerror(errno));
			rc = 1;
		}
		snprintf(path, sizeof path, "%s/validation.csv", dir);
		if (rc || write_atomic(path, &csv, 1) != 0) {
			rc = 1;
		} else {
			printf("wrote %s\n", path);
			rc = plot(dir, path);
		}
	}
	table_free(&csv);
	return rc;
}

int cmd_validate(const struct args *a)
{
	const struct command *c = command_find("validate");
	glob_t g = {0};
	int n = a->npos;
	if (n == 0) {
		struct kerr err;
		int bad = valid_shipped(&g, &err) != 0;
		if (bad || g.gl_pathc == 0) {
			if (bad)
				die_msg("%s", err.msg);
			else
				die_msg("no validation tables in %s/validation/", zoo_home());
			globfree(&g);
			return 1;
		}
		n = (int)g.gl_pathc;
	}
	struct vtable *t = calloc((size_t)n, sizeof *t);
	int rc = t ? 0 : 1;
	if (!t)
		die_msg("out of memory");
	for (int i = 0; i < n && rc == 0; i++) {
		struct kerr err;
		if (vtable_read(a->npos ? a->pos[i] : g.gl_pathv[i], &t[i], &err) != 0) {
			die_msg("%s", err.msg);
			rc = 1;
		}
	}
	if (rc == 0)
		rc = report(c, a, t, n);
	for (int i = 0; t && i < n; i++)
		vtable_free(&t[i]);
	free(t);
	globfree(&g);
	return rc;
}
