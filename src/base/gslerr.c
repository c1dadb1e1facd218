/* gslerr.c: a thread-local record of GSL's first error instead of abort(). */
#include "base/gslerr.h"

#include <gsl/gsl_errno.h>
#include <pthread.h>
#include <stdio.h>

static _Thread_local int have;
static _Thread_local char reason[200];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void record(const char *why, const char *file, int line, int status)
{
	(void)file, (void)line;
	if (have)
		return; /* keep the first: later ones usually follow from it */
	have = 1;
	snprintf(reason, sizeof reason, "%s (gsl status %d)", why ? why : "error",
		 status);
}

static void install(void)
{
	gsl_set_error_handler(record);
}

void gslerr_install(void)
{
	pthread_once(&once, install);
}

int gslerr_take(char *why, size_t n)
{
	if (!have)
		return 0;
	if (why && n)
		snprintf(why, n, "%s", reason);
	have = 0;
	return 1;
}
