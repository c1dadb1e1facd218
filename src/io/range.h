/* range.h: a file's [range] section, the low and high a figure could
 * plausibly take where the file had to assume it.  Each key is SECTION.KEY
 * of a numeric field the same file sets, its value "LOW .. HIGH" in that
 * field's units, 0 < LOW <= the file's value <= HIGH, LOW < HIGH, inside
 * the field's own limits, with the reason in its comment:
 *
 *   [range]
 *   efficiency.gather_memory = 0.5 .. 0.85 ; assumed: ...
 *
 * The uncertainty study (study/uncert.c) draws every such figure together. */
#ifndef KARAT_IO_RANGE_H
#define KARAT_IO_RANGE_H

#include "base/err.h"
#include "base/limits.h"
#include "base/units.h"
#include "io/ini_doc.h"
#include "io/schema.h"

#define RANGE_SECTION "range"

struct frange {
	char key[2 * INI_NAME];  /* SECTION.KEY */
	double lo, hi, nominal;  /* SI base units */
	enum unit_class unit;
	int line;
	char why[INI_SOURCE];
};

/* Reads doc's [range] section against schema s into out (at most max; out
 * may be NULL to check alone).  Returns how many, or -1 with err as
 * FILE:LINE: a key no numeric field of s has, one the file does not set,
 * a value not "LOW .. HIGH", bounds out of order or outside the field's
 * limits, no reason, or more than max. */
int range_read(const struct ini_doc *doc, const struct schema *s, struct frange *out, int max,
	       struct kerr *err);

#endif
