/* schema.c: table-driven, strict binding of INI documents to structs. */
#include "io/schema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const struct field *schema_field(const struct schema *s, const char *section,
				 const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->fields[i].section, section) == 0 &&
		    strcmp(s->fields[i].key, key) == 0)
			return &s->fields[i];
	return NULL;
}

static int section_known(const struct schema *s, const char *section)
{
	if (s->open_section && strcmp(s->open_section, section) == 0)
		return 1;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->fields[i].section, section) == 0)
			return 1;
	return 0;
}

/* The smallest nonzero value a field of each unit class may take: 1 B/s,
 * 1 FLOP/s, 1 mW, 1 fJ/bit, 1 aJ/FLOP (assumed: far below any real device, and far
 * enough from zero that times, throughputs and energies stay finite). */
static const double unit_floor[U_NCLASS] = {
	[U_BW] = 1, [U_FLOPS] = 1, [U_POWER] = 1e-3, [U_EBIT] = 1e-15, [U_EFLOP] = 1e-18};

static void list_names(const char *const *names, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; names[i] && used + 2 < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s",
					 i ? ", " : "", names[i]);
}

int schema_set(const struct field *f, const char *value, void *obj, char *why,
	       size_t n)
{
	char *base = obj;
	switch (f->kind) {
	case FK_NUM: {
		double v;
		if (unit_parse(value, f->unit, &v, why, n) != 0)
			return -1;
		if (f->positive && !(v > 0)) {
			snprintf(why, n, "'%s' must be greater than zero", value);
			return -1;
		}
		/* a rate this small is no device, and its reciprocals overflow */
		if (v != 0 && fabs(v) < unit_floor[f->unit]) {
			char low[64];
			unit_format(unit_floor[f->unit], f->unit, low, sizeof low);
			snprintf(why, n, "'%s' is below the smallest meaningful value, %s",
				 value, low);
			return -1;
		}
		if (v < f->min || v > f->max) {
			snprintf(why, n, "'%s' is out of range %c%g, %g]", value,
				 f->positive && f->min <= 0 ? '(' : '[', f->min, f->max);
			return -1;
		}
		memcpy(base + f->offset, &v, sizeof v);
		return 0;
	}
	case FK_STR:
		if (strlen(value) >= f->size) {
			snprintf(why, n, "value longer than %zu characters", f->size - 1);
			return -1;
		}
		snprintf(base + f->offset, f->size, "%s", value);
		return 0;
	case FK_SHARE: {
		struct share_bytes a = {0, 0};
		size_t len = strlen(value);
		while (len && value[len - 1] == ' ')
			len--;
		if (len && value[len - 1] == '%') {
			char num[64];
			if (len - 1 >= sizeof num) {
				snprintf(why, n, "'%s' is too long", value);
				return -1;
			}
			memcpy(num, value, len - 1);
			num[len - 1] = '\0';
			double pct;
			if (unit_parse(num, U_REAL, &pct, why, n) != 0)
				return -1;
			if (!(pct >= 0 && pct < 100)) {
				snprintf(why, n, "'%s' is not a share in [0%%, 100%%)", value);
				return -1;
			}
			a.share = pct / 100;
		} else {
			if (unit_parse(value, U_BYTES, &a.bytes, why, n) != 0)
				return -1;
			if (a.bytes > 0 && a.bytes < 1) { /* vLLM's 0.9 is a share, not bytes */
				snprintf(why, n, "'%s' is less than one byte: write a share with "
					 "%% (10%%) or bytes with a unit (8GB)", value);
				return -1;
			}
			if (!(a.bytes >= f->min && a.bytes <= f->max)) {
				snprintf(why, n, "'%s' is out of range [%g, %g] (or give a share, "
					 "e.g. 10%%)", value, f->min, f->max);
				return -1;
			}
		}
		memcpy(base + f->offset, &a, sizeof a);
		return 0;
	}
	case FK_ENUM:
		for (int i = 0; f->names[i]; i++)
			if (strcmp(f->names[i], value) == 0) {
				memcpy(base + f->offset, &i, sizeof i);
				return 0;
			}
		char list[256];
		list_names(f->names, list, sizeof list);
		snprintf(why, n, "'%.40s' is not one of: %s", value, list);
		return -1;
	}
	snprintf(why, n, "internal: bad field kind");
	return -1;
}

int schema_bind(const struct schema *s, const struct ini_doc *doc, void *obj,
		struct kerr *err)
{
	for (int i = 0; i < doc->nsec; i++)
		if (!section_known(s, doc->sec[i].name))
			return kerr_set(err, doc->path, doc->sec[i].line,
					"unknown section [%s] in a %s file",
					doc->sec[i].name, s->what);
	for (int i = 0; i < doc->n; i++) {
		const struct ini_entry *e = &doc->e[i];
		const struct field *f = schema_field(s, e->section, e->key);
		if (!f && ((s->open_section && strcmp(e->section, s->open_section) == 0) ||
			   (s->open_key && s->open_key(e->section, e->key))))
			continue; /* the caller binds it */
		if (!f) {
			if (!section_known(s, e->section))
				return kerr_set(err, doc->path, e->line,
						"unknown section [%s] in a %s file",
						e->section, s->what);
			return kerr_set(err, doc->path, e->line,
					"unknown key '%s' in [%s]", e->key, e->section);
		}
		char why[256];
		if (schema_set(f, e->value, obj, why, sizeof why) != 0)
			return kerr_set(err, doc->path, e->line, "%s.%s: %s",
					e->section, e->key, why);
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct field *f = &s->fields[i];
		if (!f->required || ini_doc_find(doc, f->section, f->key))
			continue;
		int line = ini_doc_section_line(doc, f->section);
		if (line > 0)
			return kerr_set(err, doc->path, line,
					"missing required key '%s' in [%s]", f->key,
					f->section);
		return kerr_set(err, doc->path, doc->nlines > 0 ? doc->nlines : 1,
				"missing required section [%s] (needs key '%s')",
				f->section, f->key);
	}
	return 0;
}

void schema_format(const struct field *f, const void *obj, char *buf, size_t n)
{
	const char *base = obj;
	switch (f->kind) {
	case FK_NUM: {
		double v;
		memcpy(&v, base + f->offset, sizeof v);
		unit_format(v, f->unit, buf, n);
		return;
	}
	case FK_STR:
		snprintf(buf, n, "%s", base + f->offset);
		return;
	case FK_SHARE: {
		struct share_bytes a;
		memcpy(&a, base + f->offset, sizeof a);
		if (a.share > 0)
			snprintf(buf, n, "%g%%", 100 * a.share);
		else
			unit_format(a.bytes, U_BYTES, buf, n);
		return;
	}
	case FK_ENUM: {
		int i;
		memcpy(&i, base + f->offset, sizeof i);
		snprintf(buf, n, "%s", f->names[i]);
		return;
	}
	}
}

double share_bytes_of(const struct share_bytes *a, double capacity)
{
	return a->share > 0 ? a->share * capacity : a->bytes;
}
