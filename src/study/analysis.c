/* analysis.c: a study's grid of points, each system's best configuration,
 * and its comparison with the baseline in three views (study/study.h). */
#include "study/study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zoo/zoo.h"

const char *const study_view_names[STUDY_NVIEW] = {"best", "same-gpus", "iso-tdp"};

static int add(struct study_grid *g, struct study_point p)
{
	if (g->n == g->cap) {
		int cap = g->cap ? 2 * g->cap : 256;
		struct study_point *x = realloc(g->pt, sizeof *x * (size_t)cap);
		if (!x)
			return -1;
		g->pt = x, g->cap = cap;
	}
	g->pt[g->n++] = p;
	return 0;
}

/* Memory devices per GPU in a system's file (0: none; a host may serve
 * several GPUs) and its GPUs per node; -1 when it does not load. */
static double system_ratio(const char *system, double *per_node, struct kerr *err)
{
	struct ksystem s;
	if (zoo_load_system(system, &s, NULL, err) != 0)
		return -1;
	*per_node = s.gpus_per_node;
	return system_has_memdev(&s) ? s.memdevs / s.gpus : 0;
}

/* A list's counts, then its top doubled while within top (0: none):
 * into out (STUDY_MAX_LIST x 2); returns how many. */
static int counts(const struct int_list *l, int top, int *out)
{
	int n = 0;
	for (int k = 0; k < l->n; k++)
		out[n++] = l->v[k];
	for (int c = 2 * out[n - 1]; top > 0 && c <= top && n < 2 * STUDY_MAX_LIST; c *= 2)
		out[n++] = c;
	return n;
}

/* Whether attention at tp GPUs per unit runs for the point's model on its
 * system at its GPU count (cost/tp.h; 1 always): a GQA model whose KV
 * heads tp divides, and a unit inside a node. */
static int tp_runs(const struct study_grid *g, const struct study_point *p, int tp)
{
	double kv = g->kv_heads[p->model], gpn = g->per_node_of[p->system];
	double node = p->gpus < gpn ? p->gpus : gpn;
	return tp == 1 || (kv > 0 && fmod(kv, tp) == 0 && fmod(node, tp) == 0);
}

/* One system's points for one group: each GPU count, and with memory
 * devices each count per GPU (or its file's ratio r, when fixed), without
 * them each tensor-parallel degree that runs, the lists grown as gr says
 * at index `at` (the group's system). */
static int add_system(const struct study_def *sd, const struct study_grow *gr, int at,
		      struct study_grid *g, struct study_point p, double r, int fixed, int wide)
{
	int narrow = r > 0 && !wide; /* memdev_gpus, not the baseline's gpus */
	int G[2 * STUDY_MAX_LIST], P[2 * STUDY_MAX_LIST];
	int grown = gr && gr->gpus && at < gr->n; /* this group's system's growth */
	int nG = counts(narrow ? &sd->mgpus : &sd->gpus, grown ? gr->gpus[at] : 0, G);
	int nd = r > 0 && !fixed ? counts(&sd->per_gpu, grown ? gr->per_gpu[at] : 0, P) : 1;
	int nt = r > 0 || !sd->tp.n ? 1 : sd->tp.n;
	for (int k = 0; k < nG; k++) {
		p.gpus = G[k];
		for (int d = 0; d < nd; d++) {
			p.memdevs = r <= 0 ? 0 : fixed ? (int)fmax(1, p.gpus * r + 0.5) : p.gpus * P[d];
			for (int t = 0; t < nt; t++) {
				p.tp = r > 0 || !sd->tp.n ? 1 : sd->tp.v[t];
				if (tp_runs(g, &p, p.tp) && add(g, p) != 0)
					return -1;
			}
		}
	}
	return 0;
}

int study_grid(const struct study_def *sd, struct study_grid *g, struct kerr *err)
{
	return study_grid_grown(sd, NULL, g, err);
}

