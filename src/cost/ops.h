/* ops.h: the operator kinds of one decode step (a static table: stable
 * snake_case names, class, where they run) and the cost record of one
 * emitted operator. */
#ifndef KARAT_COST_OPS_H
#define KARAT_COST_OPS_H

#include "base/dtype.h"
#include "hw/device.h"

enum op_kind {
	OP_ATTN_NORM, OP_QKV_PROJ, OP_Q_PROJ, OP_Q_DOWN, OP_Q_NORM, OP_Q_UP,
	OP_KV_DOWN, OP_KV_NORM, OP_Q_ABSORB, OP_INDEX_Q_PROJ, OP_INDEX_K_PROJ,
	OP_INDEX_W_PROJ, OP_ROPE, OP_CACHE_WRITE, OP_INDEX_SCAN, OP_TOPK,
	OP_GATHER, OP_ATTENTION, OP_V_ABSORB, OP_O_PROJ, OP_FFN_NORM,
	OP_DENSE_FFN, OP_ROUTER, OP_DISPATCH, OP_EXPERTS, OP_SHARED_EXPERT,
	OP_COMBINE, OP_FINAL_NORM, OP_LM_HEAD, OP_SAMPLING, OP_MTP, OP_N
};

/* Where an operator belongs in a heterogeneous system. */
enum op_side {
	SIDE_GPU,   /* weights-bound work: projections, MoE, LM head */
	SIDE_CACHE, /* reads or writes the KV/index cache */
	SIDE_LINK,  /* moves data between GPUs (all-to-all) */
};

struct op_info {
	const char *name;
	enum op_class cls;
	enum op_side side;
	int module;        /* a whole module: row count is module runs */
	const char *desc;
	int selects;       /* ranks scores (its FLOPs count them): runs at a
			      device's selection rate where it declares one */
	/* As a GPU runs it (the reference kernels, docs/model.md
	 * and hw/README.md): kernels per instance (0 = 1), or the operator whose
	 * kernel does its work too (it pays no launch of its own). */
	int kernels;
	const char *fused_into;
};

/* Kernels one instance of kind k launches on a GPU: 0 when fused into
 * another operator's kernel. */
int op_gpu_kernels(enum op_kind k);

extern const struct op_info op_table[OP_N];

enum bound { BOUND_NONE, BOUND_COMPUTE, BOUND_MEMORY, BOUND_LINK,
	     BOUND_OVERHEAD, BOUND_UNSUPPORTED, BOUND_N };
extern const char *const bound_names[BOUND_N];

/* One emitted operator: `count` identical instances of (flops, bytes). */
struct op_cost {
	enum op_kind kind;
	enum op_kind base;   /* the operator it is (kind is OP_MTP for the
				draft module's) */
	enum op_class cls;
	enum op_side side;
	enum dtype dt;       /* compute data type */
	double count;
	double flops, bytes; /* per instance */
	/* a GEMM's shape (gm = 0: not a GEMM): groups of [gm x gk] x [gk x
	 * gn], flops = 2 gm gn gk groups */
	double gm, gn, gk, groups;
	/* a selection's rows (0: none given): its flops are their scores */
	double rows;
	/* a selection's full passes over its scores (0: the device's own) */
	double passes;
	/* filled by the roofline, per instance */
	double t_compute, t_memory, t_link, time;
	enum bound bound;
};

#endif
