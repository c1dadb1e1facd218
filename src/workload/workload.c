/* workload.c: workload INIs (the [workload] section and the [input] and
 * [output] distributions), overrides, the fixed workload. */
#include "workload/workload.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gslerr.h"
#include "base/units.h"
#include "io/schema.h"

const char *const wl_kind_names[WD_N + 1] = {"none", "fixed", "lognormal", "gamma",
					     "quantiles", 0};
const char *const wl_origin_names[WO_N + 1] = {"trace", "scaled", "synthetic", 0};

#define MAX_TOKENS WL_MAX_TOKENS

/* The keys a workload file may hold.  [input] and [output] share their
 * keys; `dist` and the percentile keys (p0 .. p100) are bound here, not by
 * the schema (a percentile key is any pN). */
#define OFF(f) offsetof(struct kworkload, f)
#define WSTR(key, fld, help) \
	{"workload", key, FK_STR, U_INT, OFF(fld), sizeof(((struct kworkload *)0)->fld), 0, \
	 0, 0, 0, 0, help}
#define DNUM(sec, d, key, fld, unit, help) \
	{sec, key, FK_NUM, unit, OFF(d.fld), 0, 0, 0, WL_MAX_TOKENS, 0, 0, help}
#define DIST_FIELDS(sec, d) \
	DNUM(sec, d, "value", value, U_TOKENS, "fixed: every length"), \
	DNUM(sec, d, "median", median, U_TOKENS, "lognormal: median length"), \
	DNUM(sec, d, "sigma", sigma, U_REAL, "lognormal: sigma of ln(length)"), \
	DNUM(sec, d, "shape", shape, U_REAL, "gamma: shape"), \
	DNUM(sec, d, "scale", scale, U_REAL, "gamma: scale, tokens"), \
	DNUM(sec, d, "min", min, U_TOKENS, "draws below are raised to it"), \
	DNUM(sec, d, "max", max, U_TOKENS, "draws above are lowered to it")

static const struct field workload_fields[] = {
	WSTR("name", name, "display name"),
	{"workload", "origin", FK_ENUM, U_INT, OFF(origin), 0, 0, 0, 0, 0, wl_origin_names,
	 "what the lengths are: trace, scaled or synthetic"},
	WSTR("trace", trace, "trace CSV, relative to this file's folder"),
	WSTR("input_column", in_col, "the trace's column of input lengths"),
	WSTR("output_column", out_col, "the trace's column of output lengths"),
	WSTR("filter_column", filter_col, "keep the trace's rows whose column this ..."),
	WSTR("filter_prefix", filter_prefix, "... starts with this (with filter_column)"),
	{"workload", "prefix_reuse", FK_NUM, U_REAL, OFF(prefix_reuse), 0, 0, 0, 1, 0, 0,
	 "share of a new request's context already resident from its session when every "
	 "idle session keeps its cache (0..1)"},
	{"workload", "keepalive", FK_ENUM, U_INT, OFF(keepalive), 0, 0, 0, 0, 0, wl_keep_names,
	 "with a [keepalive] table: idle caches stay as long as the capacity a system leaves "
	 "them allows (capacity, the default) or forever (prefix_reuse throughout)"},
	DIST_FIELDS("input", in),
	DIST_FIELDS("output", out),
};

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

static int open_key(const char *section, const char *key)
{
	return (!strcmp(section, "input") || !strcmp(section, "output")) &&
	       (!strcmp(key, "dist") || pct_key(key) >= 0);
}

const struct schema workload_schema = {"workload", workload_fields,
				       sizeof workload_fields / sizeof workload_fields[0], "keepalive",
				       open_key};

/* dist = NAME, or one point of a quantile table. */
static int set_open(struct wl_dist *d, const char *sec, const char *key, const char *v,
		    const char *path, int line, struct kerr *err)
{
	if (strcmp(key, "dist") == 0) {
		for (int k = WD_NONE + 1; k < WD_N; k++)
			if (strcmp(wl_kind_names[k], v) == 0) {
				d->kind = k;
				return 0;
			}
		return kerr_set(err, path, line,
				"%s.dist: '%s' is not fixed, lognormal, gamma or quantiles", sec, v);
	}
	char why[160];
	double x, p = pct_key(key);
	if (unit_parse(v, U_TOKENS, &x, why, sizeof why) != 0)
		return kerr_set(err, path, line, "%s.%s: %s", sec, key, why);
	if (!(x >= 0) || x > WL_MAX_TOKENS)
		return kerr_set(err, path, line, "%s.%s: %g is out of range [0, %g]", sec, key, x,
				WL_MAX_TOKENS);
	for (int i = 0; i < d->nq; i++)
		if (d->qp[i] == p)
			return kerr_set(err, path, line, "%s.%s: percentile given twice", sec, key);
	if (d->nq == WL_MAX_Q)
		return kerr_set(err, path, line, "%s: more than %d percentiles", sec, WL_MAX_Q);
	int i = d->nq++;
	while (i > 0 && d->qp[i - 1] > p) { /* keep p ascending */
		d->qp[i] = d->qp[i - 1], d->qv[i] = d->qv[i - 1];
		i--;
	}
	d->qp[i] = p, d->qv[i] = x;
	return 0;
}