int study_grid_grown(const struct study_def *sd, const struct study_grow *gr,
		     struct study_grid *g, struct kerr *err)
{
	int ns = sd->systems.n;
	memset(g, 0, sizeof *g);
	g->nsystem = ns;
	while (g->baseline < ns && strcmp(sd->systems.v[g->baseline], sd->baseline))
		g->baseline++;
	if (g->baseline == ns)
		return kerr_set(err, 0, 0, "study %s: the baseline %s is not one of its systems",
				sd->name, sd->baseline);
	for (int s = 0; s < ns; s++) { /* each system file loaded once */
		if ((g->ratio[s] = system_ratio(sd->systems.v[s], &g->per_node_of[s], err)) < 0)
			return -1;
		if (s == g->baseline)
			g->per_node = g->per_node_of[s];
	}
	for (int k = 0; sd->tp.n && k < sd->models.n; k++) { /* who can split attention */
		struct kmodel m;
		if (zoo_load_model(sd->models.v[k], &m, NULL, err) != 0)
			return -1;
		g->kv_heads[k] = m.attn == ATTN_GQA ? m.kv_heads : 0;
	}
	int nslo = sd->slos.n ? sd->slos.n : 1, ngpu = sd->gpu_types.n ? sd->gpu_types.n : 1;
	int nstep = study_nstep(sd);
	g->ngroup = sd->models.n * sd->algos.n * sd->workloads.n * nstep * nslo * ngpu;
	g->start = malloc(sizeof(int) * (size_t)(g->ngroup * ns + 1));
	if (!g->start)
		return kerr_set(err, 0, 0, "out of memory");
	for (int gi = 0; gi < g->ngroup; gi++) {
		int inner = gi / (nstep * nslo * ngpu); /* model, algorithm, workload */
		struct study_point p = {.model = inner / (sd->algos.n * sd->workloads.n),
					.algo = inner / sd->workloads.n % sd->algos.n,
					.workload = inner % sd->workloads.n,
					.step = gi / (nslo * ngpu) % nstep,
					.slo = gi / ngpu % nslo, .gpu = gi % ngpu};
		for (int s = 0; s < ns; s++) {
			g->start[gi * ns + s] = g->n;
			p.system = s;
			if (add_system(sd, gr, gi * ns + s, g, p, g->ratio[s],
				       study_fixed(sd, sd->systems.v[s]),
				       study_wide(sd, sd->systems.v[s])) != 0) {
				study_grid_free(g);
				return kerr_set(err, 0, 0, "out of memory");
			}
		}
	}
	g->start[g->ngroup * ns] = g->n;
	return 0;
}

void study_grid_free(struct study_grid *g)
{
	free(g->pt), free(g->start);
	g->pt = NULL, g->start = NULL;
	g->n = g->cap = 0;
}

double study_metric(const struct result *r, enum study_metric m)
{
	switch (m) {
	case SM_TDP:
		return r->tok_per_w;
	case SM_ACTIVITY:
		return r->tok_per_w_act;
	case SM_NODE:
		return r->tok_per_w_node;
	default:
		return 1e6 / r->usd_per_mtok; /* tokens per USD */
	}
}

double study_request_j(const struct result *r)
{
	return r->j_per_tok_act + (r->prefill_on ? 0 : r->prefill_j_tok);
}

int study_best_of(const struct result *res, int lo, int hi, enum study_metric m)
{
	int b = -1;
	for (int i = lo; i < hi; i++)
		if (res[i].feasible && isfinite(study_metric(&res[i], m)) &&
		    (b < 0 || study_metric(&res[i], m) > study_metric(&res[b], m)))
			b = i;
	return b;
}

int study_iso_gpus(double tdp_x, double tdp_gpu, double per_node)
{
	int G = (int)ceil(tdp_x / tdp_gpu - 1e-9);
	if (G < 1)
		G = 1;
	if (G > per_node)
		G = (int)(ceil(G / per_node) * per_node);
	return G;
}

