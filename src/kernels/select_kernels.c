/* select_kernels.c: top-k selection and the gather of selected rows. */
#include <math.h>
#include <stdlib.h>

#include "kernels/common.h"

/* ---- top-k: the k largest of n scores, expected O(n) ----------------------
 * A strided sample sets a threshold a little below the k-th largest; one
 * pass keeps the scores at or above it; quickselect on the survivors
 * finishes.  If the sample was unlucky (fewer than k survive) the pass is
 * repeated with no threshold, so the answer is always exact.
 * FLOPs: one compare per score.  Bytes: 4 per score read + 4 per kept index.
 * The bench runs 8 independent rows (one per request), in parallel. */

static void swap2(float *v, int *ix, int a, int b)
{
	float t = v[a];
	v[a] = v[b], v[b] = t;
	if (ix) {
		int u = ix[a];
		ix[a] = ix[b], ix[b] = u;
	}
}

/* Rearranges v[0..n) (and ix alongside) so that v[0..k) hold the k largest. */
static void select_largest(float *v, int *ix, int n, int k)
{
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		/* median of three as pivot, moved to hi */
		if (v[mid] > v[lo]) swap2(v, ix, mid, lo);
		if (v[hi] > v[lo]) swap2(v, ix, hi, lo);
		if (v[mid] > v[hi]) swap2(v, ix, mid, hi);
		float pivot = v[hi];
		int i = lo;
		for (int j = lo; j < hi; j++)
			if (v[j] > pivot)
				swap2(v, ix, i++, j);
		/* equal keys go right after the larger ones: ties cannot stall */
		int e = i;
		for (int j = i; j < hi; j++)
			if (v[j] == pivot)
				swap2(v, ix, e++, j);
		swap2(v, ix, e, hi);
		if (k <= i)
			hi = i - 1;
		else if (k <= e + 1)
			return;
		else
			lo = e + 1;
	}
}

void topk_select(const float *x, int n, int k, int *out, float *work_vals,
		 int *work_idx)
{
	if (k >= n) {
		for (int i = 0; i < n; i++)
			out[i] = i;
		return;
	}
	enum { SAMPLE = 4096 };
	float sample[SAMPLE];
	int m = n < SAMPLE ? n : SAMPLE;
	for (int i = 0; i < m; i++)
		sample[i] = x[(long)i * n / m];
	/* aim for k + k/4 + 64 survivors */
	double want = fmin(n, k + k / 4.0 + 64);
	int r = (int)ceil(want / n * m);
	if (r > m)
		r = m;
	select_largest(sample, NULL, m, r);
	float thr = sample[0];
	for (int i = 1; i < r; i++)
		thr = sample[i] < thr ? sample[i] : thr;
	int c = 0;
	for (int i = 0; i < n; i++)
		if (x[i] >= thr) {
			work_vals[c] = x[i];
			work_idx[c++] = i;
		}
	if (c < k) { /* unlucky sample: keep everything */
		c = 0;
		for (int i = 0; i < n; i++) {
			work_vals[c] = x[i];
			work_idx[c++] = i;
		}
	}
	select_largest(work_vals, work_idx, c, k);
	for (int i = 0; i < k; i++)
		out[i] = work_idx[i];
}

static int cmp_desc(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x < y) - (x > y);
}

void topk_reference(const float *x, int n, int k, float *out_vals)
{
	float *c = malloc(sizeof(float) * (size_t)n);
	if (!c)
		return;
	memcpy(c, x, sizeof(float) * (size_t)n);
	qsort(c, (size_t)n, sizeof *c, cmp_desc);
	memcpy(out_vals, c, sizeof(float) * (size_t)(k < n ? k : n));
	free(c);
}

#define TROWS 8
#define TK 2048

struct topk {
	int n;
	float *x, *wv[TROWS];
	int *out, *wi[TROWS];
};

static double topk_flops(double n) { return TROWS * n; }
static double topk_bytes(double n) { return TROWS * (4 * n + 4.0 * fmin(n, TK)); }

static void topk_teardown(void *state);

static void *topk_setup(double size, struct kerr *err)
{
	struct topk *s = calloc(1, sizeof *s);
	if (!s)
		return kerr_set(err, 0, 0, "out of memory"), NULL;
	s->n = (int)size;
	s->x = kalloc(sizeof(float) * (size_t)s->n * TROWS, err);
	s->out = kalloc(sizeof(int) * TK * TROWS, err);
	if (!s->x || !s->out)
		return topk_teardown(s), NULL;
	for (int r = 0; r < TROWS; r++) {
		s->wv[r] = kalloc(sizeof(float) * ((size_t)s->n + 16), err); /* + 16: the */
		s->wi[r] = kalloc(sizeof(int) * ((size_t)s->n + 16), err);   /* vector filter */
		if (!s->wv[r] || !s->wi[r])
			return topk_teardown(s), NULL;
	}
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	if (!g)
		return kerr_set(err, 0, 0, "out of memory"), topk_teardown(s), NULL;
	gsl_rng_set(g, KSEED + 3);
	fill_uniform(g, s->x, (size_t)s->n * TROWS, 0, 1);
	gsl_rng_free(g);
	return s;
}

static void topk_run(void *state)
{
	struct topk *s = state;
#pragma omp parallel for schedule(static)
	for (int r = 0; r < TROWS; r++)
		topk_select(s->x + (size_t)r * s->n, s->n, TK, s->out + r * TK, s->wv[r], s->wi[r]);
}

