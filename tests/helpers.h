/* helpers.h: shared test utilities: temporary INI files, running the CLI,
 * relative comparison. */
#ifndef KARAT_TESTS_HELPERS_H
#define KARAT_TESTS_HELPERS_H

#include <math.h>
#include <stddef.h>

/* Writes len bytes to a fresh temporary file named *.ini; returns its path
 * (static buffer per call slot, valid until the next call with that slot). */
const char *tmp_ini(int slot, const char *text, size_t len);
const char *tmp_ini_str(int slot, const char *text);

/* Writes text to path (created or truncated); 0, or -1. */
int write_text(const char *path, const char *text);

/* Runs "karat ARGS" (shell words), capturing stdout and stderr; returns the
 * exit status.  Buffers are NUL-terminated and truncated to their size. */
int run_karat(const char *args, char *out, size_t nout, char *err, size_t nerr);

/* run_karat with the arguments formatted (printf-style). */
int run_karat_fmt(char *out, size_t nout, char *err, size_t nerr, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The cell of column `name` in the first data row of csv (a header line,
 * then rows; a quoted cell may hold commas) into val; 0, or -1 when csv
 * has no such column or row. */
int csv_cell(const char *csv, const char *name, char *val, size_t n);

/* Reads at most n - 1 bytes of path into buf, NUL-terminated ("" when it
 * cannot be read). */
void read_text(const char *path, char *buf, size_t n);

/* Whether a file of ../shared/traces is missing; if so, says "skipped"
 * on stderr for test `name` (the traces live outside the project). */
int traces_absent(const char *name, const char *path);

/* The least squares of relative error: c[0..p) such that t[i] ~ sum_j
 * x[i p + j] c[j], each row weighted 1 / t[i]^2 (gsl_multifit_wlinear);
 * 0, or -1 when GSL fails. */
int fit_relative(size_t n, size_t p, const double *x, const double *t, double *c);

/* Path of a zoo file relative to the source tree. */
const char *zoo_path(const char *rel);

static inline int near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-300;
}

#endif
