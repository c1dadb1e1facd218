/* def.c: reading study files (study/study.h). */
#include "study/study.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/list.h"

static int counts(const char *text, int *v, int *n, int lo, int hi, char *why, size_t nwhy)
{
	char items[STUDY_MAX_LIST][INI_VALUE];
	if (list_split(text, 0, items, STUDY_MAX_LIST, n, why, nwhy) != 0)
		return -1;
	for (int i = 0; i < *n; i++) {
		char *end;
		long x = strtol(items[i], &end, 10);
		if (*end || x < lo || x > hi)
			return snprintf(why, nwhy, "'%s' is not a whole number in [%d, %d]", items[i],
					lo, hi),
			       -1;
		v[i] = (int)x;
	}
	return 0;
}

int study_fixed(const struct study_def *s, const char *sys)
{
	for (int i = 0; i < s->nfixed; i++)
		if (strcmp(s->fixed[i], sys) == 0)
			return 1;
	return 0;
}

int study_wide(const struct study_def *s, const char *sys)
{
	for (int i = 0; i < s->nwide; i++)
		if (strcmp(s->wide[i], sys) == 0)
			return 1;
	return 0;
}

/* A list that names one item twice would run its points twice: refused. */
static int no_dup(char (*vals)[INI_VALUE], int n, char *why, size_t nwhy)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(vals[i], vals[j]) == 0)
				return snprintf(why, nwhy, "'%s' is given twice", vals[i]), -1;
	return 0;
}

static int no_dup_counts(const int *v, int n, char *why, size_t nwhy)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (v[i] == v[j])
				return snprintf(why, nwhy, "%d is given twice", v[i]), -1;
	return 0;
}

/* The study's keys, in the order the help lists them. */
static const char *const keys[] = {"title", "models", "algos", "workloads", "systems",
				   "baseline", "gpus", "memdev_gpus", "memdevs_per_gpu",
				   "memdevs_fixed", "baseline_gpus_for", "paper", 0};

static int set_key(struct study_def *s, const struct ini_entry *e, char *why, size_t nwhy)
{
	const char *k = e->key, *v = e->value;
	if (!strcmp(k, "title"))
		return snprintf(s->title, sizeof s->title, "%s", v), 0;
	if (!strcmp(k, "baseline"))
		return snprintf(s->baseline, sizeof s->baseline, "%s", v), 0;
	/* the lists: names (algos keep their ,key=value parameters) and counts */
	struct {
		const char *key;
		char (*vals)[INI_VALUE];
		int *n, algo;
	} names[] = {{"models", s->model, &s->nmodel, 0}, {"algos", s->algo, &s->nalgo, 1},
		     {"workloads", s->workload, &s->nworkload, 0},
		     {"systems", s->system, &s->nsystem, 0},
		     {"memdevs_fixed", s->fixed, &s->nfixed, 0},
		     {"baseline_gpus_for", s->wide, &s->nwide, 0}};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(k, names[i].key))
			return list_split(v, names[i].algo, names[i].vals, STUDY_MAX_LIST,
					  names[i].n, why, nwhy) != 0
				       ? -1 : no_dup(names[i].vals, *names[i].n, why, nwhy);
	struct {
		const char *key;
		int *v, *n, hi;
	} nums[] = {{"gpus", s->gpus, &s->ngpus, 4096}, {"memdev_gpus", s->mgpus, &s->nmgpus, 4096},
		    {"memdevs_per_gpu", s->per_gpu, &s->nper, 64}};
	for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
		if (!strcmp(k, nums[i].key))
			return counts(v, nums[i].v, nums[i].n, 1, nums[i].hi, why, nwhy) != 0
				       ? -1 : no_dup_counts(nums[i].v, *nums[i].n, why, nwhy);
	/* paper: "LO-HIx", e.g. 2.09-6.13x */
	char *end;
	s->paper_lo = strtod(v, &end);
	if (*end == '-')
		s->paper_hi = strtod(end + 1, &end);
	if (*end == 'x')
		end++;
	if (*end || !(s->paper_lo > 0) || !(s->paper_hi >= s->paper_lo))
		return snprintf(why, nwhy, "'%s' is not a range LO-HIx (e.g. 2.09-6.13x)", v), -1;
	snprintf(s->paper_src, sizeof s->paper_src, "%s", e->source);
	return 0;
}

