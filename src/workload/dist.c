/* dist.c: length distributions: their CDFs, the length-biased masses and
 * inverse (GSL, with Brent's method where GSL's inversion gives up), the
 * check that a distribution can be drawn from, and the draws. */
#include "workload/workload.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/gslerr.h"

#define MAX_TOKENS WL_MAX_TOKENS

/* CDF of the distribution (biased: of its length-biased version). */
static double cdf(const struct wl_dist *d, double x, int biased)
{
	if (x <= 0)
		return 0;
	if (!isfinite(x))
		return 1;
	if (d->kind == WD_LOGNORMAL)
		return gsl_cdf_lognormal_P(x, log(d->median) + (biased ? d->sigma * d->sigma : 0),
					   d->sigma);
	return gsl_cdf_gamma_P(x, d->shape + (biased ? 1 : 0), d->scale);
}

/* Masses for length-biased draws from the clamped distribution: an atom
 * at min carries min P(X < min), one at max max P(X > max), the interior
 * x f(x); for lognormal and gamma the interior's mass is mean x (biased
 * CDF difference) in closed form. */
static void prepare_biased(struct wl_dist *d)
{
	memset(d->bmass, 0, sizeof d->bmass);
	double lo = d->has_min ? d->min : 0, hi = d->has_max ? d->max : INFINITY;
	if (d->kind == WD_LOGNORMAL || d->kind == WD_GAMMA) {
		double mean = d->kind == WD_LOGNORMAL
				      ? d->median * exp(d->sigma * d->sigma / 2)
				      : d->shape * d->scale;
		d->bcdf_lo = cdf(d, lo, 1), d->bcdf_hi = cdf(d, hi, 1);
		d->bmass[0] = lo * cdf(d, lo, 0);
		d->bmass[1] = mean * (d->bcdf_hi - d->bcdf_lo);
		d->bmass[2] = isfinite(hi) ? hi * (1 - cdf(d, hi, 0)) : 0;
	} else if (d->kind == WD_QUANTILES) {
		/* piecewise-uniform density: segment i's biased mass is its
		 * probability times its mid-point */
		double c = 0;
		for (int i = 0; i + 1 < d->nq; i++) {
			c += (d->qp[i + 1] - d->qp[i]) * (d->qv[i] + d->qv[i + 1]) / 2;
			d->bcum[i] = c;
		}
	}
}

static double biased_pinv(const struct wl_dist *d, double v)
{
	return d->kind == WD_LOGNORMAL
		       ? gsl_cdf_lognormal_Pinv(v, log(d->median) + d->sigma * d->sigma, d->sigma)
		       : gsl_cdf_gamma_Pinv(v, d->shape + 1, d->scale);
}

struct inv_arg {
	const struct wl_dist *d;
	double v;
};

static double inv_f(double x, void *arg)
{
	const struct inv_arg *a = arg;
	return cdf(a->d, x, 1) - a->v;
}

/* x with biased CDF v by Brent's method on the CDF (GSL's own inversion
 * iterates from a normal guess and gives up for gamma shapes in the
 * thousands); NaN if it fails too.  Draws are rounded to whole tokens, so
 * a tenth of a token is precise enough. */
static double biased_brent(const struct wl_dist *d, double v)
{
	double lo = d->has_min ? d->min : 0, hi = d->has_max ? d->max : 0;
	if (!d->has_max) { /* grow an upper end until it brackets v */
		hi = fmax(1, lo);
		while (cdf(d, hi, 1) < v && hi < MAX_TOKENS * 1e3)
			hi *= 2;
	}
	struct inv_arg a = {d, v};
	gsl_function fn = {inv_f, &a};
	gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
	if (!s || gsl_root_fsolver_set(s, &fn, lo, hi) != GSL_SUCCESS) {
		if (s)
			gsl_root_fsolver_free(s);
		return NAN;
	}
	int st = GSL_CONTINUE;
	for (int it = 0; it < 200 && st == GSL_CONTINUE; it++) {
		if (gsl_root_fsolver_iterate(s) != GSL_SUCCESS)
			break;
		st = gsl_root_test_interval(gsl_root_fsolver_x_lower(s),
					    gsl_root_fsolver_x_upper(s), 0.1, 0);
	}
	double x = st == GSL_SUCCESS ? gsl_root_fsolver_root(s) : NAN;
	gsl_root_fsolver_free(s);
	return x;
}

/* x with biased CDF v for a gamma of large shape k: Newton's method on
 * the CDF of gamma(k + 1) from the Wilson-Hilferty guess, to a twentieth
 * of a token (draws are rounded to whole tokens); NaN when it does not
 * settle inside the clamp within a few steps (Brent then). */
static double biased_newton(const struct wl_dist *d, double v)
{
	double k = d->shape + 1, z = gsl_cdf_ugaussian_Pinv(v);
	double w = 1 - 1 / (9 * k) + z / (3 * sqrt(k));
	double x = k * d->scale * w * w * w;
	double lo = d->has_min ? d->min : 0, hi = d->has_max ? d->max : INFINITY;
	for (int it = 0; it < 12 && isfinite(x) && x > lo && x < hi; it++) {
		double f = gsl_ran_gamma_pdf(x, k, d->scale);
		if (!(f > 0))
			return NAN;
		double step = (cdf(d, x, 1) - v) / f;
		x -= step;
		if (fabs(step) < 0.05)
			return x > lo && x < hi ? x : NAN;
	}
	return NAN;
}

