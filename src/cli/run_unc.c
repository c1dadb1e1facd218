/* run_unc.c (cli): printing and writing an uncertainty study (a study with
 * draws; study/uncert.c computes it): the table of each system's ratio
 * over the baseline at the nominal figures and its P10, P50 and P90 over
 * the draws, DIR/STUDY.csv (that table), DIR/STUDY-drivers.csv (every
 * figure's range and rank correlation with the ratio), DIR/STUDY.md and
 * DIR/STUDY.png (plots/uncertainty.gp). */
#include "cli/run_unc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

#define UNC_DRIVERS 3 /* the figures named per row */

static const char *const unc_head[] = {
	"study", "model", "algo", "workload", "system", "baseline", "power", "draws", "draw_seed",
	"served_draws", "nominal", "p10", "p50", "p90", "min", "max", "driver_1", "rho_1",
	"driver_2", "rho_2", "driver_3", "rho_3", "rho_noise", "paper_lo", "paper_hi"};
enum { UNC_NCOL = sizeof unc_head / sizeof *unc_head };

static const char *const drv_head[] = {"study", "model", "algo", "workload", "system",
				       "figure", "file", "key", "roles", "low", "nominal",
				       "high", "rho", "rank", "above_noise", "why"};
enum { DRV_NCOL = sizeof drv_head / sizeof *drv_head };

static void num(char *c, double v, const char *fmt)
{
	if (isfinite(v))
		snprintf(c, OUT_CELL, fmt, v);
	else
		c[0] = 0;
}

/* The figure's name in tables: its file and key. */
static void fig_name(const struct study_fig *f, char *buf, size_t n)
{
	snprintf(buf, n, "%s %s", f->file, f->key);
}

static void add_rows(const struct study_def *sd, const struct study_unc *u,
		     const struct study_unc_row *r, struct table *csv, struct table *shown,
		     struct table *drv)
{
	char c[UNC_NCOL][OUT_CELL];
	const char *algo = sd->algos.v[r->algo];
	const char *txt[] = {sd->name, sd->models.v[r->model], algo, sd->workloads.v[r->workload],
			     sd->systems.v[r->system], sd->baseline,
			     study_metric_names[sd->power]};
	for (int k = 0; k < UNC_NCOL; k++)
		c[k][0] = 0;
	for (int k = 0; k < 7; k++)
		snprintf(c[k], OUT_CELL, "%s", txt[k]);
	snprintf(c[7], OUT_CELL, "%d", u->ndraw);
	snprintf(c[8], OUT_CELL, "%.0f", sd->draw_seed);
	snprintf(c[9], OUT_CELL, "%d", r->n);
	num(c[10], r->nominal, "%.4g");
	num(c[11], r->p10, "%.4g");
	num(c[12], r->p50, "%.4g");
	num(c[13], r->p90, "%.4g");
	num(c[14], r->lo, "%.4g");
	num(c[15], r->hi, "%.4g");
	char drive[UNC_DRIVERS][160];
	for (int k = 0; k < UNC_DRIVERS; k++) {
		drive[k][0] = 0;
		if (k >= u->nfig || !(fabs(r->rho[r->order[k]]) >= r->noise))
			continue; /* named only above chance */
		fig_name(&u->fig[r->order[k]], c[16 + 2 * k], OUT_CELL);
		num(c[17 + 2 * k], r->rho[r->order[k]], "%.3f");
		snprintf(drive[k], sizeof drive[k], "%s %+.2f", c[16 + 2 * k], r->rho[r->order[k]]);
	}
	num(c[22], r->noise, "%.3f");
	if (sd->paper_lo > 0) {
		num(c[23], sd->paper_lo, "%g");
		num(c[24], sd->paper_hi, "%g");
	}
	const char *cells[UNC_NCOL];
	for (int k = 0; k < UNC_NCOL; k++)
		cells[k] = c[k];
	table_add(csv, cells);
	char band[64] = "-";
	if (r->n > 0)
		snprintf(band, sizeof band, "%.2f-%.2fx", r->p10, r->p90);
	const char *sh[] = {c[1], c[3], c[4], c[10], band, c[12], c[9], drive[0], drive[1]};
	table_add(shown, sh);
	for (int k = 0; k < u->nfig; k++) { /* every figure, by |rho| */
		const struct study_fig *f = &u->fig[r->order[k]];
		char d[DRV_NCOL][OUT_CELL], roles[OUT_CELL] = "";
		for (int i = 0; i < f->nrole; i++)
			snprintf(roles + strlen(roles), sizeof roles - strlen(roles), "%s%s",
				 i ? " " : "", f->roles[i]);
		fig_name(f, d[5], OUT_CELL);
		unit_format(f->lo, f->unit, d[9], OUT_CELL);
		unit_format(f->nominal, f->unit, d[10], OUT_CELL);
		unit_format(f->hi, f->unit, d[11], OUT_CELL);
		num(d[12], r->rho[r->order[k]], "%.3f");
		snprintf(d[13], OUT_CELL, "%d", k + 1);
		snprintf(d[14], OUT_CELL, "%s",
			 !study_fig_counts(f, sd->power) ? "not in this power"
			 : fabs(r->rho[r->order[k]]) >= r->noise ? "yes" : "no");
		const char *dc[DRV_NCOL] = {c[0], c[1], c[2], c[3], c[4], d[5], f->file, f->key,
					    roles, d[9], d[10], d[11], d[12], d[13], d[14], f->why};
		table_add(drv, dc);
	}
}

