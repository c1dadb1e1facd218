/* pipeline.c: the event/list schedule of the micro-batch pipeline.
 * Every micro-batch is a chain of tasks; at each step the task that can
 * start earliest (ties: the one that waited longest, then the lower
 * micro-batch) starts on its resource.  Starts are committed in time
 * order, so this is a non-delay list schedule; naive adds the fixed
 * round-robin order on the GPU stream and puts communication on it.
 * This file holds the orders and the reference (pipe_list); fast.c the
 * fast path (pipe_fast). */
#include "sched/pipeline.h"
#include "sched/sim.h"

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
int sim_natural_res(const struct pipe_in *in, int t)
{
	switch (t) {
	case T_OUT: case T_TAIL_L: return in->link_on_net ? RES_NET : RES_LINK;
	case T_BACK: return in->link_on_net ? RES_NET : in->duplex ? RES_BACK : RES_LINK;
	case T_DISP: case T_COMB: return RES_NET;
	case T_ATTN: case T_TAIL_M: return in->attn_on_gpu ? RES_GPU : RES_MEM;
	default: return RES_GPU;
	}
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
double sim_task_work(const struct pipe_in *in, const double *n, int i, int t)
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
double sim_tie_tol(const struct pipe_in *in, double n[PIPE_MAX_CLASSES])
{
	double work = 0;
	class_layers(in, n);
	if (in->nclass > 1) {
		for (int i = 0; i < in->m; i++)
			for (int t = 0; t < T_ALL; t++)
				work += sim_task_work(in, n, i, t);
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
const struct sim_variant sim_variants[SIM_N_VARIANTS] = {
	{0, 0, PRIO_UPSTREAM, 0}, {0, 0, PRIO_WAIT, 0}, {0, 0, PRIO_LEAD, 0}, {1, 0, 0, 0},
	{1, 1, 0, 0}, {1, 0, 0, 1}, {1, 0, 0, 2}};

/* v: one of sim_variants[]; tol: sim_tie_tol(in). */
void sim_init(struct sim *s, const struct pipe_in *in, int v, double tol)
{
	memset(s, 0, sizeof *s);
	s->in = in;
	s->serial = in->kind == SCHED_SERIAL;
	s->naive = sim_variants[v].fixed;
	s->prio = sim_variants[v].prio;
	s->shift = sim_variants[v].shift;
	int comm_on_gpu = sim_variants[v].comm_on_gpu;
	s->last = (long)in->layers * T_LAYER + (T_ALL - T_LAYER);
	s->tol = tol;
	for (int t = 0; t < T_ALL; t++) {
		s->trest[t] = sim_natural_res(in, t);
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

int sim_valid(const struct pipe_in *in)
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

void sim_finish(const struct sim *s, struct pipe_out *out)
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
		runs += sim_natural_res(in, t) == RES_GPU &&
			sim_natural_res(in, (t + T_LAYER - 1) % T_LAYER) != RES_GPU;
	return runs;
}

/* A later variant wins only by more than rounding, so the reference and
 * the fast path (which sums a one-stream variant instead of simulating it)
 * pick the same one. */
int sim_better(double a, double b)
{
	return a < b * (1 - 1e-12);
}

void sim_variant_range(const struct pipe_in *in, int *lo, int *hi)
{
	if (in->kind == SCHED_OFMS || in->kind == SCHED_OFMS_CMR) {
		/* one micro-batch is its chain whatever the order; staggering
		 * overlaps GPU work with the devices' attention, so it needs
		 * devices */
		int runs = in->attn_on_gpu ? 1 : runs_per_layer(in);
		*lo = 0, *hi = in->m == 1 ? 1 : FIRST_SHIFTED + (runs > 1 ? runs - 1 : 0);
		if (*hi > SIM_N_VARIANTS)
			*hi = SIM_N_VARIANTS;
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
	while ((i = sim_pick(&s, s.prio, &start, NULL)) >= 0)
		sim_commit(&s, i, start, ev && s.ntask < nev ? &ev[s.ntask] : NULL);
	sim_finish(&s, out);
}

int pipe_list(const struct pipe_in *in, struct pipe_out *out,
	      struct pipe_event *ev, long nev)
{
	if (!sim_valid(in))
		return -1;
	_Static_assert(T_ALL == T_LAYER + 3, "the tail has three tasks");
	int lo, hi, best = -1;
	long tasks = 0;
	double n[PIPE_MAX_CLASSES], tol = sim_tie_tol(in, n);
	sim_variant_range(in, &lo, &hi);
	for (int v = lo; v < hi; v++) {
		struct pipe_out o;
		run_list(in, v, tol, &o, NULL, 0);
		tasks += o.tasks;
		if (best < 0 || sim_better(o.makespan, out->makespan))
			*out = o, best = v;
	}
	if (ev)
		run_list(in, best, tol, out, ev, nev);
	out->tasks = tasks, out->order = best;
	return 0;
}
