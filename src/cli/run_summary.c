/* run_summary.c (cli): the summary `karat run` ends with (run_summary.h). */
#include "cli/run_summary.h"

#include <math.h>
#include <string.h>

#include "zoo/design.h"

/* The entry of (focus, baseline, model), made when new; NULL when full. */
static struct run_sum_entry *entry(struct run_summary *s, const char *focus, const char *base,
				   const char *model)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->e[i].focus, focus) && !strcmp(s->e[i].base, base) &&
		    !strcmp(s->e[i].model, model))
			return &s->e[i];
	if (s->n == RUN_SUMMARY_MAX)
		return NULL;
	struct run_sum_entry *e = &s->e[s->n++];
	memset(e, 0, sizeof *e);
	snprintf(e->focus, sizeof e->focus, "%s", focus);
	snprintf(e->base, sizeof e->base, "%s", base);
	snprintf(e->model, sizeof e->model, "%s", model);
	return e;
}

static void widen(double *lo, double *hi, int *have, double q)
{
	if (!isfinite(q))
		return;
	*lo = *have && *lo < q ? *lo : q;
	*hi = *have && *hi > q ? *hi : q;
	*have = 1;
}

/* Adds word w to the comma-separated list l (once). */
static void add_word(char *l, size_t n, const char *w)
{
	if (!w[0])
		return;
	size_t wl = strlen(w);
	for (const char *p = l; (p = strstr(p, w)) != NULL; p += wl)
		if ((p == l || p[-1] == ' ') && (p[wl] == ',' || p[wl] == '\0'))
			return;
	size_t u = strlen(l);
	snprintf(l + u, n - u, "%s%s", u ? ", " : "", w);
}

void run_summary_add(struct run_summary *s, const struct study_def *sd,
		     const struct study_grid *g, const struct result *res,
		     const char (*bound)[POOL_BOUND_LEN], const struct study_row *rows, int nrows)
{
	if (sd->nsteps || sd->algos.n > 1)
		return; /* per step or per algorithm: the study's own lines say it */
	const char *focus = sd->systems.v[sd->systems.n - 1];
	int axes = sd->slos.n || sd->gpu_types.n, ns = g->nsystem;
	for (int i = 0; i < nrows; i++) {
		const struct study_row *r = &rows[i];
		if (!r->focus || r->v != STUDY_BEST)
			continue;
		struct run_sum_entry *e = entry(s, focus, sd->baseline, sd->models.v[r->p->model]);
		if (!e)
			return;
		if (sd->paper_hi > 0)
			e->paper_lo = sd->paper_lo, e->paper_hi = sd->paper_hi;
		if (axes) {
			if (r->x && r->b)
				widen(&e->alo, &e->ahi, &e->ahave,
				      study_metric(r->x, sd->power) / study_metric(r->b, sd->power));
			size_t u = 0;
			if (sd->slos.n)
				u += (size_t)snprintf(e->axes, sizeof e->axes, "SLO %d-%d ms",
						      sd->slos.v[0], sd->slos.v[sd->slos.n - 1]);
			for (int k = 0; k < sd->gpu_types.n && u < sizeof e->axes; k++)
				u += (size_t)snprintf(e->axes + u, sizeof e->axes - u, "%s%s",
						      k ? ", " : u ? "; on " : "on ",
						      sd->gpu_types.v[k]);
			continue;
		}
		/* each side at its best in each accounting, in this group */
		long at = r->p - g->pt; /* the row's point, in the grid */
		int gi;
		for (gi = 0; gi < g->ngroup; gi++)
			if (g->start[gi * ns] <= at && at < g->start[gi * ns + ns])
				break;
		if (gi == g->ngroup)
			continue;
		int kb = gi * ns + g->baseline, kx = gi * ns + ns - 1;
		for (int m = 0; m < SM_N; m++) {
			int b = study_best_of(res, g->start[kb], g->start[kb + 1], m);
			int x = study_best_of(res, g->start[kx], g->start[kx + 1], m);
			if (b >= 0 && x >= 0)
				widen(&e->lo[m], &e->hi[m], &e->have[m],
				      study_metric(&res[x], m) / study_metric(&res[b], m));
		}
		if (r->x && r->x >= res && r->x < res + g->n)
			add_word(e->bx, sizeof e->bx, bound[r->x - res]);
		if (r->b && r->b >= res && r->b < res + g->n)
			add_word(e->bb, sizeof e->bb, bound[r->b - res]);
	}
}

static void range(FILE *fp, const char *what, int have, double lo, double hi)
{
	char a[32], b[32];
	snprintf(a, sizeof a, "%.2f", lo), snprintf(b, sizeof b, "%.2f", hi);
	if (!have)
		fprintf(fp, "%s -", what);
	else if (!strcmp(a, b))
		fprintf(fp, "%s %sx", what, a);
	else
		fprintf(fp, "%s %s-%sx", what, a, b);
}

