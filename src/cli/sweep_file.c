/* sweep_file.c (cli): reading a sweep file (sweep_file.h). */
#include "cli/sweep_file.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/list.h"
#include "io/schema.h"

const char *const sweep_keys[] = {
	"model", "algo", "system", "workload", "context", "batch", "microbatches",
	"schedule", "mtp", "mtp_accept", "slo_ms", "samples", "seed", "force", 0};
#define NKEYS 14

/* The [sweep] section as io/schema checks it: each key a list (distinct
 * values, at most SWEEP_MAX_VALS), output a path.  The dimensions are then
 * taken from the document in its own order (the order sets the points'). */
struct sweep_bound {
	struct name_list v[NKEYS];
	char output[INI_VALUE];
};
#define K(i, key, kind, help)                                                                 \
	{"sweep", key, kind, U_INT,                                                            \
	 offsetof(struct sweep_bound, v) + (i) * sizeof(struct name_list), SWEEP_MAX_VALS, 0, 0, \
	 0, 0, NULL, help}
/* in sweep_keys' order */
static const struct field sweep_fields[NKEYS + 1] = {
	K(0, "model", FK_NAMES, "models"), K(1, "algo", FK_ALGOS, "attention algorithms"),
	K(2, "system", FK_NAMES, "systems"), K(3, "workload", FK_NAMES, "workloads"),
	K(4, "context", FK_NAMES, "contexts"), K(5, "batch", FK_NAMES, "batches"),
	K(6, "microbatches", FK_NAMES, "micro-batch counts"),
	K(7, "schedule", FK_NAMES, "schedules"), K(8, "mtp", FK_NAMES, "draft tokens"),
	K(9, "mtp_accept", FK_NAMES, "draft acceptance rates"),
	K(10, "slo_ms", FK_NAMES, "SLOs in ms"), K(11, "samples", FK_NAMES, "samples"),
	K(12, "seed", FK_NAMES, "seeds"), K(13, "force", FK_NAMES, "true or false"),
	{"sweep", "output", FK_STR, U_INT, offsetof(struct sweep_bound, output), INI_VALUE, 0, 0,
	 0, 0, NULL, "the CSV, relative to the sweep file's folder"}};
#undef K

/* [set] and [vary] hold the caller's keys. */
const struct schema sweep_schema = {"sweep", sweep_fields, NKEYS + 1, "set,vary", NULL};

/* Every key of a sweep file known, every list well formed: 0, or 1 with
 * err. */
static int sweep_check(const struct ini_doc *doc, struct kerr *err)
{
	struct sweep_bound *b = calloc(1, sizeof *b);
	if (!b)
		return kerr_set(err, 0, 0, "out of memory"), 1;
	int rc = schema_bind(&sweep_schema, doc, b, err) != 0;
	free(b);
	return rc ? 1 : 0;
}

/* Splits a list (io/list.h) into d, naming d in errors. */
static int split(const char *text, int algo, struct dim *d, const char *path,
		 struct kerr *err)
{
	char why[200];
	if (list_split(text, algo, d->val, SWEEP_MAX_VALS, &d->n, why, sizeof why) != 0)
		return kerr_set(err, path, d->line, "%s.%s: %s", d->section, d->key, why);
	return 0;
}

/* One [vary] label: its value is one or more overrides KEY=VALUE joined by
 * '&' ("memdev.memory.bandwidth=600GB/s & memdev.tdp=130W"). */
static int load_vary(struct sweep *sw, const struct ini_entry *e, const char *path,
		     struct kerr *err)
{
	if (sw->nvary == SWEEP_MAX_VARY)
		return kerr_set(err, path, e->line, "more than %d [vary] labels", SWEEP_MAX_VARY);
	struct vary *v = &sw->vary[sw->nvary++];
	snprintf(v->label, sizeof v->label, "%s", e->key);
	v->line = e->line;
	v->n = 0;
	char why[200];
	if (list_split_sets(e->value, v->set[0], sizeof v->set[0], POOL_SET_LEN,
			    SWEEP_MAX_VARY_SETS, &v->n, why, sizeof why) != 0)
		return kerr_set(err, path, e->line, "vary.%s: %s", e->key, why);
	if (v->n == 0)
		return kerr_set(err, path, e->line, "vary.%s: no overrides", e->key);
	return 0;
}

