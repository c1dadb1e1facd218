/* bench_util.h: the clock (the library's) and the median, shared by the
 * benchmarks (each is its own program, so the functions are static). */
#ifndef KARAT_BENCH_UTIL_H
#define KARAT_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "karat.h"

static inline double now(void)
{
	return clock_now();
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v (sorted in place). */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* User + system seconds of one run of argv (argv[0] the binary), its
 * stdout discarded; exits the benchmark when it fails. */
static inline double process_time(char *const argv[])
{
	fflush(stdout); /* or the child re-emits our buffered output */
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	wait4(pid, &st, 0, &ru);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench: %s %s failed\n", argv[0], argv[1]);
		exit(1);
	}
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

#endif
