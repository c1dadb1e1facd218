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
 * pay a wave more); elsewhere the exact path runs.  Online placement
 * leaves each unit the same bytes but its own mix of requests: there each
 * unit's values are drawn on their own (online_build, online_sample).
 * tests/test_fluid.c holds the two paths together. */
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

/* The columns of an eigen factor of the n x n covariance cov (so that
 * sum_r g_r col_r, g_r standard normal, has that covariance) into
 * col[r][0..n), dropping directions that do not vary; their count, or -1
 * when GSL fails.  cov is overwritten. */
static int factor(gsl_matrix *cov, int n, double col[][PLAN_FLUID_UNIT])
{
	int rank = -1;
	gsl_eigen_symmv_workspace *ew = gsl_eigen_symmv_alloc((size_t)n);
	gsl_matrix *vec = gsl_matrix_alloc((size_t)n, (size_t)n);
	gsl_vector *val = gsl_vector_alloc((size_t)n);
	if (!ew || !vec || !val || gsl_eigen_symmv(cov, val, vec, ew) != 0)
		goto done;
	double top = 0;
	for (int r = 0; r < n; r++)
		top = fmax(top, gsl_vector_get(val, (size_t)r));
	rank = 0;
	for (int r = 0; r < n; r++) {
		double lam = gsl_vector_get(val, (size_t)r);
		if (!(lam > 1e-14 * top))
			continue; /* a direction that does not vary */
		for (int x = 0; x < n; x++)
			col[rank][x] = sqrt(lam) * gsl_matrix_get(vec, (size_t)x, (size_t)r);
		rank++;
	}
done:
	if (ew)
		gsl_eigen_symmv_free(ew);
	gsl_matrix_free(vec);
	gsl_vector_free(val);
	return rank;
}

/* The bytes by which online placement picks a unit: what it stores on a
 * memory device, or in the GPU's HBM without one. */
static double placed_bytes(const struct plan *p, int e)
{
	return p->store[e] + (p->has_mem ? 0 : p->store_gpu[e]);
}

/* Online placement deals each request, as it arrives, to the unit with
 * the most room, so every unit ends with the same bytes T (within a
 * request), made of a random mix of requests: its count N is that of a
 * renewal process stopped at T.  Per request, with b its placed bytes
 * over their mean, c = 1 - b is what the count deviates by, and
 * u = v - (mean v) b what a value v deviates by beyond its bytes' share.
 * A unit of n = T / mean b requests: its count deviates by the sum of n
 * c (the normal limit, variance n E[c^2]: Cox 1962, "Renewal Theory",
 * section 3.3), and its values by
 * beta times that plus the sum of n residuals e = u - beta c, beta the
 * regression of u on c, drawn through ofac, the factor of their
 * covariance.  Those sums stop at the last request wholly below T; the
 * one that crosses T is drawn by its bytes, with a uniform share of them
 * below T (the renewal's age, Cox 1962 section 5.2): the unit holds it
 * whole, less what that share took from the others.  -1 when out of
 * memory. */
