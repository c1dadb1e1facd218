/* fast.c: the pipeline schedule with periodic fast-forward (pipe_fast):
 * the same orders as the reference (pipeline.c), but once the state at
 * the start of a layer repeats, the layers until the pattern ends are
 * skipped in one step.  An order stops once it cannot beat the best so
 * far, and the greedy orders share their common start: the three differ
 * only in how they break ties, and often pick alike for hundreds of
 * tasks or to the end. */
#include "sched/pipeline.h"
#include "sched/sim.h"

#include <math.h>
#include <string.h>

/* State at the start of one of micro-batch 0's layers, relative to t0. */
struct snap {
	double t0, busy[RES_N];
	long k0, ntask, dk[PIPE_MAX_MB];
	long g0;                    /* micro-batch 0's GPU runs done (the others'
				       follow from dk: runs are fixed by the
				       chain) */
	double dr[PIPE_MAX_MB], dF[RES_N];
	int rr;
};

#define NSNAP 8

static void take(const struct sim *s, double t0, struct snap *p)
{
	p->t0 = t0;
	p->k0 = s->k[0];
	p->ntask = s->ntask;
	p->rr = s->rr;
	memcpy(p->busy, s->busy, sizeof p->busy);
	p->g0 = s->g[0];
	for (int i = 0; i < s->in->m; i++)
		p->dk[i] = s->k[i] - s->k[0], p->dr[i] = s->r[i] - t0;
	/* A slot free before every pending task is ready is simply free: clamp,
	 * or an idle resource's stale time would hide the period. */
	double rmin = INFINITY;
	for (int i = 0; i < s->in->m; i++)
		if (s->k[i] != s->last && s->r[i] < rmin)
			rmin = s->r[i];
	for (int x = 0; x < RES_N; x++)
		p->dF[x] = (s->F[x] > rmin ? s->F[x] : rmin) - t0;
}

static int same(const struct snap *a, const struct snap *b, int m, double eps)
{
	if (a->rr != b->rr)
		return 0;
	for (int i = 0; i < m; i++)
		if (a->dk[i] != b->dk[i] || fabs(a->dr[i] - b->dr[i]) > eps)
			return 0;
	for (int x = 0; x < RES_N; x++)
		if (fabs(a->dF[x] - b->dF[x]) > eps)
			return 0;
	return 1;
}

/* No overlap is possible when every task runs on one execution resource
 * (that stream never idles: the next task of the micro-batch it serves is
 * ready when the previous one ends) or when there is one micro-batch (its
 * chain is sequential): the makespan is the sum of all work.  1 when it
 * applied. */
/* (n: the layers of each class) */
static int one_stream(const struct sim *s, const double *n, struct pipe_out *out)
{
	for (int t = 1; t < T_ALL && s->in->m > 1; t++)
		if (s->tres[t] != s->tres[0])
			return 0;
	memset(out, 0, sizeof *out);
	const struct pipe_in *in = s->in;
	for (int i = 0; i < in->m; i++)
		for (int t = 0; t < T_ALL; t++) {
			double d = sim_task_work(in, n, i, t);
			out->busy[s->trest[t]] += d;
			if (s->trest[t] != s->tres[t])
				out->busy[s->tres[t]] += d;
			out->makespan += d;
		}
	for (int x = 0; x < RES_N; x++)
		out->bubble[x] = out->makespan > 0 ? 1 - out->busy[x] / out->makespan : 0;
	return 1;
}

/* The end (a layer index) of the run over which the kinds of layer repeat
 * with period P, from layer x0 on: class(x) == class(x - P) for every x in
 * [x0 + P, end).  The whole model when every layer is alike. */
static long periodic_end(const struct pipe_in *in, long x0, long P)
{
	if (in->nclass <= 1)
		return in->layers;
	for (long x = (x0 > 0 ? x0 : 0) + P; x < in->layers; x++)
		if (in->layer_class[x] != in->layer_class[x - P])
			return x;
	return in->layers;
}

/* A lower bound on the makespan of the schedule under way (now: the
 * start of the task about to be committed; no later task starts before
 * it): each resource's remaining work after it frees (work: each
 * execution resource's total, from variant_work). */
static double bound_now(const struct sim *s, const double *work, double now)
{
	double lb = 0;
	for (int x = 0; x < RES_N; x++) {
		double b = (s->F[x] > now ? s->F[x] : now) + work[x] - s->busy[x];
		lb = b > lb ? b : lb;
	}
	return lb;
}

