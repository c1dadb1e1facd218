/* roofline.h: time of one operator on a device or link, and which bound
 * won: time = join(tc, tm) + fixed, where tc = FLOPs / (peak * eff_c) (a
 * GEMM's FLOPs padded to whole tiles and waves where the device gives its
 * tile model), tm = bytes / (bw * eff_m), join their max or, with
 * kernel.overlap = p, their p-norm, and fixed the kernel's least time
 * times the kernels it launches (device_fixed, op_gpu_kernels), and time
 * at least the operator's floor where the device gives one.  The fixed
 * time makes achieved bandwidth grow with size: bytes / time reaches half
 * of bw * eff_m at bytes = fixed * bw * eff_m.  A selection over rows on
 * a device with select.row_rate computes for at least its mean row's
 * own pass (the rows run side by side), or, on a device with a split
 * kernel, for that pass spread over select.split SMs at that kernel's
 * fixed time, where that is faster (roofline_select_time).
 * An all-to-all on a link: x = bytes / (bw * eff) and f = max(latency,
 * a2a_floor) take x + f - a2a_overlap * min(x, f). */
#ifndef KARAT_COST_ROOFLINE_H
#define KARAT_COST_ROOFLINE_H

#include "cost/ops.h"
#include "hw/device.h"
#include "hw/link.h"

/* Fills o->t_compute, t_memory, t_link, time (per instance) and bound. */
void roofline_op(struct op_cost *o, const struct kdevice *d,
		 const struct klink *l);

/* Compute and memory time joined: their max, or with d->overlap = p >= 1
 * their p-norm (never below the max). */
double roofline_join(const struct kdevice *d, double tc, double tm);

/* A selection's throughput time and its mean row's own pass joined: their
 * max, or with d->select_overlap = p >= 1 their p-norm (1: their sum). */
double roofline_select_join(const struct kdevice *d, double through, double row);

/* Seconds of a selection on d before its fixed time and floor: its
 * throughput time tc and mean row's own pass row joined by
 * roofline_select_join, then with its memory time tm by roofline_join.
 * On a device with a split kernel (select.split) it is the split
 * kernel's instead (row / select.split) where that plus fixed_split is
 * less than this plus fixed.  *fixed_used gets the fixed time of the
 * kernel taken (it may be fixed itself), *tc_used its compute time. */
double roofline_select_time(const struct kdevice *d, double tc, double row, double tm,
			    double fixed, double fixed_split, double *fixed_used, double *tc_used);

/* Fixed seconds the split selection kernel of kind k pays on d (0 on a
 * device without one). */
double roofline_split_fixed(const struct kdevice *d, enum op_kind k);

/* Fixed seconds one instance of kind k pays on d: the kernel's least time
 * times the kernels it launches on a GPU (0 when fused into another). */
double roofline_fixed(const struct kdevice *d, enum op_kind k);
/* The same for operator o, at its data type: a GEMM that runs at the FP4
 * peak takes kernel.gemm_fixed_fp4 where the device gives it. */
double roofline_op_fixed(const struct kdevice *d, const struct op_cost *o);

/* The least seconds one instance of kind k takes on d whatever its size
 * (kernel.CLASS_floor; 0 for none, and for an operator fused into
 * another's kernel on a GPU).  time = max(floor, join + fixed). */
double roofline_floor(const struct kdevice *d, enum op_kind k);

/* The FLOPs a GEMM's tiles execute on d: whole tiles of the device's
 * shape (the width of least padding), whole waves over its SMs, each tile
 * tile_k0 deeper; o->flops when d has no tile model or o is no GEMM. */
double roofline_gemm_flops(const struct kdevice *d, const struct op_cost *o);

/* The rates of operator class c in data type t on d: seconds per FLOP and
 * per byte (INFINITY both when d cannot run it).  roofline_op and the
 * solver's per-request pricing both use them, so the two agree. */
void roofline_rates(const struct kdevice *d, enum op_class c, enum dtype t,
		    double *s_per_flop, double *s_per_byte);

/* The same for an operator of kind k: a selection (top-k, whose FLOPs
 * count the scores it ranks) takes at least 1 / device_select_rate s per
 * score on a device that declares a rate. */
void roofline_op_rates(const struct kdevice *d, enum op_kind k, enum op_class c, enum dtype t,
		       double *s_per_flop, double *s_per_byte);

/* Seconds of one point-to-point transfer of bytes over l: bytes / (bw x
 * efficiency) + latency (0 for no bytes).  The solver prices its memory
 * device links, GPU ports and merges with it. */
double roofline_transfer(const struct klink *l, double bytes);

/* Seconds of one expert all-to-all moving bytes over l (0 for no bytes):
 * the transfer plus the link's fixed time, its latency or its measured
 * all-to-all floor (the dispatch's own where dispatch and the link gives
 * one), whichever is larger.  Used by ops and the solver. */
double roofline_a2a(const struct klink *l, double bytes, int dispatch);

/* The groups of P (GPUs, or nodes) that one token's k distinct experts
 * of E reach, E / P experts to a group: P (1 - prod_i (E - E/P - i) /
 * (E - i)). */
double roofline_a2a_reached(double E, double k, double P);

/* The bytes that cross nodes per copy bound for another node, of G GPUs,
 * gpn to a node, with k routed experts of E a token: 1 flat; with
 * hierarchical set (a token crosses once to each node any of its copies
 * land on), for copies sent one per routed expert (placed at random)
 * N (1 - (1 - 1/N)^k) / k for N = G / gpn nodes, and for copies sent one
 * per GPU (per_gpu) the other nodes a token reaches over the other
 * nodes' GPUs it reaches (roofline_a2a_reached). */
double roofline_a2a_cross(double G, double gpn, double E, double k, int hierarchical,
			  int per_gpu);

/* An expert all-to-all of `bytes` leaving each of G GPUs, gpn to a node:
 * inside a node on up alone; across nodes, the shares for GPUs inside and
 * outside the node at once (flat, cross = 1), or with cross < 1
 * (hierarchical) each token crossing once per node it needs, cross bytes
 * per routed copy bound there, its copies then forwarded on up.  Across
 * nodes, out's floor grows by its a2a_floor_per_node for each node past
 * the first. */
double roofline_a2a_nodes(const struct klink *up, const struct klink *out, double G, double gpn,
			  double cross, double bytes, int dispatch);

/* Whether the all-to-all of G GPUs, gpn to a node, sends a token once per
 * GPU (link.a2a_sends = gpu): the scale-up link's kernels run it inside
 * a node, the scale-out link's across nodes. */
int roofline_a2a_per_gpu(const struct klink *up, const struct klink *out, double G, double gpn);

/* FLOP/B at which compute and memory time are equal for class c, type t. */
double roofline_ridge(const struct kdevice *d, enum op_class c, enum dtype t);

#endif
