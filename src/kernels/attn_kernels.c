/* attn_kernels.c: decode attention for one query token per request:
 * absorbed MLA over gathered FP8 rows (DSA's sparse attention) and dense
 * GQA over a BF16 cache.  Softmax is exact (max-subtracted). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "kernels/common.h"
#include "kernels/tile.h"

/* ---- mla_sparse: absorbed MLA over k gathered rows ------------------------
 * DeepSeek-V3.2: 128 heads; a row is 512 FP8 latent values with 4 FP32
 * scales (one per 128) and 64 BF16 RoPE values: 656 B.  Scores use all
 * 576 dims, the output the 512 latent dims.
 * FLOPs: 128 x (2 x 576 + 2 x 512) = 2176 x 128 per row.
 * Bytes: 656 per row + the query (128 x 576 x 4) + the output (128 x 512 x 4). */
#define MLA_H 128
#define MLA_R 512
#define MLA_P 64
#define MLA_K (MLA_R + MLA_P)
#define MLA_ROW 656
#define MT 16

#define MB 8 /* rows per scoring pass */

struct mla {
	int k;
	uint8_t *rows;
	float *q, *qt, *lat, *s, *sum, *out; /* qt: q transposed, [dim][head]; s: [row][head] */
};

static double mla_flops(double k) { return 2176.0 * MLA_H * k; }
static double mla_bytes(double k) { return k * MLA_ROW + 4.0 * MLA_H * (MLA_K + MLA_R); }

static void mla_teardown(void *state);

static void *mla_setup(double size, struct kerr *err)
{
	struct mla *s = calloc(1, sizeof *s);
	if (!s)
		return kerr_set(err, 0, 0, "out of memory"), NULL;
	s->k = (int)size;
	size_t k = (size_t)s->k;
	s->rows = kalloc(k * MLA_ROW, err);
	s->q = kalloc(sizeof(float) * MLA_H * MLA_K, err);
	s->qt = kalloc(sizeof(float) * MLA_H * MLA_K, err);
	s->lat = kalloc(sizeof(float) * k * MLA_K, err);
	s->s = kalloc(sizeof(float) * MLA_H * k, err);
	s->sum = kalloc(sizeof(float) * MLA_H, err);
	s->out = kalloc(sizeof(float) * MLA_H * MLA_R, err);
	if (!s->rows || !s->q || !s->qt || !s->lat || !s->s || !s->sum || !s->out)
		return mla_teardown(s), NULL;
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	if (!g)
		return kerr_set(err, 0, 0, "out of memory"), mla_teardown(s), NULL;
	gsl_rng_set(g, KSEED + 5);
	fill_uniform(g, s->q, MLA_H * MLA_K, -0.1f, 0.1f);
	for (size_t t = 0; t < k; t++) {
		uint8_t *row = s->rows + t * MLA_ROW;
		fill_fp8(g, row, MLA_R);
		float sc[4];
		fill_uniform(g, sc, 4, 0.5f, 1.5f);
		memcpy(row + MLA_R, sc, sizeof sc);
		fill_bf16(g, (uint16_t *)(row + MLA_R + 16), MLA_P);
	}
	gsl_rng_free(g);
	for (int h = 0; h < MLA_H; h++)
		for (int c = 0; c < MLA_K; c++)
			s->qt[c * MLA_H + h] = s->q[h * MLA_K + c];
	return s;
}

static void mla_decode_row(const uint8_t *row, float *dst)
{
	float sc[4];
	uint16_t rope[MLA_P];
	memcpy(sc, row + MLA_R, sizeof sc);
	memcpy(rope, row + MLA_R + 16, sizeof rope);
	for (int b = 0; b < 4; b++)
		fp8_row(row + 128 * b, 128, sc[b], dst + 128 * b);
	for (int c = 0; c < MLA_P; c++)
		dst[MLA_R + c] = bf16_to_f32(rope[c]);
}

/* Scores, then the softmax, then P x latent.  The rows are decoded once
 * into lat (FP32), which the last step reads once per thread: each thread
 * owns a range of 8-head groups and walks the rows in blocks of 16. */
