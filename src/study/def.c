/* def.c: reading study files (study/study.h) through io/schema: its
 * [study] keys are a static field table, so an unknown key, a missing one,
 * a bad list or count is refused with FILE:LINE as every other file is. */
#include "study/study.h"

#include "io/list.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* study.probe: index 0 is on (no_probe 0) */
static const char *const probe_names_onoff[] = {"on", "off", NULL};

/* study.power takes the first three (cost is shown, never chosen) */
static const char *const power_names[] = {"tdp", "activity", "node", NULL};
const char *const study_metric_names[SM_N + 1] = {"tdp", "activity", "node", "cost", NULL};

#define S(key, kind, member, req, lo, hi, help)                                              \
	{"study", key, kind, U_INT, offsetof(struct study_def, member), STUDY_MAX_LIST, req, lo, \
	 hi, 0, NULL, help}
static const struct field study_fields[] = {
	{"study", "title", FK_STR, U_INT, offsetof(struct study_def, title), INI_VALUE, 1, 0, 0, 0,
	 NULL, "what the study compares, printed above its table"},
	S("models", FK_NAMES, models, 1, 0, 0, "models compared (zoo names or paths)"),
	S("algos", FK_ALGOS, algos, 0, 0, 0,
	  "attention algorithms, NAME[:key=value,...] (default: native, each model's own)"),
	S("workloads", FK_NAMES, workloads, 1, 0, 0, "workloads"),
	S("systems", FK_NAMES, systems, 1, 0, 0,
	  "systems; the last is the one the ranges summarise"),
	{"study", "baseline", FK_STR, U_INT, offsetof(struct study_def, baseline), INI_VALUE, 1, 0,
	 0, 0, NULL, "the system every other is set against (one of systems)"},
	S("gpus", FK_INTS, gpus, 1, 1, 4096, "GPU counts tried"),
	S("memdev_gpus", FK_INTS, mgpus, 0, 1, 4096,
	  "GPU counts tried for systems with memory devices (default: gpus)"),
	S("memdevs_per_gpu", FK_INTS, per_gpu, 0, 1, 64,
	  "memory devices per GPU tried (default: 1)"),
	S("attention_tp", FK_INTS, tp, 0, 1, 64,
	  "tensor-parallel attention degrees tried on the systems without memory devices "
	  "(system.attention_tp), for each GQA model whose KV heads and a node's GPUs they "
	  "divide (default: 1, data-parallel attention)"),
	S("memdevs_fixed", FK_NAMES, fixed, 0, 0, 0,
	  "systems that keep their file's devices per GPU"),
	S("baseline_gpus_for", FK_NAMES, wide, 0, 0, 0,
	  "systems tried at the baseline's GPU counts (gpus), not memdev_gpus"),
	S("slos_ms", FK_INTS, slos, 0, 1, 1000000,
	  "P99 TBT SLOs to run every point at, ms (default: the run's, 100)"),
	S("gpu_types", FK_NAMES, gpu_types, 0, 0, 0,
	  "GPUs to run every system on, both sides alike (default: each system's own)"),
	{"study", "samples", FK_NUM, U_INT, offsetof(struct study_def, samples), 0, 0, 1, 1e6, 1,
	 NULL, "sampled batches per evaluation (default: the run's, 256); fewer are faster and "
	 "give a noisier P99"},
	{"study", "probe", FK_ENUM, U_INT, offsetof(struct study_def, no_probe), 0, 0, 0, 0, 0,
	 probe_names_onoff, "on (default): each system's best says what to grow first "
	 "(grow_first); off: it does not, and the run is faster"},
	{"study", "power", FK_ENUM, U_INT, offsetof(struct study_def, power), 0, 0, 0, 0, 0,
	 power_names, "the watts each system's best and its ratio are per: tdp "
	 "(default), activity (drawn) or node (drawn, with each node's hosts, NICs, switches "
	 "and fans); the summary shows all three and the cost"},
	{"study", "draws", FK_NUM, U_INT, offsetof(struct study_def, draws), 0, 0, 2,
	 STUDY_MAX_DRAWS, 1, NULL, "an uncertainty study: this many Latin-hypercube draws of "
	 "every figure with a [range] in its systems' device and link files; it writes "
	 "P10, P50 and P90 of the ratio, and what drives it"},
	{"study", "draw_seed", FK_NUM, U_INT, offsetof(struct study_def, draw_seed), 0, 0, 0,
	 2147483647, 0, NULL, "the draws' seed (default 1); the same seed, the same draws"},
	{"study", "saturate", FK_NUM, U_REAL, offsetof(struct study_def, saturate), 0, 0, 0.001, 0.5,
	 1, NULL, "grow each system's GPU count and devices per GPU past the lists, doubling, "
	 "until one more step gains less than this share of its best (e.g. 0.01) or a limit "
	 "stops it (gpus_limit, memdevs_per_gpu_limit); absent: the lists as given"},
	S("saturate_systems", FK_NAMES, grown, 0, 0, 0,
	  "the systems a saturating study grows (default: every one; the others keep the "
	  "lists)"),
	{"study", "gpus_limit", FK_NUM, U_INT, offsetof(struct study_def, gpus_limit), 0, 0, 1,
	 4096, 1, NULL, "the most GPUs a saturating study grows a system to"},
	{"study", "memdevs_per_gpu_limit", FK_NUM, U_INT, offsetof(struct study_def, per_gpu_limit),
	 0, 0, 1, 64, 1, NULL, "the most memory devices per GPU a saturating study grows a "
	 "system to"},
	{"study", "paper", FK_STR, U_INT, offsetof(struct study_def, paper), INI_VALUE, 0, 0, 0, 0,
	 NULL, "the paper's range, LO-HIx (e.g. 2.09-6.13x), printed beside ours"},
};
#undef S
/* [steps] holds the study's own keys: a step's name and its overrides */
const struct schema study_schema = {"study", study_fields,
					   sizeof study_fields / sizeof *study_fields, "steps", NULL};

