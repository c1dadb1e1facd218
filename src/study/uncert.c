/* uncert.c: the uncertainty study (study/study.h).  Every figure a device
 * or link file had to assume states a low and a high in its [range]
 * section; the study draws them all together in a Latin hypercube, solves
 * the grid once per draw, and reports the ratio's P10, P50 and P90 with
 * each figure's rank correlation to it. */
#include "study/study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "hw/link.h"
#include "io/range.h"
#include "zoo/zoo.h"

/* Adds file's figures in role (a device or a link file), or the role to
 * figures already there. */
static int add_file(struct study_unc *u, int sy, const char *role, const char *file, int link,
		    struct kerr *err)
{
	for (const char *c = file; *c; c++)
		if (!(('a' <= *c && *c <= 'z') || ('0' <= *c && *c <= '9') || *c == '-' ||
		      *c == '_'))
			return kerr_set(err, 0, 0, "%s '%s': the uncertainty study draws the figures "
					"of the zoo's files, named (hw/NAME.ini), not given by path", role,
					file);
	struct ini_doc *doc = NULL;
	struct kdevice d;
	struct klink l;
	int rc = link ? zoo_load_link(file, &l, &doc, err) : zoo_load_device(file, &d, &doc, err);
	struct frange r[RANGE_MAX];
	int n = rc == 0 ? range_read(doc, link ? &link_schema : &device_schema, r, RANGE_MAX, err)
			: -1;
	for (int i = 0; i < n && rc == 0; i++) {
		int k = 0;
		while (k < u->nfig && (u->fig[k].link != link || strcmp(u->fig[k].file, file) ||
				       strcmp(u->fig[k].key, r[i].key)))
			k++;
		struct study_fig *f = &u->fig[k];
		if (k == u->nfig) {
			if (u->nfig == STUDY_MAX_FIGS) {
				rc = kerr_set(err, doc->path, r[i].line, "the study's files give more "
					      "than %d figures a [range]", STUDY_MAX_FIGS);
				break;
			}
			memset(f, 0, sizeof *f);
			snprintf(f->file, sizeof f->file, "%s", file);
			snprintf(f->key, sizeof f->key, "%s", r[i].key);
			snprintf(f->why, sizeof f->why, "%s", r[i].why);
			f->link = link, f->lo = r[i].lo, f->hi = r[i].hi, f->nominal = r[i].nominal;
			f->unit = r[i].unit, f->line = r[i].line;
			u->nfig++;
		}
		int j = 0;
		while (j < f->nrole && strcmp(f->roles[j], role) != 0)
			j++;
		if (j == f->nrole) /* six roles: each role once */
			snprintf(f->roles[f->nrole++], sizeof f->roles[0], "%s", role);
		f->role_sys[j] |= 1u << sy;
	}
	if (n < 0)
		rc = -1;
	ini_doc_free(doc);
	return rc;
}

/* The devices and links of system name, each in its role. */
static int add_system(struct study_unc *u, int sy, const char *name, struct kerr *err)
{
	struct ksystem s;
	struct kdevice gpu;
	if (zoo_load_system(name, &s, NULL, err) != 0 ||
	    zoo_load_device(s.gpu, &gpu, NULL, err) != 0 || system_inherit(&s, &gpu, err) != 0)
		return -1;
	int mem = system_has_memdev(&s);
	const struct {
		const char *role, *file;
		int link, on;
	} part[] = {{"gpu", s.gpu, 0, 1},
		    {"memdev", s.memdev, 0, mem},
		    {"scaleup_link", s.scaleup_link, 1, 1},
		    {"scaleout_link", s.scaleout_link, 1, s.scaleout_link[0] != 0},
		    {"memdev_link", s.memdev_link, 1, mem && s.memdev_link[0]},
		    {"gpu_port", s.gpu_port, 1, system_has_port(&s)}};
	for (size_t i = 0; i < sizeof part / sizeof *part; i++)
		if (part[i].on &&
		    add_file(u, sy, part[i].role, part[i].file, part[i].link, err) != 0)
			return -1;
	return 0;
}

