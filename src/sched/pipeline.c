/* pipeline.c: the event/list schedule of the micro-batch pipeline.
 * Every micro-batch is a chain of tasks; at each step the task that can
 * start earliest (ties: the one that waited longest, then the lower
 * micro-batch) starts on its resource.  Starts are committed in time
 * order, so this is a non-delay list schedule; naive adds the fixed
 * round-robin order on the GPU stream and puts communication on it. */
#include "sched/pipeline.h"

#include <math.h>
#include <string.h>

const char *const sched_names[SCHED_N + 1] = {"serial", "naive", "ofms", "cmr",
					      "ofms+cmr", 0};
const char *const pipe_res_names[RES_N + 1] = {"gpu", "memdev", "link", "net", "link_back",
						0};
const char *const pipe_task_names[T_ALL + 1] = {
	"pre", "out", "attn", "back", "post", "dispatch", "experts", "combine",
	"tail_gpu", "tail_link", "tail_memdev", 0};

int sched_uses_cmr(int kind)
{
	return kind == SCHED_CMR || kind == SCHED_OFMS_CMR;
}

/* Resource a task needs by nature. */
static int natural_res(const struct pipe_in *in, int t)
{
	switch (t) {
	case T_OUT: case T_TAIL_L: return in->link_on_net ? RES_NET : RES_LINK;
	case T_BACK: return in->link_on_net ? RES_NET : in->duplex ? RES_BACK : RES_LINK;
	case T_DISP: case T_COMB: return RES_NET;
	case T_ATTN: case T_TAIL_M: return in->attn_on_gpu ? RES_GPU : RES_MEM;
	default: return RES_GPU;
	}
}

/* How a greedy schedule orders the tasks that can start together. */
enum prio { PRIO_WAIT, PRIO_UPSTREAM, PRIO_LEAD };

struct sim {
	const struct pipe_in *in;
	int naive, serial, rr;
	int prio;                  /* greedy: which task goes first among those
				      that can start together (enum prio) */
	int shift;                 /* fixed order: micro-batch i's GPU runs lag
				      micro-batch 0's by shift x i runs */
	long g[PIPE_MAX_MB];       /* GPU runs each micro-batch has finished */
	long last;                 /* index past the last task of a chain */
	long lastg;                /* index of a chain's last GPU task */
	long k[PIPE_MAX_MB];       /* next task of each micro-batch */
	int nres[PIPE_MAX_MB];     /* its execution resource, -1: chain done */
	int nt[PIPE_MAX_MB];       /* its kind of task (enum pipe_task) */
	double r[PIPE_MAX_MB];     /* when that task becomes ready */
	double F[RES_N];           /* when each execution slot frees */
	double busy[RES_N];
	long ntask;
	double tol;                /* times closer than this are ties */
	int trest[T_ALL], tres[T_ALL]; /* natural and execution resource */
};

static int task_of(const struct sim *s, long k)
{
	long L8 = (long)s->in->layers * T_LAYER;
	return k < L8 ? (int)(k % T_LAYER) : (int)(T_TAIL_G + (k - L8));
}

/* Class of layer l. */
static int class_of(const struct pipe_in *in, long l)
{
	return in->nclass > 1 ? in->layer_class[l] : 0;
}

/* Duration of task k, of kind t, of micro-batch i. */
static double dur_of(const struct sim *s, int i, long k, int t)
{
	const struct pipe_in *in = s->in;
	int c = t < T_LAYER ? class_of(in, k / T_LAYER) : 0;
	return c ? in->cdur[c][i][t] : in->dur[i][t];
}

/* Layers of each class. */
static void class_layers(const struct pipe_in *in, double n[PIPE_MAX_CLASSES])
{
	memset(n, 0, sizeof(double) * PIPE_MAX_CLASSES);
	if (in->nclass <= 1) {
		n[0] = in->layers;
		return;
	}
	for (long l = 0; l < in->layers; l++)
		n[in->layer_class[l]]++;
}

/* The work of task t of micro-batch i over the whole chain (n: the layers
 * of each class; a tail task runs once): each class's layers counted once,
 * not layer by layer. */