static int named(const struct name_list *l, const char *sys)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->v[i], sys) == 0)
			return 1;
	return 0;
}

int study_fixed(const struct study_def *s, const char *sys)
{
	return named(&s->fixed, sys);
}

int study_wide(const struct study_def *s, const char *sys)
{
	return named(&s->wide, sys);
}

int study_grows(const struct study_def *s, const char *sys)
{
	return s->saturate > 0 && (!s->grown.n || named(&s->grown, sys));
}

int study_nstep(const struct study_def *s)
{
	return s->nsteps ? s->nsteps : s->draws > 0 ? (int)s->draws + 1 : 1;
}

int study_step_sets(const struct study_def *s, int k)
{
	int n = 0;
	for (int i = 0; i <= k && i < s->nsteps; i++)
		n += s->step_nset[i];
	return n;
}

/* One [steps] entry: a name, and its overrides section.key=value joined
 * by '&', or "none" (the model as it is). */
static int load_step(struct study_def *s, const struct ini_entry *e, const char *path,
		     struct kerr *err)
{
	if (s->nsteps == STUDY_MAX_STEPS)
		return kerr_set(err, path, e->line, "more than %d [steps]", STUDY_MAX_STEPS);
	int k = s->nsteps++;
	snprintf(s->step_name[k], sizeof s->step_name[k], "%s", e->key);
	snprintf(s->step_why[k], sizeof s->step_why[k], "%s", e->source);
	s->step_line[k] = e->line;
	s->step_nset[k] = 0;
	if (strcmp(e->value, "none") == 0)
		return 0;
	char why[200];
	if (list_split_sets(e->value, s->step_set[k][0], sizeof s->step_set[k][0], STUDY_SET_LEN,
			    STUDY_STEP_SETS, &s->step_nset[k], why, sizeof why) != 0)
		return kerr_set(err, path, e->line, "steps.%s: %s; none for no change", e->key,
				why);
	if (s->step_nset[k] == 0)
		return kerr_set(err, path, e->line, "steps.%s: no overrides (none for no change)",
				e->key);
	/* with run's own three (system.gpus, memdevs, gpu), every point's
	 * overrides fit; a user's --set is checked against what is left */
	if (3 + study_step_sets(s, k) > ARGS_MAX_MANY)
		return kerr_set(err, path, e->line, "[steps] give more than %d overrides in all",
				ARGS_MAX_MANY - 3);
	return 0;
}