static void topk_simd_run(void *state)
{
	struct topk *s = state;
#pragma omp parallel for schedule(static)
	for (int r = 0; r < TROWS; r++)
		topk_simd_select(s->x + (size_t)r * s->n, s->n, TK, s->out + r * TK, s->wv[r],
				 s->wi[r]);
}

static int topk_check(void *state, char *why, size_t n)
{
	struct topk *s = state;
	int k = s->n < TK ? s->n : TK;
	float *ref = malloc(sizeof(float) * (size_t)k), *got = malloc(sizeof(float) * (size_t)k);
	int rc = 0;
	for (int r = 0; r < TROWS && !rc && ref && got; r++) {
		const float *x = s->x + (size_t)r * s->n;
		topk_reference(x, s->n, k, ref);
		for (int i = 0; i < k; i++)
			got[i] = x[s->out[r * TK + i]];
		qsort(got, (size_t)k, sizeof *got, cmp_desc);
		for (int i = 0; i < k && !rc; i++)
			if (got[i] != ref[i])
				rc = check_fail(why, n, "topk row %d rank %d: %g, reference %g", r, i,
					      got[i], ref[i]);
	}
	free(ref), free(got);
	return rc;
}

static void topk_teardown(void *state)
{
	struct topk *s = state;
	if (!s)
		return;
	for (int r = 0; r < TROWS; r++)
		free(s->wv[r]), free(s->wi[r]);
	free(s->x), free(s->out);
	free(s);
}

/* ---- gather: copy k selected 656-byte rows into a contiguous buffer ------
 * DeepSeek-V3.2's FP8 MLA row; the cache holds 2^19 rows (344 MB, far
 * beyond the last-level cache); indices are uniform random.
 * Bytes: 656 read + 656 written + 4 index per row.  FLOPs: none. */
#define GROW 656
#define GCACHE (1 << 19)

struct gather {
	int k;
	uint8_t *cache, *out;
	int *idx;
};

static double gather_flops(double k) { (void)k; return 0; }
static double gather_bytes(double k) { return k * (2.0 * GROW + 4); }

static void gather_teardown(void *state);

static void *gather_setup(double size, struct kerr *err)
{
	struct gather *s = calloc(1, sizeof *s);
	if (!s)
		return kerr_set(err, 0, 0, "out of memory"), NULL;
	s->k = (int)size;
	s->cache = kalloc((size_t)GCACHE * GROW, err);
	s->out = kalloc((size_t)s->k * GROW, err);
	s->idx = kalloc(sizeof(int) * (size_t)s->k, err);
	if (!s->cache || !s->out || !s->idx)
		return gather_teardown(s), NULL;
	for (size_t r = 0; r < GCACHE; r++) /* a row's bytes identify it */
		for (int b = 0; b < GROW; b += 4) {
			uint32_t v = (uint32_t)(r * 2654435761u + (uint32_t)b);
			memcpy(s->cache + r * GROW + b, &v, 4);
		}
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	if (!g)
		return kerr_set(err, 0, 0, "out of memory"), gather_teardown(s), NULL;
	gsl_rng_set(g, KSEED + 4);
	for (int i = 0; i < s->k; i++)
		s->idx[i] = (int)gsl_rng_uniform_int(g, GCACHE);
	gsl_rng_free(g);
	return s;
}

static void gather_run(void *state)
{
	struct gather *s = state;
#pragma omp parallel for schedule(static)
	for (int i = 0; i < s->k; i++) {
		if (i + 8 < s->k) { /* rows are random: fetch one 8 rows ahead */
			const uint8_t *next = s->cache + (size_t)s->idx[i + 8] * GROW;
			for (int b = 0; b < GROW; b += 64)
				__builtin_prefetch(next + b);
		}
		memcpy(s->out + (size_t)i * GROW, s->cache + (size_t)s->idx[i] * GROW, GROW);
	}
}

static int gather_check(void *state, char *why, size_t n)
{
	struct gather *s = state;
	for (int i = 0; i < s->k; i++)
		if (memcmp(s->out + (size_t)i * GROW, s->cache + (size_t)s->idx[i] * GROW, GROW))
			return check_fail(why, n, "gather row %d differs from cache row %d", i,
					s->idx[i]);
	return 0;
}

static void gather_teardown(void *state)
{
	struct gather *s = state;
	if (!s)
		return;
	free(s->cache), free(s->out), free(s->idx);
	free(s);
}

const struct kernel_def kernel_topk = {
	"topk", OC_SCAN, "scores", "8 rows, k = 2048 per row",
	{65536, 262144, 1048576}, topk_setup, topk_run, topk_flops, topk_bytes, topk_check,
	topk_teardown};
const struct kernel_def kernel_topk_simd = {
	"topk_simd", OC_SCAN, "scores", "8 rows, k = 2048 per row; vector filter + radix select",
	{65536, 262144, 1048576}, topk_setup, topk_simd_run, topk_flops, topk_bytes, topk_check,
	topk_teardown};
const struct kernel_def kernel_gather = {
	"gather", OC_GATHER, "rows", "656 B rows from a 344 MB cache, random indices",
	{65536, 262144, 524288}, gather_setup, gather_run, gather_flops, gather_bytes,
	gather_check, gather_teardown};
