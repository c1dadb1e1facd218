/* tile.h: the inner kernels the scoring and attention loops share, each
 * with its sums in registers: dot products of up to 8 query rows with a
 * tile of 16 tokens stored dimension-major (tile_dots), of 32 heads with 8
 * rows (heads32_dots), and the probability-weighted sum of value rows
 * (pv_slice).  With GCC or Clang the sums are 16-float vectors (GNU vector
 * extension, AVX-512 conversions where the target has them); other
 * compilers get the plain loops. */
#ifndef KARAT_KERNELS_TILE_H
#define KARAT_KERNELS_TILE_H

#include "kernels/common.h"

#define TILE 16

/* How a tile's elements are stored: FP32, BF16, or FP8 E4M3 read as
 * its value times 2^-8 (the caller scales the query by 2^8, exactly). */
enum tile_kind { TILE_F32, TILE_BF16, TILE_FP8S };

#if defined(__GNUC__)
typedef float vtile __attribute__((vector_size(64)));
/* The loaders return a 64-byte vector: always inlined, so no copy of them
 * is ever called across an ABI (without AVX-512 GCC would warn that such a
 * return changes the ABI). */
#define VINLINE static inline __attribute__((always_inline))
#pragma GCC diagnostic ignored "-Wpsabi"

/* 16 consecutive BF16 values as floats. */
VINLINE vtile bf16_vec(const uint16_t *p)
{
	vtile v = {0}; /* every lane is set below */
#if defined(__AVX512F__)
	__m512i u = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
	v = (vtile)_mm512_castsi512_ps(_mm512_slli_epi32(u, 16));
#else
	for (int j = 0; j < TILE; j++)
		v[j] = bf16_to_f32(p[j]);
#endif
	return v;
}

/* The 16 elements from element off of an array of the given kind. */
VINLINE vtile vec16(const void *base, size_t off, enum tile_kind kind)
{
	vtile v = {0}; /* every lane is set below */
	if (kind == TILE_BF16) {
		v = bf16_vec((const uint16_t *)base + off);
	} else if (kind == TILE_FP8S) {
		const uint8_t *p = (const uint8_t *)base + off;
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
		v = (vtile)fp8x16_scaled(p);
#else
		for (int j = 0; j < TILE; j++)
			v[j] = fp8_e4m3_value(p[j]) * 0x1p-8f;
#endif
	} else {
		__builtin_memcpy(&v, (const float *)base + off, sizeof v);
	}
	return v;
}

/* The 16 elements of row d of a tile, as floats. */
VINLINE vtile tile_row(const void *kt, int d, enum tile_kind kind)
{
	return vec16(kt, (size_t)d * TILE, kind);
}

/* q: rows of length dims, stride ldq; nq <= 8 rows; kt: dims rows of 16
 * elements of the given kind. */
static inline void tile_dots(const float *q, int ldq, int nq, int dims, const void *kt,
			     enum tile_kind kind, float out[8][TILE])
{
	vtile a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
	const float *q0 = q, *q1 = q + ldq, *q2 = q + 2 * ldq, *q3 = q + 3 * ldq;
	const float *q4 = q + 4 * ldq, *q5 = q + 5 * ldq, *q6 = q + 6 * ldq, *q7 = q + 7 * ldq;
	if (nq == 8) {
		for (int d = 0; d < dims; d++) {
			vtile k = tile_row(kt, d, kind);
			a0 += k * q0[d], a1 += k * q1[d], a2 += k * q2[d], a3 += k * q3[d];
			a4 += k * q4[d], a5 += k * q5[d], a6 += k * q6[d], a7 += k * q7[d];
		}
	} else if (nq == 4) { /* two rows of the tile per pass: 8 chains in flight */
		vtile b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
		int d = 0;
		for (; d + 1 < dims; d += 2) {
			vtile k = tile_row(kt, d, kind), l = tile_row(kt, d + 1, kind);
			a0 += k * q0[d], a1 += k * q1[d], a2 += k * q2[d], a3 += k * q3[d];
			b0 += l * q0[d + 1], b1 += l * q1[d + 1], b2 += l * q2[d + 1], b3 += l * q3[d + 1];
		}
		for (; d < dims; d++) {
			vtile k = tile_row(kt, d, kind);
			a0 += k * q0[d], a1 += k * q1[d], a2 += k * q2[d], a3 += k * q3[d];
		}
		a0 += b0, a1 += b1, a2 += b2, a3 += b3;
	} else {
		for (int d = 0; d < dims; d++) {
			vtile k = tile_row(kt, d, kind);
			a0 += k * q0[d];
			if (nq > 1) a1 += k * q1[d];
			if (nq > 2) a2 += k * q2[d];
			if (nq > 3) a3 += k * q3[d];
			if (nq > 4) a4 += k * q4[d];
			if (nq > 5) a5 += k * q5[d];
			if (nq > 6) a6 += k * q6[d];
			if (nq > 7) a7 += k * q7[d];
		}
	}
	__builtin_memcpy(out[0], &a0, sizeof a0), __builtin_memcpy(out[1], &a1, sizeof a1);
	__builtin_memcpy(out[2], &a2, sizeof a2), __builtin_memcpy(out[3], &a3, sizeof a3);
	__builtin_memcpy(out[4], &a4, sizeof a4), __builtin_memcpy(out[5], &a5, sizeof a5);
	__builtin_memcpy(out[6], &a6, sizeof a6), __builtin_memcpy(out[7], &a7, sizeof a7);
}
#else
static inline float elem(const void *base, size_t i, enum tile_kind kind)
{
	if (kind == TILE_BF16)
		return bf16_to_f32(((const uint16_t *)base)[i]);
	if (kind == TILE_FP8S)
		return fp8_e4m3_value(((const uint8_t *)base)[i]) * 0x1p-8f;
	return ((const float *)base)[i];
}

