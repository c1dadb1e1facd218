/* kernel.h: the CPU validation kernels (the cache-side operators of sparse
 * attention), each with its declared FLOP and byte counts, a naive
 * reference, and a static table the harness and `karat bench` walk.
 * Kernels are C11 + OpenMP with loops written to vectorise. */
#ifndef KARAT_KERNELS_KERNEL_H
#define KARAT_KERNELS_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "hw/device.h"

#define KERNEL_SIZES 3

struct kernel_def {
	const char *name;          /* indexer, topk, gather, ... (stable) */
	enum op_class cls;         /* which efficiency it calibrates */
	const char *size_name;     /* what `size` counts: "tokens", "rows" */
	const char *shape;         /* the fixed dimensions, for the report */
	double sizes[KERNEL_SIZES];/* default sizes, large enough to leave cache */
	/* Allocates inputs for `size` with a fixed seed; NULL + err on failure. */
	void *(*setup)(double size, struct kerr *err);
	void (*run)(void *state);
	/* Declared work of one run. */
	double (*flops)(double size);
	double (*bytes)(double size);
	/* Compares the last run's output with the naive reference; 0 if equal
	 * within tolerance, else -1 with why. */
	int (*check)(void *state, char *why, size_t n);
	void (*teardown)(void *state);
};

extern const struct kernel_def *const kernel_table[];
extern const int kernel_count;

const struct kernel_def *kernel_find(const char *name);

/* FP8 E4M3 to float through a 256-entry table (filled on first use). */
const float *fp8_e4m3_table(void);
/* n E4M3 bytes (n a multiple of 16) times mul, through the kernels' own
 * vector decode (tile.h), for tests. */
void fp8_e4m3_decode(const uint8_t *b, int n, float mul, float *dst);
/* Float to the nearest E4M3 byte (saturating), for building inputs. */
uint8_t fp8_e4m3_encode(float x);

/* Kernels exposed for tests with explicit sizes and edge cases. */
void topk_select(const float *x, int n, int k, int *out, float *work_vals,
		 int *work_idx);
/* The same by a vector threshold filter and a radix select (select_simd.c);
 * vals and ids hold n + 16.  Returns how many scores the filter kept. */
int topk_simd_select(const float *x, int n, int k, int *out, float *vals, int *ids);
void topk_reference(const float *x, int n, int k, float *out_vals);

#endif
