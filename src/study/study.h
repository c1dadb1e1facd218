/* study.h: a study (studies/NAME.ini) and its analysis.  The file says
 * which models, algorithms, workloads and systems `karat run` compares,
 * at which GPU counts and memory devices per GPU, against which baseline,
 * and the paper's range to print beside ours (def.c).  The analysis
 * (analysis.c) lays out the grid of points to solve, picks each system's
 * best configuration, names the baseline points its views need, and pairs
 * each best with the baseline in three views (study_rows).  Solving and
 * printing are the caller's (cli/cmd_run.c). */
#ifndef KARAT_STUDY_STUDY_H
#define KARAT_STUDY_STUDY_H

#include "base/err.h"
#include "base/limits.h"
#include "io/ini_doc.h"
#include "io/schema.h"
#include "solve/solve.h"

struct study_def {
	char path[1024], name[64];
	char title[INI_VALUE];
	struct name_list models, algos, workloads, systems;
	char baseline[INI_VALUE];    /* one of systems */
	struct int_list gpus;        /* GPU counts tried */
	struct int_list mgpus;       /* ... for systems with memory devices
					(memdev_gpus; default: gpus) */
	struct int_list per_gpu;     /* memory devices per GPU tried */
	struct int_list tp;          /* tensor-parallel attention degrees tried
					on systems without memory devices, for
					the GQA models whose KV heads they
					divide (attention_tp; n 0: 1 alone) */
	struct name_list fixed;      /* systems that keep their file's
					devices per GPU (memdevs_fixed) */
	struct name_list wide;       /* systems tried at the baseline's GPU
					counts (baseline_gpus_for) */
	char paper[INI_VALUE];       /* the paper's range as written */
	double paper_lo, paper_hi;   /* 0: none given */
	char paper_src[INI_SOURCE];
	struct int_list slos;        /* P99 TBT SLOs tried, ms (slos_ms; n 0:
					the run's default) */
	struct name_list gpu_types;  /* GPUs every system is tried on, both
					sides alike (gpu_types; n 0: each
					system's own) */
	double samples;              /* sampled batches per evaluation (0: the
					run's default) */
	/* [steps]: switches applied one after another, cumulatively; step k
	 * runs every override of steps 0..k (step 0 usually none: the model
	 * as shipped).  nsteps 0: no steps. */
	int nsteps, step_nset[STUDY_MAX_STEPS], step_line[STUDY_MAX_STEPS];
	char step_name[STUDY_MAX_STEPS][64];
	char step_set[STUDY_MAX_STEPS][STUDY_STEP_SETS][STUDY_SET_LEN];
	char step_why[STUDY_MAX_STEPS][INI_SOURCE];
	int no_probe;                /* probe = off: no grow_first (faster) */
	int power;                   /* enum study_metric (tdp, activity or node):
					the watts the ratio is per */
	double draws;                /* > 0: an uncertainty study, this many
					Latin-hypercube draws of the assumed
					figures (uncert.c) */
	double draw_seed;            /* their generator's seed */
	/* > 0: each system's GPU and device counts grow past their lists,
	 * doubling, until one more step gains less than this share or a
	 * limit stops them (grow.c) */
	double saturate;
	double gpus_limit, per_gpu_limit; /* the physical limits growth stops at */
	struct name_list grown;      /* the systems that grow (saturate_systems;
					n 0: every one) */
};

/* What a system's best is picked by and its ratio is taken in: tokens per
 * second per TDP watt, per drawn (activity) watt, per watt counted whole
 * (node), or per USD (cost: the inverse of usd_per_mtok).  study.power
 * chooses one of the first three; the summary shows them all. */
enum study_metric { SM_TDP, SM_ACTIVITY, SM_NODE, SM_COST, SM_N };
extern const char *const study_metric_names[SM_N + 1];

/* The point's value in metric m (higher is better); NaN where it has no
 * such figure (a device without [energy] or [node]). */
double study_metric(const struct result *r, enum study_metric m);

/* Drawn joules per output token of the whole request: decode and, unless
 * the point counts it already (system.prefill_energy = on), its prefill
 * (NaN without the figures). */
double study_request_j(const struct result *r);

/* Loads and checks a study file: unknown sections or keys, empty lists,
 * a baseline not among the systems, counts out of range are errors with
 * FILE:LINE.  0, or -1 with err. */
int study_load(const char *path, struct study_def *s, struct kerr *err);

/* The [study] section's keys (docs/formats.md). */
extern const struct schema study_schema;

/* Whether system name sys keeps its file's device count in s. */
int study_fixed(const struct study_def *s, const char *sys);
/* Whether system name sys is tried at the baseline's GPU counts. */
int study_wide(const struct study_def *s, const char *sys);
/* Whether a saturating study grows sys (study.saturate_systems). */
int study_grows(const struct study_def *s, const char *sys);

/* ---- the analysis (analysis.c) ---- */

