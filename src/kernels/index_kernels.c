/* index_kernels.c: the scoring scans: the DSA lightning indexer, Quest page
 * scoring and MiniMax (MSA) block scoring.  Each states its FLOP and byte
 * count beside its code; each has a naive reference for its check. */
#include <math.h>
#include <stdlib.h>

#include "kernels/common.h"
#include "kernels/tile.h"

/* ---- indexer: I(t) = scale_t * sum_h w_h * ReLU(q_h . k_t) ----------------
 * DeepSeek-V3.2 shape: 64 heads x 128 dims, FP8 E4M3 keys with one FP32
 * scale per token (132 B), decoded through a table.
 * FLOPs: 2 * 64 * 128 per token (multiply-adds only, DeepGEMM's count).
 * Bytes: 132 per token read + 4 per token score written. */
#define IH 64
#define ID 128

struct indexer {
	int n;
	float *q, *qt, *w, *scale, *out; /* qt: q transposed, [dim][head] */
	uint8_t *keys;
};

static double indexer_flops(double n) { return 2.0 * IH * ID * n; }
static double indexer_bytes(double n) { return n * (ID + 4 + 4); }

static void indexer_teardown(void *state);

static void *indexer_setup(double size, struct kerr *err)
{
	struct indexer *s = calloc(1, sizeof *s);
	if (!s)
		return kerr_set(err, 0, 0, "out of memory"), NULL;
	s->n = (int)size;
	s->q = kalloc(sizeof(float) * IH * ID, err);
	s->qt = kalloc(sizeof(float) * IH * ID, err);
	s->w = kalloc(sizeof(float) * IH, err);
	s->scale = kalloc(sizeof(float) * (size_t)s->n, err);
	s->out = kalloc(sizeof(float) * (size_t)s->n, err);
	s->keys = kalloc((size_t)s->n * ID, err);
	if (!s->q || !s->qt || !s->w || !s->scale || !s->out || !s->keys)
		return indexer_teardown(s), NULL;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	if (!r)
		return kerr_set(err, 0, 0, "out of memory"), indexer_teardown(s), NULL;
	gsl_rng_set(r, KSEED);
	fill_uniform(r, s->q, IH * ID, -1, 1);
	fill_uniform(r, s->w, IH, 0, 1);
	fill_uniform(r, s->scale, (size_t)s->n, 0.5f, 2);
	fill_fp8(r, s->keys, (size_t)s->n * ID);
	gsl_rng_free(r);
	for (int h = 0; h < IH; h++)
		for (int d = 0; d < ID; d++)
			s->qt[d * IH + h] = s->q[h * ID + d];
	return s;
}

/* Score of one token from its 64 head dot products. */
static float relu_weighted(const float *dots, const float *w)
{
	float tot = 0;
	for (int h = 0; h < IH; h++)
		tot += w[h] * (dots[h] > 0 ? dots[h] : 0);
	return tot;
}

/* Eight tokens per pass: their keys are decoded into rows, and the 64
 * heads (two sets of 32 lanes) are the vector dimension, so each load of
 * the transposed query serves all eight. */
#define IB 8

static void indexer_run(void *state)
{
	struct indexer *s = state;
	int blocks = (s->n + IB - 1) / IB;
#pragma omp parallel for schedule(static)
	for (int b = 0; b < blocks; b++) {
		int t0 = b * IB, nr = s->n - t0 < IB ? s->n - t0 : IB;
		float k[IB][ID], d[IB][IH];
		for (int r = 0; r < IB; r++) /* the last block repeats its last token */
			fp8_row(s->keys + (size_t)(t0 + (r < nr ? r : nr - 1)) * ID, ID, 1, k[r]);
		heads32_dots(s->qt, IH, &k[0][0], ID, ID, &d[0][0], IH);
		heads32_dots(s->qt + 32, IH, &k[0][0], ID, ID, &d[0][32], IH);
		for (int r = 0; r < nr; r++)
			s->out[t0 + r] = relu_weighted(d[r], s->w) * s->scale[t0 + r];
	}
}

static int indexer_check(void *state, char *why, size_t n)
{
	struct indexer *s = state;
	const float *t8 = fp8_e4m3_table();
	for (int t = 0; t < s->n; t++) {
		double tot = 0;
		for (int h = 0; h < IH; h++) {
			double dot = 0;
			for (int d = 0; d < ID; d++)
				dot += (double)s->q[h * ID + d] * t8[s->keys[(size_t)t * ID + d]];
			tot += s->w[h] * (dot > 0 ? dot : 0);
		}
		tot *= s->scale[t];
		if (!close_rel(s->out[t], tot, 1e-4))
			return check_fail(why, n, "indexer token %d: %g, reference %g", t,
					s->out[t], tot);
	}
	return 0;
}