static double task_work(const struct pipe_in *in, const double *n, int i, int t)
{
	if (t >= T_LAYER)
		return in->dur[i][t];
	double w = n[0] * in->dur[i][t];
	for (int c = 1; c < in->nclass; c++)
		w += n[c] * in->cdur[c][i][t];
	return w;
}

/* Times closer than this are ties: a tie decided by rounding noise would
 * make the schedule depend on where it sits in time.  Once per schedule
 * call, not per variant tried; n gets the layers of each class. */
static double tie_tol(const struct pipe_in *in, double n[PIPE_MAX_CLASSES])
{
	double work = 0;
	class_layers(in, n);
	if (in->nclass > 1) {
		for (int i = 0; i < in->m; i++)
			for (int t = 0; t < T_ALL; t++)
				work += task_work(in, n, i, t);
	} else {
		for (int i = 0; i < in->m; i++)
			for (int t = 0; t < T_ALL; t++)
				work += in->dur[i][t];
		work *= in->layers;
	}
	return 1e-12 * work;
}

/* The schedules a kind may choose from, in the order they are tried (a
 * later one wins only by more than rounding).  Serial is variant 1 with
 * every task on one stream; naive and cmr are variant NAIVE.  OFMS takes
 * whichever of these finishes first:
 *   0-2: greedy: any ready task, communication on its own resources;
 *      among tasks that can start together, the longest-waiting first,
 *      after the GPU's ranks (rank_of): 0 takes a layer's earlier GPU
 *      task first (pre before post before the experts), which starts
 *      the devices' work sooner; 1 ranks nothing; 2 gives the GPU to
 *      the micro-batch furthest along, which keeps their order;
 *   3, 4: the fixed round-robin order, communication off and on the GPU
 *      stream (a naive schedule is also a valid OFMS schedule, the GPU
 *      merely idles);
 *   5, 6: the fixed order staggered by one or two GPU runs per
 *      micro-batch, where attention runs on memory devices and a layer
 *      has that many more GPU runs (a stagger of three never won in the
 *      reference solves).
 * A greedy choice can settle into lockstep (every micro-batch's GPU work
 * side by side and the GPU idle through their attention) or into a
 * pattern several layers long, where another order keeps the GPU busy.
 * Variants 0, 2, 5 and 6 find such orders; variant 0 goes first because
 * it wins most often, so that the bound in run_fast stops the others
 * early.  At one micro-batch every order is its chain: variant 0 alone. */
static const struct variant {
	int fixed, comm_on_gpu, prio, shift;
} variants[] = {{0, 0, PRIO_UPSTREAM, 0}, {0, 0, PRIO_WAIT, 0}, {0, 0, PRIO_LEAD, 0},
		{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 0, 1}, {1, 0, 0, 2}};

enum { N_VARIANTS = sizeof variants / sizeof *variants, NAIVE = 4, FIRST_SHIFTED = 5 };

/* v: one of variants[]; tol: tie_tol(in). */
static void sim_init(struct sim *s, const struct pipe_in *in, int v, double tol)
{
	memset(s, 0, sizeof *s);
	s->in = in;
	s->serial = in->kind == SCHED_SERIAL;
	s->naive = variants[v].fixed;
	s->prio = variants[v].prio;
	s->shift = variants[v].shift;
	int comm_on_gpu = variants[v].comm_on_gpu;
	s->last = (long)in->layers * T_LAYER + (T_ALL - T_LAYER);
	s->tol = tol;
	for (int t = 0; t < T_ALL; t++) {
		s->trest[t] = natural_res(in, t);
		int x = s->trest[t];
		if (s->serial || (comm_on_gpu && (x == RES_LINK || x == RES_NET || x == RES_BACK)))
			x = RES_GPU; /* one stream */
		s->tres[t] = x;
	}
	for (int i = 0; i < in->m; i++) {
		s->nt[i] = task_of(s, 0);
		s->nres[i] = s->tres[s->nt[i]];
	}
	for (long k = s->last - 1; k >= 0; k--)
		if (s->tres[task_of(s, k)] == RES_GPU) {
			s->lastg = k;
			break;
		}
}

