/* roofcheck.c: sanity checks of a measured roofline and of kernel results
 * against it.  Built without -ffast-math (see the Makefile), unlike the
 * rest of kernels/: a check for NaN must not be optimised away. */
#include "kernels/harness.h"

#include <math.h>
#include <stdio.h>

int roof_check(const struct cpu_roof *r, char *why, size_t n)
{
	if (!(r->bw > 0) || !isfinite(r->bw) || !(r->peak > 0) || !isfinite(r->peak)) {
		snprintf(why, n, "the microbenchmarks gave no finite roof");
		return -1;
	}
	if (r->threads > 1 && r->peak < 0.9 * r->peak1) {
		snprintf(why, n, "the FMA peak on %d threads (%.1f GFLOP/s) is below one "
			 "thread's (%.1f GFLOP/s): the machine is busy or throttled, so the "
			 "roofline does not describe it", r->threads, r->peak / 1e9,
			 r->peak1 / 1e9);
		return -1;
	}
	return 0;
}

int result_check(const struct kernel_result *k, char *why, size_t n)
{
	double ratio = k->predicted / k->t.median_s;
	if (ratio > ROOF_TOLERANCE) {
		snprintf(why, n, "%s at size %.0f ran at %.2f times its roof: a kernel "
			 "cannot beat its roof, so the roof is wrong for it or the timing is "
			 "disturbed", k->k->name, k->size, ratio);
		return -1;
	}
	return 0;
}

