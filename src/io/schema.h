/* schema.h: binding an INI document to a C struct through a static table of
 * fields.  Every key of the document must be in the table (unknown keys are
 * errors), every required field must be present, every value must parse in
 * its unit class and lie in its range. */
#ifndef KARAT_IO_SCHEMA_H
#define KARAT_IO_SCHEMA_H

#include <stddef.h>

#include "base/err.h"
#include "base/units.h"
#include "io/ini_doc.h"

enum field_kind {
	FK_NUM,   /* double, parsed with unit class .unit */
	FK_STR,   /* char[.size] */
	FK_ENUM,  /* int index into .names (NULL-terminated) */
	FK_SHARE, /* struct share_bytes: "N%" (of a capacity) or bytes */
	FK_NAMES, /* struct name_list: a comma-separated list (io/list.h) of
		     at most .size distinct names */
	FK_ALGOS, /* the same, where "dsa:topk=1024,index_heads=32" is one item */
	FK_INTS,  /* struct int_list: at most .size distinct whole numbers in
		     [.min, .max] */
};

/* The lists FK_NAMES, FK_ALGOS and FK_INTS bind (LIST_MAX items at most;
 * a field's .size may allow fewer). */
#define LIST_MAX 64
struct name_list {
	int n;
	char v[LIST_MAX][INI_VALUE];
};
struct int_list {
	int n;
	int v[LIST_MAX];
};

/* An amount given either as bytes or as a share of some capacity. */
struct share_bytes {
	double bytes;  /* when given in bytes (share 0) */
	double share;  /* 0..1 when given as "N%" */
};

/* Its value in bytes against capacity. */
double share_bytes_of(const struct share_bytes *a, double capacity);

struct field {
	const char *section, *key;
	enum field_kind kind;
	enum unit_class unit;
	size_t offset;            /* into the bound struct */
	size_t size;              /* FK_STR: buffer size; a list's items, at most */
	int required;
	double min, max;          /* FK_NUM: inclusive range */
	int positive;             /* FK_NUM: must be > 0 (zero is meaningless) */
	const char *const *names; /* FK_ENUM */
	const char *help;         /* one line for `karat show` and docs */
};

struct schema {
	const char *what;          /* "model", "device", "link" */
	const struct field *fields;
	size_t n;
	const char *open_section;  /* keys here not in fields are the caller's
				      (several sections: "set,vary") */
	/* Other keys the caller binds (e.g. a workload's percentiles), or NULL. */
	int (*open_key)(const char *section, const char *key);
};

/* Fills obj from doc according to s.  Returns 0, or -1 with
 * "file:line: reason" in err for the first problem found. */
int schema_bind(const struct schema *s, const struct ini_doc *doc, void *obj,
		struct kerr *err);

/* The field for section.key, or NULL. */
const struct field *schema_field(const struct schema *s, const char *section,
				 const char *key);

/* Parses one value for field f into obj (used by schema_bind and by
 * command-line overrides); why gets the reason on failure. */
int schema_set(const struct field *f, const char *value, void *obj, char *why,
	       size_t n);

/* Formats the bound value of f in obj for display. */
void schema_format(const struct field *f, const void *obj, char *buf, size_t n);

#endif
