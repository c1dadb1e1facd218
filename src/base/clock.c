/* clock.c: CLOCK_MONOTONIC as a double. */
#include "base/clock.h"

#include <time.h>

double clock_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