static void mla_run(void *state)
{
	struct mla *s = state;
	const int k = s->k, blocks = (k + MB - 1) / MB;
	const float scale = 1.0f / sqrtf(192.0f);
#pragma omp parallel
	{
#pragma omp for schedule(static)
		for (int b = 0; b < blocks; b++) { /* 8 rows x 128 heads */
			int t0 = b * MB, nr = k - t0 < MB ? k - t0 : MB;
			float pad[MB][MLA_K], sc[MB][MLA_H];
			const float *x = s->lat + (size_t)t0 * MLA_K;
			for (int r = 0; r < nr; r++)
				mla_decode_row(s->rows + (size_t)(t0 + r) * MLA_ROW,
					       s->lat + (size_t)(t0 + r) * MLA_K);
			if (nr < MB) { /* the last block: zero rows fill the pass */
				memset(pad, 0, sizeof pad);
				memcpy(pad, x, sizeof(float) * (size_t)nr * MLA_K);
				x = &pad[0][0];
			}
			for (int h0 = 0; h0 < MLA_H; h0 += 32)
				heads32_dots(s->qt + h0, MLA_H, x, MLA_K, MLA_K, &sc[0][h0], MLA_H);
			for (int r = 0; r < nr; r++)
				for (int h = 0; h < MLA_H; h++)
					s->s[(size_t)(t0 + r) * MLA_H + h] = sc[r][h] * scale;
		}
#pragma omp for schedule(static)
		for (int h0 = 0; h0 < MLA_H; h0 += TILE) { /* 16 heads side by side */
			float mx[TILE], sum[TILE];
			for (int i = 0; i < TILE; i++)
				mx[i] = -INFINITY, sum[i] = 0;
			for (int t = 0; t < k; t++)
				for (int i = 0; i < TILE; i++) {
					float v = s->s[(size_t)t * MLA_H + h0 + i];
					mx[i] = v > mx[i] ? v : mx[i];
				}
			for (int t = 0; t < k; t++)
				for (int i = 0; i < TILE; i++) {
					float *v = &s->s[(size_t)t * MLA_H + h0 + i];
					sum[i] += *v = expf(*v - mx[i]);
				}
			for (int i = 0; i < TILE; i++)
				s->sum[h0 + i] = sum[i];
		}
		int nth = omp_get_num_threads(), me = omp_get_thread_num();
		int h0 = MLA_H / 8 * me / nth * 8, h1 = MLA_H / 8 * (me + 1) / nth * 8;
		memset(s->out + (size_t)h0 * MLA_R, 0, sizeof(float) * (size_t)(h1 - h0) * MLA_R);
		for (int t0 = 0; t0 < k; t0 += TILE) {
			int nt = k - t0 < TILE ? k - t0 : TILE;
			const float *v = s->lat + (size_t)t0 * MLA_K, *p = s->s + (size_t)t0 * MLA_H;
			for (int h = h0; h < h1; h += 8)
				for (int c = 0; c < MLA_R; c += TILE)
					pv_slice(v + c, MLA_K, TILE_F32, nt, p + h, 1, MLA_H,
						 s->out + (size_t)h * MLA_R + c, MLA_R);
		}
		for (int h = h0; h < h1; h++)
			for (int c = 0; c < MLA_R; c++)
				s->out[(size_t)h * MLA_R + c] /= s->sum[h];
	}
}

static int mla_check(void *state, char *why, size_t n)
{
	struct mla *s = state;
	int k = s->k;
	float *lat = malloc(sizeof(float) * (size_t)k * MLA_K);
	double *p = malloc(sizeof(double) * (size_t)k);
	int rc = 0;
	if (!lat || !p)
		rc = check_fail(why, n, "out of memory");
	const float *t8 = fp8_e4m3_table();
	for (int t = 0; t < k && !rc; t++) { /* the naive decode, through the table */
		const uint8_t *row = s->rows + (size_t)t * MLA_ROW;
		float sc[4];
		uint16_t rope[MLA_P];
		memcpy(sc, row + MLA_R, sizeof sc);
		memcpy(rope, row + MLA_R + 16, sizeof rope);
		for (int c = 0; c < MLA_R; c++)
			lat[(size_t)t * MLA_K + c] = t8[row[c]] * sc[c / 128];
		for (int c = 0; c < MLA_P; c++)
			lat[(size_t)t * MLA_K + MLA_R + c] = bf16_to_f32(rope[c]);
	}
	for (int h = 0; h < MLA_H && !rc; h++) {
		double mx = -INFINITY, sum = 0;
		for (int t = 0; t < k; t++) {
			double d = 0;
			for (int c = 0; c < MLA_K; c++)
				d += (double)s->q[h * MLA_K + c] * lat[(size_t)t * MLA_K + c];
			p[t] = d / sqrt(192.0);
			mx = fmax(mx, p[t]);
		}
		for (int t = 0; t < k; t++)
			sum += p[t] = exp(p[t] - mx);
		for (int c = 0; c < MLA_R && !rc; c++) {
			double o = 0;
			for (int t = 0; t < k; t++)
				o += p[t] / sum * lat[(size_t)t * MLA_K + c];
			if (!close_rel(s->out[(size_t)h * MLA_R + c], o, 1e-4))
				rc = check_fail(why, n, "mla_sparse head %d dim %d: %g, reference %g", h, c,
					      s->out[(size_t)h * MLA_R + c], o);
		}
	}
	free(lat), free(p);
	return rc;
}

