/* override.c: routing and applying overrides (override.h). */
#include "zoo/override.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "io/calib.h"
#include "io/ini_doc.h"
#include "io/schema.h"
#include "zoo/zoo.h"

const char *const ov_part_names[OV_N] = {
	[OV_MODEL] = "model", [OV_SPARSE] = "sparse", [OV_SYSTEM] = "system",
	[OV_GPU] = "gpu", [OV_MEMDEV] = "memdev", [OV_SCALEUP] = "scaleup_link",
	[OV_SCALEOUT] = "scaleout_link", [OV_MEMDEV_LINK] = "memdev_link",
	[OV_GPU_PORT] = "gpu_port", [OV_HW] = "hw", [OV_LINK] = "link",
	[OV_WORKLOAD] = "workload"};

/* Parts whose key keeps the file's section in front: the first word. */
static const struct {
	const char *section;
	enum ov_part part;
} sectioned[] = {
	{"model", OV_MODEL}, {"attention", OV_MODEL}, {"ffn", OV_MODEL},
	{"moe", OV_MODEL}, {"dtypes", OV_MODEL}, {"decode", OV_MODEL},
	{"sparse", OV_SPARSE}, {"system", OV_SYSTEM}, {"workload", OV_WORKLOAD},
	{"input", OV_WORKLOAD}, {"output", OV_WORKLOAD},
};

static int is_device(enum ov_part p)
{
	return p == OV_GPU || p == OV_MEMDEV || p == OV_HW;
}

static int is_link(enum ov_part p)
{
	return p == OV_SCALEUP || p == OV_SCALEOUT || p == OV_MEMDEV_LINK ||
	       p == OV_GPU_PORT || p == OV_LINK;
}

/* Copies [a, b) into out (n bytes); -1 when it does not fit. */
static int copy(const char *a, const char *b, char *out, size_t n)
{
	if ((size_t)(b - a) >= n)
		return -1;
	memcpy(out, a, (size_t)(b - a));
	out[b - a] = '\0';
	return 0;
}

int override_parse(const char *item, struct override *o, struct kerr *err)
{
	memset(o, 0, sizeof *o);
	const char *eq = strchr(item, '='), *dot = strchr(item, '.');
	if (!eq || !dot || dot > eq || dot == item || eq == dot + 1 || !eq[1])
		return kerr_set(err, 0, 0, "'%.80s': expected section.key=value", item);
	char first[64];
	if (copy(item, dot, first, sizeof first) != 0 ||
	    copy(item, eq, o->what, sizeof o->what) != 0)
		return kerr_set(err, 0, 0, "'%.80s': name too long", item);
	o->value = eq + 1;
	char *open = strchr(first, '[');
	if (open) { /* ROLE[NAME] */
		size_t n = strlen(open);
		if (n < 3 || open[n - 1] != ']' || open == first)
			return kerr_set(err, 0, 0, "%s: expected ROLE[NAME] before the key "
					"(memdev[karat].memory.bandwidth)", o->what);
		snprintf(o->only, sizeof o->only, "%.*s", (int)(n - 2), open + 1);
		*open = '\0';
	}
	const char *rest = dot + 1, *dot2 = memchr(rest, '.', (size_t)(eq - rest));
	for (size_t i = 0; i < sizeof sectioned / sizeof sectioned[0]; i++)
		if (strcmp(first, sectioned[i].section) == 0) {
			o->part = sectioned[i].part;
			if (o->only[0])
				return kerr_set(err, 0, 0, "%s: only a system's device or link role "
						"takes [NAME]", o->what);
			if (dot2)
				return kerr_set(err, 0, 0, "%s: a key of [%s] has no '.'", o->what,
						first);
			snprintf(o->section, sizeof o->section, "%s", first);
			if (copy(rest, eq, o->key, sizeof o->key) != 0)
				return kerr_set(err, 0, 0, "'%.80s': name too long", item);
			return 0;
		}
	int p = 0;
	while (p < OV_N && (p == OV_MODEL || p == OV_SPARSE || p == OV_SYSTEM ||
			    p == OV_WORKLOAD || strcmp(first, ov_part_names[p]) != 0))
		p++;
	if (p == OV_N) {
		const char *names[OV_N + sizeof sectioned / sizeof sectioned[0]];
		int n = 0;
		for (size_t i = 0; i < sizeof sectioned / sizeof sectioned[0]; i++)
			names[n++] = sectioned[i].section;
		for (int i = OV_GPU; i < OV_WORKLOAD; i++)
			names[n++] = ov_part_names[i];
		char hint[128];
		suggest_hint(first, names, n, hint, sizeof hint);
		return kerr_set(err, 0, 0, "%s: unknown section '%s'%s (a model's sections, "
				"sparse, system, workload, input, output; a device or link by its "
				"role: gpu, memdev, scaleup_link, scaleout_link, memdev_link, "
				"gpu_port; hw and link in ops)", o->what, first, hint);
	}
	o->part = (enum ov_part)p;
	if (o->only[0] && (p < OV_GPU || p > OV_GPU_PORT))
		return kerr_set(err, 0, 0, "%s: only a system's device or link role takes "
				"[NAME] (gpu, memdev, scaleup_link, scaleout_link, memdev_link, "
				"gpu_port)", o->what);
	if (dot2 && (copy(rest, dot2, o->section, sizeof o->section) != 0 ||
		     copy(dot2 + 1, eq, o->key, sizeof o->key) != 0))
		return kerr_set(err, 0, 0, "'%.80s': name too long", item);
	if (!dot2 && copy(rest, eq, o->key, sizeof o->key) != 0)
		return kerr_set(err, 0, 0, "'%.80s': name too long", item);
	if (!o->key[0] || (dot2 && !o->section[0]))
		return kerr_set(err, 0, 0, "'%.80s': expected section.key=value", item);
	return 0;
}

