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
		     const char (*bound)[POOL_BOUND_LEN])
{
	if (sd->nsteps || sd->draws > 0 || sd->algos.n > 1)
		return; /* per step or per algorithm: the study's own lines say it */
	const char *focus = sd->systems.v[sd->systems.n - 1];
	int axes = sd->slos.n || sd->gpu_types.n, x, b;
	for (int gi = 0; gi < g->ngroup; gi++) {
		const struct study_point *p = &g->pt[g->start[gi * g->nsystem]];
		struct run_sum_entry *e = entry(s, focus, sd->baseline, sd->models.v[p->model]);
		if (!e)
			return;
		if (sd->paper_hi > 0)
			e->paper_lo = sd->paper_lo, e->paper_hi = sd->paper_hi;
		if (axes) { /* the best view, in the study's power, along the axes */
			if (study_best_pair(g, res, gi, sd->power, &x, &b))
				study_widen(&e->alo, &e->ahi, &e->ahave,
					    study_metric(&res[x], sd->power) /
						    study_metric(&res[b], sd->power));
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
		/* each side at its best in each accounting */
		for (int m = 0; m < SM_N; m++)
			if (study_best_pair(g, res, gi, m, &x, &b))
				study_widen(&e->lo[m], &e->hi[m], &e->have[m],
					    study_metric(&res[x], m) / study_metric(&res[b], m));
		/* per drawn watt, each request's prefill counted: the activity
		 * view's picks (the prefill per token barely moves with the
		 * configuration), each side's joules per token with it */
		if (study_best_pair(g, res, gi, SM_ACTIVITY, &x, &b))
			study_widen(&e->plo, &e->phi, &e->phave,
				    study_request_j(&res[b]) / study_request_j(&res[x]));
		if (study_best_pair(g, res, gi, sd->power, &x, &b)) {
			add_word(e->bx, sizeof e->bx, bound[x]);
			add_word(e->bb, sizeof e->bb, bound[b]);
		}
	}
}

/* "LO-HIx", "Vx" when both print alike, or "-" without a range. */
static void fmt_range(char *buf, size_t n, int have, double lo, double hi)
{
	char a[32], b[32];
	snprintf(a, sizeof a, "%.2f", lo), snprintf(b, sizeof b, "%.2f", hi);
	if (!have)
		snprintf(buf, n, "-");
	else if (!strcmp(a, b))
		snprintf(buf, n, "%sx", a);
	else
		snprintf(buf, n, "%s-%sx", a, b);
}

static void range(FILE *fp, const char *what, int have, double lo, double hi)
{
	char r[80];
	fmt_range(r, sizeof r, have, lo, hi);
	fprintf(fp, "%s %s", what, r);
}

void run_summary_print(const struct run_summary *s, FILE *fp)
{
	int any = 0;
	for (int i = 0; i < s->n; i++)
		any |= s->e[i].have[SM_TDP] || s->e[i].uhave;
	if (!any)
		return;
	fprintf(fp, "summary: each system against its baseline, both at their best "
		"configuration (best against best), over the studies' workloads\n");
	for (int i = 0; i < s->n; i++) {
		const struct run_sum_entry *e = &s->e[i];
		if (!e->have[SM_TDP] && !e->uhave)
			continue;
		fprintf(fp, "  %s, %s over %s:", e->model, e->focus, e->base);
		if (e->have[SM_TDP]) {
			range(fp, " throughput per TDP", 1, e->lo[SM_TDP], e->hi[SM_TDP]);
			if (e->paper_hi > 0)
				fprintf(fp, " (the paper: %.2f-%.2fx)", e->paper_lo, e->paper_hi);
			fprintf(fp, "\n    per drawn watt");
			range(fp, "", e->have[SM_ACTIVITY], e->lo[SM_ACTIVITY], e->hi[SM_ACTIVITY]);
			fprintf(fp, ", per watt counted whole");
			range(fp, "", e->have[SM_NODE], e->lo[SM_NODE], e->hi[SM_NODE]);
			fprintf(fp, ", per USD");
			range(fp, "", e->have[SM_COST], e->lo[SM_COST], e->hi[SM_COST]);
			fprintf(fp, "\n    per drawn watt with each request's prefill");
			range(fp, "", e->phave, e->plo, e->phi);
		}
		fprintf(fp, "\n");
		if (e->ahave) {
			fprintf(fp, "    along the axes (%s)", e->axes);
			range(fp, "", 1, e->alo, e->ahi);
			fprintf(fp, "\n");
		}
		if (e->have[SM_TDP])
			fprintf(fp, "    bound by: %s %s; %s %s\n", e->focus, e->bx[0] ? e->bx : "-",
				e->base, e->bb[0] ? e->bb : "-");
		if (e->uhave)
			fprintf(fp, "    over %d draws of the assumed figures: P10 %.2fx, P50 %.2fx, "
				"P90 %.2fx; driven most by %s\n", e->udraws, e->up10, e->up50, e->up90,
				e->udrive[0] ? e->udrive : "-");
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
	char r[80];
	fmt_range(r, sizeof r, lo <= hi, lo, hi);
	if (used < n)
		used += (size_t)snprintf(buf + used, n - used, "%s%s %s", what[0] ? "  " : "", what,
					 r);
	return used;
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

void run_summary_unc(struct run_summary *s, const struct study_def *sd,
		     const struct study_unc *u, const struct study_unc_row *rows, int nrows)
{
	for (int i = 0; i < nrows; i++) {
		const struct study_unc_row *r = &rows[i];
		if (r->system != sd->systems.n - 1 || r->n == 0)
			continue; /* the focus system's, where it served */
		struct run_sum_entry *e = entry(s, sd->systems.v[r->system], sd->baseline,
						sd->models.v[r->model]);
		if (!e)
			return;
		if (e->uhave && r->p90 - r->p10 <= e->up90 - e->up10)
			continue; /* keep the widest workload's */
		e->uhave = 1, e->udraws = u->ndraw;
		e->up10 = r->p10, e->up50 = r->p50, e->up90 = r->p90;
		e->udrive[0] = 0;
		for (int k = 0; k < 2 && k < u->nfig && isfinite(r->rho[r->order[k]]); k++) {
			const struct study_fig *f = &u->fig[r->order[k]];
			size_t n = strlen(e->udrive);
			snprintf(e->udrive + n, sizeof e->udrive - n, "%s%s %s (rank correlation %+.2f)",
				 k ? ", " : "", f->file, f->key, r->rho[r->order[k]]);
		}
	}
}