static void indexer_teardown(void *state)
{
	struct indexer *s = state;
	if (!s)
		return;
	free(s->q), free(s->qt), free(s->w), free(s->scale), free(s->out), free(s->keys);
	free(s);
}

/* ---- quest_score: per page and head, sum_d max(q_d min_d, q_d max_d) -----
 * MHA shape of the Quest paper: 32 heads x 128 dims, pages of 16 tokens,
 * BF16 per-page key minima and maxima.
 * FLOPs: 4 * 128 per page and head (two multiplies, a max, an add).
 * Bytes: 2 * 128 * 2 per page and head read + 4 written. */
#define QH 32
#define QD 128
#define QPAGE 16

struct quest {
	int pages;
	float *q, *out;
	uint16_t *mn, *mx;  /* [page][head][dim] */
};

static double quest_pages(double tokens) { return ceil(tokens / QPAGE); }
static double quest_flops(double t) { return 4.0 * QD * QH * quest_pages(t); }
static double quest_bytes(double t) { return (4.0 * QD + 4) * QH * quest_pages(t); }

static void quest_teardown(void *state);

static void *quest_setup(double tokens, struct kerr *err)
{
	struct quest *s = calloc(1, sizeof *s);
	if (!s)
		return kerr_set(err, 0, 0, "out of memory"), NULL;
	s->pages = (int)quest_pages(tokens);
	size_t n = (size_t)s->pages * QH * QD;
	s->q = kalloc(sizeof(float) * QH * QD, err);
	s->out = kalloc(sizeof(float) * (size_t)s->pages * QH, err);
	s->mn = kalloc(2 * n, err);
	s->mx = kalloc(2 * n, err);
	if (!s->q || !s->out || !s->mn || !s->mx)
		return quest_teardown(s), NULL;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	if (!r)
		return kerr_set(err, 0, 0, "out of memory"), quest_teardown(s), NULL;
	gsl_rng_set(r, KSEED + 1);
	fill_uniform(r, s->q, QH * QD, -1, 1);
	fill_bf16(r, s->mn, n);
	fill_bf16(r, s->mx, n);
	for (size_t i = 0; i < n; i++) /* max >= min */
		if (bf16_to_f32(s->mx[i]) < bf16_to_f32(s->mn[i])) {
			uint16_t t = s->mx[i];
			s->mx[i] = s->mn[i], s->mn[i] = t;
		}
	gsl_rng_free(r);
	return s;
}

static void quest_run(void *state)
{
	struct quest *s = state;
#pragma omp parallel for schedule(static)
	for (int p = 0; p < s->pages; p++)
		for (int h = 0; h < QH; h++) {
			const uint16_t *mn = s->mn + ((size_t)p * QH + h) * QD;
			const uint16_t *mx = s->mx + ((size_t)p * QH + h) * QD;
			const float *q = s->q + h * QD;
			float acc = 0;
			for (int d = 0; d < QD; d++) {
				float a = q[d] * bf16_to_f32(mn[d]), b = q[d] * bf16_to_f32(mx[d]);
				acc += a > b ? a : b;
			}
			s->out[(size_t)p * QH + h] = acc;
		}
}

static int quest_check(void *state, char *why, size_t n)
{
	struct quest *s = state;
	for (int p = 0; p < s->pages; p++)
		for (int h = 0; h < QH; h++) {
			double acc = 0;
			for (int d = 0; d < QD; d++) {
				size_t i = ((size_t)p * QH + h) * QD + d;
				double a = s->q[h * QD + d] * (double)bf16_to_f32(s->mn[i]);
				double b = s->q[h * QD + d] * (double)bf16_to_f32(s->mx[i]);
				acc += fmax(a, b);
			}
			if (!close_rel(s->out[(size_t)p * QH + h], acc, 1e-4))
				return check_fail(why, n, "quest page %d head %d: %g, reference %g", p,
						h, s->out[(size_t)p * QH + h], acc);
		}
	return 0;
}

static void quest_teardown(void *state)
{
	struct quest *s = state;
	if (!s)
		return;
	free(s->q), free(s->out), free(s->mn), free(s->mx);
	free(s);
}

/* ---- msa_score: block score = max over the block's tokens of q_h . k_t ---
 * MiniMax-M3 index branch: 4 index heads x 128 dims against one shared FP8
 * key per token (128 B, no scale), blocks of 128 tokens.  Keys are kept in
 * pages of 16 tokens stored dimension-major (same bytes, a layout choice),
 * so one dimension of 16 tokens decodes as one vector.
 * FLOPs: 2 * 4 * 128 per token.  Bytes: 128 per token read + 4 per block
 * and head written. */
#define MH 4
#define MD 128
#define MBLK 128

struct msa {
	int n, blocks;
	float *q, *out;
	uint8_t *keys;
};

