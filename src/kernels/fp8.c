/* fp8.c: FP8 E4M3 (1 sign, 4 exponent bits with bias 7, 3 mantissa bits;
 * no infinities, S.1111.111 is NaN) decoded through a table. */
#include <math.h>
#include <pthread.h>

#include "kernels/kernel.h"
#include "kernels/tile.h"

static float table[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill(void)
{
	for (int b = 0; b < 256; b++) {
		int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
		float v = e ? ldexpf(1 + m / 8.0f, e - 7) : ldexpf(m / 8.0f, -6);
		if (e == 15 && m == 7)
			v = NAN;
		table[b] = s ? -v : v;
	}
}

const float *fp8_e4m3_table(void)
{
	pthread_once(&once, fill);
	return table;
}

uint8_t fp8_e4m3_encode(float x)
{
	const float *t = fp8_e4m3_table();
	int best = 0;
	float err = INFINITY;
	for (int b = 0; b < 256; b++) {
		if (isnan(t[b]))
			continue;
		float d = fabsf(t[b] - x);
		if (d < err)
			err = d, best = b;
	}
	return (uint8_t)best;
}

void fp8_e4m3_decode(const uint8_t *b, int n, float mul, float *dst)
{
	fp8_row(b, n, mul, dst);
}
