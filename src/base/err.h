/* err.h: the error buffer every library call fills instead of printing.
 * A failing call writes one line "FILE:LINE: reason" (or "FILE: reason",
 * or just "reason") into a struct kerr and returns -1; the CLI prints it. */
#ifndef KARAT_BASE_ERR_H
#define KARAT_BASE_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define KERR_MSG 768

struct kerr {
	char msg[KERR_MSG];
};

/* Formats "file:line: fmt" into e (file may be NULL, line <= 0 omits it).
 * Always returns -1 so callers can write `return kerr_set(...)`. */
int kerr_set(struct kerr *e, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* kerr_set with a va_list. */
int kerr_vset(struct kerr *e, const char *file, int line, const char *fmt,
	      va_list ap);

#endif
