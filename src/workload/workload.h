/* workload.h: where the requests of a decode batch come from.  A workload
 * gives every request an input (context at admission) and an output
 * length, either from a trace CSV (libcsv; columns named in the INI) or
 * from distributions written in the INI (lognormal, gamma, an empirical
 * quantile table, a fixed value), drawn with GSL's RNG.  In steady-state
 * decode a request is seen at a uniformly random point of its output, so
 * its context is input + U(0, output) (docs/workloads.md); and a request
 * stays in the batch for as many steps as it has output tokens, so the
 * requests a decode batch holds are drawn in proportion to their output
 * (length-biased: each request weighted by its decode steps). */
#ifndef KARAT_WORK_WORKLOAD_H
#define KARAT_WORK_WORKLOAD_H

#include "base/limits.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "io/ini_doc.h"
#include "io/schema.h"

enum wl_kind { WD_NONE, WD_FIXED, WD_LOGNORMAL, WD_GAMMA, WD_QUANTILES, WD_N };
extern const char *const wl_kind_names[WD_N + 1];

enum wl_origin { WO_TRACE, WO_SCALED, WO_SYNTHETIC, WO_N };
extern const char *const wl_origin_names[WO_N + 1];

/* Whether idle sessions keep their caches for as long as the capacity a
 * system leaves them allows (with a [keepalive] table), or forever. */
enum wl_keep { WK_CAPACITY, WK_FOREVER, WK_N };
extern const char *const wl_keep_names[WK_N + 1];

/* What keeping idle caches buys (a [keepalive] table): keeping each
 * finished call's cache for t[i] s reuses reuse[i] of the new requests'
 * contexts, and holds each finished call's cache idle for idle[i] s on
 * average.  t ascending; n = 0: no table. */
struct wl_keepalive {
	int n;
	double t[WL_MAX_KEEPALIVE], reuse[WL_MAX_KEEPALIVE], idle[WL_MAX_KEEPALIVE];
	int line[WL_MAX_KEEPALIVE]; /* for messages */
};


/* One length distribution, in tokens. */
struct wl_dist {
	int kind;                 /* enum wl_kind */
	double value;             /* fixed */
	double median, sigma;     /* lognormal: exp(N(ln median, sigma^2)) */
	double shape, scale;      /* gamma */
	int nq;                   /* quantiles: nq points, p ascending 0..1 */
	double qp[WL_MAX_Q], qv[WL_MAX_Q];
	double min, max;          /* draws are clamped into [min, max] */
	int has_min, has_max;
	/* length-biased draws (prepared by the loader): masses of the atom at
	 * min, the interior and the atom at max; for lognormal and gamma the
	 * biased CDF at min and max; for quantiles the cumulative biased mass
	 * of each segment */
	double bmass[3], bcdf_lo, bcdf_hi, bcum[WL_MAX_Q];
};

struct kworkload {
	char name[64];
	int origin;               /* enum wl_origin: what the lengths are */
	char trace[512];          /* CSV path (resolved), or "" */
	char in_col[64], out_col[64];
	char filter_col[64], filter_prefix[128]; /* keep the trace rows whose
						    filter_col starts so ("": all) */
	struct wl_dist in, out;   /* used when there is no trace */
	double *trace_in, *trace_out; /* owned; n_trace rows */
	double prefix_reuse;      /* share of a new request's context already
				     resident from its session's previous call */
	int keepalive;            /* enum wl_keep */
	struct wl_keepalive ka;
	long n_trace;
	gsl_ran_discrete_t *pick; /* trace rows weighted by their output */
};

/* The keys of a workload file (dist and the percentile keys of [input] and
 * [output] are bound by workload_load, not the schema). */
extern const struct schema workload_schema;

/* Loads and checks a workload INI (the trace too, when it names one).
 * Returns 0 or -1 with "FILE:LINE: reason". */
int workload_load(const char *path, struct kworkload *w, struct kerr *err);
/* The same from a buffer (name for messages; a trace it names is read
 * relative to name's folder); the fuzzing entry point. */
int workload_parse(const char *name, const char *text, size_t len, struct kworkload *w,
		   struct kerr *err);

/* Applies one override to a loaded workload: section.key = value, as in the
 * INI (e.g. "input", "median", "64K").  Returns 0 or -1 with err. */