/* Whether extra point e is the baseline of group point q at G GPUs. */
static int extra_of(const struct study_point *e, const struct study_point *q, int G)
{
	return e->gpus == G && e->model == q->model && e->algo == q->algo &&
	       e->workload == q->workload && e->slo == q->slo && e->gpu == q->gpu &&
	       e->step == q->step;
}

/* The baseline's points at G GPUs for group gi, in the grid or among the
 * extra points (one per tensor-parallel degree it tries): calls f (unless
 * NULL) on each (in_extra 0 or 1, its index); returns how many. */
static int baseline_at(const struct study_grid *g, const struct study_grid *extra, int gi,
		       int G, void (*f)(void *, int, int), void *ctx)
{
	int k = gi * g->nsystem + g->baseline, n = 0;
	for (int i = g->start[k]; i < g->start[k + 1]; i++)
		if (g->pt[i].gpus == G) {
			n++;
			if (f)
				f(ctx, 0, i);
		}
	if (n)
		return n;
	const struct study_point *q = &g->pt[g->start[k]];
	for (int i = 0; extra && i < extra->n; i++)
		if (extra_of(&extra->pt[i], q, G)) {
			n++;
			if (f)
				f(ctx, 1, i);
		}
	return n;
}

int study_pick(const struct study_grid *g, const struct result *res, enum study_metric m,
	       struct study_pick *pk, struct study_grid *extra)
{
	int ns = g->nsystem, n = g->ngroup * ns, bs = g->baseline;
	pk->best = malloc(sizeof(int) * (size_t)(n ? n : 1));
	pk->iso = malloc(sizeof(int) * (size_t)(n ? n : 1));
	if (!pk->best || !pk->iso)
		return study_pick_free(pk), -1;
	for (int gi = 0; gi < g->ngroup; gi++) {
		int b0 = g->start[gi * ns + bs];
		double tdp_gpu = res[b0].tdp / g->pt[b0].gpus;
		for (int s = 0; s < ns; s++) {
			int k = gi * ns + s;
			pk->best[k] = study_best_of(res, g->start[k], g->start[k + 1], m);
			pk->iso[k] = 0;
			if (pk->best[k] < 0 || s == bs)
				continue;
			pk->iso[k] = study_iso_gpus(res[pk->best[k]].tdp, tdp_gpu, g->per_node);
			if (baseline_at(g, extra, gi, pk->iso[k], NULL, NULL) > 0)
				continue;
			/* the baseline there at each degree it tries at its first count */
			for (int i = b0; i < g->start[gi * ns + bs + 1] && g->pt[i].gpus == g->pt[b0].gpus;
			     i++) {
				struct study_point q = g->pt[i];
				q.gpus = pk->iso[k];
				if (tp_runs(g, &q, q.tp) && add(extra, q) != 0)
					return study_pick_free(pk), -1;
			}
		}
	}
	return 0;
}

void study_pick_free(struct study_pick *pk)
{
	free(pk->best), free(pk->iso);
	pk->best = pk->iso = NULL;
}

int study_nrows(const struct study_grid *g)
{
	return g->ngroup * (1 + STUDY_NVIEW * (g->nsystem - 1));
}

/* The best feasible of the baseline's results at G GPUs in metric m. */
struct best_of {
	const struct study_grid *g, *extra;
	const struct result *res, *res2, *best;
	enum study_metric m;
	int tp; /* the best's tensor-parallel degree */
};

static void keep_best(void *ctx, int in_extra, int i)
{
	struct best_of *b = ctx;
	const struct result *r = in_extra ? (b->res2 ? &b->res2[i] : NULL) : &b->res[i];
	if (r && r->feasible && isfinite(study_metric(r, b->m)) &&
	    (!b->best || study_metric(r, b->m) > study_metric(b->best, b->m)))
		b->best = r, b->tp = (in_extra ? b->extra : b->g)->pt[i].tp;
}

/* The baseline's best feasible result at G GPUs for group gi (over the
 * tensor-parallel degrees it tries there), or NULL. */
