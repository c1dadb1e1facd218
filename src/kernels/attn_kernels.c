/* attn_kernels.c: decode attention for one query token per request:
 * absorbed MLA over gathered FP8 rows (DSA's sparse attention) and dense
 * GQA over a BF16 cache.  Softmax is exact (max-subtracted). */
#include <math.h>
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

struct mla {
	int k;
	uint8_t *rows;
	float *q, *qt, *lat, *s, *out; /* qt: q transposed, [dim][head] */
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
	s->out = kalloc(sizeof(float) * MLA_H * MLA_R, err);
	if (!s->rows || !s->q || !s->qt || !s->lat || !s->s || !s->out)
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
	for (int c = 0; c < MLA_R; c++)
		dst[c] = fp8_e4m3_value(row[c]) * sc[c / 128];
	for (int c = 0; c < MLA_P; c++)
		dst[MLA_R + c] = bf16_to_f32(rope[c]);
}

static void mla_run(void *state)
{
	struct mla *s = state;
	int k = s->k, pairs = (k + 1) / 2;
	const float scale = 1.0f / sqrtf(192.0f);
#pragma omp parallel
	{
#pragma omp for schedule(static)
		for (int t = 0; t < k; t++)
			mla_decode_row(s->rows + (size_t)t * MLA_ROW, s->lat + (size_t)t * MLA_K);
		/* scores: heads are the vector dimension, two rows per pass */
#pragma omp for schedule(static)
		for (int p = 0; p < pairs; p++) {
			int t0 = 2 * p, t1 = t0 + 1 < k ? t0 + 1 : t0;
			const float *r0 = s->lat + (size_t)t0 * MLA_K, *r1 = s->lat + (size_t)t1 * MLA_K;
			for (int half = 0; half < MLA_H; half += 64) {
				float d0[64], d1[64];
				heads64_dots(s->qt + half, MLA_H, r0, r1, MLA_K, d0, d1);
				for (int h = 0; h < 64; h++) {
					s->s[(size_t)(half + h) * k + t0] = d0[h] * scale;
					s->s[(size_t)(half + h) * k + t1] = d1[h] * scale;
				}
			}
		}
#pragma omp for schedule(static)
		for (int h = 0; h < MLA_H; h++) {
			float *pr = s->s + (size_t)h * k, mx = -INFINITY, sum = 0;
			for (int t = 0; t < k; t++)
				mx = pr[t] > mx ? pr[t] : mx;
			for (int t = 0; t < k; t++)
				sum += pr[t] = expf(pr[t] - mx);
			for (int t = 0; t < k; t++)
				pr[t] /= sum;
		}
		/* out = P x latent: blocks of 64 rows (147 KB, L2-resident); 8 heads x
		 * 32 dims (16 vectors) accumulate in registers across a block */
#pragma omp for schedule(static)
		for (int h0 = 0; h0 < MLA_H; h0 += 8) {
			float o[8][MLA_R];
			for (int i = 0; i < 8; i++)
				for (int c = 0; c < MLA_R; c++)
					o[i][c] = 0;
			for (int t0 = 0; t0 < k; t0 += 64) {
				int t1 = t0 + 64 < k ? t0 + 64 : k;
				for (int c0 = 0; c0 < MLA_R; c0 += 32) {
					float acc[8][32];
					for (int i = 0; i < 8; i++)
						for (int c = 0; c < 32; c++)
							acc[i][c] = o[i][c0 + c];
					for (int t = t0; t < t1; t++) {
						const float *v = s->lat + (size_t)t * MLA_K + c0;
						for (int i = 0; i < 8; i++) {
							float pi = s->s[(size_t)(h0 + i) * k + t];
							for (int c = 0; c < 32; c++)
								acc[i][c] += pi * v[c];
						}
					}
					for (int i = 0; i < 8; i++)
						for (int c = 0; c < 32; c++)
							o[i][c0 + c] = acc[i][c];
				}
			}
			for (int i = 0; i < 8; i++)
				memcpy(s->out + (size_t)(h0 + i) * MLA_R, o[i], sizeof o[i]);
		}
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
	for (int t = 0; t < k && !rc; t++)
		mla_decode_row(s->rows + (size_t)t * MLA_ROW, lat + (size_t)t * MLA_K);
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
	free(s->rows), free(s->q), free(s->qt), free(s->lat), free(s->s), free(s->out);
	free(s);
}

/* ---- gqa_dense: one query token over the whole BF16 cache -----------------
 * Llama-3.1-70B: 64 query heads in 8 groups of 8, 128 dims.  K is kept in
 * pages of 16 tokens stored dimension-major ([kv][page][dim][16], the same
 * bytes as row-major, a layout a near-memory device is free to choose), so
 * 16 tokens are one vector; V is row-major [kv][token][dim].
 * FLOPs: 4 x 64 x 128 per token.  Bytes: 2 x 8 x 128 x 2 = 4096 per token. */
#define GH 64
#define GKV 8
#define GG (GH / GKV)
#define GD 128
#ifndef GQA_PF
#define GQA_PF 2 /* prefetch distance in 16-token pages */
#endif

struct gqa {
	int L, pages;
	uint16_t *k, *v;
	float *q, *s, *out;
};

static double gqa_flops(double L) { return 4.0 * GH * GD * L; }
static double gqa_bytes(double L) { return 4.0 * GKV * GD * L + 8.0 * GH * GD; }

/* K element (token t, dim d) of KV head kv in the paged layout. */
static inline size_t gqa_kidx(const struct gqa *s, int kv, int t, int d)
{
	return (((size_t)kv * s->pages + (size_t)(t / TILE)) * GD + (size_t)d) * TILE +
	       (size_t)(t % TILE);
}

static void gqa_teardown(void *state);

static void *gqa_setup(double size, struct kerr *err)
{
	struct gqa *s = calloc(1, sizeof *s);
	if (!s)
		return kerr_set(err, 0, 0, "out of memory"), NULL;
	s->L = (int)size;
	s->pages = (s->L + TILE - 1) / TILE;
	size_t nk = (size_t)GKV * s->pages * TILE * GD, nv = (size_t)GKV * s->L * GD;
	s->k = kalloc(2 * nk, err); /* padding tokens of the last page are zero */
	s->v = kalloc(2 * nv, err);
	s->q = kalloc(sizeof(float) * GH * GD, err);
	s->s = kalloc(sizeof(float) * GH * (size_t)s->pages * TILE, err);
	s->out = kalloc(sizeof(float) * GH * GD, err);
	if (!s->k || !s->v || !s->q || !s->s || !s->out)
		return gqa_teardown(s), NULL;
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	if (!g)
		return kerr_set(err, 0, 0, "out of memory"), gqa_teardown(s), NULL;
	gsl_rng_set(g, KSEED + 6);
	for (int kv = 0; kv < GKV; kv++)
		for (int t = 0; t < s->L; t++)
			fill_bf16(g, s->v + ((size_t)kv * s->L + t) * GD, GD);
	uint16_t row[GD];
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

static void gqa_run(void *state)
{
	struct gqa *s = state;
	const int L = s->L, P = s->pages, W = P * TILE;
	const float scale = 1.0f / sqrtf((float)GD);
#pragma omp parallel for schedule(static)
	for (int kv = 0; kv < GKV; kv++) {
		const float *q = s->q + (size_t)kv * GG * GD;
		float *sc = s->s + (size_t)kv * GG * W;
		float mx[GG], sum[GG];
		for (int g = 0; g < GG; g++)
			mx[g] = -INFINITY, sum[g] = 0;
		for (int p = 0; p < P; p++) { /* scores of 16 tokens at once */
			float kt[GD][TILE], acc[8][TILE];
			const uint16_t *kp = s->k + ((size_t)kv * P + p) * GD * TILE;
			float *ktf = &kt[0][0];
			for (int i = 0; i < GD * TILE; i += 32) /* PF pages ahead */
				__builtin_prefetch(kp + GQA_PF * GD * TILE + i);
			for (int i = 0; i < GD * TILE; i++)
				ktf[i] = bf16_to_f32(kp[i]);
			tile_dots(q, GD, GG, GD, (const float(*)[TILE])kt, acc);
			int nt = L - p * TILE < TILE ? L - p * TILE : TILE;
			for (int g = 0; g < GG; g++)
				for (int j = 0; j < nt; j++) {
					float a = acc[g][j] * scale;
					sc[(size_t)g * W + p * TILE + j] = a;
					mx[g] = a > mx[g] ? a : mx[g];
				}
		}
		for (int g = 0; g < GG; g++) {
			float *pr = sc + (size_t)g * W;
			for (int t = 0; t < L; t++)
				sum[g] += pr[t] = expf(pr[t] - mx[g]);
		}
		/* P x V over blocks of 256 tokens (64 KB of V, L2-resident); within a
		 * block four 32-dim quarters keep 8 heads x 2 vectors in registers */
		float out[GG][GD];
		for (int g = 0; g < GG; g++)
			for (int c = 0; c < GD; c++)
				out[g][c] = 0;
		for (int t0 = 0; t0 < L; t0 += 256) {
			int t1 = t0 + 256 < L ? t0 + 256 : L;
			for (int c0 = 0; c0 < GD; c0 += 32) {
				float acc[GG][32];
				for (int g = 0; g < GG; g++)
					for (int c = 0; c < 32; c++)
						acc[g][c] = out[g][c0 + c];
				for (int t = t0; t < t1; t++) {
					const uint16_t *vr = s->v + ((size_t)kv * L + t) * GD + c0;
					if (c0 == 0) /* first sweep of the block streams V in */
						__builtin_prefetch(vr + GQA_PF * 16 * GD),
							__builtin_prefetch(vr + GQA_PF * 16 * GD + 32),
							__builtin_prefetch(vr + GQA_PF * 16 * GD + 64),
							__builtin_prefetch(vr + GQA_PF * 16 * GD + 96);
					float vf[32];
					for (int c = 0; c < 32; c++)
						vf[c] = bf16_to_f32(vr[c]);
					for (int g = 0; g < GG; g++) {
						float pg = sc[(size_t)g * W + t];
						for (int c = 0; c < 32; c++)
							acc[g][c] += pg * vf[c];
					}
				}
				for (int g = 0; g < GG; g++)
					for (int c = 0; c < 32; c++)
						out[g][c0 + c] = acc[g][c];
			}
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
				o += p[t] * bf16_to_f32(s->v[((size_t)kv * L + t) * GD + d]);
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
	free(s->k), free(s->v), free(s->q), free(s->s), free(s->out);
	free(s);
}

const struct kernel_def kernel_mla = {
	"mla_sparse", OC_ATTENTION, "rows", "128 heads, 656 B FP8 rows (512 latent + 64 RoPE)",
	{2048, 8192, 32768}, mla_setup, mla_run, mla_flops, mla_bytes, mla_check, mla_teardown};
const struct kernel_def kernel_gqa = {
	"gqa_dense", OC_ATTENTION, "tokens", "64 query heads, 8 KV heads x 128 dims, BF16",
	{32768, 65536, 131072}, gqa_setup, gqa_run, gqa_flops, gqa_bytes, gqa_check,
	gqa_teardown};
