/* design.h: a whole design point assembled in the library: a typed spec in
 * (names or paths of the model, system and workload, the algorithm, the
 * overrides, the run settings), a loaded and validated design out: the
 * model and its algorithm, the system with every device and link it names
 * (its GPU port too), the workload (or a fixed context), and the design
 * that points into them.  Overrides (zoo/override.h) are parsed once and
 * applied once, each where it belongs: model keys before the algorithm is
 * set up, system keys before the devices it names are loaded.  The
 * defaults are defined here, once; the CLI, the benchmarks and the tests
 * all assemble through design_assemble. */
#ifndef KARAT_ZOO_DESIGN_H
#define KARAT_ZOO_DESIGN_H

#include "base/limits.h"

#include "solve/solve.h"
#include "zoo/zoo.h"

#define DESIGN_DEFAULT_SLO_MS 100   /* P99 time-between-tokens target */
#define DESIGN_DEFAULT_SLO_S (DESIGN_DEFAULT_SLO_MS / 1e3)
#define DESIGN_DEFAULT_SAMPLES 256  /* sampled batches per evaluation */
#define DESIGN_DEFAULT_SEED 1
#define DESIGN_DEFAULT_SCHED SCHED_OFMS_CMR
#define DESIGN_DEFAULT_SCHED_NAME "ofms+cmr" /* sched_names[DESIGN_DEFAULT_SCHED] */

/* The spec; a run setting below zero (NAN for the doubles) takes its
 * default: the model's MTP draft and acceptance, or the values above. */
struct design_spec {
	const char *model, *system;  /* names or paths */
	const char *algo;            /* "NAME[:key=value,...]", NULL: the model's */
	const char *workload;        /* name or path, or NULL with context > 0 */
	double context;              /* > 0: every request at this context */
	const char *const *sets;     /* PART.KEY=VALUE overrides, in order */
	int nsets;
	int force;                   /* run a trained-only algorithm anyway */
	int skip_memdev_sets;        /* memory-device overrides on a system
					without one are skipped, not refused
					(sweeps over several systems) */
	int sched, samples;
	double mtp, accept, slo_s, seed;
	int exact;
};

/* A spec with every run setting at its default. */
#define DESIGN_SPEC_INIT {.sched = -1, .samples = -1, .mtp = NAN, .accept = NAN, \
			  .slo_s = NAN, .seed = -1}

/* Which input a failed assembly blames, for the caller's wording. */
enum design_input {
	DI_NONE,
	DI_MODEL, DI_SYSTEM, DI_WORKLOAD, /* the named file */
	DI_PART,     /* a device or link the system names */
	DI_ALGO,     /* the algorithm specification */
	DI_FORCE,    /* a trained-only algorithm, without force */
	DI_CONTEXT,  /* the fixed context */
	DI_SET,      /* override number fail_set */
	DI_SETTING,  /* a run setting */
};

/* Everything a design points into; keep it in place (the design holds
 * pointers to its members). */
struct design_parts {
	struct kmodel m;
	struct sparse_cfg sp;
	struct ksystem sys;
	struct kdevice gpu, mem;
	struct klink up, out, ml, port;
	struct kworkload wl;
	struct design d;
	enum design_input fail;  /* after a failure: what was wrong */
	int fail_set;            /* DI_SET: which override */
	unsigned long long applied; /* bit i: override i was applied (one
				       skipped: a memory device's on a system
				       without, or ROLE[NAME] elsewhere) */
};

/* Loads, overrides and checks everything s names into dp.  Returns 0, -1
 * (a bad file or value) or -2 (a name that names no file, an unknown key
 * or section: the caller's usage), with err and dp->fail.  Free with
 * design_free, also after a failure. */
int design_assemble(const struct design_spec *s, struct design_parts *dp,
		    struct kerr *err);

/* design_assemble with names alone and every default (context > 0: a
 * fixed context instead of the workload); -1 or -2 with err. */
int design_load(struct design_parts *dp, const char *model, const char *system,
		const char *workload, double context, struct kerr *err);

/* Points dp->d at dp's members again (after the caller changed which
 * devices the system has). */
void design_link(struct design_parts *dp);

void design_free(struct design_parts *dp);

#endif
