/* dtype.h: numeric data types of weights, caches and compute, with their
 * storage size.  One static table; names are the INI spellings. */
#ifndef KARAT_BASE_DTYPE_H
#define KARAT_BASE_DTYPE_H

enum dtype { DT_FP4, DT_FP8, DT_BF16, DT_FP32, DT_N };

extern const char *const dtype_names[DT_N + 1]; /* NULL-terminated */

/* Bytes per element: 0.5, 1, 2, 4. */
double dtype_bytes(enum dtype t);

#endif
