/* schema.c: table-driven, strict binding of INI documents to structs. */
#include "io/schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "io/list.h"

const struct field *schema_field(const struct schema *s, const char *section,
				 const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->fields[i].section, section) == 0 &&
		    strcmp(s->fields[i].key, key) == 0)
			return &s->fields[i];
	return NULL;
}

/* Whether section is one of open_section's comma-separated names. */
static int section_open(const struct schema *s, const char *section)
{
	size_t n = strlen(section);
	for (const char *o = s->open_section; o && *o;) {
		size_t k = strcspn(o, ",");
		if (k == n && strncmp(o, section, n) == 0)
			return 1;
		o += k + (o[k] == ',');
	}
	return 0;
}

static int section_known(const struct schema *s, const char *section)
{
	if (section_open(s, section))
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

/* A list value into the field's struct name_list or int_list: every item
 * distinct, at most f->size of them. */
static int set_list(const struct field *f, const char *value, char *base, char *why,
		    size_t n)
{
	static _Thread_local struct name_list l; /* 12 KB: not on the stack */
	int max = f->size && f->size < LIST_MAX ? (int)f->size : LIST_MAX;
	if (list_split(value, f->kind == FK_ALGOS, l.v, max, &l.n, why, n) != 0)
		return -1;
	for (int i = 0; i < l.n; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(l.v[i], l.v[j]) == 0) {
				snprintf(why, n, "'%s' is given twice", l.v[i]);
				return -1;
			}
	if (f->kind != FK_INTS) {
		struct name_list *out = (struct name_list *)(base + f->offset);
		out->n = l.n;
		memcpy(out->v, l.v, sizeof *l.v * (size_t)l.n);
		return 0;
	}
	struct int_list *out = (struct int_list *)(base + f->offset);
	for (int i = 0; i < l.n; i++) {
		char *end;
		long x = strtol(l.v[i], &end, 10);
		if (*end || end == l.v[i] || x < f->min || x > f->max) {
			snprintf(why, n, "'%s' is not a whole number in [%g, %g]", l.v[i], f->min,
				 f->max);
			return -1;
		}
		out->v[i] = (int)x;
	}
	out->n = l.n;
	return 0;
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
	case FK_NAMES:
	case FK_ALGOS:
	case FK_INTS:
		return set_list(f, value, base, why, n);
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
		if (!f && (section_open(s, e->section) ||
			   (s->open_key && s->open_key(e->section, e->key))))
			continue; /* the caller binds it */
		if (!f) {
			if (!section_known(s, e->section))
				return kerr_set(err, doc->path, e->line,
						"unknown section [%s] in a %s file",
						e->section, s->what);
			const char *keys[64];
			int nk = 0;
			for (size_t k = 0; k < s->n && nk < 64; k++)
				if (strcmp(s->fields[k].section, e->section) == 0)
					keys[nk++] = s->fields[k].key;
			char hint[128];
			suggest_hint(e->key, keys, nk, hint, sizeof hint);
			return kerr_set(err, doc->path, e->line,
					"unknown key '%s' in [%s]%s", e->key, e->section, hint);
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
	case FK_NAMES:
	case FK_ALGOS:
	case FK_INTS: { /* the items, comma-separated */
		const struct name_list *nl = (const void *)(base + f->offset);
		const struct int_list *il = (const void *)(base + f->offset);
		int cnt = f->kind == FK_INTS ? il->n : nl->n;
		size_t used = 0;
		buf[0] = '\0';
		for (int i = 0; i < cnt && used + 1 < n; i++) {
			if (f->kind == FK_INTS)
				used += (size_t)snprintf(buf + used, n - used, "%s%d", i ? ", " : "",
							 il->v[i]);
			else
				used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "",
							 nl->v[i]);
		}
		return;
	}
	}
}

double share_bytes_of(const struct share_bytes *a, double capacity)
{
	return a->share > 0 ? a->share * capacity : a->bytes;
}
