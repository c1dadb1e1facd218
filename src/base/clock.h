/* clock.h: the one monotonic clock of karat, in seconds (timing loops,
 * benchmarks, progress lines). */
#ifndef KARAT_BASE_CLOCK_H
#define KARAT_BASE_CLOCK_H

/* Seconds on CLOCK_MONOTONIC since an arbitrary start. */
double clock_now(void);

#endif
