/* progress.c (cli): progress lines on stderr (progress.h). */
#include "cli/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"

void progress_begin(struct progress *p, const char *what, const char *unit, long total,
		    int quiet)
{
	memset(p, 0, sizeof *p);
	snprintf(p->what, sizeof p->what, "%s", what);
	p->unit = unit, p->total = total, p->quiet = quiet;
	p->tty = isatty(2);
	const char *env = getenv("KARAT_PROGRESS_AFTER");
	char *end;
	double after = env ? strtod(env, &end) : PROGRESS_AFTER;
	p->after = env && *end == '\0' && after >= 0 ? after : PROGRESS_AFTER;
	p->t0 = p->last = clock_now();
}

void progress_update(struct progress *p, long done, const char *detail)
{
	double now = clock_now(), t = now - p->t0;
	if (p->quiet || !p->tty || t < p->after || (p->shown && now - p->last < PROGRESS_EVERY))
		return;
	p->last = now, p->shown = 1;
	char line[400];
	size_t n = (size_t)snprintf(line, sizeof line, "\r%s: ", p->what);
	if (p->unit && n < sizeof line)
		n += (size_t)snprintf(line + n, sizeof line - n, "%ld/%ld %s, ", done, p->total,
				      p->unit);
	if (n < sizeof line)
		n += (size_t)snprintf(line + n, sizeof line - n, "%.0f s", t);
	if (p->unit && done > 0 && done < p->total && n < sizeof line)
		n += (size_t)snprintf(line + n, sizeof line - n, ", about %.0f s left",
				      t / (double)done * (double)(p->total - done));
	if (detail && n < sizeof line)
		n += (size_t)snprintf(line + n, sizeof line - n, "; %s", detail);
	fprintf(stderr, "%s\033[K", line); /* erase what a longer line left */
	fflush(stderr);
}

void progress_clear(struct progress *p)
{
	if (p->shown && p->tty && !p->quiet) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->shown = 0;
}

void progress_end(struct progress *p, const char *summary)
{
	double t = clock_now() - p->t0;
	if (p->quiet)
		return;
	if (p->tty) {
		if (p->shown)
			fputs("\r\033[K", stderr);
	} else if (t >= p->after) {
		fprintf(stderr, "%s: %s%s%.0f s\n", p->what, summary ? summary : "",
			summary ? ", " : "", t);
	}
	p->shown = 0;
}