int study_load(const char *path, struct study_def *s, struct kerr *err)
{
	memset(s, 0, sizeof *s);
	snprintf(s->path, sizeof s->path, "%s", path);
	const char *base = strrchr(path, '/');
	snprintf(s->name, sizeof s->name, "%s", base ? base + 1 : path);
	char *dot = strrchr(s->name, '.');
	if (dot)
		*dot = '\0';
	struct ini_doc *doc = ini_doc_load(path, err);
	if (!doc)
		return -1;
	int rc = 0;
	for (int i = 0; i < doc->n && rc == 0; i++) {
		const struct ini_entry *e = &doc->e[i];
		char why[300];
		int k = 0;
		while (keys[k] && strcmp(keys[k], e->key))
			k++;
		if (strcmp(e->section, "study") != 0)
			rc = kerr_set(err, doc->path, e->line, "unknown section [%s] (a study has [study])",
				      e->section);
		else if (!keys[k])
			rc = kerr_set(err, doc->path, e->line,
				      "unknown key study.%s (title, models, algos, workloads, systems, "
				      "baseline, gpus, memdev_gpus, memdevs_per_gpu, memdevs_fixed, "
				      "baseline_gpus_for, paper)", e->key);
		else if (set_key(s, e, why, sizeof why) != 0)
			rc = kerr_set(err, doc->path, e->line, "study.%s: %s", e->key, why);
	}
	int line = ini_doc_section_line(doc, "study");
	if (line <= 0)
		line = 1;
	if (rc == 0 && (!s->title[0] || !s->nmodel || !s->nworkload || !s->nsystem ||
			!s->baseline[0] || !s->ngpus))
		rc = kerr_set(err, doc->path, line, "[study] needs title, models, workloads, "
			      "systems, baseline and gpus");
	if (rc == 0 && !s->nalgo)
		s->nalgo = 1, snprintf(s->algo[0], INI_VALUE, "native");
	if (rc == 0 && !s->nmgpus)
		memcpy(s->mgpus, s->gpus, sizeof s->gpus), s->nmgpus = s->ngpus;
	if (rc == 0 && !s->nper)
		s->nper = 1, s->per_gpu[0] = 1;
	int found = 0;
	for (int i = 0; rc == 0 && i < s->nsystem; i++)
		found |= strcmp(s->system[i], s->baseline) == 0;
	if (rc == 0 && !found) {
		const struct ini_entry *e = ini_doc_find(doc, "study", "baseline");
		rc = kerr_set(err, doc->path, e ? e->line : line,
			      "study.baseline '%s' is not one of study.systems", s->baseline);
	}
	/* a system named in memdevs_fixed or baseline_gpus_for is a study system */
	for (int l = 0; rc == 0 && l < 2; l++) {
		int n = l ? s->nwide : s->nfixed;
		for (int i = 0; rc == 0 && i < n; i++) {
			const char *name = l ? s->wide[i] : s->fixed[i];
			int in = 0;
			for (int j = 0; j < s->nsystem; j++)
				in |= strcmp(s->system[j], name) == 0;
			if (!in) {
				const char *key = l ? "baseline_gpus_for" : "memdevs_fixed";
				const struct ini_entry *e = ini_doc_find(doc, "study", key);
				rc = kerr_set(err, doc->path, e ? e->line : line,
					      "study.%s names '%s', which is not one of study.systems", key,
					      name);
			}
		}
	}
	ini_doc_free(doc);
	return rc ? -1 : 0;
}
