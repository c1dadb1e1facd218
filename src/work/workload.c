/* workload.c: loading workload INIs and traces, and drawing lengths. */
#include "work/workload.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/gslerr.h"
#include "base/units.h"

const char *const wl_kind_names[WD_N + 1] = {"none", "fixed", "lognormal", "gamma",
					     "quantiles", 0};
const char *const wl_origin_names[WO_N + 1] = {"trace", "scaled", "synthetic", 0};

#define MAX_TOKENS 1e9

static int lookup(const char *const *names, const char *v)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], v) == 0)
			return i;
	return -1;
}

static int copy_str(char *dst, size_t n, const char *v, const char *what,
		    const char *path, int line, struct kerr *err)
{
	if (strlen(v) >= n)
		return kerr_set(err, path, line, "%s is longer than %zu characters", what,
				n - 1);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* "p99.9" -> 0.999; -1 when key is not a percentile key. */
static double pct_key(const char *key)
{
	if (key[0] != 'p' || !key[1])
		return -1;
	char *end;
	errno = 0;
	double p = strtod(key + 1, &end);
	if (*end || errno || !(p >= 0 && p <= 100) || !(key[1] >= '0' && key[1] <= '9'))
		return -1;
	return p / 100;
}

static int set_dist(struct wl_dist *d, const char *sec, const char *key,
		    const char *v, const char *path, int line, struct kerr *err)
{
	char why[160];
	double x;
	if (!d->line || strcmp(key, "dist") == 0)
		d->line = line; /* errors about the whole section point here */
	if (strcmp(key, "dist") == 0) {
		int k = lookup(wl_kind_names, v);
		if (k <= WD_NONE)
			return kerr_set(err, path, line,
					"%s.dist: '%s' is not fixed, lognormal, gamma or quantiles",
					sec, v);
		d->kind = k;
		return 0;
	}
	enum unit_class u = strcmp(key, "sigma") == 0 || strcmp(key, "shape") == 0
				    ? U_REAL : U_TOKENS;
	double p = pct_key(key);
	if (p < 0 && strcmp(key, "value") && strcmp(key, "median") && strcmp(key, "sigma") &&
	    strcmp(key, "shape") && strcmp(key, "scale") && strcmp(key, "min") &&
	    strcmp(key, "max"))
		return kerr_set(err, path, line,
				"unknown key %s.%s (dist, value, median, sigma, shape, "
				"scale, min, max, or a percentile such as p50)", sec, key);
	if (strcmp(key, "scale") == 0)
		u = U_REAL;
	if (unit_parse(v, u, &x, why, sizeof why) != 0)
		return kerr_set(err, path, line, "%s.%s: %s", sec, key, why);
	if (!(x >= 0) || x > MAX_TOKENS)
		return kerr_set(err, path, line, "%s.%s: %g is out of range [0, %g]", sec,
				key, x, MAX_TOKENS);
	if (p >= 0) {
		for (int i = 0; i < d->nq; i++)
			if (d->qp[i] == p)
				return kerr_set(err, path, line, "%s.%s: percentile given twice",
						sec, key);
		if (d->nq == WL_MAX_Q)
			return kerr_set(err, path, line, "%s: more than %d percentiles", sec,
					WL_MAX_Q);
		int i = d->nq++;
		while (i > 0 && d->qp[i - 1] > p) { /* keep p ascending */
			d->qp[i] = d->qp[i - 1], d->qv[i] = d->qv[i - 1];
			i--;
		}
		d->qp[i] = p, d->qv[i] = x;
		return 0;
	}
	if (strcmp(key, "value") == 0) d->value = x;
	else if (strcmp(key, "median") == 0) d->median = x;
	else if (strcmp(key, "sigma") == 0) d->sigma = x;
	else if (strcmp(key, "shape") == 0) d->shape = x;
	else if (strcmp(key, "scale") == 0) d->scale = x;
	else if (strcmp(key, "min") == 0) d->min = x, d->has_min = 1;
	else d->max = x, d->has_max = 1;
	return 0;
}

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

/* The interior of a length-biased lognormal or gamma draw: x with biased
 * CDF v, GSL's inversion first, Brent where it does not converge. */
static double biased_inv(const struct wl_dist *d, double v)
{
	gslerr_install();
	gslerr_take(NULL, 0);
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

static int check_dist(struct wl_dist *d, const char *sec, const char *path,
		      int line, struct kerr *err)
{
	if (d->line > 0 && line == 0)
		line = d->line; /* line -1: an override, no line to name */
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
	return 0;
}

static int set_main(struct kworkload *w, const char *key, const char *v,
		    const char *path, int line, struct kerr *err)
{
	if (strcmp(key, "name") == 0)
		return copy_str(w->name, sizeof w->name, v, "workload.name", path, line, err);
	if (strcmp(key, "origin") == 0) {
		int k = lookup(wl_origin_names, v);
		if (k < 0)
			return kerr_set(err, path, line,
					"workload.origin: '%s' is not trace, scaled or synthetic", v);
		w->origin = k;
		return 0;
	}
	if (strcmp(key, "trace") == 0) {
		/* relative to the INI's folder */
		const char *slash = strrchr(path, '/');
		int dir = v[0] == '/' || !slash ? 0 : (int)(slash - path + 1);
		if ((size_t)snprintf(w->trace, sizeof w->trace, "%.*s%s", dir, path, v) >=
		    sizeof w->trace)
			return kerr_set(err, path, line, "workload.trace: path too long");
		return 0;
	}
	if (strcmp(key, "input_column") == 0)
		return copy_str(w->in_col, sizeof w->in_col, v, "workload.input_column",
				path, line, err);
	if (strcmp(key, "output_column") == 0)
		return copy_str(w->out_col, sizeof w->out_col, v, "workload.output_column",
				path, line, err);
	return kerr_set(err, path, line, "unknown key workload.%s (name, origin, trace, "
			"input_column, output_column)", key);
}

static int set_entry(struct kworkload *w, const char *sec, const char *key,
		     const char *v, const char *path, int line, struct kerr *err)
{
	if (strcmp(sec, "workload") == 0)
		return set_main(w, key, v, path, line, err);
	if (strcmp(sec, "input") == 0)
		return set_dist(&w->in, sec, key, v, path, line, err);
	if (strcmp(sec, "output") == 0)
		return set_dist(&w->out, sec, key, v, path, line, err);
	return kerr_set(err, path, line, "unknown section [%s] (workload, input, output)",
			sec);
}

static int finish(struct kworkload *w, const char *path, struct kerr *err)
{
	if (!w->name[0])
		return kerr_set(err, path, 0, "workload.name is required");
	workload_free(w);
	if (w->trace[0]) {
		if (!w->in_col[0] || !w->out_col[0])
			return kerr_set(err, path, 0, "a trace needs workload.input_column "
					"and workload.output_column");
		if (workload_read_trace(w->trace, w->in_col, w->out_col, &w->trace_in,
					&w->trace_out, &w->n_trace, err) != 0)
			return -1;
		double sum = 0;
		for (long i = 0; i < w->n_trace; i++)
			sum += w->trace_out[i];
		if (!(sum > 0))
			return kerr_set(err, w->trace, 0, "no row has output tokens: nothing decodes");
		w->pick = gsl_ran_discrete_preproc((size_t)w->n_trace, w->trace_out);
		if (!w->pick)
			return kerr_set(err, w->trace, 0, "out of memory");
		return 0;
	}
	if (check_dist(&w->in, "input", path, 0, err) != 0 ||
	    check_dist(&w->out, "output", path, 0, err) != 0)
		return -1;
	return 0;
}

/* Binds a loaded document (owned by the caller) into w. */
static int load_doc(const struct ini_doc *doc, const char *path, struct kworkload *w,
		    struct kerr *err)
{
	int rc = 0;
	for (int i = 0; i < doc->n && rc == 0; i++) {
		const struct ini_entry *e = &doc->e[i];
		rc = set_entry(w, e->section, e->key, e->value, doc->path, e->line, err);
	}
	if (rc == 0 && w->origin < 0)
		rc = kerr_set(err, path, 0, "workload.origin is required: trace, scaled or "
			      "synthetic (say what the lengths are)");
	if (rc == 0)
		rc = finish(w, path, err);
	if (rc != 0)
		workload_free(w);
	return rc;
}

int workload_load(const char *path, struct kworkload *w, struct kerr *err)
{
	gslerr_install();
	memset(w, 0, sizeof *w);
	w->origin = -1;
	struct ini_doc *doc = ini_doc_load(path, err);
	if (!doc)
		return -1;
	int rc = load_doc(doc, path, w, err);
	ini_doc_free(doc);
	return rc;
}

int workload_parse(const char *name, const char *text, size_t len, struct kworkload *w,
		   struct kerr *err)
{
	gslerr_install();
	memset(w, 0, sizeof *w);
	w->origin = -1;
	struct ini_doc *doc = ini_doc_parse(name, text, len, err);
	if (!doc)
		return -1;
	int rc = load_doc(doc, name, w, err);
	ini_doc_free(doc);
	return rc;
}

int workload_set(struct kworkload *w, const char *section, const char *key,
		 const char *value, struct kerr *err)
{
	if (w->trace[0] && strcmp(section, "workload") != 0)
		return kerr_set(err, 0, 0, "--set %s.%s: workload %s draws from a trace; "
				"[%s] does not apply", section, key, w->name, section);
	if (set_entry(w, section, key, value, "--set", 0, err) != 0)
		return -1;
	if (strcmp(section, "workload") == 0 &&
	    (!strcmp(key, "trace") || (w->trace[0] && (!strcmp(key, "input_column") ||
						       !strcmp(key, "output_column")))))
		return finish(w, "--set", err); /* (re)read the trace */
	if (!w->trace[0] && strcmp(section, "workload") != 0) {
		struct wl_dist *d = strcmp(section, "input") == 0 ? &w->in : &w->out;
		return check_dist(d, section, "--set", -1, err);
	}
	return 0;
}

void workload_fixed(struct kworkload *w, double context)
{
	memset(w, 0, sizeof *w);
	snprintf(w->name, sizeof w->name, "fixed");
	w->origin = WO_SYNTHETIC;
	w->in.kind = WD_FIXED, w->in.value = context;
	w->out.kind = WD_FIXED, w->out.value = 0;
}

void workload_free(struct kworkload *w)
{
	free(w->trace_in);
	free(w->trace_out);
	if (w->pick)
		gsl_ran_discrete_free(w->pick);
	w->trace_in = w->trace_out = NULL;
	w->pick = NULL;
	w->n_trace = 0;
}

/* ---- traces ---- */

struct trace_rd {
	const char *path, *in_col, *out_col;
	int col_in, col_out, field, header_done, failed;
	long row;          /* data rows seen */
	int line;          /* line being parsed (a row is named by its last) */
	double vin, vout;
	int got_in, got_out;
	double *in, *out;
	long n, cap;
	char **head;       /* header names, for duplicates */
	int nhead;
	struct kerr *err;
};

static int trace_fail(struct trace_rd *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int trace_fail(struct trace_rd *t, const char *fmt, ...)
{
	if (t->failed)
		return -1;
	t->failed = 1;
	va_list ap;
	va_start(ap, fmt);
	kerr_vset(t->err, t->path, t->line, fmt, ap);
	va_end(ap);
	return -1;
}

static void on_header(struct trace_rd *t, const char *s, size_t len, int f)
{
	if (t->nhead == TRACE_MAX_COLS) {
		trace_fail(t, "header has more than %d columns", TRACE_MAX_COLS);
		return;
	}
	for (int i = 0; i < t->nhead; i++)
		if (strlen(t->head[i]) == len && memcmp(t->head[i], s, len) == 0) {
			trace_fail(t, "header names column '%.*s' twice (columns %d and %d)",
				   (int)(len < 40 ? len : 40), s, i + 1, f + 1);
			return;
		}
	char *copy = malloc(len + 1);
	if (!copy) {
		trace_fail(t, "out of memory");
		return;
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	t->head[t->nhead++] = copy;
	if (len == strlen(t->in_col) && memcmp(s, t->in_col, len) == 0)
		t->col_in = f;
	if (len == strlen(t->out_col) && memcmp(s, t->out_col, len) == 0)
		t->col_out = f;
}

/* A whole token count: decimal digits only (no sign, exponent, hex,
 * blanks or fraction), at most MAX_TOKENS. */
static int token_count(const char *s, size_t len, double *v)
{
	if (len == 0 || len > 10)
		return -1;
	double x = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = 10 * x + (s[i] - '0');
	}
	if (x > MAX_TOKENS)
		return -1;
	*v = x;
	return 0;
}

static void on_field(void *s, size_t len, void *data)
{
	struct trace_rd *t = data;
	int f = t->field++;
	if (t->failed)
		return;
	if (!t->header_done) {
		on_header(t, s, len, f);
		return;
	}
	if (f != t->col_in && f != t->col_out)
		return;
	double v;
	if (token_count(s, len, &v) != 0) {
		trace_fail(t, "column %s: '%.*s' is not a whole token count (decimal "
			   "digits, at most %g)", f == t->col_in ? t->in_col : t->out_col,
			   (int)(len < 40 ? len : 40), (const char *)s, MAX_TOKENS);
		return;
	}
	if (f == t->col_in)
		t->vin = v, t->got_in = 1;
	if (f == t->col_out)
		t->vout = v, t->got_out = 1;
}

static void on_row(int c, void *data)
{
	(void)c;
	struct trace_rd *t = data;
	int fields = t->field;
	t->field = 0;
	if (t->failed)
		return;
	if (!t->header_done) {
		t->header_done = 1;
		if (t->col_in < 0 || t->col_out < 0)
			trace_fail(t, "header has no column '%s'",
				   t->col_in < 0 ? t->in_col : t->out_col);
		return;
	}
	t->row++;
	if (!t->got_in || !t->got_out) {
		trace_fail(t, "%d fields, too few for columns %s and %s", fields, t->in_col,
			   t->out_col);
		return;
	}
	t->got_in = t->got_out = 0;
	if (t->vin < 1) {
		trace_fail(t, "input length must be >= 1");
		return;
	}
	if (t->n == TRACE_MAX_ROWS) {
		trace_fail(t, "more than %ld rows", (long)TRACE_MAX_ROWS);
		return;
	}
	if (t->n == t->cap) {
		long cap = t->cap ? 2 * t->cap : 4096;
		double *a = realloc(t->in, (size_t)cap * sizeof *a);
		double *b = a ? realloc(t->out, (size_t)cap * sizeof *b) : NULL;
		if (a)
			t->in = a;
		if (!a || !b) {
			trace_fail(t, "out of memory at row %ld", t->row);
			return;
		}
		t->out = b, t->cap = cap;
	}
	t->in[t->n] = t->vin, t->out[t->n] = t->vout, t->n++;
}

static const char *csv_why(struct csv_parser *p)
{
	if (csv_error(p) == CSV_EPARSE)
		return "bad quoting: a quote inside an unquoted field, text after a "
		       "closing quote, or a quoted field never closed";
	return csv_strerror(csv_error(p));
}

int workload_parse_trace(const char *name, const char *buf, size_t len,
			 const char *in_col, const char *out_col, double **in,
			 double **out, long *n, struct kerr *err)
{
	struct trace_rd t = {.path = name, .in_col = in_col, .out_col = out_col,
			     .col_in = -1, .col_out = -1, .err = err, .line = 1};
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		buf += 3, len -= 3; /* a UTF-8 byte-order mark: not part of the header */
	const char *nul = memchr(buf, '\0', len);
	if (nul) {
		for (const char *c = buf; c < nul; c++)
			t.line += *c == '\n';
		return trace_fail(&t, "a NUL byte: binary data, not a CSV trace");
	}
	t.line = 0;
	t.head = malloc(TRACE_MAX_COLS * sizeof *t.head);
	struct csv_parser p;
	if (!t.head || csv_init(&p, CSV_APPEND_NULL | CSV_STRICT | CSV_STRICT_FINI) != 0) {
		free(t.head);
		return kerr_set(err, name, 0, "out of memory for the CSV parser");
	}
	/* line by line, so a message can name the line */
	for (size_t at = 0; at < len && !t.failed;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (buf + at)) + 1 : len - at;
		t.line++;
		if (csv_parse(&p, buf + at, l, on_field, on_row, &t) != l)
			trace_fail(&t, "%s", csv_why(&p));
		at += l;
	}
	if (!t.failed && csv_fini(&p, on_field, on_row, &t) != 0)
		trace_fail(&t, "%s", csv_why(&p));
	csv_free(&p);
	for (int i = 0; i < t.nhead; i++)
		free(t.head[i]);
	free(t.head);
	t.line = 0;
	if (!t.failed && !t.header_done)
		trace_fail(&t, "empty trace");
	if (!t.failed && t.n == 0)
		trace_fail(&t, "trace has a header but no rows");
	if (t.failed) {
		free(t.in);
		free(t.out);
		return -1;
	}
	*in = t.in, *out = t.out, *n = t.n;
	return 0;
}

int workload_read_trace(const char *path, const char *in_col,
			const char *out_col, double **in, double **out,
			long *n, struct kerr *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kerr_set(err, path, 0, "cannot open trace: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return kerr_set(err, path, 0, "not a regular file (a trace is a CSV file)");
	}
	if (st.st_size > TRACE_MAX_BYTES) {
		close(fd);
		return kerr_set(err, path, 0, "trace too large (%lld bytes, at most %lld)",
				(long long)st.st_size, (long long)TRACE_MAX_BYTES);
	}
	size_t size = (size_t)st.st_size;
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		close(fd);
		return kerr_set(err, path, 0, "out of memory for %zu bytes", size);
	}
	size_t got = 0;
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	int rc = got == size ? workload_parse_trace(path, buf, size, in_col, out_col, in,
						    out, n, err)
			     : kerr_set(err, path, 0, "read error");
	free(buf);
	return rc;
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
