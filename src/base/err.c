/* err.c: formatting of error messages into a caller-owned buffer. */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>

int kerr_set(struct kerr *e, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kerr_vset(e, file, line, fmt, ap);
	va_end(ap);
	return -1;
}

int kerr_vset(struct kerr *e, const char *file, int line, const char *fmt,
	      va_list ap)
{
	if (!e)
		return -1;
	size_t n = 0;
	if (file && line > 0)
		n = (size_t)snprintf(e->msg, sizeof e->msg, "%s:%d: ", file, line);
	else if (file)
		n = (size_t)snprintf(e->msg, sizeof e->msg, "%s: ", file);
	if (n >= sizeof e->msg)
		n = sizeof e->msg - 1;
	vsnprintf(e->msg + n, sizeof e->msg - n, fmt, ap);
	return -1;
}