static int write_md(const char *path, const struct study_def *sd, const struct study_unc *u,
		    const struct table *shown)
{
	char head[2048];
	snprintf(head, sizeof head, "## %s: %s\n\nEach system's ratio over %s, both at their best "
		 "configuration in throughput per %s watt, at the files' own figures (nominal) and "
		 "over %d Latin-hypercube draws of the %d figures with a stated range (seed %.0f; "
		 "`studies/%s.ini`; `karat run %s`).  The drivers are the figures whose draws rank "
		 "most closely with the ratio (Spearman), named only where that correlation is "
		 "above 2 / sqrt(draws - 1), about what chance gives one figure at 95%%; with many "
		 "figures a few pass it by chance, so more draws (the study's draws key) sharpen "
		 "them.\n\n", sd->name, sd->title, sd->baseline, study_metric_names[sd->power],
		 u->ndraw, u->nfig, sd->draw_seed, sd->name, sd->name);
	return write_md_table(path, head, shown, NULL);
}

int run_unc_report(const struct study_def *sd, const struct study_unc *u,
		   const struct study_grid *g, const struct result *res, const char *dir,
		   struct run_summary *sum)
{
	int nr = study_unc_nrows(g, sd);
	struct study_unc_row *rows = malloc(sizeof *rows * (size_t)(nr ? nr : 1));
	if (!rows || study_unc_rows(sd, u, g, res, sd->power, rows) != 0) {
		free(rows);
		return die_msg("out of memory"), 1;
	}
	static const char *const shead[] = {"model", "workload", "system", "nominal",
					    "p10-p90", "p50", "draws", "driver_1",
					    "driver_2"};
	static const int sright[] = {0, 0, 0, 1, 1, 1, 1, 0, 0};
	static int right[UNC_NCOL], dright[DRV_NCOL];
	for (int k = 7; k < 16; k++)
		right[k] = 1;
	right[17] = right[19] = right[21] = right[22] = right[23] = right[24] = 1;
	for (int k = 9; k < 14; k++)
		dright[k] = 1;
	struct table csv, shown, drv;
	table_init(&csv, UNC_NCOL, unc_head, right);
	table_init(&shown, 9, shead, sright);
	table_init(&drv, DRV_NCOL, drv_head, dright);
	for (int i = 0; i < nr; i++)
		add_rows(sd, u, &rows[i], &csv, &shown, &drv);
	printf("%s (%s): %s\n", sd->name, sd->path, sd->title);
	printf("each system over %s, both at their best in throughput per %s watt: at the "
	       "files' figures (nominal) and over %d Latin-hypercube draws of %d figures with "
	       "a stated range (seed %.0f); drivers: the figures whose rank correlation with the "
	       "ratio is above chance (2 / sqrt(draws - 1))%s\n\n",
	       sd->baseline, study_metric_names[sd->power], u->ndraw, u->nfig, sd->draw_seed,
	       sd->samples > 0 ? " (study.samples: fewer sampled batches than the run's)" : "");
	table_write(&shown, stdout, 0);
	printf("\n");
	run_summary_unc(sum, sd, u, rows, nr);
	char spath[1200], dpath[1200], mdpath[1200];
	snprintf(spath, sizeof spath, "%s/%s.csv", dir, sd->name);
	snprintf(dpath, sizeof dpath, "%s/%s-drivers.csv", dir, sd->name);
	snprintf(mdpath, sizeof mdpath, "%s/%s.md", dir, sd->name);
	int rc = write_atomic(spath, &csv, 1) != 0 || write_atomic(dpath, &drv, 1) != 0 ||
		 write_md(mdpath, sd, u, &shown) != 0;
	if (!rc) {
		printf("wrote %s, %s and %s\n", spath, dpath, mdpath);
		char png[1200];
		snprintf(png, sizeof png, "%s/%s.png", dir, sd->name);
		rc = gnuplot_figure("uncertainty.gp", spath, dpath, png);
	}
	table_free(&csv), table_free(&shown), table_free(&drv);
	free(rows);
	return rc;
}
