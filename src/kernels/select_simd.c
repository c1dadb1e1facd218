/* select_simd.c: top-k as a vector filter and a radix select.
 *
 * The k largest of n scores in about one pass over them:
 *   1. a strided sample of the row sets a threshold a few standard
 *      deviations below the k-th largest, so that at least k scores pass
 *      it almost always;
 *   2. one pass keeps the scores at or above the threshold, sixteen at a
 *      time with AVX-512 compares and compresses (a portable loop where
 *      the compiler targets no AVX-512);
 *   3. an MSD radix select on the survivors' order-preserving 32-bit keys,
 *      a byte per pass, finishes exactly (ties at the cut are taken in
 *      index order).
 * Should fewer than k pass (a sample that was unlucky), the threshold
 * falls to a lower rank of the sample and the pass is repeated; the last
 * resort keeps every score, so the answer is always exact.
 * The scalar quickselect in select_kernels.c is the kernel this replaces;
 * `karat bench topk` times both. */
#include <math.h>
#include <string.h>

#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "kernels/common.h"

/* A float's bits as an unsigned key with the float's order. */
static inline uint32_t order_key(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

/* Keeps the scores >= thr of x[0..n) in vals/ids (which hold n + 16);
 * returns how many. */
static int filter_at_least(const float *x, int n, float thr, float *vals, int *ids)
{
	int c = 0, i = 0;
#ifdef __AVX512F__
	const __m512 t = _mm512_set1_ps(thr);
	const __m512i step = _mm512_set1_epi32(16);
	__m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	for (; i + 16 <= n; i += 16, idx = _mm512_add_epi32(idx, step)) {
		__mmask16 keep = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), t, _CMP_GE_OQ);
		if (!keep) /* most blocks keep nothing */
			continue;
		_mm512_storeu_ps(vals + c, _mm512_maskz_compress_ps(keep, _mm512_loadu_ps(x + i)));
		_mm512_storeu_si512((void *)(ids + c), _mm512_maskz_compress_epi32(keep, idx));
		c += __builtin_popcount(keep);
	}
#endif
	for (; i < n; i++) { /* the tail, or the whole row without AVX-512 */
		vals[c] = x[i], ids[c] = i;
		c += x[i] >= thr;
	}
	return c;
}

/* The k largest of the c candidates (vals, ids) into out, by their keys'
 * bytes from the most significant; candidates are compacted in place. */
static void radix_select(float *vals, int *ids, int c, int k, int *out)
{
	int done = 0;
	for (int shift = 24; shift >= 0 && k > 0; shift -= 8) {
		if (c == k)
			break;
		int hist[256] = {0};
		for (int i = 0; i < c; i++)
			hist[(order_key(vals[i]) >> shift) & 255]++;
		int b = 255, above = 0;
		while (above + hist[b] < k)
			above += hist[b--];
		int m = 0;
		for (int i = 0; i < c; i++) {
			uint32_t d = (order_key(vals[i]) >> shift) & 255;
			if (d > (uint32_t)b)
				out[done++] = ids[i];
			else if (d == (uint32_t)b)
				vals[m] = vals[i], ids[m++] = ids[i];
		}
		k -= above, c = m;
	}
	for (int i = 0; i < k; i++) /* equal keys, or exactly k left */
		out[done++] = ids[i];
}

int topk_simd_select(const float *x, int n, int k, int *out, float *vals, int *ids)
{
	if (k >= n) {
		for (int i = 0; i < n; i++)
			out[i] = i;
		return n;
	}
	enum { SAMPLE = 2048 };
	float sample[SAMPLE], work[SAMPLE];
	int pos[SAMPLE], top[SAMPLE];
	int m = n / 32 < SAMPLE ? (n / 32 > 64 ? n / 32 : 64) : SAMPLE;
	if (m > n)
		m = n;
	for (int i = 0; i < m; i++)
		sample[i] = x[(long)i * n / m];
	/* expected passers of rank r: r n / m; aim k at 4 standard deviations */
	double e = (double)k * m / n;
	int r = (int)ceil(e + 4 * sqrt(e) + 4), c = 0;
	for (; r < m; r *= 4) { /* an unlucky sample lowers the bar and retries */
		for (int i = 0; i < m; i++)
			work[i] = sample[i], pos[i] = i;
		radix_select(work, pos, m, r, top);
		float thr = sample[top[0]];
		for (int i = 1; i < r; i++)
			thr = sample[top[i]] < thr ? sample[top[i]] : thr;
		c = filter_at_least(x, n, thr, vals, ids);
		if (c >= k)
			break;
	}
	if (r >= m) { /* the last resort: every score */
		for (int i = 0; i < n; i++)
			vals[i] = x[i], ids[i] = i;
		c = n;
	}
	radix_select(vals, ids, c, k, out);
	return c;
}