/* paper: "LO-HIx", e.g. 2.09-6.13x. */
static int paper_range(struct study_def *s, const struct ini_doc *doc, struct kerr *err)
{
	const struct ini_entry *e = ini_doc_find(doc, "study", "paper");
	if (!e)
		return 0;
	char *end;
	s->paper_lo = strtod(s->paper, &end);
	if (*end == '-')
		s->paper_hi = strtod(end + 1, &end);
	if (*end == 'x')
		end++;
	if (*end || !(s->paper_lo > 0) || !(s->paper_hi >= s->paper_lo))
		return kerr_set(err, doc->path, e->line, "study.paper: '%s' is not a range LO-HIx "
				"(e.g. 2.09-6.13x)", s->paper);
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
	int rc = schema_bind(&study_schema, doc, s, err) != 0 || paper_range(s, doc, err) != 0;
	for (int i = 0; rc == 0 && i < doc->n; i++) /* in file order */
		if (strcmp(doc->e[i].section, "steps") == 0)
			rc = load_step(s, &doc->e[i], doc->path, err) != 0;
	for (int i = 0; rc == 0 && i < s->nsteps; i++)
		for (int j = 0; rc == 0 && j < i; j++)
			if (strcmp(s->step_name[i], s->step_name[j]) == 0)
				rc = kerr_set(err, doc->path, s->step_line[i], "steps.%s is given twice",
					      s->step_name[i]) != 0;
	const struct ini_entry *dr = ini_doc_find(doc, "study", "draws");
	if (rc == 0 && dr && (s->nsteps || s->slos.n || s->gpu_types.n))
		rc = kerr_set(err, doc->path, dr->line, "study.draws: an uncertainty study has no "
			      "[steps], slos_ms or gpu_types (run those as studies of their own)") != 0;
	const struct ini_entry *sat = ini_doc_find(doc, "study", "saturate");
	if (rc == 0 && sat && (!ini_doc_find(doc, "study", "gpus_limit") ||
			       !ini_doc_find(doc, "study", "memdevs_per_gpu_limit")))
		rc = kerr_set(err, doc->path, sat->line, "study.saturate needs gpus_limit and "
			      "memdevs_per_gpu_limit, the physical limits growth stops at") != 0;
	if (rc == 0 && sat && dr)
		rc = kerr_set(err, doc->path, sat->line, "study.saturate: an uncertainty study "
			      "(draws) solves a fixed grid") != 0;
	for (int i = 0; rc == 0 && sat && i < s->gpus.n + s->mgpus.n + s->per_gpu.n; i++) {
		int per = i >= s->gpus.n + s->mgpus.n;
		int v = i < s->gpus.n ? s->gpus.v[i] : !per ? s->mgpus.v[i - s->gpus.n]
					: s->per_gpu.v[i - s->gpus.n - s->mgpus.n];
		if (v > (per ? s->per_gpu_limit : s->gpus_limit))
			rc = kerr_set(err, doc->path, sat->line, "study.saturate: a listed count (%d) "
				      "is above its limit (study.%s = %.0f)", v,
				      per ? "memdevs_per_gpu_limit" : "gpus_limit",
				      per ? s->per_gpu_limit : s->gpus_limit) != 0;
	}
	if (rc == 0 && !ini_doc_find(doc, "study", "draw_seed"))
		s->draw_seed = 1;
	if (rc == 0 && !s->algos.n)
		s->algos.n = 1, snprintf(s->algos.v[0], INI_VALUE, "native");
	if (rc == 0 && !s->mgpus.n)
		s->mgpus = s->gpus;
	if (rc == 0 && !s->per_gpu.n)
		s->per_gpu.n = 1, s->per_gpu.v[0] = 1;
	int line = ini_doc_section_line(doc, "study");
	if (rc == 0 && !named(&s->systems, s->baseline)) {
		const struct ini_entry *e = ini_doc_find(doc, "study", "baseline");
		rc = kerr_set(err, doc->path, e ? e->line : line,
			      "study.baseline '%s' is not one of study.systems", s->baseline);
	}
	/* a system named in memdevs_fixed, baseline_gpus_for or saturate_systems
	 * is a study system */
	for (int l = 0; rc == 0 && l < 3; l++) {
		const struct name_list *nl = l == 2 ? &s->grown : l ? &s->wide : &s->fixed;
		for (int i = 0; rc == 0 && i < nl->n; i++)
			if (!named(&s->systems, nl->v[i])) {
				const char *key = l == 2 ? "saturate_systems"
						  : l ? "baseline_gpus_for" : "memdevs_fixed";
				const struct ini_entry *e = ini_doc_find(doc, "study", key);
				rc = kerr_set(err, doc->path, e ? e->line : line,
					      "study.%s names '%s', which is not one of study.systems", key,
					      nl->v[i]);
			}
	}
	ini_doc_free(doc);
	return rc ? -1 : 0;
}