/* Micro-batch i's next task moved: its resource again. */
static void next_res(struct sim *s, int i)
{
	if (s->k[i] == s->last) {
		s->nres[i] = -1;
		return;
	}
	s->nt[i] = task_of(s, s->k[i]);
	s->nres[i] = s->tres[s->nt[i]];
}

static int valid(const struct pipe_in *in)
{
	if (in->m < 1 || in->m > PIPE_MAX_MB || in->layers < 1 || in->kind < 0 ||
	    in->kind >= SCHED_N)
		return 0;
	for (int i = 0; i < in->m; i++)
		for (int t = 0; t < T_ALL; t++)
			if (!(in->dur[i][t] >= 0) || !isfinite(in->dur[i][t]))
				return 0;
	if (in->nclass < 0 || in->nclass > PIPE_MAX_CLASSES ||
	    (in->nclass > 1 && in->layers > PIPE_MAX_LAYERS))
		return 0;
	for (int c = 1; c < in->nclass; c++)
		for (int i = 0; i < in->m; i++)
			for (int t = 0; t < T_LAYER; t++)
				if (!(in->cdur[c][i][t] >= 0) || !isfinite(in->cdur[c][i][t]))
					return 0;
	for (long l = 0; in->nclass > 1 && l < in->layers; l++)
		if (in->layer_class[l] >= in->nclass)
			return 0;
	return 1;
}

/* Micro-batch i's rank among tasks that can start together (lower
 * first; ties: the longest waiting).  Plain greedy: all alike.  The
 * others rank only GPU tasks, against 0 for every other task: upstream
 * by the task's place in its layer (pre ties with communication; post,
 * the experts and the tail go after it), lead by how far its micro-batch
 * is along its chain (the furthest first, before communication). */
static long rank_of(const struct sim *s, int i, int res)
{
	if (res != RES_GPU || s->prio == PRIO_WAIT)
		return 0;
	return s->prio == PRIO_UPSTREAM ? s->nt[i] : -s->k[i];
}

/* The micro-batch whose next task starts first, or -1 when all are done. */
static int pick(const struct sim *s, double *start)
{
	int best = -1;
	long brk = 0;
	double bs = 0, br = 0;
	for (int i = 0; i < s->in->m; i++) {
		int res = s->nres[i];
		if (res < 0 || (s->naive && res == RES_GPU && i != s->rr))
			continue;
		double st = s->r[i] > s->F[res] ? s->r[i] : s->F[res];
		long rk = rank_of(s, i, res);
		if (best < 0 || st < bs - s->tol ||
		    (st <= bs + s->tol && (rk < brk || (rk == brk && s->r[i] < br - s->tol)))) {
			best = i, bs = st, br = s->r[i], brk = rk;
		}
	}
	*start = bs;
	return best;
}

/* The fixed order's next turn on the GPU: the unfinished micro-batch
 * with the fewest GPU runs done, counting micro-batch i's as shift x i
 * more (ties: the lower index).  Shift 0 is plain round robin; a shift
 * staggers the micro-batches by that many runs, so that one's GPU work
 * overlaps another's attention instead of running beside it. */
static void next_turn(struct sim *s)
{
	long best = 0;
	for (int c = 0, first = 1; c < s->in->m; c++) {
		long key = s->g[c] + (long)s->shift * c;
		if (s->k[c] <= s->lastg && (first || key < best))
			s->rr = c, best = key, first = 0;
	}
}

static void commit(struct sim *s, int i, double start, struct pipe_event *ev)
{
	int t = s->nt[i];
	int res = s->tres[t];
	double d = dur_of(s, i, s->k[i], t), end = start + d;
	if (ev) {
		long layer = s->k[i] / T_LAYER;
		*ev = (struct pipe_event){i, (int)(layer < s->in->layers ? layer : s->in->layers - 1),
					  t, res, start, end};
	}
	s->F[res] = end;
	s->r[i] = end;
	s->busy[s->trest[t]] += d;
	if (res != s->trest[t])
		s->busy[res] += d; /* communication holding the GPU stream */
	s->k[i]++;
	s->ntask++;
	next_res(s, i);
	if (s->naive && res == RES_GPU &&
	    s->nres[i] != RES_GPU) { /* its GPU run ended */
		s->g[i]++;
		next_turn(s);
	}
}

