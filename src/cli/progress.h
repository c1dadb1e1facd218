/* progress.h (cli): progress of long work on stderr.  On a terminal, once
 * the work has run for PROGRESS_AFTER seconds, one line redrawn in place:
 * what, done out of total, elapsed time and an estimate of what is left.
 * Not on a terminal (a log, a pipe), one line per stage that ran that
 * long, when it ends.  Nothing with quiet.  stdout is never touched, so
 * outputs stay byte for byte the same. */
#ifndef KARAT_CLI_PROGRESS_H
#define KARAT_CLI_PROGRESS_H

#define PROGRESS_AFTER 2.0   /* s: shorter work shows nothing (the
				environment's KARAT_PROGRESS_AFTER, in s,
				replaces it: 0 shows every stage) */
#define PROGRESS_EVERY 0.2   /* s: the least time between two redraws */

struct progress {
	char what[96];  /* "karat sweep sweeps/x.ini" */
	const char *unit; /* "points", or NULL for no count */
	long total;
	double t0, last, after;
	int tty, quiet, shown;
};

/* Starts a stage: what it is, what it counts (NULL: nothing) and how many. */
void progress_begin(struct progress *p, const char *what, const char *unit, long total,
		    int quiet);
/* done units finished; detail (or NULL) says what runs now. */
void progress_update(struct progress *p, long done, const char *detail);
/* Clears a terminal's line before other output (the next update redraws
 * it). */
void progress_clear(struct progress *p);
/* Ends the stage: clears a terminal's line; elsewhere, one line with
 * summary when the stage ran past PROGRESS_AFTER. */
void progress_end(struct progress *p, const char *summary);

#endif