static inline void tile_dots(const float *q, int ldq, int nq, int dims, const void *kt,
			     enum tile_kind kind, float out[8][TILE])
{
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < TILE; j++)
			out[i][j] = 0;
	for (int d = 0; d < dims; d++)
		for (int i = 0; i < nq; i++)
			for (int j = 0; j < TILE; j++)
				out[i][j] += q[i * ldq + d] * elem(kt, (size_t)d * TILE + j, kind);
}
#endif

/* The largest of 16 floats: a lane tree where AVX-512 has one, not a
 * chain of 16 dependent comparisons. */
static inline float max16(const float *a)
{
#if defined(__AVX512F__)
	return _mm512_reduce_max_ps(_mm512_loadu_ps(a));
#else
	float m = a[0];
	for (int j = 1; j < TILE; j++)
		m = a[j] > m ? a[j] : m;
	return m;
#endif
}

/* o[i * ldo + c] += sum_j p[i * ph + j * pt] v[j * ldv + c] for 8 query
 * rows i, 16 columns c and nt value rows j of the given kind. */
static inline void pv_slice(const void *v, size_t ldv, enum tile_kind kind, int nt,
			    const float *p, size_t ph, size_t pt, float *o, size_t ldo)
{
#if defined(__GNUC__)
	vtile a[8];
	for (int i = 0; i < 8; i++)
		__builtin_memcpy(&a[i], o + i * ldo, sizeof a[i]);
	for (int j = 0; j < nt; j++) {
		vtile x = vec16(v, (size_t)j * ldv, kind);
		for (int i = 0; i < 8; i++)
			a[i] += x * p[i * ph + (size_t)j * pt];
	}
	for (int i = 0; i < 8; i++)
		__builtin_memcpy(o + i * ldo, &a[i], sizeof a[i]);
#else
	for (int j = 0; j < nt; j++)
		for (int i = 0; i < 8; i++)
			for (int c = 0; c < TILE; c++)
				o[i * ldo + c] += p[i * ph + (size_t)j * pt] *
						  elem(v, (size_t)j * ldv + c, kind);
#endif
}

/* out[r * ldo + i] = sum_d qt[d * ldq + i] x[r * ldx + d] for 32 heads i
 * and 8 rows r: heads are the vector dimension (2 x 16 lanes), each load of
 * qt serves 8 rows, 16 sums in flight. */
static inline void heads32_dots(const float *qt, size_t ldq, const float *x, size_t ldx,
				int dims, float *out, size_t ldo)
{
#if defined(__GNUC__)
	vtile a[8][2];
	for (int r = 0; r < 8; r++)
		a[r][0] = a[r][1] = (vtile){0};
	for (int d = 0; d < dims; d++) {
		vtile q0, q1;
		__builtin_memcpy(&q0, qt + (size_t)d * ldq, sizeof q0);
		__builtin_memcpy(&q1, qt + (size_t)d * ldq + TILE, sizeof q1);
		for (int r = 0; r < 8; r++) {
			float y = x[(size_t)r * ldx + (size_t)d];
			a[r][0] += q0 * y, a[r][1] += q1 * y;
		}
	}
	for (int r = 0; r < 8; r++) {
		__builtin_memcpy(out + (size_t)r * ldo, &a[r][0], sizeof a[r][0]);
		__builtin_memcpy(out + (size_t)r * ldo + TILE, &a[r][1], sizeof a[r][1]);
	}
#else
	for (int r = 0; r < 8; r++)
		for (int i = 0; i < 32; i++) {
			float t = 0;
			for (int d = 0; d < dims; d++)
				t += qt[(size_t)d * ldq + i] * x[(size_t)r * ldx + d];
			out[(size_t)r * ldo + i] = t;
		}
#endif
}

/* n FP8 E4M3 bytes (n a multiple of 16) times mul, as floats. */
static inline void fp8_row(const uint8_t *b, int n, float mul, float *dst)
{
#if defined(__GNUC__)
	for (int c = 0; c < n; c += TILE) {
		vtile v = vec16(b, (size_t)c, TILE_FP8S) * (mul * 0x1p8f);
		__builtin_memcpy(dst + c, &v, sizeof v);
	}
#else
	for (int c = 0; c < n; c++)
		dst[c] = fp8_e4m3_value(b[c]) * mul;
#endif
}

#endif
