/* step.h: expansion of one decode step into operators with FLOPs and bytes
 * (step_build), and their times on a device (step_time).  Both run on
 * caller-owned memory: the hot path allocates nothing. */
#ifndef KARAT_COST_STEP_H
#define KARAT_COST_STEP_H

#include "base/limits.h"

#include "base/err.h"
#include "cost/ops.h"
#include "hw/device.h"
#include "hw/link.h"
#include "model/model.h"


/* A kind of decoder layer: its attention class (enum lclass) and its FFN
 * (dense or MoE).  Layers of one kind cost the same. */
struct layer_kind {
	unsigned char cls, moe;
};

/* What step_build emits: the whole step; one decoder layer of a kind (no
 * tail); or the once-per-step tail alone (final norm, LM head, sampling
 * and the MTP draft module). */
enum step_part { STEP_WHOLE, STEP_LAYER, STEP_TAIL };

/* A decode batch.  Attention is data-parallel: this GPU holds `local`
 * requests; experts are expert-parallel over `gpus`, and routing sees the
 * tokens of all `requests`. */
struct kbatch {
	double requests;      /* B, all GPUs together */
	double gpus;          /* G */
	double context;       /* L for every local request when ctx == NULL */
	const double *ctx;    /* or: the local requests' contexts */
	int nctx;
	double mtp;           /* draft tokens d verified per step (q = 1 + d) */
	const struct sparse_cfg *sp; /* attention algorithm; NULL: the model's */
	int gpu_only;         /* GPU-side operators only (the cache side is
			       * priced per request elsewhere) */
	int pad_topk;         /* the device's sparse attention attends to all
			       * top-k slots (kernel.sparse_fixed_topk) */
	int part;             /* enum step_part (0: the whole step) */
	double imbalance;     /* the busiest GPU's routed token copies over the
			       mean (0 or 1: balanced), which its experts and
			       all-to-all carry (system_moe_imbalance) */
	double tp;            /* GPUs per unit (0 or 1: each GPU is one): with
			       tensor-parallel attention (cost/tp.h) `gpus`
			       counts units of tp GPUs, and a routed copy
			       leaves its GPU unless it lands on that GPU */
	int a2a_per_gpu;      /* the all-to-all sends a token once to each
			       GPU holding any of its experts, not once per
			       expert (link.a2a_sends = gpu) */
	struct layer_kind kind; /* STEP_LAYER: which */
};

/* The copies of one token an expert all-to-all sends, with k of E experts
 * routed and the experts spread evenly over P GPUs (its own GPU's share
 * counted; (P - 1) / P of them leave it): one per routed expert, k; or
 * with per_gpu one per GPU holding any of them, P (1 - C(E - E/P, k) /
 * C(E, k)) (5.29 for DeepSeek-V3 on 8 GPUs, against 8). */
double step_a2a_sends(double E, double k, double P, int per_gpu);

/* The model's decoder layers by kind, in order: seq[i] (m->layers entries)
 * is the index into kinds of layer i's kind; kinds are numbered by first
 * appearance and counts[k] says how many layers are of kind k.  Returns
 * the number of kinds (at most PIPE_MAX_CLASSES). */
int step_layer_kinds(const struct kmodel *m, const struct sparse_cfg *sp, unsigned char *seq,
		     struct layer_kind kinds[PIPE_MAX_CLASSES], double counts[PIPE_MAX_CLASSES]);

struct step {
	int n;
	double local;      /* requests on this GPU */
	double q;          /* query tokens per request */
	struct op_cost op[STEP_MAX_OPS];
};

/* Fills s with every operator of one step of m on batch b.  Returns 0, or
 * -1 with err when the batch is invalid (no requests, context beyond the
 * model's maximum, non-integral counts). */
int step_build(const struct kmodel *m, const struct kbatch *b, struct step *s,
	       struct kerr *err);

/* Roofline times of every operator of s on device d (link l carries the
 * all-to-all).  Returns the step time in seconds (infinite when an
 * operator is unsupported). */
double step_time(struct step *s, const struct kdevice *d, const struct klink *l);

/* Per-kind totals for reports: rows[k] sums the entries of kind k. */
struct op_row {
	double count, flops, bytes, time;
	enum bound bound;  /* bound of the entry that contributes most time */
	int present;
};
void step_rows(const struct step *s, struct op_row rows[OP_N],
	       struct op_row *total);

#endif
