/* common.h: internal helpers of kernels/: aligned buffers, seeded inputs,
 * BF16 conversion. */
#ifndef KARAT_KERNELS_COMMON_H
#define KARAT_KERNELS_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "kernels/kernel.h"

#define KSEED 20261130ul

/* 64-byte aligned, zeroed; NULL on failure (err filled). */
void *kalloc(size_t bytes, struct kerr *err);

/* Uniform floats in [lo, hi). */
void fill_uniform(gsl_rng *r, float *x, size_t n, float lo, float hi);
/* Random E4M3 bytes in [-1.875, 1.875] (no NaN codes). */
void fill_fp8(gsl_rng *r, uint8_t *x, size_t n);
/* Random BF16 values in (-1, 1). */
void fill_bf16(gsl_rng *r, uint16_t *x, size_t n);

static inline float bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline uint16_t f32_to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/* Writes the reason into why and returns -1 (for check functions). */
int check_fail(char *why, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* E4M3 to float without a table: a normal code's exponent and mantissa
 * move into a float with the bias raised by 120; a subnormal code (zero
 * exponent) is its mantissa times 2^-9.  No float subnormal is ever formed
 * (they stall the FPU without flush-to-zero).  Vectorises; equal to the
 * table for every non-NaN code (tested). */
static inline float fp8_e4m3_value(uint8_t b)
{
	uint32_t mag = b & 0x7F, sign = (uint32_t)(b & 0x80) << 24;
	uint32_t u = sign | ((mag << 20) + (120u << 23));
	float normal, sub = (float)(mag & 7) * 0x1p-9f;
	memcpy(&normal, &u, sizeof normal);
	return (mag >> 3) ? normal : (sign ? -sub : sub);
}

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)

/* 16 E4M3 bytes as floats times 2^-8, in four instructions.  Sign-extended
 * to 16 bits and shifted left by 7, a byte's exponent and mantissa land in
 * an FP16's, whose bias (15) is 8 above E4M3's (7); clearing bit 14 drops
 * the copy of the sign.  Subnormal codes become FP16 subnormals of the same
 * scaled value, and the FP16 to FP32 conversion is exact, so this equals
 * fp8_e4m3_value(b) * 2^-8 for every non-NaN code (tested). */
static inline __m512 fp8x16_scaled(const uint8_t *p)
{
	__m256i w = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p));
	w = _mm256_and_si256(_mm256_slli_epi16(w, 7), _mm256_set1_epi16((short)0xBFFF));
	return _mm512_cvtph_ps(w);
}
#endif

/* Relative closeness for checks. */
int close_rel(double a, double b, double tol);

#endif
