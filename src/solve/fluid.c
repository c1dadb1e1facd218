/* fluid.c: a sampled batch with many requests per device, evaluated from
 * its sums instead of request by request (issue 15), so that its cost does
 * not grow with the batch.
 *
 * The exact path draws B requests from the pool, places them longest
 * first on the device with the most room, splits each GPU's requests into
 * micro-batches (in the order the GPU received them, or balanced by CMR)
 * and prices each micro-batch at its slowest device.  With many requests
 * per device that placement leaves every device within one short request
 * of the same cache bytes, and the micro-batches are either equal shares
 * (CMR, one micro-batch) or the batch's longest-first quantile bands
 * (arrival order).  What is left to chance is the batch's own draw: how
 * many requests fall in each part of the pool and what they sum to.
 *
 * So the pool, in longest-first order, is cut into PLAN_FLUID_STRATA
 * strata of equal size.  A sample draws each stratum's count from the
 * normal limit of the multinomial (B/S each, covariance B/S (I - 1/S)) and
 * its summed values from the normal limit of a sum of that many draws (the
 * stratum's mean and covariance, through an eigen factor from GSL).  The
 * micro-batches' bands are cut from the strata in order; every device gets
 * 1/D of its band, every GPU 1/G.  plan_fluid_ok decides where this holds
 * (enough requests per device and per stratum, no request large against a
 * device's share, the memory-aware placement, and no GEMM tile edge just
 * above a GPU's even share, where the exact placement's busiest GPU would
 * pay a wave more); elsewhere the exact path runs.  tests/test_fluid.c
 * holds the two together. */
#include "solve/plan.h"

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { FV_CTX, FV_STORE, FV_STORE_GPU, FV_RES }; /* a request's values, in order */

/* Value x of pool entry e. */
static double value_of(const struct plan *p, struct plan_ws *w, int e, int x)
{
	const struct plan_fluid *f = &w->fl;
	if (x == FV_CTX)
		return p->ctx[e];
	if (x == FV_STORE)
		return p->store[e];
	if (x == FV_STORE_GPU)
		return p->store_gpu[e];
	x -= FV_RES;
	if (x < f->nm)
		return p->mem_side.pool[(size_t)e * p->mem_side.nres + x];
	return p->gpu_side.pool[(size_t)e * p->gpu_side.nres + (x - f->nm)];
}

/* Each stratum's mean and covariance factor.  -1 when out of memory. */
static int fluid_build(const struct plan *p, struct plan_ws *w)
{
	struct plan_fluid *f = &w->fl;
	f->state = -1;
	f->nm = p->mem_side.nres;
	f->ng = p->has_mem && p->gpu_side.k ? p->gpu_side.nres : 0;
	f->k = FV_RES + f->nm + f->ng;
	if (f->k > PLAN_FLUID_VALUES)
		return 0; /* the exact path only */
	int k = f->k, per = PLAN_POOL / PLAN_FLUID_STRATA, rc = -1;
	int *by_pos = malloc(sizeof(int) * PLAN_POOL);
	f->st = malloc(sizeof *f->st);
	gsl_eigen_symmv_workspace *ew = gsl_eigen_symmv_alloc((size_t)k);
	gsl_matrix *cov = gsl_matrix_alloc((size_t)k, (size_t)k);
	gsl_matrix *vec = gsl_matrix_alloc((size_t)k, (size_t)k);
	gsl_vector *val = gsl_vector_alloc((size_t)k);
	if (!by_pos || !f->st || !ew || !cov || !vec || !val)
		goto done;
	for (int e = 0; e < PLAN_POOL; e++) /* longest first */
		by_pos[PLAN_POOL - 1 - p->rank[e]] = e;
	f->max_store = f->max_store_gpu = 0;
	f->alike = 1;
	for (int e = 0; e < PLAN_POOL; e++) {
		f->alike &= p->store[e] == p->store[0] && p->store_gpu[e] == p->store_gpu[0];
		f->max_store = fmax(f->max_store, p->store[e]);
		f->max_store_gpu = fmax(f->max_store_gpu, p->store_gpu[e]);
	}
	for (int s = 0; s < PLAN_FLUID_STRATA; s++) {
		const int *ent = by_pos + s * per;
		double *mu = f->st->mu[s], vx[PLAN_FLUID_VALUES][PLAN_POOL / PLAN_FLUID_STRATA];
		for (int x = 0; x < k; x++) {
			mu[x] = 0;
			for (int j = 0; j < per; j++) {
				vx[x][j] = value_of(p, w, ent[j], x);
				mu[x] += vx[x][j] / per;
			}
		}
		for (int x = 0; x < k; x++)
			for (int y = 0; y <= x; y++) { /* the draw is uniform over the stratum */
				double c = 0;
				for (int j = 0; j < per; j++)
					c += (vx[x][j] - mu[x]) * (vx[y][j] - mu[y]);
				gsl_matrix_set(cov, (size_t)x, (size_t)y, c / per);
				gsl_matrix_set(cov, (size_t)y, (size_t)x, c / per);
			}
		if (gsl_eigen_symmv(cov, val, vec, ew) != 0)
			goto done;
		double top = 0;
		for (int r = 0; r < k; r++)
			top = fmax(top, gsl_vector_get(val, (size_t)r));
		f->rank[s] = 0;
		for (int r = 0; r < k; r++) {
			double lam = gsl_vector_get(val, (size_t)r);
			if (!(lam > 1e-14 * top))
				continue; /* a direction the stratum does not vary in */
			double *col = f->st->fac[s][f->rank[s]++];
			for (int x = 0; x < k; x++)
				col[x] = sqrt(lam) * gsl_matrix_get(vec, (size_t)x, (size_t)r);
		}
	}
	f->state = 1;
	rc = 0;
done:
	free(by_pos);
	if (ew)
		gsl_eigen_symmv_free(ew);
	gsl_matrix_free(cov);
	gsl_matrix_free(vec);
	gsl_vector_free(val);
	return rc;
}

