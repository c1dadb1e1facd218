/* override.c (cli): --set items (see override.h). */
#include "cli/override.h"

#include <stdio.h>
#include <string.h>

int override_split(const char *item, struct override *o, struct kerr *err)
{
	const char *eq = strchr(item, '='), *dot = strchr(item, '.');
	if (!eq || !dot || dot > eq || dot == item || eq == dot + 1 || !eq[1]) {
		kerr_set(err, 0, 0, "--set '%.80s': expected section.key=value", item);
		return 2;
	}
	if ((size_t)(dot - item) >= sizeof o->section ||
	    (size_t)(eq - dot - 1) >= sizeof o->key) {
		kerr_set(err, 0, 0, "--set '%.80s': name too long", item);
		return 2;
	}
	snprintf(o->section, sizeof o->section, "%.*s", (int)(dot - item), item);
	snprintf(o->key, sizeof o->key, "%.*s", (int)(eq - dot - 1), dot + 1);
	snprintf(o->what, sizeof o->what, "%.*s", (int)(eq - item), item);
	o->value = eq + 1;
	return 0;
}

int override_field(const struct schema *s, const char *section,
		   const struct override *o, void *obj, struct kerr *err)
{
	const struct field *f = NULL;
	if (section)
		f = schema_field(s, section, o->key);
	else
		for (size_t i = 0; i < s->n && !f; i++)
			if (strcmp(s->fields[i].key, o->key) == 0)
				f = &s->fields[i];
	if (!f) {
		kerr_set(err, 0, 0, "--set %s: no such key (see karat show)", o->what);
		return 2;
	}
	char why[200];
	if (schema_set(f, o->value, obj, why, sizeof why) != 0) {
		kerr_set(err, 0, 0, "--set %s: %s", o->what, why);
		return 1;
	}
	return 0;
}

int override_is_model_section(const char *section)
{
	static const char *const model[] = {"model", "attention", "ffn", "moe",
					    "dtypes", "decode", 0};
	for (int i = 0; model[i]; i++)
		if (strcmp(section, model[i]) == 0)
			return 1;
	return 0;
}

int override_model(const struct override *o, struct kmodel *m,
		   struct sparse_cfg *sp, struct kerr *err)
{
	if (strcmp(o->section, "sparse") != 0)
		return override_field(&model_schema, o->section, o, m, err);
	char why[200];
	if (sparse_cfg_set(sp, o->key, o->value, why, sizeof why) != 0 ||
	    sparse_cfg_check(sp, why, sizeof why) != 0) {
		kerr_set(err, 0, 0, "--set %s: %s", o->what, why);
		return 1;
	}
	return 0;
}