/* Each system's best configuration is set against the baseline in three
 * views: the baseline at its own best GPU count (best), at the system's
 * GPU count (same-gpus), and at the GPU count whose TDP is the system's,
 * rounded up to whole GPUs, whole nodes above one node (iso-tdp: the
 * baseline gets at least the same power). */
enum study_view { STUDY_BEST, STUDY_SAME, STUDY_ISO, STUDY_NVIEW };
extern const char *const study_view_names[STUDY_NVIEW];

/* One point: indices into the study's lists, GPUs and memory devices.
 * slo, gpu and step index slos, gpu_types and the steps (0 where there
 * are none). */
struct study_point {
	int model, algo, workload, system;
	int gpus, memdevs;
	int tp;            /* system.attention_tp (1: data-parallel) */
	int slo, gpu, step;
};

/* The steps a group runs: [steps]' count, an uncertainty study's draws
 * and its nominal point (step 0), else 1. */
int study_nstep(const struct study_def *s);

/* Overrides a point of step k carries: every one of steps 0..k. */
int study_step_sets(const struct study_def *s, int k);

/* The points to solve.  A group is one (model, algorithm, workload, step,
 * SLO, GPU type); the
 * grid holds, for each group and system, the range of its points
 * [start[k], start[k + 1]) with k = group x nsystem + system.  The extra
 * points are the baseline at GPU counts the grid lacks (iso-tdp). */
struct study_grid {
	struct study_point *pt;
	int n, cap;
	int ngroup, nsystem, baseline;
	int *start;
	double ratio[STUDY_MAX_LIST]; /* memory devices per GPU of each system's
					 file (0: none) */
	double per_node_of[STUDY_MAX_LIST]; /* each system's GPUs per node */
	double kv_heads[STUDY_MAX_LIST]; /* each model's KV heads (0: MLA, no
					    tensor-parallel attention) */
	double per_node;              /* the baseline's GPUs per node */
};

/* The grid of s: every system at each GPU count (memdev_gpus for a
 * system with memory devices unless it is in baseline_gpus_for) and,
 * with memory devices, each count per GPU (or its file's ratio, when in
 * memdevs_fixed).  Loads each system's file.  0, or -1 with err. */
int study_grid(const struct study_def *s, struct study_grid *g, struct kerr *err);

/* How far a saturating study has grown each system (index as in
 * study.systems): its largest GPU count and devices per GPU, each its
 * list's top doubled some times (0: the list as given). */
/* How far each (group, system) of a grid has grown: its largest GPU count
 * and devices per GPU (0: its lists as they are), gpus[gi * nsystem + s];
 * NULL before study_grow_step allocates them.  Zero it to start;
 * study_grow_free releases it. */
struct study_grow {
	int *gpus, *per_gpu;
	int n; /* groups x systems */
};
void study_grow_free(struct study_grow *gr);
/* study_grid with each group's systems' lists grown as gr says (NULL:
 * none). */
int study_grid_grown(const struct study_def *s, const struct study_grow *gr,
		     struct study_grid *g, struct kerr *err);
/* One round of a saturating study (s->saturate > 0) on its solved grid g
 * (res[i] for g->pt[i]): a system whose best in a group sits at its
 * largest GPU count, or devices per GPU, and gained at least s->saturate
 * over the step below (or the step below had nothing feasible) grows that
 * count in that group to the next doubling within s's limit.  Returns 1
 * when some system grew (gr updated), 0 when every one has saturated, -1
 * out of memory. */
int study_grow_step(const struct study_def *s, const struct study_grid *g,
		    const struct result *res, struct study_grow *gr);
void study_grid_free(struct study_grid *g);

/* Index of the best feasible point in [lo, hi) in metric m (the first of
 * equals; a point without a figure in m is never the best), or -1. */
int study_best_of(const struct result *res, int lo, int hi, enum study_metric m);

/* The baseline's GPU count at a TDP of tdp_x: whole GPUs of tdp_gpu,
 * whole nodes of per_node above one node, never below tdp_x. */
int study_iso_gpus(double tdp_x, double tdp_gpu, double per_node);

/* Each system's pick once the grid is solved (res[i] for g->pt[i]): its
 * best point (best[k], -1: none feasible) and the baseline's iso-tdp GPU
 * count (iso[k]; 0 for the baseline and where none is feasible), k as in
 * study_grid.  The baseline points at iso-tdp counts that the grid lacks
 * are appended to extra (initially empty).  0, or -1 out of memory. */
struct study_pick {
	int *best, *iso;
};
int study_pick(const struct study_grid *g, const struct result *res, enum study_metric m,
	       struct study_pick *pk, struct study_grid *extra);
void study_pick_free(struct study_pick *pk);

/* One row of the comparison: a system's shown point p (its best, or its
 * group's first when nothing is feasible) and result x (NULL: nothing
 * feasible), against the baseline at bgpus GPUs with result b (NULL:
 * infeasible there), in view v.  For the baseline itself, one row in the
 * best view with b = x.  focus: the system is the study's last (the one
 * its ranges summarise). */
