/* report.h: the per-operator table of one step, printed by `karat ops`. */
#ifndef KARAT_CLI_REPORT_H
#define KARAT_CLI_REPORT_H

#include "cli/cli.h"
#include "karat.h"

struct ops_setup {
	const struct kmodel *m;
	const struct kdevice *d;
	const struct klink *l;
	const char *dev_label, *link_label;
	struct kbatch b;
};

/* Writes each operator of the built and timed step s as a roofline point
 * (its FLOPs, bytes, intensity, achieved FLOP/s, and the device's peak for
 * its data type and bandwidth) to a CSV; 0, or 1 after a message. */
int ops_roofline(const struct ops_setup *o, const struct step *s, const char *path);

/* Builds and times the step; fills t (CSV columns) and returns 0, or prints
 * the error and returns 1. */
int ops_table(const struct ops_setup *o, struct step *s, struct table *t,
	      int csv);

/* Prints the human heading and footer around an ops table. */
void ops_heading(const struct ops_setup *o, const struct step *s, FILE *fp);
/* The step's time by kind of decoder layer (and the tail), as a table. */
int ops_kinds(const struct ops_setup *o, FILE *fp);

void ops_footer(const struct ops_setup *o, const struct step *s, FILE *fp);

#endif
