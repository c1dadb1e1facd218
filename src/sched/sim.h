/* sim.h: the simulation state and steps that the reference schedule
 * (pipeline.c) and its fast path (fast.c) share; private to sched/. */
#ifndef KARAT_SCHED_SIM_H
#define KARAT_SCHED_SIM_H

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
void sim_next_res(struct sim *s, int i);
int sim_valid(const struct pipe_in *in);
/* The micro-batch whose next task starts first (into *start), or -1. */
int sim_pick(const struct sim *s, double *start);
void sim_commit(struct sim *s, int i, double start, struct pipe_event *ev);
void sim_finish(const struct sim *s, struct pipe_out *out);
/* Whether makespan a beats b by more than rounding. */
int sim_better(double a, double b);
/* The variants kind in->kind may take: [*lo, *hi). */
void sim_variant_range(const struct pipe_in *in, int *lo, int *hi);

#endif