struct study_row {
	const struct study_point *p;
	const struct result *x, *b;
	int bgpus;
	enum study_view v;
	int focus;
	int btp;   /* the baseline point's tensor-parallel degree (0: none) */
};

/* The focus system's range of ratios (its metric over the baseline's) in
 * each view, in the study's metric; and in the best view (each side at
 * its best in that metric), in every metric. */
struct study_range {
	double lo[STUDY_NVIEW], hi[STUDY_NVIEW];
	int have[STUDY_NVIEW];
	double mlo[SM_N], mhi[SM_N];
	int mhave[SM_N];
};

/* In group gi, the focus system's best (*x) and the baseline's best (*b),
 * both picked in metric m (indices into res, -1: none feasible).  1 when
 * both exist and the focus is not the baseline itself, else 0. */
int study_best_pair(const struct study_grid *g, const struct result *res, int gi,
		    enum study_metric m, int *x, int *b);

/* Widens [*lo, *hi] (*have 0: empty) to hold q; a NaN is skipped. */
void study_widen(double *lo, double *hi, int *have, double q);

/* How many rows study_rows writes: per group, 1 + 3 x (systems - 1). */
int study_nrows(const struct study_grid *g);

/* The rows, group by group (the baseline's row, then each other system's
 * three views), from the solved grid (res) and extra points (res2), into
 * rows (study_nrows of them), and the focus system's ranges into rng. */
void study_rows(const struct study_grid *g, const struct result *res,
		const struct study_grid *extra, const struct result *res2,
		const struct study_pick *pk, enum study_metric m, struct study_row *rows,
		struct study_range *rng);

/* ---- the uncertainty study (uncert.c) ---- */

/* One assumed figure of a device or link file with a [range] (io/range.h),
 * and the roles it plays in the study's systems (gpu, memdev, memdev_link,
 * ...): each draw sets it in every role alike, ROLE[FILE].KEY=VALUE, on
 * the points of the systems that have it in that role. */
struct study_fig {
	char file[64], key[2 * INI_NAME];
	int link;                      /* a link file, else a device file */
	char roles[6][16];
	unsigned role_sys[6];          /* bit s: system s has it in that role */
	int nrole;
	double lo, hi, nominal;
	int unit;                      /* enum unit_class */
	int line;                      /* of its [range] entry in the file */
	char why[INI_SOURCE];
};

/* The figures and their draws: x[d * nfig + k] is figure k in draw d,
 * log-uniform in [lo, hi] (a Latin hypercube: each figure's draws fall
 * one in each of draws equal strata of log(hi / lo), in an order of its
 * own from GSL's MT19937 at the study's seed). */
struct study_unc {
	struct study_fig fig[STUDY_MAX_FIGS];
	int nfig, ndraw;
	int nset[STUDY_MAX_LIST];      /* overrides per draw on each system */
	double *x;
};

/* Collects the figures of the study's systems' devices and links, and
 * draws them.  0, or -1 with err (a file that does not load, a system
 * file naming a part by path, more figures or overrides than fit). */
int study_unc_setup(const struct study_def *s, struct study_unc *u, struct kerr *err);
void study_unc_free(struct study_unc *u);

/* The overrides of draw d (0-based) on a point of system sy into
 * sets[0..nset[sy]), each at most len bytes. */
void study_unc_sets(const struct study_unc *u, int d, int sy, char *sets, size_t len);

/* One row of the uncertainty: a system (not the baseline) in one model,
 * algorithm and workload, its ratio over the baseline best against best
 * in the study's metric at the nominal figures and over the draws where
 * both sides serve (n of them), and each figure's Spearman rank
 * correlation with that ratio (NaN where it cannot be had).  Under no
 * correlation, rho over n draws has a standard error of about
 * 1 / sqrt(n - 1); noise is twice that, about a 95% bound for one figure
 * (with many figures, a few pass it by chance). */
struct study_unc_row {
	int model, algo, workload, system;
	int n;
	double nominal, p10, p50, p90, lo, hi;
	double noise;                  /* 2 / sqrt(n - 1): a rank correlation
					  below it cannot be told from chance */
	double rho[STUDY_MAX_FIGS];
	int order[STUDY_MAX_FIGS];     /* figures by |rho|, largest first */
};

/* Whether figure f enters metric m at all: an [energy] figure or a
 * link's energy only where the watts drawn count (activity, node, cost),
 * a node's share of power only in node and cost, its prices only in cost.
 * A figure that does not enter gets no rank correlation (NaN): whatever
 * it showed would be chance. */
int study_fig_counts(const struct study_fig *f, enum study_metric m);

/* How many rows: per model, algorithm and workload, systems - 1. */
int study_unc_nrows(const struct study_grid *g, const struct study_def *s);

/* The rows from the solved grid (res), in metric m.  0, or -1 out of
 * memory. */
int study_unc_rows(const struct study_def *s, const struct study_unc *u,
		   const struct study_grid *g, const struct result *res, enum study_metric m,
		   struct study_unc_row *rows);

#endif