/* A run under way: all that run_fast keeps, so that another greedy order
 * can take it over where their picks part. */
struct run {
	struct sim s;
	struct snap ring[NSNAP];
	int nsnap, jumped;
};

/* *d = *r, but only the snapshots still compared. */
static void run_copy(struct run *d, const struct run *r)
{
	d->s = r->s, d->nsnap = r->nsnap, d->jumped = r->jumped;
	int live = r->jumped ? 0 : r->nsnap < NSNAP ? r->nsnap : NSNAP;
	memcpy(d->ring, r->ring, sizeof *r->ring * (size_t)live);
}

/* The greedy orders that break ties otherwise (prio) than the one run:
 * while each picks as it does, its run is this run, so each takes a copy
 * of the run (at[q]) where their picks first part (split[q]). */
#define MAX_PEERS 2 /* the greedy orders but one */
struct peers {
	int n, v[MAX_PEERS], split[MAX_PEERS];
	struct run at[MAX_PEERS];
};

/* work, cut: when work is not NULL, the variant stops as soon as it
 * cannot beat a makespan of cut (out->makespan is then infinite).  from:
 * NULL, or a peer's run to resume as variant v; pk: NULL, or the peers to
 * watch. */
static void run_fast(const struct pipe_in *in, int v, double tol, const double *ncls,
		     const double *work, double cut, struct pipe_out *out,
		     const struct run *from, struct peers *pk)
{
	struct run R;
	if (from) {
		run_copy(&R, from);
		R.s.prio = sim_variants[v].prio;
	} else {
		sim_init(&R.s, in, v, tol);
		if (one_stream(&R.s, ncls, out))
			return;
		R.nsnap = 0, R.jumped = 0;
	}
	struct sim *s = &R.s;
	long base = s->ntask;
	int left = pk ? pk->n : 0; /* peers still picking alike */
	double eps = s->tol;
	long L8 = (long)in->layers * T_LAYER;
	double start;
	int i;
	int alone;
	/* two calls, so that the one with NULL drops what alone needs */
	while ((i = left ? sim_pick(s, s->prio, &start, &alone)
			 : sim_pick(s, s->prio, &start, NULL)) >= 0) {
		for (int q = 0; left && !alone && q < pk->n; q++) {
			double st;
			if (!pk->split[q] && sim_pick(s, sim_variants[pk->v[q]].prio, &st, NULL) != i)
				pk->split[q] = 1, run_copy(&pk->at[q], &R), left--;
		}
		if (!R.jumped && i == 0 && s->k[0] % T_LAYER == 0 && s->k[0] > 0 && s->k[0] < L8) {
			struct snap *now = &R.ring[R.nsnap % NSNAP];
			int moved = 0;
			take(s, start, now);
			for (int p = 1; p <= NSNAP - 1 && p <= R.nsnap; p++) {
				const struct snap *then = &R.ring[(R.nsnap - p) % NSNAP];
				if (!same(now, then, in->m, eps))
					continue;
				long kmax = 0, kmin = then->k0;
				for (int j = 0; j < in->m; j++) {
					kmax = s->k[j] > kmax ? s->k[j] : kmax;
					kmin = then->k0 + then->dk[j] < kmin ? then->k0 + then->dk[j] : kmin;
				}
				long step = now->k0 - then->k0;
				/* the state repeats as long as the kinds of layer do */
				long end = periodic_end(in, kmin / T_LAYER, step / T_LAYER) * T_LAYER;
				long n = kmax <= end ? (end - kmax) / step : 0;
				if (n < 1 && (end == L8 || in->nclass <= 1)) {
					R.jumped = 1; /* too close to the end: no jump will come */
					break;
				}
				/* a run of kinds that stops short of the end is worth a
				 * jump only when long (a jump clears the snapshots, and a
				 * longer period that repeats to the end may follow) */
				if (n < 1 || (end < L8 && n < 4))
					continue;
				double dt = now->t0 - then->t0;
				for (int j = 0; j < in->m; j++) {
					s->k[j] += n * step, s->r[j] += n * dt;
					s->g[j] += n * (now->g0 - then->g0);
					sim_next_res(s, j);
				}
				for (int x = 0; x < RES_N; x++) {
					s->F[x] += n * dt;
					s->busy[x] += n * (now->busy[x] - then->busy[x]);
				}
				/* one jump over identical layers; over kinds of layer,
				 * one per run that repeats */
				R.jumped = in->nclass <= 1;
				moved = 1;
				break;
			}
			R.nsnap = moved ? 0 : R.nsnap + 1;
			/* after a jump no later task starts before a slot frees */
			if (work && bound_now(s, work, moved ? 0 : start) * (1 - 1e-9) >= cut) {
				sim_finish(s, out);
				out->makespan = INFINITY, out->tasks -= base;
				return;
			}
			if (moved)
				continue; /* pick again from the shifted state */
		}
		sim_commit(s, i, start, NULL);
	}
	sim_finish(s, out);
	out->tasks -= base;
}

