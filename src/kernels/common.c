/* common.c: kernel helpers. */
#define _DEFAULT_SOURCE /* madvise */
#include "kernels/common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE (2u << 20)

void *kalloc(size_t bytes, struct kerr *err)
{
	/* Buffers of 4 MiB and up sit on 2 MiB pages where the kernel offers
	 * them (transparent huge pages on request): the scans and the gather
	 * read hundreds of MB, and on 4 KiB pages a random row costs a TLB
	 * miss that a streaming triad never pays. */
	int huge = bytes >= 2 * (size_t)HUGE_PAGE;
	size_t align = huge ? HUGE_PAGE : 64;
	size_t n = (bytes + align - 1) / align * align;
	void *p = aligned_alloc(align, n ? n : 64);
	if (!p) {
		kerr_set(err, 0, 0, "out of memory allocating %zu bytes", bytes);
		return NULL;
	}
#ifdef MADV_HUGEPAGE
	if (huge)
		(void)madvise(p, n, MADV_HUGEPAGE); /* advice only: 4 KiB pages still work */
#endif
	memset(p, 0, n ? n : 64);
	return p;
}

void fill_uniform(gsl_rng *r, float *x, size_t n, float lo, float hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * (float)gsl_rng_uniform(r);
}

void fill_fp8(gsl_rng *r, uint8_t *x, size_t n)
{
	/* four bytes per draw; clearing bit 6 keeps the exponent field <= 7,
	 * so values lie in [-1.875, 1.875] and no NaN code appears */
	for (size_t i = 0; i < n; i += 4) {
		unsigned long v = gsl_rng_get(r);
		for (size_t j = 0; j < 4 && i + j < n; j++)
			x[i + j] = (uint8_t)((v >> (8 * j)) & 0xBF);
	}
}

void fill_bf16(gsl_rng *r, uint16_t *x, size_t n)
{
	/* two values per draw: random sign and mantissa, exponent 2^-7..2^-1 */
	for (size_t i = 0; i < n; i += 2) {
		unsigned long v = gsl_rng_get(r);
		for (size_t j = 0; j < 2 && i + j < n; j++) {
			unsigned h = (unsigned)(v >> (16 * j)) & 0xFFFF;
			unsigned e = 120 + (h >> 8) % 7;
			x[i + j] = (uint16_t)((h & 0x8000) | (e << 7) | (h & 0x7F));
		}
	}
}

int close_rel(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

int check_fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}
