/* units.h: parsing and formatting of physical quantities.
 * Inside karat every quantity is a double in SI base units (byte, byte/s,
 * FLOP/s, watt, second, joule/bit); units exist only at the edges. */
#ifndef KARAT_BASE_UNITS_H
#define KARAT_BASE_UNITS_H

#include <stddef.h>

enum unit_class {
	U_INT,     /* whole number, no unit: layer counts, dimensions */
	U_REAL,    /* dimensionless real: efficiencies, ratios */
	U_TOKENS,  /* whole token count; K = 1024, M = 1048576 accepted */
	U_BYTES,   /* B, KB, MB, GB, TB (powers of 1000), KiB..TiB; bare = B */
	U_BW,      /* B/s .. TB/s, GiB/s, TiB/s; unit required */
	U_FLOPS,   /* FLOPS, GFLOPS, TFLOPS, PFLOPS; unit required */
	U_POWER,   /* W, kW; unit required */
	U_TIME,    /* s, ms, us, ns; unit required */
	U_EBIT,    /* pJ/bit, fJ/bit; unit required */
	U_EFLOP,   /* pJ/FLOP, fJ/FLOP; unit required */
	U_NCLASS
};

/* Parses text (surrounding blanks allowed) as a finite number of class c.
 * On failure returns -1 and writes the reason into why (size n). */
int unit_parse(const char *text, enum unit_class c, double *out, char *why,
	       size_t n);

/* Writes v in a readable unit of class c ("4.8 TB/s", "40.0 KB"). */
void unit_format(double v, enum unit_class c, char *buf, size_t n);

/* Writes v in class c's first unit with nine significant digits, a text
 * unit_parse reads back to the same value (to one part in 1e9): what a
 * program hands to an override, not what a reader wants. */
void unit_format_exact(double v, enum unit_class c, char *buf, size_t n);

#endif