/* Whether key is one a distribution of this kind reads (a key of another
 * kind would be silently ignored: refused instead). */
static int key_applies(int kind, const char *key)
{
	if (!strcmp(key, "dist") || !strcmp(key, "min") || !strcmp(key, "max"))
		return 1;
	switch (kind) {
	case WD_FIXED: return !strcmp(key, "value");
	case WD_LOGNORMAL: return !strcmp(key, "median") || !strcmp(key, "sigma");
	case WD_GAMMA: return !strcmp(key, "shape") || !strcmp(key, "scale");
	case WD_QUANTILES: return pct_key(key) >= 0;
	default: return 1; /* no dist yet: wl_dist_check says so */
	}
}

static int not_applies(const struct wl_dist *d, const char *sec, const char *key,
		       const char *path, int line, struct kerr *err)
{
	static const char *const keys[WD_N] = {"", "value", "median, sigma", "shape, scale",
					       "p0 ... p100"};
	return kerr_set(err, path, line, "%s.%s does not apply to dist = %s (its keys: %s, "
			"min, max)", sec, key, wl_kind_names[d->kind], keys[d->kind]);
}

static struct wl_dist *dist_of(struct kworkload *w, const char *section)
{
	return !strcmp(section, "input") ? &w->in : !strcmp(section, "output") ? &w->out : NULL;
}

/* A trace path written relative to the file is made relative to here. */
static int resolve_trace(struct kworkload *w, const char *path, int line, struct kerr *err)
{
	const char *slash = strrchr(path, '/');
	if (!w->trace[0] || w->trace[0] == '/' || !slash)
		return 0;
	char raw[sizeof w->trace];
	memcpy(raw, w->trace, sizeof raw);
	if ((size_t)snprintf(w->trace, sizeof w->trace, "%.*s%s", (int)(slash - path + 1), path,
			     raw) >= sizeof w->trace)
		return kerr_set(err, path, line, "workload.trace: path too long");
	return 0;
}

/* The line of section.key in doc, else of the section, else 1 (for
 * messages about what is missing). */
static int line_of(const struct ini_doc *doc, const char *section, const char *key)
{
	const struct ini_entry *e = doc && key ? ini_doc_find(doc, section, key) : NULL;
	if (e)
		return e->line;
	int l = doc ? ini_doc_section_line(doc, section) : 0;
	return l > 0 ? l : doc ? 1 : -1;
}

/* Checks what the keys say together, reads the trace or prepares the
 * distributions.  doc gives lines (NULL after an override). */
