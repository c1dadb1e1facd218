/* design.h: a whole design point assembled from zoo names: the model, the
 * system and every device and link it names (its GPU port too), the
 * workload (or a fixed context), and the design that points into them,
 * with the defaults below.  One assembly for the benchmarks and tests;
 * the CLI (cli/point.c) applies --set between these loads and keeps its
 * own sequence for that.  The defaults are defined here once. */
#ifndef KARAT_ZOO_DESIGN_H
#define KARAT_ZOO_DESIGN_H

#include "solve/solve.h"
#include "zoo/zoo.h"

#define DESIGN_DEFAULT_SLO_S 0.1     /* P99 time-between-tokens target */
#define DESIGN_DEFAULT_SAMPLES 256   /* sampled batches per evaluation */
#define DESIGN_DEFAULT_SEED 1
#define DESIGN_DEFAULT_SCHED SCHED_OFMS_CMR

/* Everything a design points into; keep it in place (the design holds
 * pointers to its members). */
struct design_parts {
	struct kmodel m;
	struct ksystem sys;
	struct kdevice gpu, mem;
	struct klink up, out, ml, port;
	struct kworkload wl;
	struct design d;
};

/* Loads model and system by name (or path) with all they name, and the
 * workload (context > 0: every request at that context instead), and
 * fills dp->d with the model's MTP settings and the defaults above.
 * Returns 0, or -1 with err. */
int design_load(struct design_parts *dp, const char *model, const char *system,
		const char *workload, double context, struct kerr *err);

/* Points dp->d at dp's members again (after the caller changed which
 * devices the system has). */
void design_link(struct design_parts *dp);

void design_free(struct design_parts *dp);

#endif