static void draw(struct study_unc *u, unsigned long seed)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	int *perm = malloc(sizeof *perm * (size_t)u->ndraw);
	if (!r || !perm) {
		gsl_rng_free(r), free(perm);
		free(u->x), u->x = NULL;
		return;
	}
	gsl_rng_set(r, seed);
	for (int k = 0; k < u->nfig; k++) {
		const struct study_fig *f = &u->fig[k];
		for (int d = 0; d < u->ndraw; d++)
			perm[d] = d;
		gsl_ran_shuffle(r, perm, (size_t)u->ndraw, sizeof *perm);
		for (int d = 0; d < u->ndraw; d++) {
			double q = (perm[d] + gsl_rng_uniform(r)) / u->ndraw;
			double v = f->lo * pow(f->hi / f->lo, q);
			if (f->unit == U_INT || f->unit == U_TOKENS) /* whole: nearest, inside */
				v = fmin(f->hi, fmax(f->lo, round(v)));
			u->x[(size_t)d * (size_t)u->nfig + (size_t)k] = v;
		}
	}
	free(perm);
	gsl_rng_free(r);
}

int study_unc_setup(const struct study_def *s, struct study_unc *u, struct kerr *err)
{
	memset(u, 0, sizeof *u);
	for (int i = 0; i < s->systems.n; i++)
		if (add_system(u, i, s->systems.v[i], err) != 0)
			return -1;
	if (u->nfig == 0)
		return kerr_set(err, s->path, 0, "study.draws: no device or link of its systems "
				"gives a figure a [range]");
	for (int i = 0; i < s->systems.n; i++) {
		for (int k = 0; k < u->nfig; k++)
			for (int j = 0; j < u->fig[k].nrole; j++)
				u->nset[i] += (u->fig[k].role_sys[j] >> i) & 1;
		/* the point's own three and run's two text slots stay free */
		if (u->nset[i] + 5 > ARGS_MAX_MANY)
			return kerr_set(err, s->path, 0, "study.draws: %s's ranges need %d overrides "
					"per point, more than the %d a point takes", s->systems.v[i],
					u->nset[i], ARGS_MAX_MANY - 5);
	}
	u->ndraw = (int)s->draws;
	u->x = malloc(sizeof *u->x * (size_t)u->ndraw * (size_t)u->nfig);
	if (u->x)
		draw(u, (unsigned long)s->draw_seed);
	if (!u->x)
		return kerr_set(err, 0, 0, "out of memory");
	return 0;
}

void study_unc_free(struct study_unc *u)
{
	free(u->x);
	u->x = NULL;
}

void study_unc_sets(const struct study_unc *u, int d, int sy, char *sets, size_t len)
{
	int j = 0;
	for (int k = 0; k < u->nfig; k++) {
		const struct study_fig *f = &u->fig[k];
		char v[64];
		unit_format_exact(u->x[(size_t)d * (size_t)u->nfig + (size_t)k], f->unit, v,
				  sizeof v);
		for (int i = 0; i < f->nrole; i++)
			if ((f->role_sys[i] >> sy) & 1)
				snprintf(sets + (size_t)j++ * len, len, "%s[%s].%s=%s", f->roles[i],
					 f->file, f->key, v);
	}
}

int study_unc_nrows(const struct study_grid *g, const struct study_def *s)
{
	return s->models.n * s->algos.n * s->workloads.n * (g->nsystem - 1);
}

int study_fig_counts(const struct study_fig *f, enum study_metric m)
{
	if (!strncmp(f->key, "energy.", 7) || !strcmp(f->key, "link.energy"))
		return m != SM_TDP;
	if (!strcmp(f->key, "node.share_power"))
		return m == SM_NODE || m == SM_COST;
	if (!strncmp(f->key, "node.", 5))
		return m == SM_COST;
	return 1;
}

/* The ratio of system sy over the baseline in group gi, each at its best
 * in m; NaN when either serves nothing. */