static int online_build(const struct plan *p, struct plan_ws *w)
{
	struct plan_fluid *f = &w->fl;
	struct plan_strata *st = f->st;
	int k = f->k;
	double mu[PLAN_FLUID_VALUES] = {0}, mb = 0;
	for (int e = 0; e < PLAN_POOL; e++) {
		for (int x = 0; x < k; x++)
			mu[x] += value_of(p, w, e, x) / PLAN_POOL;
		mb += placed_bytes(p, e) / PLAN_POOL;
	}
	f->orank = 0;
	if (!(mb > 0))
		return 0; /* nothing placed by bytes: the online model is not used */
	gsl_matrix *cov = gsl_matrix_calloc((size_t)k, (size_t)k);
	double *u = malloc(sizeof(double) * PLAN_POOL * PLAN_FLUID_UNIT);
	int rc = -1;
	if (!cov || !u)
		goto done;
	double c2 = 0, uc[PLAN_FLUID_VALUES] = {0};
	for (int e = 0; e < PLAN_POOL; e++) {
		double b = placed_bytes(p, e) / mb, c = 1 - b, *ue = u + (size_t)e * PLAN_FLUID_UNIT;
		for (int x = 0; x < k; x++) {
			ue[x] = value_of(p, w, e, x) - mu[x] * b;
			uc[x] += ue[x] * c / PLAN_POOL;
		}
		ue[k] = c;
		c2 += c * c / PLAN_POOL;
	}
	st->ocount_var = c2;
	for (int x = 0; x < k; x++)
		st->obeta[x] = c2 > 0 ? uc[x] / c2 : 0;
	for (int x = 0; x < k; x++)
		for (int y = 0; y <= x; y++) { /* the residuals have mean zero */
			double s = 0;
			for (int e = 0; e < PLAN_POOL; e++) {
				const double *ue = u + (size_t)e * PLAN_FLUID_UNIT;
				s += (ue[x] - st->obeta[x] * ue[k]) * (ue[y] - st->obeta[y] * ue[k]);
			}
			gsl_matrix_set(cov, (size_t)x, (size_t)y, s / PLAN_POOL);
			gsl_matrix_set(cov, (size_t)y, (size_t)x, s / PLAN_POOL);
		}
	f->orank = factor(cov, k, st->ofac);
	for (int e = 0; e < PLAN_POOL; e++)
		u[e] = placed_bytes(p, e); /* the last request's draw is by its bytes */
	f->olast = gsl_ran_discrete_preproc(PLAN_POOL, u);
	st->omean_bytes = mb;
	for (int x = 0; x < k; x++)
		st->omu[x] = mu[x];
	f->unit = malloc(sizeof(double) * (size_t)(p->devs + p->gpus) * PLAN_FLUID_UNIT);
	rc = f->orank < 0 || !f->unit || !f->olast ? -1 : 0;
done:
	gsl_matrix_free(cov);
	free(u);
	return rc;
}

/* Whether each unit's mix is drawn on its own (online placement of
 * requests that differ). */
static int by_unit(const struct plan *p, const struct plan_fluid *f)
{
	return !f->alike && p->d.sys->placement != PLACE_OFFLINE_LPT;
}

/* Each stratum's mean and covariance factor, and online placement's.  -1
 * when out of memory. */
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
	gsl_matrix *cov = gsl_matrix_alloc((size_t)k, (size_t)k);
	if (!by_pos || !f->st || !cov)
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
		double col[PLAN_FLUID_UNIT][PLAN_FLUID_UNIT];
		if ((f->rank[s] = factor(cov, k, col)) < 0)
			goto done;
		for (int r = 0; r < f->rank[s]; r++)
			memcpy(f->st->fac[s][r], col[r], sizeof(double) * (size_t)k);
	}
	if (by_unit(p, f) && online_build(p, w) != 0)
		goto done;
	f->state = 1;
	rc = 0;
done:
	free(by_pos);
	gsl_matrix_free(cov);
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
	/* the sums stand for the longest-first packer's near-even placement,
	 * and for online placement where every request stores the same bytes
	 * (it then deals them out in turn); else online placement leaves each
	 * unit its own mix, drawn unit by unit (online_sample), with CMR or
	 * one micro-batch */
	if (by_unit(p, f) && (!f->unit || (m > 1 && !sched_uses_cmr(d->sched)) ||
			      (double)B < (double)PLAN_FLUID_MIN_ONLINE * m * p->devs))
		return 0; /* arrival-order micro-batches of online units, or too few */
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
	if (by_unit(p, &w->fl))
		return 0; /* each GPU's count is drawn: its edges are priced as met */
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

/* The cache-side seconds of one unit with values v and res of cnt
 * requests on side sd, raised into the peaks t (by class) and *tm. */
