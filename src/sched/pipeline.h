/* pipeline.h: the micro-batch pipeline of one decode step (docs/model.md,
 * "How time is computed").  Each of m micro-batches runs a chain of tasks per layer,
 *   pre (GPU) -> out (link) -> attn (memory device) -> back (link)
 *   -> post (GPU) -> dispatch (network) -> experts (GPU) -> combine (network)
 * and after the last layer a tail (LM head, sampling and the MTP draft
 * module: GPU, then link, then memory device).  Five resources each run one
 * task at a time (a full-duplex link is two: back beside out; devices on
 * the scale-up link share the network's).  Schedules:
 *   serial: one task at a time anywhere (no overlap at all);
 *   naive:  the GPU serves the micro-batches in a fixed round-robin order
 *           and communication occupies the GPU stream;
 *   ofms:   communication runs on its own resources and every resource
 *           takes whichever ready task has waited longest.  A greedy list
 *           schedule can lose to another order (Graham's anomalies), so
 *           OFMS also times the round-robin order (communication off and on
 *           the GPU stream; a naive schedule is a valid OFMS schedule in
 *           which the GPU idles), the round robin staggered by one or two
 *           GPU runs per micro-batch, and two greedy schedules that rank
 *           the GPU's tasks (a layer's earlier task first; the micro-batch
 *           furthest along first), and keeps whichever finishes first
 *           (pipeline.c lists them).
 * cmr and ofms+cmr are naive and ofms with context-balanced micro-batches
 * (the assignment lives in solve/; the timing here is the same).
 * Layers may be of several kinds (a layer with an indexer and one that
 * reuses its selection, a dense-FFN layer and an MoE one), each with its
 * own task durations, in the model's real order.
 * pipe_list is the explicit event/list schedule (the reference); pipe_fast
 * runs the same schedule but jumps over layers once the state repeats
 * (identical layers, or a periodic pattern of kinds, make it periodic),
 * and tests check the two agree. */
#ifndef KARAT_SCHED_PIPELINE_H
#define KARAT_SCHED_PIPELINE_H

#include "base/limits.h"

enum sched_kind { SCHED_SERIAL, SCHED_NAIVE, SCHED_OFMS, SCHED_CMR, SCHED_OFMS_CMR,
		  SCHED_N };
extern const char *const sched_names[SCHED_N + 1];

/* Whether kind assigns requests to micro-batches by context (CMR). */
int sched_uses_cmr(int kind);

/* RES_LINK carries what goes out to the memory devices (and, on a
 * half-duplex link, what comes back); RES_BACK what comes back on a
 * full-duplex link. */
enum pipe_res { RES_GPU, RES_MEM, RES_LINK, RES_NET, RES_BACK, RES_N };
extern const char *const pipe_res_names[RES_N + 1];

enum pipe_task { T_PRE, T_OUT, T_ATTN, T_BACK, T_POST, T_DISP, T_EXP, T_COMB,
		 T_LAYER, /* tasks per layer */
		 T_TAIL_G = T_LAYER, T_TAIL_L, T_TAIL_M, T_ALL };
extern const char *const pipe_task_names[T_ALL + 1];


struct pipe_in {
	int kind;                        /* enum sched_kind */
	int m;                           /* micro-batches, 1..PIPE_MAX_MB */
	int layers;                      /* >= 1 */
	int attn_on_gpu;                 /* no memory device: attn runs on the GPU */
	int duplex;                      /* the link is full duplex: back runs on
					    RES_BACK, beside out */
	int first;                       /* pipe_fast: the order to time first
					    (e.g. the last call's out->order);
					    it changes the work, never the result */
	int link_on_net;                 /* the devices hang off the scale-up link:
					    their transfers share RES_NET with the
					    expert all-to-all */
	double dur[PIPE_MAX_MB][T_ALL];  /* seconds; per layer for T_PRE..T_COMB
					    (the layers of class 0), once for the
					    tail */
	/* Layers of several kinds: layer l is of class layer_class[l] (0 ..
	 * nclass - 1), whose per-layer tasks last cdur[class] (class 0's are
	 * dur's).  nclass 0 or 1: every layer is class 0. */
	int nclass;
	unsigned char layer_class[PIPE_MAX_LAYERS];
	double cdur[PIPE_MAX_CLASSES][PIPE_MAX_MB][T_LAYER];
};

struct pipe_out {
	double makespan;
	double busy[RES_N];   /* seconds each resource worked */
	double bubble[RES_N]; /* 1 - busy / makespan */
	long tasks;           /* tasks simulated over every order tried
				 (pipe_fast: fewer than pipe_list) */
	int order;            /* the order that won */
};

/* One scheduled task (for tests and reports). */
struct pipe_event {
	int mb, layer, task, res;
	double start, end;
};

/* The reference event/list schedule over every task.  When ev is not NULL
 * it receives up to nev events in start order.  Returns 0, or -1 when the
 * input is out of range (m, layers, negative durations). */
int pipe_list(const struct pipe_in *in, struct pipe_out *out,
	      struct pipe_event *ev, long nev);

/* The same schedule with periodic fast-forward; same result up to rounding. */
int pipe_fast(const struct pipe_in *in, struct pipe_out *out);

#endif