/* Every condition of the fluid path but the tile edge's. */
static int fluid_fits(const struct plan *p, struct plan_ws *w, long B, int m)
{
	const struct design *d = &p->d;
	if (d->per_request || d->sys->admission != ADMIT_MEMORY || (p->has_mem && p->devs < p->gpus) ||
	    p->hot) /* which requests stay whole in HBM is decided request by request */
		return 0;
	if ((double)B < (double)PLAN_FLUID_MIN * m * p->devs ||
	    B < (long)PLAN_FLUID_PER_STRATUM * PLAN_FLUID_STRATA)
		return 0;
	if (w->fl.state == 0 && fluid_build(p, w) != 0)
		w->fl.state = -1; /* out of memory: the exact path still runs */
	const struct plan_fluid *f = &w->fl;
	if (f->state != 1)
		return 0;
	/* the sums stand for the longest-first packer's near-even placement;
	 * online placement is as even only where every request stores the
	 * same bytes (it then deals them out in turn), else it is uneven by
	 * up to a request per unit and is placed request by request */
	if (d->sys->placement != PLACE_OFFLINE_LPT && !f->alike)
		return 0;
	/* every request small against a device's share of the batch, so the
	 * placement can even the devices out (and none needs splitting) */
	double n = (double)B / p->devs;
	return f->max_store * PLAN_FLUID_GRAIN <= n * p->mean_store &&
	       f->max_store_gpu * PLAN_FLUID_GRAIN <= (double)B / p->gpus * p->mean_store_gpu;
}

/* The exact placement evens out bytes, not requests, so where requests
 * differ its busiest GPU holds a request or two more than an even share
 * (up to PLAN_FLUID_EXCESS in nearly every sample; alike requests are
 * dealt evenly).  Where the GPU's work is flat over that range, the fluid
 * path's even share prices it; at a GEMM tile edge one request more costs
 * a whole wave.  Whether some micro-batch's even share of B at m sits
 * just below an edge (NaN work too: the exact path reports the error). */
static int at_edge(const struct plan *p, struct plan_ws *w, long B, int m)
{
	long excess = w->fl.alike ? 0 : PLAN_FLUID_EXCESS;
	for (long reqs = B / m; reqs <= (B + m - 1) / m; reqs++) { /* micro-batch sizes */
		long n0 = (reqs + p->gpus - 1) / p->gpus;
		double t0 = plan_gpu_work(p, w, n0), t1 = plan_gpu_work(p, w, n0 + excess);
		if (!(t1 <= t0 * (1 + PLAN_FLUID_STEP)))
			return 1;
	}
	return 0;
}