static void finish(const struct sim *s, struct pipe_out *out)
{
	double end = 0;
	for (int i = 0; i < s->in->m; i++)
		end = s->r[i] > end ? s->r[i] : end;
	out->makespan = end;
	out->tasks = s->ntask;
	for (int x = 0; x < RES_N; x++) {
		out->busy[x] = s->busy[x];
		out->bubble[x] = end > 0 ? 1 - s->busy[x] / end : 0;
	}
}

/* The GPU runs of one layer with communication on its own resources:
 * stretches of consecutive GPU tasks, counted around the layer's cycle. */
static int runs_per_layer(const struct pipe_in *in)
{
	int runs = 0;
	for (int t = 0; t < T_LAYER; t++)
		runs += natural_res(in, t) == RES_GPU &&
			natural_res(in, (t + T_LAYER - 1) % T_LAYER) != RES_GPU;
	return runs;
}

/* A later variant wins only by more than rounding, so the reference and
 * the fast path (which sums a one-stream variant instead of simulating it)
 * pick the same one. */
static int better(double a, double b)
{
	return a < b * (1 - 1e-12);
}

static void variant_range(const struct pipe_in *in, int *lo, int *hi)
{
	if (in->kind == SCHED_OFMS || in->kind == SCHED_OFMS_CMR) {
		/* one micro-batch is its chain whatever the order; staggering
		 * overlaps GPU work with the devices' attention, so it needs
		 * devices */
		int runs = in->attn_on_gpu ? 1 : runs_per_layer(in);
		*lo = 0, *hi = in->m == 1 ? 1 : FIRST_SHIFTED + (runs > 1 ? runs - 1 : 0);
		if (*hi > N_VARIANTS)
			*hi = N_VARIANTS;
	} else if (in->kind == SCHED_SERIAL) {
		*lo = 1, *hi = 2;
	} else {
		*lo = NAIVE, *hi = NAIVE + 1;
	}
}

static void run_list(const struct pipe_in *in, int v, double tol, struct pipe_out *out,
		     struct pipe_event *ev, long nev)
{
	struct sim s;
	sim_init(&s, in, v, tol);
	double start;
	int i;
	while ((i = pick(&s, &start)) >= 0)
		commit(&s, i, start, ev && s.ntask < nev ? &ev[s.ntask] : NULL);
	finish(&s, out);
}

int pipe_list(const struct pipe_in *in, struct pipe_out *out,
	      struct pipe_event *ev, long nev)
{
	if (!valid(in))
		return -1;
	_Static_assert(T_ALL == T_LAYER + 3, "the tail has three tasks");
	int lo, hi, best = -1;
	long tasks = 0;
	double n[PIPE_MAX_CLASSES], tol = tie_tol(in, n);
	variant_range(in, &lo, &hi);
	for (int v = lo; v < hi; v++) {
		struct pipe_out o;
		run_list(in, v, tol, &o, NULL, 0);
		tasks += o.tasks;
		if (best < 0 || better(o.makespan, out->makespan))
			*out = o, best = v;
	}
	if (ev)
		run_list(in, best, tol, out, ev, nev);
	out->tasks = tasks;
	return 0;
}

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
			double d = task_work(in, n, i, t);
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

/* work, cut: when work is not NULL, the variant stops as soon as it
 * cannot beat a makespan of cut (out->makespan is then infinite). */