static double msa_blocks(double n) { return ceil(n / MBLK); }
static double msa_flops(double n) { return 2.0 * MH * MD * n; }
static double msa_bytes(double n) { return n * MD + 4.0 * MH * msa_blocks(n); }

static void msa_teardown(void *state);

static void *msa_setup(double size, struct kerr *err)
{
	struct msa *s = calloc(1, sizeof *s);
	if (!s)
		return kerr_set(err, 0, 0, "out of memory"), NULL;
	s->n = (int)size;
	s->blocks = (int)msa_blocks(size);
	s->q = kalloc(sizeof(float) * MH * MD, err);
	s->out = kalloc(sizeof(float) * (size_t)s->blocks * MH, err);
	size_t padded = (size_t)(s->n + TILE - 1) / TILE * TILE;
	s->keys = kalloc(padded * MD, err); /* whole pages */
	if (!s->q || !s->out || !s->keys)
		return msa_teardown(s), NULL;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	if (!r)
		return kerr_set(err, 0, 0, "out of memory"), msa_teardown(s), NULL;
	gsl_rng_set(r, KSEED + 2);
	fill_uniform(r, s->q, MH * MD, -1, 1);
	fill_fp8(r, s->keys, (size_t)s->n * MD); /* padding slots are never read */
	gsl_rng_free(r);
	return s;
}

/* Byte of token t, dimension d, in the paged dimension-major layout. */
static inline size_t msa_kidx(int t, int d)
{
	return ((size_t)(t / TILE) * MD + (size_t)d) * TILE + (size_t)(t % TILE);
}

static void msa_run(void *state)
{
	struct msa *s = state;
	float q8[MH * MD]; /* the query times 2^8: tiles read keys times 2^-8 */
	for (int i = 0; i < MH * MD; i++)
		q8[i] = s->q[i] * 0x1p8f;
#pragma omp parallel for schedule(static)
	for (int b = 0; b < s->blocks; b++) {
		float best[MH];
		for (int h = 0; h < MH; h++)
			best[h] = -INFINITY;
		int t1 = (b + 1) * MBLK < s->n ? (b + 1) * MBLK : s->n;
		for (int t0 = b * MBLK; t0 < t1; t0 += TILE) {
			float acc[8][TILE];
			const uint8_t *kp = s->keys + msa_kidx(t0, 0);
			tile_dots(q8, MD, MH, MD, kp, TILE_FP8S, acc);
			int nt = t1 - t0 < TILE ? t1 - t0 : TILE;
			for (int h = 0; h < MH; h++)
				for (int j = 0; j < nt; j++)
					best[h] = acc[h][j] > best[h] ? acc[h][j] : best[h];
		}
		for (int h = 0; h < MH; h++)
			s->out[(size_t)b * MH + h] = best[h];
	}
}

static int msa_check(void *state, char *why, size_t n)
{
	struct msa *s = state;
	const float *t8 = fp8_e4m3_table();
	for (int b = 0; b < s->blocks; b++)
		for (int h = 0; h < MH; h++) {
			double best = -INFINITY;
			for (int t = b * MBLK; t < s->n && t < (b + 1) * MBLK; t++) {
				double acc = 0;
				for (int d = 0; d < MD; d++)
					acc += (double)s->q[h * MD + d] * t8[s->keys[msa_kidx(t, d)]];
				best = fmax(best, acc);
			}
			if (!close_rel(s->out[(size_t)b * MH + h], best, 1e-4))
				return check_fail(why, n, "msa block %d head %d: %g, reference %g", b, h,
						s->out[(size_t)b * MH + h], best);
		}
	return 0;
}

static void msa_teardown(void *state)
{
	struct msa *s = state;
	if (!s)
		return;
	free(s->q), free(s->out), free(s->keys);
	free(s);
}

const struct kernel_def kernel_indexer = {
	"indexer", OC_SCAN, "tokens", "64 heads x 128 dims, FP8 E4M3 keys + FP32 scale",
	{16384, 65536, 262144}, indexer_setup, indexer_run, indexer_flops, indexer_bytes,
	indexer_check, indexer_teardown};
const struct kernel_def kernel_quest = {
	"quest_score", OC_SCAN, "tokens", "32 heads x 128 dims, pages of 16, BF16 min/max",
	{131072, 262144, 524288}, quest_setup, /* 135 MB and up: 4x a 32 MiB L3 */ quest_run, quest_flops, quest_bytes,
	quest_check, quest_teardown};
const struct kernel_def kernel_msa = {
	"msa_score", OC_SCAN, "tokens", "4 index heads x 128 dims, FP8 keys, blocks of 128",
	{1048576, 2097152, 4194304}, msa_setup, msa_run, msa_flops, msa_bytes, msa_check,
	msa_teardown};
