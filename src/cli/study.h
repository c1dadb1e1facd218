/* study.h (cli): a study file (studies/NAME.ini): which models,
 * algorithms, workloads and systems `karat run` compares, at which GPU
 * counts and memory devices per GPU, against which baseline, and the
 * paper's range to print beside ours.  cmd_run keeps no lists of its own. */
#ifndef KARAT_CLI_STUDY_H
#define KARAT_CLI_STUDY_H

#include "base/err.h"
#include "base/limits.h"
#include "io/ini_doc.h"

struct study_def {
	char path[1024], name[64];
	char title[INI_VALUE];
	char model[STUDY_MAX_LIST][INI_VALUE], algo[STUDY_MAX_LIST][INI_VALUE],
		workload[STUDY_MAX_LIST][INI_VALUE], system[STUDY_MAX_LIST][INI_VALUE];
	int nmodel, nalgo, nworkload, nsystem;
	char baseline[INI_VALUE];           /* one of system[] */
	int gpus[STUDY_MAX_LIST], ngpus;    /* GPU counts tried */
	int mgpus[STUDY_MAX_LIST], nmgpus;  /* ... for systems with memory
					       devices (default: gpus) */
	int per_gpu[STUDY_MAX_LIST], nper;  /* memory devices per GPU tried */
	char fixed[STUDY_MAX_LIST][INI_VALUE]; /* systems that keep their
						   file's devices per GPU */
	int nfixed;
	char wide[STUDY_MAX_LIST][INI_VALUE]; /* systems tried at the baseline's
						 GPU counts (gpus), not memdev_gpus */
	int nwide;
	double paper_lo, paper_hi;          /* 0: none given */
	char paper_src[INI_VALUE];
};

/* Loads and checks a study file: unknown sections or keys, empty lists,
 * a baseline not among the systems, counts out of range are errors with
 * FILE:LINE.  0, or -1 with err. */
int study_load(const char *path, struct study_def *s, struct kerr *err);

/* Whether system name sys keeps its file's device count in s. */
int study_fixed(const struct study_def *s, const char *sys);
/* Whether system name sys is tried at the baseline's GPU counts. */
int study_wide(const struct study_def *s, const char *sys);

/* Splits a comma-separated list into vals (at most max items of
 * INI_VALUE); with algo, "dsa:topk=1024,index_heads=32" is one item (a
 * piece with '=' and no ':' continues the previous one).  0, or -1 with a
 * reason in why (n bytes). */
int list_split(const char *text, int algo, char (*vals)[INI_VALUE], int max, int *n,
	       char *why, size_t nwhy);

#endif