static void run_fast(const struct pipe_in *in, int v, double tol, const double *ncls,
		     const double *work, double cut, struct pipe_out *out)
{
	struct sim s;
	sim_init(&s, in, v, tol);
	if (one_stream(&s, ncls, out))
		return;
	struct snap ring[NSNAP];
	int nsnap = 0, jumped = 0;
	double eps = s.tol;
	long L8 = (long)in->layers * T_LAYER;
	double start;
	int i;
	while ((i = pick(&s, &start)) >= 0) {
		if (!jumped && i == 0 && s.k[0] % T_LAYER == 0 && s.k[0] > 0 && s.k[0] < L8) {
			struct snap *now = &ring[nsnap % NSNAP];
			int moved = 0;
			take(&s, start, now);
			for (int p = 1; p <= NSNAP - 1 && p <= nsnap; p++) {
				const struct snap *then = &ring[(nsnap - p) % NSNAP];
				if (!same(now, then, in->m, eps))
					continue;
				long kmax = 0, kmin = then->k0;
				for (int j = 0; j < in->m; j++) {
					kmax = s.k[j] > kmax ? s.k[j] : kmax;
					kmin = then->k0 + then->dk[j] < kmin ? then->k0 + then->dk[j] : kmin;
				}
				long step = now->k0 - then->k0;
				/* the state repeats as long as the kinds of layer do */
				long end = periodic_end(in, kmin / T_LAYER, step / T_LAYER) * T_LAYER;
				long n = kmax <= end ? (end - kmax) / step : 0;
				if (n < 1 && (end == L8 || in->nclass <= 1)) {
					jumped = 1; /* too close to the end: no jump will come */
					break;
				}
				/* a run of kinds that stops short of the end is worth a
				 * jump only when long (a jump clears the snapshots, and a
				 * longer period that repeats to the end may follow) */
				if (n < 1 || (end < L8 && n < 4))
					continue;
				double dt = now->t0 - then->t0;
				for (int j = 0; j < in->m; j++) {
					s.k[j] += n * step, s.r[j] += n * dt;
					s.g[j] += n * (now->g0 - then->g0);
					next_res(&s, j);
				}
				for (int x = 0; x < RES_N; x++) {
					s.F[x] += n * dt;
					s.busy[x] += n * (now->busy[x] - then->busy[x]);
				}
				/* one jump over identical layers; over kinds of layer,
				 * one per run that repeats */
				jumped = in->nclass <= 1;
				moved = 1;
				break;
			}
			nsnap = moved ? 0 : nsnap + 1;
			/* after a jump no later task starts before a slot frees */
			if (work && bound_now(&s, work, moved ? 0 : start) * (1 - 1e-9) >= cut) {
				finish(&s, out);
				out->makespan = INFINITY;
				return;
			}
			if (moved)
				continue; /* pick again from the shifted state */
		}
		commit(&s, i, start, NULL);
	}
	finish(&s, out);
}

/* Each execution resource's work under variant v (sum) and the largest:
 * a lower bound on its makespan (each resource runs one task at a time). */
static double variant_work(const struct pipe_in *in, int v, const double *n,
			   double sum[RES_N])
{
	double top = 0;
	memset(sum, 0, sizeof(double) * RES_N);
	for (int t = 0; t < T_ALL; t++) {
		int x = natural_res(in, t);
		if (in->kind == SCHED_SERIAL ||
		    (variants[v].comm_on_gpu && (x == RES_LINK || x == RES_NET || x == RES_BACK)))
			x = RES_GPU;
		for (int i = 0; i < in->m; i++)
			sum[x] += task_work(in, n, i, t);
	}
	for (int x = 0; x < RES_N; x++)
		top = sum[x] > top ? sum[x] : top;
	return top;
}

int pipe_fast(const struct pipe_in *in, struct pipe_out *out)
{
	if (!valid(in))
		return -1;
	int lo, hi, best = -1;
	long tasks = 0;
	double n[PIPE_MAX_CLASSES], tol = tie_tol(in, n);
	variant_range(in, &lo, &hi);
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
		struct pipe_out o;
		run_fast(in, v, tol, n, best >= 0 ? work : NULL, best >= 0 ? out->makespan : 0, &o);
		tasks += o.tasks;
		if (best < 0 || (v < best ? !better(out->makespan, o.makespan)
					  : better(o.makespan, out->makespan)))
			*out = o, best = v;
	}
	out->tasks = tasks, out->order = best;
	return 0;
}