/* Whether a relative path stays below its folder: no leading '/', no ".."
 * part. */
static int inside(const char *path)
{
	if (path[0] == '/')
		return 0;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p += n;
		p += *p == '/';
	}
	return 1;
}

int sweep_load(struct sweep *sw, const char **output, char *outbuf, size_t outn,
	       struct kerr *err)
{
	struct ini_doc *doc = ini_doc_load(sw->path, err);
	if (!doc)
		return 1;
	int rc = sweep_check(doc, err);
	sw->total = 1;
	for (int i = 0; i < doc->n && rc == 0; i++) {
		const struct ini_entry *e = &doc->e[i];
		int is_set = strcmp(e->section, "set") == 0;
		if (strcmp(e->section, "vary") == 0) {
			if ((rc = load_vary(sw, e, doc->path, err)) != 0)
				break;
			continue;
		}
		if (!is_set && strcmp(e->key, "output") == 0) {
			/* relative to the sweep file's folder, as a workload's trace
			 * is, and inside it: a file may not write elsewhere (the
			 * command line's --output can) */
			if (!inside(e->value)) {
				rc = kerr_set(err, doc->path, e->line, "sweep.output: '%s' %s; a sweep "
					      "file writes inside its own folder (give --output to "
					      "write elsewhere)", e->value, e->value[0] == '/' ?
					      "is an absolute path" : "leaves the sweep file's folder");
				break;
			}
			const char *slash = strrchr(doc->path, '/');
			int dir = e->value[0] == '/' || !slash ? 0 : (int)(slash - doc->path + 1);
			if ((size_t)snprintf(outbuf, outn, "%.*s%s", dir, doc->path, e->value) >= outn) {
				rc = kerr_set(err, doc->path, e->line, "sweep.output: path too long");
				break;
			}
			*output = outbuf;
			continue;
		}
		if (sw->ndim == SWEEP_MAX_DIMS) {
			rc = kerr_set(err, doc->path, e->line, "more than %d keys", SWEEP_MAX_DIMS);
			break;
		}
		struct dim *d = &sw->dim[sw->ndim++];
		snprintf(d->section, sizeof d->section, "%s", e->section);
		snprintf(d->key, sizeof d->key, "%s", e->key);
		d->line = e->line;
		if (split(e->value, !is_set && strcmp(e->key, "algo") == 0, d, doc->path, err)) {
			rc = 1;
			break;
		}
		for (int k = 0; !is_set && !strcmp(e->key, "force") && k < d->n; k++)
			if (strcmp(d->val[k], "true") && strcmp(d->val[k], "false")) {
				rc = kerr_set(err, doc->path, e->line,
					      "sweep.force: '%s' is not true or false", d->val[k]);
				break;
			}
		if (rc)
			break;
		if (is_set && strlen(d->key) + 1 + strlen(e->value) >= POOL_SET_LEN) {
			rc = kerr_set(err, doc->path, e->line, "set.%s: an override is longer "
				      "than %d characters", d->key, POOL_SET_LEN - 1);
			break;
		}
		if (sw->total > 10000000 / d->n) {
			rc = kerr_set(err, doc->path, e->line, "more than 10 million points");
			break;
		}
		sw->total *= d->n;
	}
	if (rc == 0 && sw->nvary > 0) {
		if (sw->total > 10000000 / (1 + sw->nvary))
			rc = kerr_set(err, doc->path, sw->vary[0].line, "more than 10 million points");
		sw->total *= 1 + sw->nvary;
	}
	if (rc == 0) {
		int nset = 0, have[4] = {0, 0, 0, 0};
		static const char *const need[] = {"model", "system", "workload", "context"};
		for (int i = 0; i < sw->ndim; i++) {
			nset += strcmp(sw->dim[i].section, "set") == 0;
			for (int k = 0; k < 4; k++)
				have[k] |= strcmp(sw->dim[i].section, "sweep") == 0 &&
					   strcmp(sw->dim[i].key, need[k]) == 0;
		}
		sw->nset = nset;
		int line = doc->nlines > 0 ? doc->nlines : 1;
		int most = 0;
		for (int k = 0; k < sw->nvary; k++)
			most = sw->vary[k].n > most ? sw->vary[k].n : most;
		nset += most;
		if (sw->nfixed + nset > ARGS_MAX_MANY)
			rc = kerr_set(err, doc->path, line, "%d overrides (%d --set and %d [set] "
				      "keys); at most %d", sw->nfixed + nset, sw->nfixed, nset,
				      ARGS_MAX_MANY);
		else if (!have[0] || !have[1] || (!have[2] && !have[3]))
			rc = kerr_set(err, doc->path, ini_doc_section_line(doc, "sweep") > 0
					      ? ini_doc_section_line(doc, "sweep") : line,
				      "[sweep] needs the keys model, system and workload (or "
				      "context)%s", doc->n == 0 ? "; the file is empty" : "");
	}
	ini_doc_free(doc);
	return rc ? 1 : 0;
}