static int finish(struct kworkload *w, const struct ini_doc *doc, const char *path,
		  struct kerr *err)
{
	if (!w->name[0])
		return kerr_set(err, path, line_of(doc, "workload", NULL),
				"workload.name is required");
	if (w->origin < 0)
		return kerr_set(err, path, line_of(doc, "workload", NULL),
				"workload.origin is required: trace, scaled or synthetic (say "
				"what the lengths are)");
	if (wl_keepalive_check(w, path, err) != 0)
		return -1;
	workload_free(w);
	if (w->trace[0]) {
		if (!w->in_col[0] || !w->out_col[0])
			return kerr_set(err, path, line_of(doc, "workload", "trace"),
					"a trace needs workload.input_column and "
					"workload.output_column");
		if (!w->filter_col[0] != !w->filter_prefix[0])
			return kerr_set(err, path, line_of(doc, "workload", w->filter_col[0] ?
							  "filter_column" : "filter_prefix"),
					"workload.filter_column and workload.filter_prefix go together");
		struct trace_filter keep = {w->filter_col, w->filter_prefix};
		if (workload_read_trace(w->trace, w->in_col, w->out_col,
					w->filter_col[0] ? &keep : NULL, &w->trace_in,
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
	/* a distribution's problems are reported at its dist key */
	if (wl_dist_check(&w->in, "input", path, line_of(doc, "input", "dist"), err) != 0 ||
	    wl_dist_check(&w->out, "output", path, line_of(doc, "output", "dist"), err) != 0)
		return -1;
	return 0;
}

/* Binds a loaded document (owned by the caller) into w: the schema's keys,
 * then dist and the percentiles, then the checks. */
static int load_doc(const struct ini_doc *doc, const char *path, struct kworkload *w,
		    struct kerr *err)
{
	int rc = schema_bind(&workload_schema, doc, w, err);
	for (int i = 0; i < doc->n && rc == 0; i++) {
		const struct ini_entry *e = &doc->e[i];
		struct wl_dist *d = dist_of(w, e->section);
		if (d && open_key(e->section, e->key))
			rc = set_open(d, e->section, e->key, e->value, doc->path, e->line, err);
		else if (!strcmp(e->section, "keepalive"))
			rc = wl_keepalive_row(&w->ka, e->key, e->value, doc->path, e->line, err);
	}
	for (int i = 0; i < doc->n && rc == 0; i++) {
		const struct ini_entry *e = &doc->e[i];
		struct wl_dist *d = dist_of(w, e->section);
		if (d && !key_applies(d->kind, e->key))
			rc = not_applies(d, e->section, e->key, doc->path, e->line, err);
	}
	if (rc == 0) {
		w->in.has_min = ini_doc_find(doc, "input", "min") != NULL;
		w->in.has_max = ini_doc_find(doc, "input", "max") != NULL;
		w->out.has_min = ini_doc_find(doc, "output", "min") != NULL;
		w->out.has_max = ini_doc_find(doc, "output", "max") != NULL;
		rc = resolve_trace(w, doc->path, line_of(doc, "workload", "trace"), err);
	}
	if (rc == 0)
		rc = finish(w, doc, path, err);
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

int workload_set_only(struct kworkload *w, const char *section, const char *key,
		      const char *value, struct kerr *err)
{
	if (w->trace[0] && strcmp(section, "workload") != 0)
		return kerr_set(err, 0, 0, "%s.%s: workload %s draws from a trace; [%s] does "
				"not apply", section, key, w->name, section);
	struct wl_dist *d = dist_of(w, section);
	const struct field *f = schema_field(&workload_schema, section, key);
	if (f) {
		char why[256];
		if (schema_set(f, value, w, why, sizeof why) != 0)
			return kerr_set(err, 0, 0, "%s.%s: %s", section, key, why);
		if (d && !strcmp(key, "min"))
			d->has_min = 1;
		if (d && !strcmp(key, "max"))
			d->has_max = 1;
	} else if (d && open_key(section, key)) {
		if (strcmp(key, "dist") == 0 && d->kind != WD_QUANTILES)
			d->nq = 0; /* a new table replaces none of the old kind's */
		if (set_open(d, section, key, value, 0, 0, err) != 0)
			return -1;
	} else if (!d && strcmp(section, "workload") != 0) {
		return kerr_set(err, 0, 0, "unknown section [%s] (workload, input, output)",
				section);
	} else {
		return kerr_set(err, 0, 0, "unknown key '%s' in [%s]", key, section);
	}
	return 0;
}

int workload_key_applies(struct kworkload *w, const char *section, const char *key,
			 struct kerr *err)
{
	struct wl_dist *d = dist_of(w, section);
	if (d && !key_applies(d->kind, key))
		return not_applies(d, section, key, NULL, -1, err);
	return 0;
}

int workload_is_trace_key(const char *section, const char *key)
{
	return strcmp(section, "workload") == 0 &&
	       (!strcmp(key, "trace") || !strcmp(key, "input_column") ||
		!strcmp(key, "output_column") || !strcmp(key, "filter_column") ||
		!strcmp(key, "filter_prefix"));
}

int workload_settle(struct kworkload *w, int retrace, struct kerr *err)
{
	if (retrace)
		return finish(w, NULL, NULL, err); /* (re)read the trace */
	if (w->trace[0])
		return 0;
	if (wl_dist_check(&w->in, "input", NULL, -1, err) != 0 ||
	    wl_dist_check(&w->out, "output", NULL, -1, err) != 0)
		return -1;
	return 0;
}

int workload_set(struct kworkload *w, const char *section, const char *key,
		 const char *value, struct kerr *err)
{
	if (workload_set_only(w, section, key, value, err) != 0 ||
	    workload_key_applies(w, section, key, err) != 0)
		return -1;
	if (workload_is_trace_key(section, key) && (!strcmp(key, "trace") || w->trace[0]))
		return finish(w, NULL, NULL, err);
	struct wl_dist *d = dist_of(w, section);
	if (!w->trace[0] && d)
		return wl_dist_check(d, section, NULL, -1, err);
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

