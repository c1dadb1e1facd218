/* tp.h: tensor-parallel attention (system.attention_tp = t).  t GPUs of a
 * node share each attention layer, split by KV heads: each holds 1/t of
 * the attention (and dense) weights and 1/t of every one of the group's
 * requests' caches, and computes 1/t of their work.  Seen from the step,
 * the t GPUs are one unit with t times a GPU's compute, bandwidth,
 * capacity, ports, power and price that holds one copy of the replicated
 * weights, and pays what splitting costs: per decoder layer an all-reduce
 * of the unit's tokens' hidden state among the t GPUs over the scale-up
 * link (a reduce-scatter after attention and an all-gather after the
 * experts come to the same bytes), and a second one after a dense FFN.
 * The experts stay expert-parallel over every GPU. */
#ifndef KARAT_COST_TP_H
#define KARAT_COST_TP_H

#include "base/err.h"
#include "hw/device.h"
#include "hw/link.h"
#include "hw/system.h"
#include "model/model.h"

/* The system's tensor-parallel degree (1 when not given). */
double tp_degree(const struct ksystem *s);

/* Whether model m on system s with scale-up link up can run attention at
 * s's degree: a GQA model whose KV heads split evenly (a latent MLA cache
 * is shared by every head, so each rank would hold all of it), and a link
 * that gives its all-reduce floor.  0, or -1 with err. */
int tp_check(const struct kmodel *m, const struct ksystem *s, const struct klink *up,
	     struct kerr *err);

/* Bytes each of t GPUs sends in an all-reduce of `bytes` (reduce-scatter
 * then all-gather): 2 (t - 1) / t x bytes. */
double tp_allreduce_bytes(double t, double bytes);

/* Seconds of that all-reduce on link up: its floor plus those bytes at
 * the link's bandwidth times its efficiency (an all-reduce's bus
 * bandwidth; NVLink SHARP gains little over it at 2-4 GPUs). */
double tp_allreduce_time(const struct klink *up, double t, double bytes);

/* All-reduces per decoder layer: one, and one more after a dense FFN. */
int tp_allreduces(int moe);

/* The unit of t GPUs: device g, its links l and system s as one. */
void tp_unit_device(struct kdevice *g, double t);
void tp_unit_link(struct klink *l, double t);
void tp_unit_system(struct ksystem *s, double t);

#endif