/* A point's [vary] index (0: the base, k: label k - 1) and the index of
 * its [sweep] x [set] combination: the vary index varies fastest. */
int sweep_vary_of(const struct sweep *sw, long idx, long *cart)
{
	*cart = idx / (1 + sw->nvary);
	return (int)(idx % (1 + sw->nvary));
}

/* The spec of point idx (mixed radix, last key fastest); strings point into
 * sw and into sets[] (caller storage). */
void sweep_spec(const struct sweep *sw, long point, struct point_spec *ps,
		char sets[][POOL_SET_LEN])
{
	long idx;
	int vi = sweep_vary_of(sw, point, &idx);
	memset(ps, 0, sizeof *ps);
	long rest = idx;
	int pick[SWEEP_MAX_DIMS];
	for (int i = sw->ndim - 1; i >= 0; i--) {
		pick[i] = (int)(rest % sw->dim[i].n);
		rest /= sw->dim[i].n;
	}
	for (int i = 0; i < sw->ndim; i++) {
		const struct dim *d = &sw->dim[i];
		const char *v = d->val[pick[i]];
		if (strcmp(d->section, "set") == 0) {
			snprintf(sets[ps->nsets], POOL_SET_LEN, "%s=%s", d->key, v);
			ps->sets[ps->nsets] = sets[ps->nsets];
			ps->nsets++;
			continue;
		}
		const char *force = NULL;
		const char **slot[] = {&ps->model, &ps->algo, &ps->system, &ps->workload,
				       &ps->context, &ps->batch, &ps->mb, &ps->schedule,
				       &ps->mtp, &ps->accept, &ps->slo_ms, &ps->samples,
				       &ps->seed, &force};
		for (int k = 0; sweep_keys[k]; k++)
			if (strcmp(sweep_keys[k], d->key) == 0)
				*slot[k] = v;
		if (force)
			ps->force = strcmp(force, "true") == 0;
	}
	/* then the [vary] label's, over [set]; the command line's last: it
	 * takes precedence over the file */
	for (int k = 0; vi > 0 && k < sw->vary[vi - 1].n; k++)
		ps->sets[ps->nsets++] = sw->vary[vi - 1].set[k];
	for (int i = 0; i < sw->nfixed; i++)
		ps->sets[ps->nsets++] = sw->fixed_sets[i];
}