void run_summary_print(const struct run_summary *s, FILE *fp)
{
	int any = 0;
	for (int i = 0; i < s->n; i++)
		any |= s->e[i].have[SM_TDP];
	if (!any)
		return;
	fprintf(fp, "summary: each system against its baseline, both at their best "
		"configuration (best against best), over the studies' workloads\n");
	for (int i = 0; i < s->n; i++) {
		const struct run_sum_entry *e = &s->e[i];
		if (!e->have[SM_TDP])
			continue;
		fprintf(fp, "  %s, %s over %s: ", e->model, e->focus, e->base);
		range(fp, "throughput per TDP", 1, e->lo[SM_TDP], e->hi[SM_TDP]);
		if (e->paper_hi > 0)
			fprintf(fp, " (the paper: %.2f-%.2fx)", e->paper_lo, e->paper_hi);
		fprintf(fp, "\n    per drawn watt");
		range(fp, "", e->have[SM_ACTIVITY], e->lo[SM_ACTIVITY], e->hi[SM_ACTIVITY]);
		fprintf(fp, ", per watt counted whole");
		range(fp, "", e->have[SM_NODE], e->lo[SM_NODE], e->hi[SM_NODE]);
		fprintf(fp, ", per USD");
		range(fp, "", e->have[SM_COST], e->lo[SM_COST], e->hi[SM_COST]);
		fprintf(fp, "\n");
		if (e->ahave) {
			fprintf(fp, "    along the axes (%s)", e->axes);
			range(fp, "", 1, e->alo, e->ahi);
			fprintf(fp, "\n");
		}
		fprintf(fp, "    bound by: %s %s; %s %s\n", e->focus, e->bx[0] ? e->bx : "-",
			e->base, e->bb[0] ? e->bb : "-");
	}
}

/* The focus system's ratio over the baseline in view v, in the study's
 * metric, over the rows of one step, SLO and GPU: its range into lo, hi
 * (lo > hi: none). */
static void axis_range(const struct study_def *sd, const struct study_row *rows, int nrows,
		       int step, int slo, int gpu, enum study_view v, double *lo, double *hi)
{
	*lo = INFINITY, *hi = -INFINITY;
	for (int i = 0; i < nrows; i++) {
		const struct study_row *r = &rows[i];
		if (!r->focus || !r->x || !r->b || r->v != v || r->p->step != step ||
		    r->p->slo != slo || r->p->gpu != gpu)
			continue;
		double q = study_metric(r->x, sd->power) / study_metric(r->b, sd->power);
		*lo = fmin(*lo, q), *hi = fmax(*hi, q);
	}
}

static size_t put_range(char *buf, size_t n, size_t used, const char *what, double lo, double hi)
{
	if (used >= n)
		return used;
	used += (size_t)snprintf(buf + used, n - used, what[0] ? "  %s " : " ", what);
	if (used >= n)
		return used;
	if (lo > hi)
		return used + (size_t)snprintf(buf + used, n - used, "-");
	if (hi - lo < 0.005)
		return used + (size_t)snprintf(buf + used, n - used, "%.2fx", lo);
	return used + (size_t)snprintf(buf + used, n - used, "%.2f-%.2fx", lo, hi);
}

/* Along the study's axes (steps, slos_ms, gpu_types): the focus system
 * over the baseline, best against best (with steps, at the same GPUs
 * too), per step, SLO and GPU, in the study's metric. */
void run_axes(const struct study_def *sd, const struct study_row *rows, int nrows, char *buf,
		 size_t n)
{
	int nslo = sd->slos.n, ngpu = sd->gpu_types.n, nstep = sd->nsteps;
	if (!nslo && !ngpu && !nstep)
		return;
	size_t used = strlen(buf);
	used += (size_t)snprintf(buf + used, n > used ? n - used : 0, "\n%s over %s, %s:",
				 sd->systems.v[sd->systems.n - 1], sd->baseline,
				 nstep ? "step by step, each switch added to those before it"
				       : "best against best, along the axes");
	for (int k = 0; k < (nstep ? nstep : 1); k++)
		for (int a = 0; a < (nslo ? nslo : 1); a++)
			for (int b = 0; b < (ngpu ? ngpu : 1) && used < n; b++) {
				char where[160] = "";
				size_t w = 0;
				if (nstep)
					w += (size_t)snprintf(where + w, sizeof where - w, "%s ",
							      sd->step_name[k]);
				if (nslo || ngpu)
					w += (size_t)snprintf(where + w, sizeof where - w, "%d ms ",
							      nslo ? sd->slos.v[a] : DESIGN_DEFAULT_SLO_MS);
				if (ngpu)
					snprintf(where + w, sizeof where - w, "on %s",
						 sd->gpu_types.v[b]);
				used += (size_t)snprintf(buf + used, n - used, "\n  %-*s",
							 nstep ? 18 : 16, where);
				double lo, hi;
				axis_range(sd, rows, nrows, k, a, b, STUDY_BEST, &lo, &hi);
				used = put_range(buf, n, used, nstep ? "best" : "", lo, hi);
				if (nstep) {
					axis_range(sd, rows, nrows, k, a, b, STUDY_SAME, &lo, &hi);
					used = put_range(buf, n, used, "same-gpus", lo, hi);
				}
			}
}