/* The interior of a length-biased lognormal or gamma draw: x with biased
 * CDF v, GSL's inversion first, Brent where it does not converge: at once
 * for gamma shapes from GAMMA_PINV_MAX_SHAPE, where GSL's inversion spends
 * tens of microseconds before it fails (measured: shape 3e5, 9 s for
 * 100,000 draws). */
#define GAMMA_PINV_MAX_SHAPE 1000
static double biased_inv(const struct wl_dist *d, double v)
{
	gslerr_take(NULL, 0); /* the handler: installed by wl_dist_check */
	if (d->kind == WD_GAMMA && d->shape >= GAMMA_PINV_MAX_SHAPE) {
		double x = biased_newton(d, v); /* GSL's would iterate long, then fail */
		return isfinite(x) ? x : biased_brent(d, v);
	}
	double x = biased_pinv(d, v);
	if (!gslerr_take(NULL, 0) && isfinite(x))
		return x;
	return biased_brent(d, v);
}

/* Whether lognormal or gamma d can be drawn from: its masses finite and
 * its biased inverse finite at the ends and the middle; why says not. */
static int dist_computable(const struct wl_dist *d, char *why, size_t n)
{
	gslerr_install();
	if (gslerr_take(why, n))
		return 0; /* from prepare_biased */
	double tot = d->bmass[0] + d->bmass[1] + d->bmass[2];
	if (!isfinite(tot) || !(tot > 0)) {
		snprintf(why, n, "its mean is not finite in double precision");
		return 0;
	}
	const double probe[] = {1e-6, 0.5, 1 - 1e-6};
	for (int i = 0; i < 3 && d->bmass[1] > 0; i++) {
		double v = d->bcdf_lo + probe[i] * (d->bcdf_hi - d->bcdf_lo);
		double x = biased_inv(d, v);
		if (!isfinite(x)) {
			if (!gslerr_take(why, n))
				snprintf(why, n, "its inverse CDF has no finite value at %g", v);
			return 0;
		}
	}
	return 1;
}

int wl_dist_check(struct wl_dist *d, const char *sec, const char *path, int line,
		  struct kerr *err)
{
	switch (d->kind) {
	case WD_NONE:
		return kerr_set(err, path, line, "[%s] needs dist = fixed, lognormal, "
				"gamma or quantiles (or a trace in [workload])", sec);
	case WD_FIXED:
		if (!(d->value > 0))
			return kerr_set(err, path, line, "%s: fixed needs value > 0", sec);
		break;
	case WD_LOGNORMAL:
		if (!(d->median > 0) || !(d->sigma > 0))
			return kerr_set(err, path, line, "%s: lognormal needs median > 0 and sigma > 0", sec);
		break;
	case WD_GAMMA:
		if (!(d->shape > 0) || !(d->scale > 0))
			return kerr_set(err, path, line, "%s: gamma needs shape > 0 and scale > 0", sec);
		break;
	case WD_QUANTILES:
		if (d->nq < 2 || d->qp[0] != 0 || d->qp[d->nq - 1] != 1)
			return kerr_set(err, path, line,
					"%s: a quantile table needs p0 and p100 and at least "
					"two points", sec);
		for (int i = 1; i < d->nq; i++)
			if (d->qv[i] < d->qv[i - 1])
				return kerr_set(err, path, line,
						"%s: quantiles must not decrease (p%g = %g < p%g = %g)",
						sec, 100 * d->qp[i], d->qv[i], 100 * d->qp[i - 1],
						d->qv[i - 1]);
		break;
	}
	if (d->has_min && d->has_max && d->min > d->max)
		return kerr_set(err, path, line, "%s: min %g exceeds max %g", sec, d->min,
				d->max);
	gslerr_install();
	gslerr_take(NULL, 0);
	prepare_biased(d);
	char why[200];
	if ((d->kind == WD_LOGNORMAL || d->kind == WD_GAMMA) && !dist_computable(d, why, sizeof why)) {
		if (d->kind == WD_LOGNORMAL)
			return kerr_set(err, path, line, "%s: lognormal with median %g and "
					"sigma %g cannot be drawn from: %s", sec, d->median,
					d->sigma, why);
		return kerr_set(err, path, line, "%s: gamma with shape %g and scale %g "
				"cannot be drawn from: %s", sec, d->shape, d->scale, why);
	}
	/* its upper tail within the token limit, or cut by max: a context of
	 * 10^58 tokens is no workload */
	if ((d->kind == WD_LOGNORMAL || d->kind == WD_GAMMA) && !d->has_max) {
		double q = d->kind == WD_LOGNORMAL
				   ? gsl_cdf_lognormal_Pinv(0.999, log(d->median), d->sigma)
				   : gsl_cdf_gamma_Pinv(0.999, d->shape, d->scale);
		double mean = d->kind == WD_LOGNORMAL ? d->median * exp(d->sigma * d->sigma / 2)
						      : d->shape * d->scale;
		if (!isfinite(q) && d->kind == WD_GAMMA) /* GSL's inverse fails at huge shapes,
							     where the gamma is near normal: 6 sd
							     lie above its P99.9 */
			q = mean + 6 * sqrt(d->shape) * d->scale;
		if (!(q <= WL_MAX_TOKENS) || !(mean <= WL_MAX_TOKENS))
			return kerr_set(err, path, line, "%s: %s's %s is %.3g tokens, over the "
					"limit of %.0e: give %s.max, or a narrower distribution",
					sec, wl_kind_names[d->kind], q <= WL_MAX_TOKENS ? "mean"
					: "99.9th percentile", q <= WL_MAX_TOKENS ? mean : q,
					WL_MAX_TOKENS, sec);
	}
	return 0;
}


