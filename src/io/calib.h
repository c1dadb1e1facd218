/* calib.h: how well a device's or link's kernel-level values are
 * calibrated, read from each value's source comment:
 *
 *   fitted: TABLE     fitted on this device's own published measurements
 *   sibling: NAME     carried over from another device or link, with why
 *   anything else     assumed (src: or derived: from another simulator, a
 *                     configuration or a rule of thumb counts as assumed)
 *
 * Kernel-level values are the efficiencies, the kernels' fixed times,
 * floors and overlap, the selection rates and fixed time, and a link's
 * efficiency and all-to-all floor: what a measurement calibrates, not a
 * datasheet figure. */
#ifndef KARAT_IO_CALIB_H
#define KARAT_IO_CALIB_H

#include <stddef.h>

#include "io/ini_doc.h"

enum cal_status { CAL_FITTED, CAL_SIBLING, CAL_ASSUMED, CAL_N };
extern const char *const cal_status_names[CAL_N];

/* Whether section.key of a device or link file is a kernel-level value. */
int cal_is_kernel_value(const char *section, const char *key);

/* The status a source comment gives; into name what the value comes
 * from: for a sibling, its name (the comment's first word after the tag);
 * for a fit, its table (the path the comment names first, or its words up
 * to the first ';', ',' or " ("); "" when assumed. */
enum cal_status cal_status_of(const char *source, char *name, size_t n);

/* The validation tables a fitted value's comment names as its data: the
 * names ending in ".csv" in its fit clause (after "fitted:", up to the
 * first ';', ',' or '('), without a folder, into names[0 .. max); how
 * many there are (0 for a value not fitted).  "fitted: validation/a.csv
 * and b.csv (...)" names a.csv and b.csv; a table cited later in the
 * comment, as a remark, is not its data. */
#define CAL_TABLE_NAME 64
int cal_fit_tables(const char *source, char names[][CAL_TABLE_NAME], int max);

/* The counts of doc's kernel-level values by status, into count[CAL_N];
 * returns how many there are. */
int cal_count(const struct ini_doc *doc, int count[CAL_N]);

/* Whether every one of keys ("section.key", NULL-ended) that doc gives is
 * fitted, and it gives at least one. */
int cal_fitted(const struct ini_doc *doc, const char *const *keys);

#endif