static double ratio(const struct study_grid *g, const struct result *res, int gi, int sy,
		    enum study_metric m)
{
	int ns = g->nsystem;
	int x = study_best_of(res, g->start[gi * ns + sy], g->start[gi * ns + sy + 1], m);
	int b = study_best_of(res, g->start[gi * ns + g->baseline],
			      g->start[gi * ns + g->baseline + 1], m);
	return x < 0 || b < 0 ? NAN : study_metric(&res[x], m) / study_metric(&res[b], m);
}

/* |rho|, with NaN last */
static double weight(double rho)
{
	return isfinite(rho) ? fabs(rho) : -1;
}

/* The row's quantiles and rank correlations from the draws' ratios q
 * (n finite of them, their draws' figures in fx, figure-major). */
static void summarise(struct study_unc_row *r, const struct study_unc *u, double *q, double *fx,
		      double *work, int n, enum study_metric m)
{
	r->n = n;
	r->p10 = r->p50 = r->p90 = r->lo = r->hi = r->noise = NAN;
	for (int k = 0; k < u->nfig; k++)
		r->rho[k] = NAN, r->order[k] = k;
	if (n == 0)
		return;
	if (n > 2)
		r->noise = 2 / sqrt(n - 1.0);
	for (int k = 0; k < u->nfig && n > 2; k++)
		if (study_fig_counts(&u->fig[k], m))
			r->rho[k] = gsl_stats_spearman(fx + (size_t)k * (size_t)n, 1, q, 1, (size_t)n, work);
	gsl_sort(q, 1, (size_t)n);
	r->p10 = gsl_stats_quantile_from_sorted_data(q, 1, (size_t)n, 0.1);
	r->p50 = gsl_stats_quantile_from_sorted_data(q, 1, (size_t)n, 0.5);
	r->p90 = gsl_stats_quantile_from_sorted_data(q, 1, (size_t)n, 0.9);
	r->lo = q[0], r->hi = q[n - 1];
	for (int i = 1; i < u->nfig; i++) /* by |rho|, stable: ties in file order */
		for (int j = i; j > 0 && weight(r->rho[r->order[j]]) > weight(r->rho[r->order[j - 1]]);
		     j--) {
			int t = r->order[j];
			r->order[j] = r->order[j - 1], r->order[j - 1] = t;
		}
}

int study_unc_rows(const struct study_def *s, const struct study_unc *u,
		   const struct study_grid *g, const struct result *res, enum study_metric m,
		   struct study_unc_row *rows)
{
	int D = u->ndraw, nstep = study_nstep(s), ninner = g->ngroup / nstep, nr = 0;
	double *q = malloc(sizeof *q * (size_t)D);
	double *fx = malloc(sizeof *fx * (size_t)D * (size_t)(u->nfig ? u->nfig : 1));
	double *work = malloc(sizeof *work * 2 * (size_t)D);
	if (!q || !fx || !work) {
		free(q), free(fx), free(work);
		return -1;
	}
	for (int in = 0; in < ninner; in++)
		for (int sy = 0; sy < g->nsystem; sy++) {
			if (sy == g->baseline)
				continue;
			struct study_unc_row *r = &rows[nr++];
			const struct study_point *p = &g->pt[g->start[in * nstep * g->nsystem]];
			r->model = p->model, r->algo = p->algo, r->workload = p->workload;
			r->system = sy;
			r->nominal = ratio(g, res, in * nstep, sy, m);
			int n = 0;
			for (int d = 0; d < D; d++) {
				double v = ratio(g, res, in * nstep + 1 + d, sy, m);
				if (!isfinite(v))
					continue;
				q[n] = v;
				for (int k = 0; k < u->nfig; k++)
					fx[(size_t)k * (size_t)D + (size_t)n] =
						u->x[(size_t)d * (size_t)u->nfig + (size_t)k];
				n++;
			}
			/* pack each figure's n values together */
			for (int k = 1; k < u->nfig && n < D; k++)
				memmove(fx + (size_t)k * (size_t)n, fx + (size_t)k * (size_t)D,
					sizeof *fx * (size_t)n);
			summarise(r, u, q, fx, work, n, m);
		}
	free(q), free(fx), free(work);
	return 0;
}