int override_is_memdev(const struct override *o)
{
	return o->part == OV_MEMDEV || o->part == OV_MEMDEV_LINK ||
	       (o->part == OV_SYSTEM &&
		(!strcmp(o->key, "memdevs") || !strcmp(o->key, "memdev_link")));
}

/* "no such key", with the nearest key of the schema when one is close. */
static int no_key(const struct override *o, const struct schema *s, struct kerr *err)
{
	const char *names[128];
	char full[128][130];
	size_t n = 0;
	int sectioned_part = o->section[0] != 0;
	for (size_t i = 0; i < s->n && n < 128; i++) {
		snprintf(full[n], sizeof full[n], "%s%s%s", sectioned_part ? s->fields[i].section : "",
			 sectioned_part ? "." : "", s->fields[i].key);
		names[n] = full[n];
		n++;
	}
	char given[130], hint[200];
	snprintf(given, sizeof given, "%s%s%s", o->section, o->section[0] ? "." : "", o->key);
	suggest_hint(given, names, (int)n, hint, sizeof hint);
	kerr_set(err, 0, 0, "%s: no such key%s", o->what, hint);
	return -2;
}

/* A field of schema s: section.key, or the first field named key. */
/* The field o sets in schema s: section.key, or the field named key
 * alone; NULL when none.  *other: a second field of that name (the key
 * alone is then ambiguous), or NULL. */
static const struct field *field_of(const struct schema *s, const struct override *o,
				    const struct field **other)
{
	*other = NULL;
	if (o->section[0])
		return schema_field(s, o->section, o->key);
	const struct field *f = NULL;
	for (size_t i = 0; i < s->n && !*other; i++)
		if (strcmp(s->fields[i].key, o->key) == 0) {
			if (f)
				*other = &s->fields[i];
			else
				f = &s->fields[i];
		}
	return f;
}

static int set_field(const struct schema *s, const struct override *o, void *obj,
		     struct kerr *err)
{
	const struct field *other, *f = field_of(s, o, &other);
	if (other) /* the key alone names two: give the section */
		return kerr_set(err, 0, 0, "%s: ambiguous: %s.%s or %s.%s; give the section",
				o->what, f->section, f->key, other->section, other->key), -2;
	if (!f)
		return no_key(o, s, err);
	char why[200];
	if (schema_set(f, o->value, obj, why, sizeof why) != 0) {
		kerr_set(err, 0, 0, "%s: %s", o->what, why);
		return -1;
	}
	if (s == &link_schema && cal_is_kernel_value(f->section, f->key))
		((struct klink *)obj)->fitted = 0; /* a value set here is not the fit */
	return 0;
}