static void unit_peak(const struct plan *p, const struct plan_side *sd, const double *v,
		      const double *res, double cnt, int where, double *t, double *tm)
{
	double ut[LC_N], um;
	unit_time(p, sd, v, res, cnt, 1.0, where, ut, &um);
	for (int c = 0; c < LC_N; c++)
		t[c] = fmax(t[c], ut[c]);
	*tm = fmax(*tm, um);
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

/* Online placement (by_unit): after the batch's strata, each device's
 * deviation from its share (the sum of its n = B / D requests' u, through
 * ofac), less the devices' mean deviation so that they add up to the
 * batch; each GPU's values are its devices' (a GPU is its own unit
 * without devices).  Every micro-batch takes 1/m of each unit (CMR, or
 * one); it runs at its busiest device and GPU. */
static int online_sample(const struct plan *p, struct plan_ws *w, long B, int m,
			 const double *tot, int want_energy, double *use_g, double *use_m)
{
	const struct plan_fluid *f = &w->fl;
	int G = p->gpus, D = p->devs, k = f->k, n = k + 1;
	double *dv = f->unit, *gv = f->unit + (size_t)D * PLAN_FLUID_UNIT;
	double mean[PLAN_FLUID_UNIT] = {0}, sc = sqrt((double)B / D);
	const struct plan_strata *st = f->st;
	double sdc = sqrt(st->ocount_var);
	for (int d = 0; d < D; d++) {
		double *v = dv + (size_t)d * PLAN_FLUID_UNIT;
		v[k] = sc * sdc * gsl_ran_gaussian_ziggurat(w->rng, 1.0); /* the count */
		for (int x = 0; x < k; x++)
			v[x] = st->obeta[x] * v[k];
		for (int r = 0; r < f->orank; r++) {
			double g = sc * gsl_ran_gaussian_ziggurat(w->rng, 1.0);
			const double *col = st->ofac[r];
			for (int x = 0; x < k; x++)
				v[x] += g * col[x];
		}
		/* the request that crosses T, whole, less the share of T its
		 * bytes before T took from the others */
		int e = (int)gsl_ran_discrete(w->rng, f->olast);
		double age = (1 - gsl_rng_uniform(w->rng)) * placed_bytes(p, e) / st->omean_bytes;
		for (int x = 0; x < k; x++)
			v[x] += value_of(p, w, e, x) - age * st->omu[x];
		v[k] += 1 - age;
		for (int x = 0; x < n; x++)
			mean[x] += v[x] / D;
	}
	memset(gv, 0, sizeof(double) * (size_t)G * PLAN_FLUID_UNIT);
	double ug = 0, um = 0;
	for (int d = 0; d < D; d++) {
		double *v = dv + (size_t)d * PLAN_FLUID_UNIT;
		double *g = gv + (size_t)plan_gpu_of(p, d) * PLAN_FLUID_UNIT;
		for (int x = 0; x < k; x++)
			v[x] = fmax(tot[x] / D + v[x] - mean[x], 0);
		v[k] = fmax((double)B / D + v[k] - mean[k], 1);
		for (int x = 0; x < n; x++)
			g[x] += v[x];
		um = fmax(um, v[FV_STORE]);
	}
	for (int g = 0; g < G; g++) {
		const double *v = gv + (size_t)g * PLAN_FLUID_UNIT;
		ug = fmax(ug, v[FV_STORE_GPU] + (p->has_mem ? 0 : v[FV_STORE]));
	}
	*use_g = p->weights + ug;
	*use_m = p->has_mem ? um : 0;
	/* the busiest unit of each kind, in every micro-batch alike */
	struct plan_mb *l = &w->mbl[0];
	double nmax = 0, cmax = 0;
	for (int g = 0; g < G; g++)
		nmax = fmax(nmax, gv[(size_t)g * PLAN_FLUID_UNIT + k] / m);
	for (int d = 0; p->has_mem && d < D; d++)
		cmax = fmax(cmax, dv[(size_t)d * PLAN_FLUID_UNIT + k] / m);
	l->n = (int)ceil(nmax - 1e-9);
	l->c = ceil(cmax - 1e-9);
	l->n_port = l->n;
	l->merge = l->bcast = 0;
	memset(l->attn, 0, sizeof l->attn);
	memset(l->fb, 0, sizeof l->fb);
	memset(l->fbp, 0, sizeof l->fbp);
	l->attn_m = l->fbm = l->fbpm = 0;
	double u[PLAN_FLUID_UNIT];
	for (int d = 0; d < D; d++) { /* the devices' (the GPUs' without devices) */
		const double *v = dv + (size_t)d * PLAN_FLUID_UNIT;
		for (int x = 0; x < k; x++)
			u[x] = v[x] / m;
		unit_peak(p, &p->mem_side, u, u + FV_RES, v[k] / m, W_DEVICE, l->attn, &l->attn_m);
	}
	for (int g = 0; g < G && ((p->has_mem && p->gpu_side.k) || p->has_post); g++) {
		const double *v = gv + (size_t)g * PLAN_FLUID_UNIT;
		for (int x = 0; x < k; x++)
			u[x] = v[x] / m;
		if (p->has_mem && p->gpu_side.k)
			unit_peak(p, &p->gpu_side, u, u + FV_RES + f->nm, v[k] / m, W_GPU_PRE, l->fb,
				  &l->fbm);
		if (p->has_post)
			unit_peak(p, &p->gpu_side, u, u + FV_RES + f->nm, v[k] / m, W_GPU_POST, l->fbp,
				  &l->fbpm);
	}
	l->energy = 0;
	if (want_energy) {
		double e_a2a = plan_a2a_energy(p), band[PLAN_FLUID_VALUES];
		for (int g = 0; g < G; g++) { /* at its count, to the nearest request */
			long c = (long)floor(gv[(size_t)g * PLAN_FLUID_UNIT + k] / m + 0.5);
			double e = plan_gpu_energy(p, w, c, e_a2a);
			if (isnan(e))
				return -1;
			l->energy += e;
		}
		for (int x = 0; x < k; x++)
			band[x] = tot[x] / m;
		l->energy += band_energy(p, &p->mem_side, band, band + FV_RES, (double)B / m, 0);
		if (p->has_mem && p->gpu_side.k)
			l->energy += band_energy(p, &p->gpu_side, band, band + FV_RES + f->nm,
						 (double)B / m, 1);
	}
	for (int i = 1; i < m; i++)
		w->mbl[i] = *l;
	return 0;
}

int plan_fluid_sample(const struct plan *p, struct plan_ws *w, long B, int m, int sample, int want_energy, int *nmb,
		      double *use_g, double *use_m)
{
	const struct plan_fluid *f = &w->fl;
	int G = p->gpus, D = p->devs;
	double cnt[PLAN_FLUID_STRATA], sums[PLAN_FLUID_STRATA][PLAN_FLUID_VALUES];
	double band[PIPE_MAX_MB][PLAN_FLUID_VALUES];
	draw_strata(p, w, B, sample, cnt, sums);
	double tot[PLAN_FLUID_VALUES] = {0}; /* the batch's sums */
	for (int s = 0; s < PLAN_FLUID_STRATA; s++)
		for (int x = 0; x < f->k; x++)
			tot[x] += sums[s][x];
	w->ctx_last = tot[FV_CTX];
	w->nsharded = 0;
	*nmb = m;
	if (by_unit(p, f))
		return online_sample(p, w, B, m, tot, want_energy, use_g, use_m);
	cut_bands(p, w, m, cnt, sums, band);
	/* the placement evens the devices out: each holds its share */
	double store = tot[FV_STORE], store_gpu = tot[FV_STORE_GPU];
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
	return 0;
}
