/* tile.h: the one inner kernel every scoring loop shares: dot products of
 * up to 8 query rows with a tile of 16 tokens stored dimension-major
 * (kt[d] holds dimension d of the 16 tokens), out[i][j] = q_i . token_j.
 * With GCC or Clang the 8 accumulators are 16-float vectors kept in
 * registers (GNU vector extension); other compilers get the plain loop. */
#ifndef KARAT_KERNELS_TILE_H
#define KARAT_KERNELS_TILE_H

#define TILE 16

#if defined(__GNUC__)
typedef float vtile __attribute__((vector_size(64)));

/* q: rows of length dims, stride ldq; nq <= 8 rows. */
static inline void tile_dots(const float *q, int ldq, int nq, int dims,
			     const float (*kt)[TILE], float out[8][TILE])
{
	vtile a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
	const float *q0 = q, *q1 = q + ldq, *q2 = q + 2 * ldq, *q3 = q + 3 * ldq;
	const float *q4 = q + 4 * ldq, *q5 = q + 5 * ldq, *q6 = q + 6 * ldq, *q7 = q + 7 * ldq;
	if (nq == 8) {
		for (int d = 0; d < dims; d++) {
			vtile k;
			__builtin_memcpy(&k, kt[d], sizeof k);
			a0 += k * q0[d], a1 += k * q1[d], a2 += k * q2[d], a3 += k * q3[d];
			a4 += k * q4[d], a5 += k * q5[d], a6 += k * q6[d], a7 += k * q7[d];
		}
	} else {
		for (int d = 0; d < dims; d++) {
			vtile k;
			__builtin_memcpy(&k, kt[d], sizeof k);
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
static inline void tile_dots(const float *q, int ldq, int nq, int dims,
			     const float (*kt)[TILE], float out[8][TILE])
{
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < TILE; j++)
			out[i][j] = 0;
	for (int d = 0; d < dims; d++)
		for (int i = 0; i < nq; i++)
			for (int j = 0; j < TILE; j++)
				out[i][j] += q[i * ldq + d] * kt[d][j];
}
#endif

/* d0[h] = sum_d qt[d][h] k0[d] and d1[h] likewise with k1, for 64 heads;
 * qt rows have stride ldq.  Heads are the vector dimension (4 x 16 lanes)
 * and two tokens share each load of qt: 8 accumulators in flight. */
static inline void heads64_dots(const float *qt, int ldq, const float *k0,
				const float *k1, int dims, float *d0, float *d1)
{
#if defined(__GNUC__)
	vtile a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
	for (int d = 0; d < dims; d++) {
		const float *r = qt + (long)d * ldq;
		vtile q0, q1, q2, q3;
		__builtin_memcpy(&q0, r, 64), __builtin_memcpy(&q1, r + 16, 64);
		__builtin_memcpy(&q2, r + 32, 64), __builtin_memcpy(&q3, r + 48, 64);
		float x = k0[d], y = k1[d];
		a0 += q0 * x, a1 += q1 * x, a2 += q2 * x, a3 += q3 * x;
		b0 += q0 * y, b1 += q1 * y, b2 += q2 * y, b3 += q3 * y;
	}
	__builtin_memcpy(d0, &a0, 64), __builtin_memcpy(d0 + 16, &a1, 64);
	__builtin_memcpy(d0 + 32, &a2, 64), __builtin_memcpy(d0 + 48, &a3, 64);
	__builtin_memcpy(d1, &b0, 64), __builtin_memcpy(d1 + 16, &b1, 64);
	__builtin_memcpy(d1 + 32, &b2, 64), __builtin_memcpy(d1 + 48, &b3, 64);
#else
	for (int h = 0; h < 64; h++)
		d0[h] = d1[h] = 0;
	for (int d = 0; d < dims; d++)
		for (int h = 0; h < 64; h++)
			d0[h] += qt[(long)d * ldq + h] * k0[d], d1[h] += qt[(long)d * ldq + h] * k1[d];
#endif
}

#endif
