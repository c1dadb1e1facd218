/* bench_util.h: the clock (the library's) and the median, shared by the
 * benchmarks (each is its own program, so the functions are static). */
#ifndef KARAT_BENCH_UTIL_H
#define KARAT_BENCH_UTIL_H

#include <stdlib.h>

#include "karat.h"

static inline double now(void)
{
	return clock_now();
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v (sorted in place). */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
