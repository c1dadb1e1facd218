/* harness.h: honest timing (warm-up excluded, repetitions to a minimum run
 * time, CLOCK_MONOTONIC with its resolution checked, min and median), the
 * CPU microbenchmarks that define its roofline (triad bandwidth, FMA peak),
 * and the calibration fit.  Nothing here prints. */
#ifndef KARAT_KERNELS_HARNESS_H
#define KARAT_KERNELS_HARNESS_H

#include "base/err.h"
#include "kernels/kernel.h"

struct timing {
	double min_s, median_s;  /* per call */
	int reps;                /* timed repetitions */
	int batch;               /* calls per repetition (short kernels) */
	double clock_res_s;
};

/* Times fn(state): one warm-up call, then repetitions of `batch` calls
 * (enough that one repetition lasts >= 1000 clock ticks) until min_time
 * has passed and at least 5 repetitions ran. */
int time_run(void (*fn)(void *), void *state, double min_time, struct timing *t,
	     struct kerr *err);

/* The machine's roofline: best of repeated runs. */
struct cpu_roof {
	double bw;          /* B/s, the memory roof: the better of the two below */
	double bw_triad;    /* B/s, triad a = b + s*c over 3 x 128 MiB doubles */
	double bw_read;     /* B/s, a read-only sum over 2 x 128 MiB doubles */
	double peak;        /* FLOP/s, FP32 FMA chains on every thread */
	double peak1;       /* FLOP/s, the same on one thread (a sanity check) */
	int threads;
	double triad_bytes; /* bytes counted per triad run (24 per element) */
};
int measure_roof(double min_time, struct cpu_roof *r, struct kerr *err);

/* Whether the roof describes this machine: finite, and every thread
 * together at least 0.9 x one thread's FMA peak (less means the machine
 * is busy and every efficiency fitted against it would be wrong).
 * Returns 0, or -1 with why. */
int roof_check(const struct cpu_roof *r, char *why, size_t n);

/* One kernel at one size, timed and compared with the roofline. */
struct kernel_result {
	const struct kernel_def *k;
	double size, flops, bytes;
	struct timing t;
	double predicted;   /* max(flops / peak, bytes / bw) */
};
int bench_kernel(const struct kernel_def *k, double size, const struct cpu_roof *roof,
		 double min_time, struct kernel_result *out, struct kerr *err);

/* A kernel may not run faster than its roof; timing noise aside
 * (ROOF_TOLERANCE), one that does means the roof or the timing is wrong.
 * Returns 0, or -1 with why. */
#define ROOF_TOLERANCE 1.05
int result_check(const struct kernel_result *k, char *why, size_t n);

/* Calibration of one kernel over its sizes: time = slope x work + overhead
 * (GSL least squares weighted by 1/time^2, i.e. on relative error), work = FLOPs when the roofline says compute
 * bound, bytes otherwise; efficiency = 1 / (slope x roof). */
struct kernel_fit {
	int compute_bound;
	double efficiency, overhead_s, chisq;
};
int fit_kernel(const struct kernel_result *res, int n, const struct cpu_roof *roof,
	       struct kernel_fit *fit, struct kerr *err);
/* Time the calibrated model predicts for one result. */
double fit_predict(const struct kernel_fit *fit, const struct kernel_result *r,
		   const struct cpu_roof *roof);

#endif