/* ---- drawing ---- */

static double clamp(const struct wl_dist *d, double x)
{
	if (d->has_min && x < d->min) x = d->min;
	if (d->has_max && x > d->max) x = d->max;
	return x;
}

double wl_dist_draw(const struct wl_dist *d, gsl_rng *r)
{
	double x = 0;
	switch (d->kind) {
	case WD_FIXED: x = d->value; break;
	case WD_LOGNORMAL: x = gsl_ran_lognormal(r, log(d->median), d->sigma); break;
	case WD_GAMMA: x = gsl_ran_gamma(r, d->shape, d->scale); break;
	case WD_QUANTILES: { /* inverse CDF, linear between the given points */
		double u = gsl_rng_uniform(r);
		int i = 1;
		while (i < d->nq - 1 && d->qp[i] < u)
			i++;
		double f = (u - d->qp[i - 1]) / (d->qp[i] - d->qp[i - 1]);
		x = d->qv[i - 1] + f * (d->qv[i] - d->qv[i - 1]);
		break;
	}
	default: break;
	}
	return clamp(d, round(x));
}

double wl_dist_draw_biased(const struct wl_dist *d, gsl_rng *r)
{
	double x;
	switch (d->kind) {
	case WD_LOGNORMAL:
	case WD_GAMMA: {
		double tot = d->bmass[0] + d->bmass[1] + d->bmass[2];
		double u = gsl_rng_uniform(r) * tot;
		if (u < d->bmass[0])
			return clamp(d, round(d->min));
		if (u >= d->bmass[0] + d->bmass[1] && d->bmass[2] > 0)
			return clamp(d, round(d->max));
		/* the interior by inversion of the biased CDF */
		double v = d->bcdf_lo + gsl_rng_uniform_pos(r) * (d->bcdf_hi - d->bcdf_lo);
		x = biased_inv(d, v);
		return isfinite(x) ? clamp(d, round(x)) : NAN; /* the caller checks */
	}
	case WD_QUANTILES: {
		/* a segment by biased mass, then density proportional to x on it */
		double u = gsl_rng_uniform(r) * d->bcum[d->nq - 2];
		int i = 0;
		while (i < d->nq - 2 && d->bcum[i] <= u)
			i++;
		double a = d->qv[i], b = d->qv[i + 1];
		x = sqrt(a * a + gsl_rng_uniform(r) * (b * b - a * a));
		/* min and max inside the table clamp after the draw (their atoms
		 * carry the table's mass, not the length-biased one) */
		return clamp(d, round(x));
	}
	default:
		return wl_dist_draw(d, r);
	}
}

double workload_draw_context(const struct kworkload *w, gsl_rng *r)
{
	double in, out;
	if (w->n_trace > 0) {
		size_t i = gsl_ran_discrete(r, w->pick);
		in = w->trace_in[i], out = w->trace_out[i];
	} else {
		in = wl_dist_draw(&w->in, r);
		out = wl_dist_draw_biased(&w->out, r);
	}
	double L = in + floor(gsl_rng_uniform(r) * out);
	return L < 1 ? 1 : L;
}

double workload_quantile(const double *sorted, long n, double p)
{
	return gsl_stats_quantile_from_sorted_data(sorted, 1, (size_t)n, p);
}


/* The mean of d as drawn (clamped into [min, max]). */
static double dist_mean(const struct wl_dist *d)
{
	switch (d->kind) {
	case WD_FIXED:
		return d->value;
	case WD_LOGNORMAL:
	case WD_GAMMA: /* the length-biased masses are the clamped mean's parts */
		return d->bmass[0] + d->bmass[1] + d->bmass[2];
	case WD_QUANTILES:
		return d->nq >= 2 ? d->bcum[d->nq - 2] : 0;
	default:
		return 0;
	}
}

static double trace_mean(const double *v, long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += v[i];
	return n > 0 ? s / (double)n : 0;
}

double workload_mean_input(const struct kworkload *w)
{
	return w->n_trace > 0 ? trace_mean(w->trace_in, w->n_trace) : dist_mean(&w->in);
}

double workload_mean_output(const struct kworkload *w)
{
	return w->n_trace > 0 ? trace_mean(w->trace_out, w->n_trace) : dist_mean(&w->out);
}
