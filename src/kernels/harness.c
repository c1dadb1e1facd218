/* harness.c: timing, microbenchmarks and the calibration fit. */
#include "kernels/harness.h"

#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <time.h>

#include "base/clock.h"
#include "kernels/common.h"

#define MAX_REPS 2000


int time_run(void (*fn)(void *), void *state, double min_time, struct timing *t,
	     struct kerr *err)
{
	struct timespec res;
	if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
		return kerr_set(err, 0, 0, "CLOCK_MONOTONIC unavailable");
	t->clock_res_s = (double)res.tv_sec + 1e-9 * (double)res.tv_nsec;
	double t0 = clock_now();
	fn(state); /* warm-up: page faults, caches, thread pool */
	double once = clock_now() - t0;
	double floor_s = 1000 * t->clock_res_s;
	t->batch = once >= floor_s ? 1 : (int)ceil(floor_s / fmax(once, 1e-9));
	double reps[MAX_REPS];
	int n = 0;
	double start = clock_now();
	while (n < MAX_REPS && (n < 5 || clock_now() - start < min_time)) {
		double a = clock_now();
		for (int b = 0; b < t->batch; b++)
			fn(state);
		reps[n++] = (clock_now() - a) / t->batch;
	}
	gsl_sort(reps, 1, (size_t)n);
	t->min_s = reps[0];
	t->median_s = gsl_stats_median_from_sorted_data(reps, 1, (size_t)n);
	t->reps = n;
	return 0;
}

/* ---- triad: a[i] = b[i] + s * c[i]; 24 bytes per element counted -------- */
#define TRIAD_N (1u << 24) /* 128 MiB per array, far beyond the 48 MB L3 */

struct triad {
	double *a, *b, *c;
};

static void triad_run(void *state)
{
	struct triad *t = state;
	const double s = 3.0;
#pragma omp parallel for schedule(static)
	for (long i = 0; i < (long)TRIAD_N; i++)
		t->a[i] = t->b[i] + s * t->c[i];
}

/* ---- read stream: s += b[i] + c[i]; 16 bytes read per element ------------
 * The roof of kernels that only read (scoring scans): a triad also writes,
 * and writes cost more than reads, so a read-only kernel can beat it. */
static volatile double read_sink;

static void read_run(void *state)
{
	struct triad *t = state;
	double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
	for (long i = 0; i < (long)TRIAD_N; i++)
		s += t->b[i] + t->c[i];
	read_sink = s;
}

/* ---- FMA chains: 128 independent accumulators per thread ---------------- */
#define CHAINS 128
#define FMA_ITERS 200000L

static volatile float fma_sink;

static void fma_body(void)
{
	{
		float a[CHAINS];
		const float x = 0.9999999f, y = 1e-7f;
		for (int i = 0; i < CHAINS; i++)
			a[i] = (float)i * 1e-3f;
		for (long it = 0; it < FMA_ITERS; it++)
			for (int i = 0; i < CHAINS; i++)
				a[i] = a[i] * x + y;
		float s = 0;
		for (int i = 0; i < CHAINS; i++)
			s += a[i];
		fma_sink = s;
	}
}

static void fma_run(void *state)
{
	(void)state;
#pragma omp parallel
	fma_body();
}

static void fma_run1(void *state)
{
	(void)state;
	fma_body();
}

int measure_roof(double min_time, struct cpu_roof *r, struct kerr *err)
{
	struct triad t;
	t.a = kalloc(sizeof(double) * TRIAD_N, err);
	t.b = kalloc(sizeof(double) * TRIAD_N, err);
	t.c = kalloc(sizeof(double) * TRIAD_N, err);
	int rc = -1;
	if (t.a && t.b && t.c) {
#pragma omp parallel for schedule(static)
		for (long i = 0; i < (long)TRIAD_N; i++) /* first touch by the same threads */
			t.a[i] = 0, t.b[i] = 1, t.c[i] = 2;
		struct timing tt = {0}, tr = {0};
		if (time_run(triad_run, &t, min_time, &tt, err) == 0 &&
		    time_run(read_run, &t, min_time, &tr, err) == 0) {
			r->triad_bytes = 24.0 * TRIAD_N;
			r->bw_triad = r->triad_bytes / tt.min_s;
			r->bw_read = 16.0 * TRIAD_N / tr.min_s;
			r->bw = fmax(r->bw_triad, r->bw_read);
			rc = 0;
		}
	}
	free(t.a), free(t.b), free(t.c);
	if (rc)
		return rc;
	r->threads = omp_get_max_threads();
	struct timing tf = {0};
	if (time_run(fma_run, NULL, min_time, &tf, err) != 0)
		return -1;
	r->peak = 2.0 * CHAINS * FMA_ITERS * r->threads / tf.min_s;
	struct timing t1 = {0};
	if (time_run(fma_run1, NULL, min_time, &t1, err) != 0)
		return -1;
	r->peak1 = 2.0 * CHAINS * FMA_ITERS / t1.min_s;
	return 0;
}

int bench_kernel(const struct kernel_def *k, double size, const struct cpu_roof *roof,
		 double min_time, struct kernel_result *out, struct kerr *err)
{
	void *state = k->setup(size, err);
	if (!state)
		return -1;
	out->k = k;
	out->size = size;
	out->flops = k->flops(size);
	out->bytes = k->bytes(size);
	out->predicted = fmax(out->flops / roof->peak, out->bytes / roof->bw);
	int rc = time_run(k->run, state, min_time, &out->t, err);
	k->teardown(state);
	return rc;
}

int fit_kernel(const struct kernel_result *res, int n, const struct cpu_roof *roof,
	       struct kernel_fit *fit, struct kerr *err)
{
	if (n < 2)
		return kerr_set(err, 0, 0, "%s: need two sizes to fit", res[0].k->name);
	double ridge = roof->peak / roof->bw;
	fit->compute_bound = res[n - 1].bytes <= 0 ||
			     res[n - 1].flops / res[n - 1].bytes > ridge;
	double x[16], y[16], w[16];
	for (int i = 0; i < n && i < 16; i++) {
		x[i] = fit->compute_bound ? res[i].flops : res[i].bytes;
		y[i] = res[i].t.min_s; /* the best run, as the roof's: a shared host only adds time */
		w[i] = 1 / (y[i] * y[i]); /* relative errors count alike at every size */
	}
	double c0, c1, cov00, cov01, cov11;
	if (gsl_fit_wlinear(x, 1, w, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11,
			    &fit->chisq) != 0 || !(c1 > 0))
		return kerr_set(err, 0, 0, "%s: time does not grow with work; no fit",
				res[0].k->name);
	double roof_rate = fit->compute_bound ? roof->peak : roof->bw;
	fit->efficiency = 1 / (c1 * roof_rate);
	fit->overhead_s = c0 > 0 ? c0 : 0;
	return 0;
}

double fit_predict(const struct kernel_fit *fit, const struct kernel_result *r,
		   const struct cpu_roof *roof)
{
	double work = fit->compute_bound ? r->flops / roof->peak : r->bytes / roof->bw;
	return work / fit->efficiency + fit->overhead_s;
}
