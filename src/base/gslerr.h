/* gslerr.h: GSL's errors as statuses.  GSL's default error handler prints
 * and aborts the process; the library installs one that records the first
 * error of the calling thread instead, so a call that fails inside GSL
 * (an inverse CDF that does not converge, say) becomes an ordinary error
 * with its reason.  Every library entry point that calls GSL installs it. */
#ifndef KARAT_BASE_GSLERR_H
#define KARAT_BASE_GSLERR_H

#include <stddef.h>

/* Replaces GSL's aborting handler with the recording one (once per
 * process; safe from any thread). */
void gslerr_install(void);

/* Whether GSL reported an error on this thread since the last
 * take; if so copies "reason (gsl status N)" into why and forgets it. */
int gslerr_take(char *why, size_t n);

#endif
