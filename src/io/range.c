/* range.c: reading and checking a file's [range] section (io/range.h). */
#include "io/range.h"

#include <stdio.h>
#include <string.h>

/* One side of "LOW .. HIGH" into *v, parsed in f's units; 0 or -1 with why. */
static int side(const struct field *f, const char *text, size_t len, double *v, char *why,
		size_t n)
{
	char buf[INI_VALUE];
	if (len >= sizeof buf)
		len = sizeof buf - 1;
	memcpy(buf, text, len);
	buf[len] = 0;
	return unit_parse(buf, f->unit, v, why, n);
}

static int one(const struct ini_doc *doc, const struct schema *s, const struct ini_entry *e,
	       struct frange *r, struct kerr *err)
{
	const char *dot = strchr(e->key, '.');
	char section[INI_NAME] = "";
	if (dot && (size_t)(dot - e->key) < sizeof section)
		snprintf(section, sizeof section, "%.*s", (int)(dot - e->key), e->key);
	const struct field *f = dot && section[0] ? schema_field(s, section, dot + 1) : NULL;
	if (!f || f->kind != FK_NUM)
		return kerr_set(err, doc->path, e->line,
				"range.%s: not SECTION.KEY of a numeric %s key", e->key, s->what);
	const struct ini_entry *v = ini_doc_find(doc, section, dot + 1);
	if (!v)
		return kerr_set(err, doc->path, e->line, "range.%s: the file does not set %s",
				e->key, e->key);
	const char *sep = strstr(e->value, "..");
	char why[256];
	if (!sep)
		return kerr_set(err, doc->path, e->line, "range.%s: '%s' is not LOW .. HIGH",
				e->key, e->value);
	double lo, hi, nom;
	if (side(f, e->value, (size_t)(sep - e->value), &lo, why, sizeof why) != 0 ||
	    side(f, sep + 2, strlen(sep + 2), &hi, why, sizeof why) != 0)
		return kerr_set(err, doc->path, e->line, "range.%s: %s", e->key, why);
	if (unit_parse(v->value, f->unit, &nom, why, sizeof why) != 0)
		return kerr_set(err, doc->path, v->line, "%s: %s", e->key, why);
	if (!(lo > 0) || !(lo < hi))
		return kerr_set(err, doc->path, e->line,
				"range.%s: LOW must be above zero and below HIGH", e->key);
	if (nom < lo || nom > hi)
		return kerr_set(err, doc->path, e->line,
				"range.%s: the file's value %s is outside %s", e->key, v->value,
				e->value);
	if (lo < f->min || (f->max > f->min && hi > f->max))
		return kerr_set(err, doc->path, e->line,
				"range.%s: outside the key's limits [%g, %g]", e->key, f->min, f->max);
	if (!e->source[0])
		return kerr_set(err, doc->path, e->line,
				"range.%s: say why in a comment (; assumed: reason)", e->key);
	if (r) {
		snprintf(r->key, sizeof r->key, "%s", e->key);
		r->lo = lo, r->hi = hi, r->nominal = nom, r->unit = f->unit, r->line = e->line;
		snprintf(r->why, sizeof r->why, "%s", e->source);
	}
	return 0;
}

int range_read(const struct ini_doc *doc, const struct schema *s, struct frange *out, int max,
	       struct kerr *err)
{
	int n = 0;
	for (int i = 0; i < doc->n; i++) {
		const struct ini_entry *e = &doc->e[i];
		if (strcmp(e->section, RANGE_SECTION) != 0)
			continue;
		if (out && n >= max)
			return kerr_set(err, doc->path, e->line, "more than %d ranges", max);
		if (one(doc, s, e, out ? &out[n] : NULL, err) != 0)
			return -1;
		n++;
	}
	return n;
}