int plan_fluid_ok(const struct plan *p, struct plan_ws *w, long B, int m)
{
	return fluid_fits(p, w, B, m) && !at_edge(p, w, B, m);
}

int plan_fluid_edge(const struct plan *p, struct plan_ws *w, long B, int m)
{
	return fluid_fits(p, w, B, m) && at_edge(p, w, B, m);
}

/* The batch's strata: counts and summed values (sums[s][0..k)). */
static void draw_strata(const struct plan *p, struct plan_ws *w, long B, int sample, double *cnt,
			double sums[PLAN_FLUID_STRATA][PLAN_FLUID_VALUES])
{
	const struct plan_fluid *f = &w->fl;
	const int S = PLAN_FLUID_STRATA;
	gsl_rng_set(w->rng, p->d.seed * 1000003UL + (unsigned long)sample + 1);
	double z[PLAN_FLUID_STRATA], zbar = 0, e = (double)B / S;
	for (int s = 0; s < S; s++)
		zbar += (z[s] = gsl_ran_gaussian_ziggurat(w->rng, 1.0)) / S;
	for (int s = 0; s < S; s++) { /* sums to B: the deviations sum to zero */
		double c = e + sqrt(e) * (z[s] - zbar);
		cnt[s] = c > 0 ? c : 0;
	}
	for (int s = 0; s < S; s++) {
		double *v = sums[s], sc = sqrt(cnt[s]);
		for (int x = 0; x < f->k; x++)
			v[x] = cnt[s] * f->st->mu[s][x];
		for (int r = 0; r < f->rank[s]; r++) {
			double g = sc * gsl_ran_gaussian_ziggurat(w->rng, 1.0);
			const double *col = f->st->fac[s][r];
			for (int x = 0; x < f->k; x++)
				v[x] += g * col[x];
		}
	}
}

/* The m micro-batches' summed values (band[i][0..k)): equal shares of the
 * whole (one micro-batch, or CMR's balanced split), or in arrival order
 * the longest-first bands of equal count, cut from the strata in order
 * (a stratum a boundary crosses is shared in proportion to its count). */
static void cut_bands(const struct plan *p, struct plan_ws *w, int m, const double *cnt,
		      double sums[PLAN_FLUID_STRATA][PLAN_FLUID_VALUES],
		      double band[PIPE_MAX_MB][PLAN_FLUID_VALUES])
{
	int k = w->fl.k;
	memset(band, 0, sizeof(double) * PIPE_MAX_MB * PLAN_FLUID_VALUES);
	if (m == 1 || sched_uses_cmr(p->d.sched)) {
		for (int s = 0; s < PLAN_FLUID_STRATA; s++)
			for (int x = 0; x < k; x++)
				band[0][x] += sums[s][x] / m;
		for (int i = 1; i < m; i++)
			memcpy(band[i], band[0], sizeof(double) * (size_t)k);
		return;
	}
	double total = 0;
	for (int s = 0; s < PLAN_FLUID_STRATA; s++)
		total += cnt[s];
	double width = total / m, pos = 0;
	int i = 0;
	for (int s = 0; s < PLAN_FLUID_STRATA; s++) {
		double left = cnt[s];
		while (left > 0) {
			double end = (i + 1) * width;
			if (i < m - 1 && pos >= end) {
				i++;
				continue;
			}
			double take = i < m - 1 && left > end - pos ? end - pos : left;
			for (int x = 0; x < k; x++)
				band[i][x] += sums[s][x] * (take / cnt[s]);
			pos += take, left -= take;
		}
	}
}

/* The cache-side seconds of one unit holding `share` of a band of cnt
 * requests (values v), on side sd (the memory side or the GPU's
 * fallback stages). */
static void unit_time(const struct plan *p, const struct plan_side *sd, const double *band,
		      const double *res, double cnt, double share, int where, double *t,
		      double *tm)
{
	double r[PLAN_MAX_VALUES], v[PLAN_MAX_VALUES];
	for (int x = 0; x < sd->nres; x++)
		r[x] = res[x] * share;
	plan_side_eval(sd, cnt * share, band[FV_CTX] * share, r, v);
	plan_bucket_time(p, &p->layout, p->slot_dev, p->slot_map, v, cnt * share, where, t);
	*tm = plan_bucket_time(p, &p->layout_mtp, p->slot_dev_mtp, p->slot_map_mtp, v,
			       cnt * share, where, NULL);
}