static void mla_teardown(void *state)
{
	struct mla *s = state;
	if (!s)
		return;
	free(s->rows), free(s->q), free(s->qt), free(s->lat), free(s->s), free(s->sum),
		free(s->out);
	free(s);
}

/* ---- gqa_dense: one query token over the whole BF16 cache -----------------
 * Llama-3.1-70B: 64 query heads in 8 groups of 8, 128 dims.  K is kept in
 * pages of 16 tokens stored dimension-major ([kv][page][dim][16], the same
 * bytes as row-major, a layout a near-memory device is free to choose), so
 * 16 tokens are one vector.  V is kept in the same pages, each split into
 * eight 16-dim slices of 16 tokens ([kv][page][slice][16][16]), so the
 * product P x V reads a page in address order.
 * FLOPs: 4 x 64 x 128 per token.  Bytes: 2 x 8 x 128 x 2 = 4096 per token. */
#define GH 64
#define GKV 8
#define GG (GH / GKV)
#define GD 128

struct gqa {
	int L, pages;
	uint16_t *k, *v;
	float *q, *out;
};

static double gqa_flops(double L) { return 4.0 * GH * GD * L; }
static double gqa_bytes(double L) { return 4.0 * GKV * GD * L + 8.0 * GH * GD; }

/* K element (token t, dim d) of KV head kv in the paged layout. */
static inline size_t gqa_kidx(const struct gqa *s, int kv, int t, int d)
{
	return (((size_t)kv * s->pages + (size_t)(t / TILE)) * GD + (size_t)d) * TILE +
	       (size_t)(t % TILE);
}

/* V element (token t, dim d) of KV head kv in its sliced pages. */
static inline size_t gqa_vidx(const struct gqa *s, int kv, int t, int d)
{
	size_t slice = ((size_t)kv * s->pages + (size_t)(t / TILE)) * (GD / TILE) + (size_t)(d / TILE);
	return (slice * TILE + (size_t)(t % TILE)) * TILE + (size_t)(d % TILE);
}

static void gqa_teardown(void *state);

static void *gqa_setup(double size, struct kerr *err)
{
	struct gqa *s = calloc(1, sizeof *s);
	if (!s)
		return kerr_set(err, 0, 0, "out of memory"), NULL;
	s->L = (int)size;
	s->pages = (s->L + TILE - 1) / TILE;
	size_t nk = (size_t)GKV * s->pages * TILE * GD;
	s->k = kalloc(2 * nk, err); /* padding tokens of the last page are zero */
	s->v = kalloc(2 * nk, err);
	s->q = kalloc(sizeof(float) * GH * GD, err);
	s->out = kalloc(sizeof(float) * GH * GD, err);
	if (!s->k || !s->v || !s->q || !s->out)
		return gqa_teardown(s), NULL;
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	if (!g)
		return kerr_set(err, 0, 0, "out of memory"), gqa_teardown(s), NULL;
	gsl_rng_set(g, KSEED + 6);
	uint16_t row[GD];
	for (int kv = 0; kv < GKV; kv++)
		for (int t = 0; t < s->L; t++) {
			fill_bf16(g, row, GD);
			for (int d = 0; d < GD; d++)
				s->v[gqa_vidx(s, kv, t, d)] = row[d];
		}
	for (int kv = 0; kv < GKV; kv++)
		for (int t = 0; t < s->L; t++) {
			fill_bf16(g, row, GD);
			for (int d = 0; d < GD; d++)
				s->k[gqa_kidx(s, kv, t, d)] = row[d];
		}
	fill_uniform(g, s->q, GH * GD, -1, 1);
	gsl_rng_free(g);
	return s;
}

/* One pass over the cache with an online softmax (as flash-decoding does):
 * each page's 16 scores per head are exponentiated against the running
 * maximum, and the sums so far are rescaled when the maximum rises. */