int workload_set(struct kworkload *w, const char *section, const char *key,
		 const char *value, struct kerr *err);

/* The same in steps, so that several overrides can change a distribution
 * together (dist = gamma, then shape and scale): workload_set_only sets one
 * value (checked alone); workload_key_applies says whether the key is one
 * its distribution's final kind reads; workload_settle checks the whole
 * workload, re-reading the trace when retrace (a trace key was set).
 * Each returns 0, or -1 with err. */
int workload_set_only(struct kworkload *w, const char *section, const char *key,
		      const char *value, struct kerr *err);
int workload_key_applies(struct kworkload *w, const char *section, const char *key,
			 struct kerr *err);
int workload_settle(struct kworkload *w, int retrace, struct kerr *err);
/* Whether workload.KEY names the trace or its columns. */
int workload_is_trace_key(const char *section, const char *key);

/* A fixed-context workload (every request at `context`, no output share). */
void workload_fixed(struct kworkload *w, double context);

void workload_free(struct kworkload *w);


/* Rows a trace reader keeps: those whose `column` starts with `prefix`
 * (e.g. model = claude-sonnet-4...).  Every row is still checked. */
struct trace_filter {
	const char *column, *prefix;
};

/* Reads columns in_col and out_col of a CSV trace (header row first): a
 * regular file of at most TRACE_MAX_BYTES; with keep (NULL: every row),
 * the rows it keeps.  Allocates *in and *out (free()).  Strict: a missing
 * or repeated header name, a short row, a value that is not decimal
 * digits, a NUL byte, bad quoting or no row kept is an error
 * "FILE:LINE: reason"; a UTF-8 byte-order mark is skipped. */
int workload_read_trace(const char *path, const char *in_col,
			const char *out_col, const struct trace_filter *keep,
			double **in, double **out, long *n, struct kerr *err);

/* The same on a buffer (name for messages); the fuzzing entry point. */
int workload_parse_trace(const char *name, const char *buf, size_t len,
			 const char *in_col, const char *out_col,
			 const struct trace_filter *keep, double **in,
			 double **out, long *n, struct kerr *err);

/* One decode-batch request's context: a request drawn in proportion to
 * its output, at input + a uniform share of its output. */
double workload_draw_context(const struct kworkload *w, gsl_rng *r);

/* Checks d (section sec, for messages at path:line; path NULL and line
 * -1 for an override) and prepares its length-biased
 * masses: 0, or -1 with err when it is incomplete, inconsistent or cannot
 * be drawn from (GSL cannot evaluate it). */
int wl_dist_check(struct wl_dist *d, const char *sec, const char *path, int line,
		  struct kerr *err);

/* Mean input and output lengths (of the trace, or of the distributions as
 * clamped); 0 when there is no output (a fixed context). */
double workload_mean_input(const struct kworkload *w);
double workload_mean_output(const struct kworkload *w);

/* Prefix reuse when capacity lets each finished call's cache stay idle
 * idle_s seconds on average (Little's law: idle caches = finished calls
 * per second x idle_s): the [keepalive] table interpolated in idle
 * seconds from (0 s, 0, 0 s), held at its last row beyond it, and never
 * above workload.prefix_reuse.  *keep_s: how long each idle cache is kept
 * (INFINITY, with prefix_reuse, without a table or with keepalive =
 * forever).  Non-decreasing in idle_s. */
double workload_reuse_within(const struct kworkload *w, double idle_s, double *keep_s);

/* One [keepalive] row, "T = REUSE, IDLE" (T and IDLE times with their
 * unit), into k; and the table's checks (ascending, each column
 * non-decreasing).  0, or -1 with "FILE:LINE: reason". */
int wl_keepalive_row(struct wl_keepalive *k, const char *key, const char *value,
		     const char *path, int line, struct kerr *err);
int wl_keepalive_check(const struct kworkload *w, const char *path, struct kerr *err);

/* Draw from one distribution. */
double wl_dist_draw(const struct wl_dist *d, gsl_rng *r);

/* Draw from the length-biased version of d (density x f(x) / mean). */
double wl_dist_draw_biased(const struct wl_dist *d, gsl_rng *r);

/* The p-quantile (0..1) of sorted data with linear interpolation (GSL). */
double workload_quantile(const double *sorted, long n, double p);

#endif
