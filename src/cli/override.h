/* override.h (cli): `--set SECTION.KEY=VALUE`: splitting an item and
 * setting one field of a loaded description through its schema, so an
 * override is parsed and checked exactly as the file's value would be.
 * Used by ops, query, solve, sweep and run. */
#ifndef KARAT_CLI_OVERRIDE_H
#define KARAT_CLI_OVERRIDE_H

#include "base/err.h"
#include "io/schema.h"
#include "model/model.h"

struct override {
	char section[64], key[64];
	char what[160];     /* "section.key", for messages */
	const char *value;
};

/* Splits "section.key=value"; 0, or 2 (usage) with err. */
int override_split(const char *item, struct override *o, struct kerr *err);

/* Sets the field section.key of obj (section NULL: the first field named
 * key, for devices and links whose keys are unique).  Returns 0, 1 (bad
 * value) or 2 (no such key), with err. */
int override_field(const struct schema *s, const char *section,
		   const struct override *o, void *obj, struct kerr *err);

/* Whether section is one of a model file's sections (model, attention,
 * ffn, moe, dtypes, decode; not sparse). */
int override_is_model_section(const char *section);

/* A model-section or sparse.* override on a model and its algorithm. */
int override_model(const struct override *o, struct kmodel *m,
		   struct sparse_cfg *sp, struct kerr *err);

#endif