/* Each execution resource's work under variant v (sum) and the largest:
 * a lower bound on its makespan (each resource runs one task at a time). */
static double variant_work(const struct pipe_in *in, int v, const double *n,
			   double sum[RES_N])
{
	double top = 0;
	memset(sum, 0, sizeof(double) * RES_N);
	for (int t = 0; t < T_ALL; t++) {
		int x = sim_natural_res(in, t);
		if (in->kind == SCHED_SERIAL ||
		    (sim_variants[v].comm_on_gpu && (x == RES_LINK || x == RES_NET || x == RES_BACK)))
			x = RES_GPU;
		for (int i = 0; i < in->m; i++)
			sum[x] += sim_task_work(in, n, i, t);
	}
	for (int x = 0; x < RES_N; x++)
		top = sum[x] > top ? sum[x] : top;
	return top;
}

/* Whether variants v and w differ only in how they break ties. */
static int peer(int v, int w)
{
	const struct sim_variant *a = &sim_variants[v], *b = &sim_variants[w];
	return !a->fixed && !b->fixed && a->comm_on_gpu == b->comm_on_gpu && a->shift == b->shift;
}

int pipe_fast(const struct pipe_in *in, struct pipe_out *out)
{
	if (!sim_valid(in))
		return -1;
	int lo, hi, best = -1;
	long tasks = 0;
	double n[PIPE_MAX_CLASSES], tol = sim_tie_tol(in, n);
	sim_variant_range(in, &lo, &hi);
	/* The first greedy order run watches its peers: each that never parts
	 * from it has its result (src: aborted or not), and each that does is
	 * resumed from where it parted (pk.at). */
	struct peers pk; /* only pk.n and what it counts are set */
	pk.n = 0;
	struct pipe_out src;
	int watched = 0;
	/* in->first, then the others in order; the winner is the one index
	 * order keeps (a lower index wins a tie), so the hint saves work only */
	int first = in->first >= lo && in->first < hi ? in->first : lo;
	for (int j = lo - 1, v; j < hi; j++) {
		if ((v = j < lo ? first : j) == first && j >= lo)
			continue;
		/* a variant whose busiest resource alone takes longer than the
		 * best so far cannot win (the margin covers rounding, far above
		 * it and far below `better`'s) */
		double work[RES_N];
		if (best >= 0 && variant_work(in, v, n, work) * (1 - 1e-9) >= out->makespan)
			continue;
		int q = 0;
		while (q < pk.n && pk.v[q] != v)
			q++;
		struct pipe_out o;
		if (q < pk.n && !pk.split[q]) {
			o = src, o.tasks = 0; /* its run is the watched one's */
		} else {
			const struct run *from = q < pk.n ? &pk.at[q] : NULL;
			struct peers *w = NULL;
			if (!watched && !sim_variants[v].fixed) {
				for (int u = lo; u < hi; u++)
					if (u != v && peer(u, v) && pk.n < MAX_PEERS)
						pk.split[pk.n] = 0, pk.v[pk.n++] = u;
				watched = 1, w = &pk;
			}
			run_fast(in, v, tol, n, best >= 0 ? work : NULL, best >= 0 ? out->makespan : 0,
				 &o, from, w);
			if (w)
				src = o;
		}
		tasks += o.tasks;
		if (best < 0 || (v < best ? !sim_better(out->makespan, o.makespan)
					  : sim_better(o.makespan, out->makespan)))
			*out = o, best = v;
	}
	out->tasks = tasks, out->order = best;
	return 0;
}