/* J of a whole band's cache-side work on side sd (energy is linear in the
 * sums, so the devices' shares add up to the band's). */
static double band_energy(const struct plan *p, const struct plan_side *sd, const double *band,
			  const double *res, double cnt, int want_gpu)
{
	double v[PLAN_MAX_VALUES];
	plan_side_eval(sd, cnt, band[FV_CTX], res, v);
	return plan_bucket_energy(p, &p->layout, p->slot_dev, p->slot_map, v, want_gpu) +
	       p->d.mtp * plan_bucket_energy(p, &p->layout_mtp, p->slot_dev_mtp, p->slot_map_mtp,
					     v, want_gpu);
}

int plan_fluid_sample(const struct plan *p, struct plan_ws *w, long B, int m, int sample, int want_energy, int *nmb,
		      double *use_g, double *use_m)
{
	const struct plan_fluid *f = &w->fl;
	int G = p->gpus, D = p->devs;
	double cnt[PLAN_FLUID_STRATA], sums[PLAN_FLUID_STRATA][PLAN_FLUID_VALUES];
	double band[PIPE_MAX_MB][PLAN_FLUID_VALUES];
	draw_strata(p, w, B, sample, cnt, sums);
	cut_bands(p, w, m, cnt, sums, band);
	double ctx = 0, store = 0, store_gpu = 0;
	for (int s = 0; s < PLAN_FLUID_STRATA; s++)
		ctx += sums[s][FV_CTX], store += sums[s][FV_STORE], store_gpu += sums[s][FV_STORE_GPU];
	w->ctx_last = ctx;
	w->nsharded = 0;
	/* the placement evens the devices out: each holds its share */
	*use_g = p->weights + store_gpu / G + (p->has_mem ? 0 : store / G);
	*use_m = p->has_mem ? store / D : 0;
	double e_a2a = want_energy ? plan_a2a_energy(p) : 0;
	for (int i = 0; i < m; i++) {
		struct plan_mb *l = &w->mbl[i];
		const double *b = band[i];
		long reqs = B / m + (i < B % m); /* counts within one of each other */
		l->n = (int)((reqs + G - 1) / G);
		l->c = p->has_mem ? ceil((double)reqs / D) : 0;
		l->n_port = l->n;
		l->merge = l->bcast = 0;
		unit_time(p, &p->mem_side, b, b + FV_RES, (double)reqs, 1.0 / D, W_DEVICE, l->attn,
			  &l->attn_m);
		memset(l->fb, 0, sizeof l->fb);
		memset(l->fbp, 0, sizeof l->fbp);
		l->fbm = l->fbpm = 0;
		if (p->has_mem && p->gpu_side.k)
			unit_time(p, &p->gpu_side, b, b + FV_RES + f->nm, (double)reqs, 1.0 / G,
				  W_GPU_PRE, l->fb, &l->fbm);
		if (p->has_post)
			unit_time(p, &p->gpu_side, b, b + FV_RES + f->nm, (double)reqs, 1.0 / G,
				  W_GPU_POST, l->fbp, &l->fbpm);
		l->energy = 0;
		if (!want_energy)
			continue;
		long q = reqs / G, r = reqs % G; /* r GPUs hold one request more */
		double e_hi = r ? plan_gpu_energy(p, w, q + 1, e_a2a) : 0;
		double e_lo = q ? plan_gpu_energy(p, w, q, e_a2a) : 0;
		if (isnan(e_hi) || isnan(e_lo))
			return -1;
		l->energy = (double)r * e_hi + (double)(G - r) * e_lo +
			    band_energy(p, &p->mem_side, b, b + FV_RES, (double)reqs, 0);
		if (p->has_mem && p->gpu_side.k)
			l->energy += band_energy(p, &p->gpu_side, b, b + FV_RES + f->nm, (double)reqs, 1);
	}
	*nmb = m;
	return 0;
}
