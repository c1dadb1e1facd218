/* workload.c: workload INIs (the [workload] section and the [input] and
 * [output] distributions), overrides, the fixed workload. */
#include "workload/workload.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gslerr.h"
#include "base/units.h"

const char *const wl_kind_names[WD_N + 1] = {"none", "fixed", "lognormal", "gamma",
					     "quantiles", 0};
const char *const wl_origin_names[WO_N + 1] = {"trace", "scaled", "synthetic", 0};

#define MAX_TOKENS WL_MAX_TOKENS

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
	if (wl_dist_check(&w->in, "input", path, 0, err) != 0 ||
	    wl_dist_check(&w->out, "output", path, 0, err) != 0)
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
		return wl_dist_check(d, section, "--set", -1, err);
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

