/* prefill.h: what the prefill of one request's new tokens costs on its
 * GPUs, so that energy per token can count the whole request (issue 30
 * item 3).  The new tokens are the n the request brings after its c0
 * cached ones (prefix reuse); each goes through every decoder layer as a
 * decode token at its own context would (the same operators, FLOPs and
 * data types: step_build at one token per GPU), so the layers' FLOPs are
 * the sum over contexts c0 + 1 .. c0 + n, integrated by the trapezoid
 * rule over PREFILL_POINTS intervals (exact where the FLOPs grow linearly
 * with the context, as dense attention and the index scan do).  The
 * final norm and LM head run once, for the last token.  Bytes: the
 * weights once per chunk of PREFILL_CHUNK tokens per GPU, and the new
 * tokens' caches written once; the chunk's reads of the cached context
 * (once per query tile) are under 1% of the FLOP energy and left out. */
#ifndef KARAT_COST_PREFILL_H
#define KARAT_COST_PREFILL_H

#include "base/err.h"
#include "hw/device.h"
#include "model/model.h"
#include "sparse/algo.h"

/* Tokens per GPU per chunked-prefill iteration: SGLang's default chunk
 * (https://www.mintlify.com/sgl-project/mini-sglang/concepts/chunked-prefill:
 * 8192-token chunks); FastDeploy recommends above 8096
 * (https://paddlepaddle.github.io/FastDeploy/features/chunked_prefill). */
#define PREFILL_CHUNK 8192.0
#define PREFILL_POINTS 8

struct prefill {
	double flops;     /* the request's FLOPs, all GPUs together */
	double joules;    /* their energy at the GPU's pJ per FLOP, plus the
			     weights' and the caches' bytes at its pJ per bit */
	double gpu_s;     /* GPU-seconds at the compute rates (compute-bound:
			     the time the static and node power are drawn) */
	double a2a_bytes; /* expert all-to-all bytes (the caller prices them) */
};

/* The prefill of n new tokens after c0 cached ones of model m (algorithm
 * sp; NULL: the model's) on gpus GPUs of kind gpu, the all-to-all sending
 * a token once per GPU with a2a_per_gpu (kbatch.a2a_per_gpu).  n = 0: all
 * zero.  Returns 0, or -1 with err (c0 + n beyond the model's window, a
 * bad count). */
int prefill_cost(const struct kmodel *m, const struct sparse_cfg *sp, const struct kdevice *gpu,
		 double gpus, int a2a_per_gpu, double c0, double n, struct prefill *out,
		 struct kerr *err);

#endif