static void gqa_run(void *state)
{
	struct gqa *s = state;
	const int L = s->L, P = s->pages;
	const float scale = 1.0f / sqrtf((float)GD);
#pragma omp parallel for schedule(static)
	for (int kv = 0; kv < GKV; kv++) {
		const float *q = s->q + (size_t)kv * GG * GD;
		float mx[GG], sum[GG], out[GG][GD];
		for (int g = 0; g < GG; g++) {
			mx[g] = -INFINITY, sum[g] = 0;
			for (int c = 0; c < GD; c++)
				out[g][c] = 0;
		}
		for (int p = 0; p < P; p++) {
			float acc[8][TILE], pr[GG][TILE];
			const uint16_t *kp = s->k + ((size_t)kv * P + p) * GD * TILE;
			const uint16_t *vp = s->v + ((size_t)kv * P + p) * TILE * GD;
			tile_dots(q, GD, GG, GD, kp, TILE_BF16, acc);
			int nt = L - p * TILE < TILE ? L - p * TILE : TILE;
			for (int g = 0; g < GG; g++) {
				float a[TILE], ps = 0;
				for (int j = 0; j < TILE; j++)
					a[j] = acc[g][j] * scale;
				for (int j = nt; j < TILE; j++) /* padding never wins */
					a[j] = -1e30f;
				float m = max16(a);
				m = m > mx[g] ? m : mx[g];
				if (m > mx[g]) { /* rescale what came before */
					float r = expf(mx[g] - m);
					sum[g] *= r;
					for (int c = 0; c < GD; c++)
						out[g][c] *= r;
					mx[g] = m;
				}
#pragma omp simd reduction(+ : ps)
				for (int j = 0; j < TILE; j++)
					ps += pr[g][j] = expf(a[j] - m);
				sum[g] += ps;
			}
			/* for each 16-dim slice the 8 heads' sums stay in registers
			 * over the page's 16 tokens */
			for (int c = 0; c < GD; c += TILE)
				pv_slice(vp + c * TILE, TILE, TILE_BF16, nt, &pr[0][0], TILE, 1, &out[0][c], GD);
		}
		for (int g = 0; g < GG; g++)
			for (int c = 0; c < GD; c++)
				s->out[(size_t)(kv * GG + g) * GD + c] = out[g][c] / sum[g];
	}
}

static int gqa_check(void *state, char *why, size_t n)
{
	struct gqa *s = state;
	const int L = s->L;
	double *p = malloc(sizeof(double) * (size_t)L);
	if (!p)
		return check_fail(why, n, "out of memory");
	int rc = 0;
	for (int h = 0; h < GH && !rc; h++) {
		int kv = h / GG;
		double mx = -INFINITY, sum = 0;
		for (int t = 0; t < L; t++) {
			double a = 0;
			for (int d = 0; d < GD; d++)
				a += (double)s->q[h * GD + d] * bf16_to_f32(s->k[gqa_kidx(s, kv, t, d)]);
			p[t] = a / sqrt((double)GD);
			mx = fmax(mx, p[t]);
		}
		for (int t = 0; t < L; t++)
			sum += p[t] = exp(p[t] - mx);
		for (int d = 0; d < GD && !rc; d++) {
			double o = 0;
			for (int t = 0; t < L; t++)
				o += p[t] * bf16_to_f32(s->v[gqa_vidx(s, kv, t, d)]);
			o /= sum;
			if (!close_rel(s->out[(size_t)h * GD + d], o, 1e-4))
				rc = check_fail(why, n, "gqa_dense head %d dim %d: %g, reference %g", h, d,
					      s->out[(size_t)h * GD + d], o);
		}
	}
	free(p);
	return rc;
}

static void gqa_teardown(void *state)
{
	struct gqa *s = state;
	if (!s)
		return;
	free(s->k), free(s->v), free(s->q), free(s->out);
	free(s);
}

const struct kernel_def kernel_mla = {
	"mla_sparse", OC_ATTENTION, "rows", "128 heads, 656 B FP8 rows (512 latent + 64 RoPE)",
	{2048, 8192, 32768}, mla_setup, mla_run, mla_flops, mla_bytes, mla_check, mla_teardown};
const struct kernel_def kernel_gqa = {
	"gqa_dense", OC_ATTENTION, "tokens", "64 query heads, 8 KV heads x 128 dims, BF16",
	{32768, 65536, 131072}, gqa_setup, gqa_run, gqa_flops, gqa_bytes, gqa_check,
	gqa_teardown};