static const struct result *baseline_result(const struct study_grid *g, const struct result *res,
					    const struct study_grid *extra,
					    const struct result *res2, int gi, int G,
					    enum study_metric m, int *tp)
{
	struct best_of b = {g, extra, res, res2, NULL, m, 0};
	baseline_at(g, extra, gi, G, keep_best, &b);
	*tp = b.tp;
	return b.best;
}

void study_widen(double *lo, double *hi, int *have, double q)
{
	if (!isfinite(q))
		return;
	*lo = *have && *lo < q ? *lo : q;
	*hi = *have && *hi > q ? *hi : q;
	*have = 1;
}

static void add_range(struct study_range *rng, const struct study_row *r, enum study_metric m)
{
	if (r->focus && r->x && r->b)
		study_widen(&rng->lo[r->v], &rng->hi[r->v], &rng->have[r->v],
		      study_metric(r->x, m) / study_metric(r->b, m));
}

int study_best_pair(const struct study_grid *g, const struct result *res, int gi,
		    enum study_metric m, int *x, int *b)
{
	int ns = g->nsystem, kb = gi * ns + g->baseline, kx = gi * ns + ns - 1;
	*b = study_best_of(res, g->start[kb], g->start[kb + 1], m);
	*x = study_best_of(res, g->start[kx], g->start[kx + 1], m);
	return *b >= 0 && *x >= 0 && kx != kb;
}

/* The focus system's best over the baseline's best, group by group, with
 * both picked in metric m. */
static void add_metric(const struct study_grid *g, const struct result *res, int gi,
		       enum study_metric m, struct study_range *rng)
{
	int x, b;
	if (study_best_pair(g, res, gi, m, &x, &b))
		study_widen(&rng->mlo[m], &rng->mhi[m], &rng->mhave[m],
			    study_metric(&res[x], m) / study_metric(&res[b], m));
}

void study_rows(const struct study_grid *g, const struct result *res,
		const struct study_grid *extra, const struct result *res2,
		const struct study_pick *pk, enum study_metric m, struct study_row *rows,
		struct study_range *rng)
{
	int ns = g->nsystem, bs = g->baseline, n = 0;
	memset(rng, 0, sizeof *rng);
	for (int gi = 0; gi < g->ngroup; gi++) {
		int kb = gi * ns + bs, b = pk->best[kb];
		const struct result *rb = b >= 0 ? &res[b] : NULL;
		const struct study_point *pb = &g->pt[b >= 0 ? b : g->start[kb]];
		int bg = rb ? pb->gpus : 0;
		for (int k = 0; k < SM_N; k++)
			add_metric(g, res, gi, (enum study_metric)k, rng);
		rows[n++] = (struct study_row){pb, rb, rb, bg, STUDY_BEST, 0, rb ? pb->tp : 0};
		for (int s = 0; s < ns; s++) {
			int k = gi * ns + s;
			if (s == bs)
				continue;
			const struct study_point *px = &g->pt[pk->best[k] >= 0 ? pk->best[k] : g->start[k]];
			const struct result *rx = pk->best[k] >= 0 ? &res[pk->best[k]] : NULL;
			int focus = s == ns - 1;
			int tsame = 0, tiso = 0;
			const struct result *same =
				rx ? baseline_result(g, res, extra, res2, gi, px->gpus, m, &tsame) : NULL;
			const struct result *iso =
				rx ? baseline_result(g, res, extra, res2, gi, pk->iso[k], m, &tiso) : NULL;
			struct study_row r[STUDY_NVIEW] = {
				{px, rx, rb, bg, STUDY_BEST, focus, rb ? pb->tp : 0},
				{px, rx, same, px->gpus, STUDY_SAME, focus, same ? tsame : 0},
				{px, rx, iso, pk->iso[k], STUDY_ISO, focus, iso ? tiso : 0}};
			for (int v = 0; v < STUDY_NVIEW; v++) {
				add_range(rng, &r[v], m);
				rows[n++] = r[v];
			}
		}
	}
}
