/* sim.h: the simulation state and steps that the reference schedule
 * (pipeline.c) and its fast path (fast.c) share; private to sched/. */
#ifndef KARAT_SCHED_SIM_H
#define KARAT_SCHED_SIM_H

#include <math.h>

#include "sched/pipeline.h"

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

/* One order a schedule may take (pipeline.c lists them, sim_variants). */
struct sim_variant {
	int fixed, comm_on_gpu, prio, shift;
};
enum { SIM_N_VARIANTS = 7, NAIVE = 4, FIRST_SHIFTED = 5 };
extern const struct sim_variant sim_variants[SIM_N_VARIANTS];

/* Task t's own resource. */
int sim_natural_res(const struct pipe_in *in, int t);
/* The work of task t of micro-batch i over the whole chain (n: the
 * layers of each class). */
double sim_task_work(const struct pipe_in *in, const double *n, int i, int t);
/* Times closer than this are ties; n gets the layers of each class. */
double sim_tie_tol(const struct pipe_in *in, double n[PIPE_MAX_CLASSES]);
void sim_init(struct sim *s, const struct pipe_in *in, int v, double tol);
int sim_valid(const struct pipe_in *in);
void sim_finish(const struct sim *s, struct pipe_out *out);
/* Whether makespan a beats b by more than rounding. */
int sim_better(double a, double b);
/* The variants kind in->kind may take: [*lo, *hi). */
void sim_variant_range(const struct pipe_in *in, int *lo, int *hi);

/* The steps of a run, inline: both schedules take them once per task. */

/* Micro-batch i's rank among tasks that can start together (lower
 * first; ties: the longest waiting).  Plain greedy: all alike.  The
 * others rank only GPU tasks, against 0 for every other task: upstream
 * by the task's place in its layer (pre ties with communication; post,
 * the experts and the tail go after it), lead by how far its micro-batch
 * is along its chain (the furthest first, before communication). */
static inline long rank_of(const struct sim *s, int prio, int i, int res)
{
	if (res != RES_GPU || prio == PRIO_WAIT)
		return 0;
	return prio == PRIO_UPSTREAM ? s->nt[i] : -s->k[i];
}

/* The micro-batch whose next task starts first, or -1 when all are done.
 * alone: NULL, or into it whether every other task starts more than two
 * ties' widths later, so that every prio picks the same. */
static inline int sim_pick(const struct sim *s, int prio, double *start, int *alone)
{
	int best = -1, first = -1;
	long brk = 0;
	double bs = 0, br = 0, m1 = INFINITY, m2 = INFINITY;
	for (int i = 0; i < s->in->m; i++) {
		int res = s->nres[i];
		if (res < 0 || (s->naive && res == RES_GPU && i != s->rr))
			continue;
		double st = s->r[i] > s->F[res] ? s->r[i] : s->F[res];
		if (st < m1)
			m2 = m1, m1 = st, first = i;
		else if (st < m2)
			m2 = st;
		long rk = rank_of(s, prio, i, res);
		if (best < 0 || st < bs - s->tol ||
		    (st <= bs + s->tol && (rk < brk || (rk == brk && s->r[i] < br - s->tol)))) {
			best = i, bs = st, br = s->r[i], brk = rk;
		}
	}
	if (alone)
		*alone = best == first && m2 > m1 + 2 * s->tol;
	*start = bs;
	return best;
}

static inline int task_of(const struct sim *s, long k)
{
	long L8 = (long)s->in->layers * T_LAYER;
	return k < L8 ? (int)(k % T_LAYER) : (int)(T_TAIL_G + (k - L8));
}

/* Class of layer l. */
static inline int class_of(const struct pipe_in *in, long l)
{
	return in->nclass > 1 ? in->layer_class[l] : 0;
}

/* Duration of task k, of kind t, of micro-batch i. */
static inline double dur_of(const struct sim *s, int i, long k, int t)
{
	const struct pipe_in *in = s->in;
	int c = t < T_LAYER ? class_of(in, k / T_LAYER) : 0;
	return c ? in->cdur[c][i][t] : in->dur[i][t];
}

/* Micro-batch i's next task moved: its resource again. */
static inline void sim_next_res(struct sim *s, int i)
{
	if (s->k[i] == s->last) {
		s->nres[i] = -1;
		return;
	}
	s->nt[i] = task_of(s, s->k[i]);
	s->nres[i] = s->tres[s->nt[i]];
}

/* The fixed order's next turn on the GPU: the unfinished micro-batch
 * with the fewest GPU runs done, counting micro-batch i's as shift x i
 * more (ties: the lower index).  Shift 0 is plain round robin; a shift
 * staggers the micro-batches by that many runs, so that one's GPU work
 * overlaps another's attention instead of running beside it. */
static inline void next_turn(struct sim *s)
{
	long best = 0;
	for (int c = 0, first = 1; c < s->in->m; c++) {
		long key = s->g[c] + (long)s->shift * c;
		if (s->k[c] <= s->lastg && (first || key < best))
			s->rr = c, best = key, first = 0;
	}
}

/* Starts micro-batch i's next task at start (ev: NULL, or its event). */
static inline void sim_commit(struct sim *s, int i, double start, struct pipe_event *ev)
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
	sim_next_res(s, i);
	if (s->naive && res == RES_GPU &&
	    s->nres[i] != RES_GPU) { /* its GPU run ended */
		s->g[i]++;
		next_turn(s);
	}
}

#endif