int override_apply(const struct override *o, void *obj, struct kerr *err)
{
	char why[300];
	if (o->part == OV_SPARSE) {
		if (sparse_cfg_set(obj, o->key, o->value, why, sizeof why) != 0 ||
		    sparse_cfg_check(obj, why, sizeof why) != 0) {
			kerr_set(err, 0, 0, "%s: %s", o->what, why);
			return -1;
		}
		return 0;
	}
	if (o->part == OV_WORKLOAD) {
		if (workload_set_only(obj, o->section, o->key, o->value, err) == 0)
			return 0; /* checked together: override_settle */
		snprintf(why, sizeof why, "%s", err->msg);
		kerr_set(err, 0, 0, "%s: %s", o->what, why);
		return -1;
	}
	if (is_device(o->part) &&
	    (!strcmp(o->key, "kind") || !strcmp(o->key, "ops") || !strcmp(o->key, "link"))) {
		kerr_set(err, 0, 0, "%s: copy the device file to change its %s", o->what, o->key);
		return -2;
	}
	const struct schema *s = o->part == OV_MODEL    ? &model_schema
				 : o->part == OV_SYSTEM ? &system_schema
				 : is_device(o->part)   ? &device_schema
				 : is_link(o->part)     ? &link_schema
							: NULL;
	if (!s) {
		kerr_set(err, 0, 0, "%s: internal: part %d has no schema", o->what, o->part);
		return -1;
	}
	return set_field(s, o, obj, err);
}

int override_recheck(enum zoo_kind kind, const char *name, void *obj,
		     const struct override *ov, const int *which, int n, int *blamed,
		     struct kerr *err)
{
	*blamed = n > 0 ? which[n - 1] : -1;
	if (n == 0)
		return 0;
	const struct schema *s = kind == ZOO_MODEL ? &model_schema : &device_schema;
	char path[1024];
	if (zoo_resolve(kind, name, path, sizeof path, err) != 0)
		return -1;
	struct ini_doc *doc = ini_doc_load(path, err);
	if (!doc)
		return -1;
	/* each override as a line after the file's last: a check that blames
	 * one of those lines blames that override */
	int base = doc->nlines > 0 ? doc->nlines : 1;
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		const struct field *other, *f = field_of(s, &ov[which[i]], &other);
		if (f && ini_doc_put(doc, f->section, f->key, ov[which[i]].value, base + 1 + i) != 0)
			rc = kerr_set(err, doc->path, 0, "too many keys with the overrides");
	}
	if (rc == 0)
		rc = kind == ZOO_MODEL ? model_validate(obj, doc, err)
				       : device_validate(obj, doc, err);
	if (rc != 0) {
		char msg[KERR_MSG];
		snprintf(msg, sizeof msg, "%s", err->msg);
		size_t pl = strlen(doc->path);
		long line = 0;
		char *rest = NULL;
		if (strncmp(msg, doc->path, pl) == 0 && msg[pl] == ':')
			line = strtol(msg + pl + 1, &rest, 10);
		if (line > base && line <= base + n && rest && rest[0] == ':' && rest[1] == ' ') {
			*blamed = which[line - base - 1];
			kerr_set(err, 0, 0, "%s=%s: %s", ov[*blamed].what, ov[*blamed].value, rest + 2);
		} else {
			kerr_set(err, 0, 0, "%s=%s: with this override, %s", ov[*blamed].what,
				 ov[*blamed].value, msg);
		}
		rc = -1;
	}
	ini_doc_free(doc);
	return rc;
}

int override_settle(struct kworkload *w, const struct override *ov, const int *which, int n,
		    int *blamed, struct kerr *err)
{
	int retrace = 0;
	*blamed = n > 0 ? which[n - 1] : -1;
	for (int i = 0; i < n; i++) {
		const struct override *o = &ov[which[i]];
		retrace |= workload_is_trace_key(o->section, o->key) &&
			   (!strcmp(o->key, "trace") || w->trace[0]);
		if (workload_key_applies(w, o->section, o->key, err) != 0) {
			*blamed = which[i];
			return -1;
		}
	}
	if (n == 0 || workload_settle(w, retrace, err) == 0)
		return 0;
	char why[KERR_MSG];
	snprintf(why, sizeof why, "%s", err->msg);
	kerr_set(err, 0, 0, "%s=%s: %s", ov[*blamed].what, ov[*blamed].value, why);
	return -1;
}
