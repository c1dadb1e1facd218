/* fuzz.c: libFuzzer targets, one per loader; the target is chosen at
 * compile time (-DFUZZ_ini, -DFUZZ_model, ...; see the Makefile's `fuzz`).
 * Each feeds the fuzzer's bytes to a loader and frees what it returns; a
 * crash, a sanitizer report or a leak is a finding.  The loaders must
 * answer every input with 0 or an error message, nothing else.
 *
 * `sched` builds a pipeline from the bytes and checks the fast path
 * against the reference and against itself with another order tried
 * first; a disagreement aborts.
 *
 * `design` applies a list of --set items (one a line) to a whole design
 * together and builds and evaluates its plan.  The command-line targets
 * (`sweep`, `study`, `shard`, `plot`) write the bytes to a file and run the
 * command that reads it, linked with the CLI (main renamed karat_main):
 * sweep --dry-run, the study reader, merge, and plot's check of a CSV. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/gslerr.h"
#include "base/units.h"
#include "hw/device.h"
#include "hw/link.h"
#include "io/ini_doc.h"
#include "io/schema.h"
#include "model/model.h"
#include "sparse/algo.h"
#include "hw/system.h"
#include "workload/workload.h"
#include "zoo/override.h"
#include "valid/valid.h"
#include "zoo/design.h"
#include "sched/pipeline.h"
#include "solve/solve.h"

#if defined(FUZZ_sweep) || defined(FUZZ_study) || defined(FUZZ_shard) || defined(FUZZ_plot)
#define FUZZ_CLI 1
#include <stdio.h>
#include <unistd.h>
#include "study/study.h"
int karat_main(int argc, char **argv);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char fuzz_dir[64];

/* A folder for the files; gnuplot is never started.  (scripts/fuzz.sh
 * runs these with -close_fd_mask=3: what the commands print is dropped.) */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/karat-fuzz-XXXXXX");
	if (!mkdtemp(fuzz_dir))
		abort();
	setenv("PATH", "/nonexistent", 1);
	return 0;
}

/* Writes the bytes to fuzz_dir/name; its path. */
static const char *put(const char *name, const uint8_t *data, size_t size)
{
	static char path[128];
	snprintf(path, sizeof path, "%s/%s", fuzz_dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	return path;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as a NUL-terminated string (for the value parsers). */
static __attribute__((unused)) char *as_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

#if defined(FUZZ_model) || defined(FUZZ_device) || defined(FUZZ_link) || defined(FUZZ_system)
/* Parse, bind with the schema, validate: what zoo_load_* does. */
static void bind(const uint8_t *data, size_t size, const struct schema *s, void *obj,
		 int (*validate)(void *obj, const struct ini_doc *doc, struct kerr *err))
{
	struct kerr err;
	struct ini_doc *doc = ini_doc_parse("fuzz.ini", (const char *)data, size, &err);
	if (!doc)
		return;
	if (schema_bind(s, doc, obj, &err) == 0 && validate)
		validate(obj, doc, &err);
	ini_doc_free(doc);
}
#endif

#ifdef FUZZ_model
static int v_model(void *o, const struct ini_doc *d, struct kerr *e) { return model_validate(o, d, e); }
#endif
#ifdef FUZZ_device
static int v_device(void *o, const struct ini_doc *d, struct kerr *e) { return device_validate(o, d, e); }
#endif
#ifdef FUZZ_system
static int v_system(void *o, const struct ini_doc *d, struct kerr *e) { return system_validate(o, d, e); }
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gslerr_install();
#if defined(FUZZ_ini)
	struct kerr err;
	struct ini_doc *doc = ini_doc_parse("fuzz.ini", (const char *)data, size, &err);
	ini_doc_free(doc);
#elif defined(FUZZ_model)
	static struct kmodel m;
	memset(&m, 0, sizeof m);
	bind(data, size, &model_schema, &m, v_model);
#elif defined(FUZZ_device)
	static struct kdevice d;
	memset(&d, 0, sizeof d);
	bind(data, size, &device_schema, &d, v_device);
#elif defined(FUZZ_link)
	static struct klink l;
	memset(&l, 0, sizeof l);
	bind(data, size, &link_schema, &l, NULL);
#elif defined(FUZZ_system)
	static struct ksystem s;
	memset(&s, 0, sizeof s);
	bind(data, size, &system_schema, &s, v_system);
#elif defined(FUZZ_workload)
	static struct kworkload w;
	struct kerr err;
	if (workload_parse("/nonexistent/fuzz.ini", (const char *)data, size, &w, &err) == 0)
		workload_free(&w);
#elif defined(FUZZ_trace)
	double *in = NULL, *out = NULL;
	long n;
	struct kerr err;
	const struct trace_filter keep = {"model", "a"}; /* every row, then the row filter */
	for (int k = 0; k < 2; k++)
		if (workload_parse_trace("fuzz.csv", (const char *)data, size, "in", "out",
					 k ? &keep : NULL, &in, &out, &n, &err) == 0)
			free(in), free(out);
#elif defined(FUZZ_valid)
	struct vtable t;
	struct kerr err;
	if (vtable_parse("fuzz.csv", (const char *)data, size, &t, &err) == 0)
		vtable_free(&t);
#elif defined(FUZZ_units)
	char *s = as_string(data, size);
	if (s) {
		char why[200];
		double v;
		for (int c = 0; c < U_NCLASS; c++)
			unit_parse(s, (enum unit_class)c, &v, why, sizeof why);
		free(s);
	}
#elif defined(FUZZ_algo)
	char *s = as_string(data, size);
	if (s) {
		struct sparse_cfg cfg;
		struct kerr err;
		sparse_parse_spec(s, NULL, &cfg, &err);
		free(s);
	}
#elif defined(FUZZ_override)
	/* one --set item routed and applied to blank descriptions of its part */
	char *s = as_string(data, size);
	if (s) {
		static struct kmodel m;
		static struct kdevice d;
		static struct klink l;
		static struct ksystem sy;
		struct sparse_cfg sp;
		struct override o;
		struct kerr err;
		memset(&m, 0, sizeof m), memset(&d, 0, sizeof d), memset(&l, 0, sizeof l);
		memset(&sy, 0, sizeof sy);
		sparse_cfg_init(&sp, ALGO_DSA);
		if (override_parse(s, &o, &err) == 0 && o.part != OV_WORKLOAD) {
			void *obj = o.part == OV_MODEL ? (void *)&m : o.part == OV_SPARSE ? (void *)&sp
				    : o.part == OV_SYSTEM ? (void *)&sy
				    : o.part == OV_GPU || o.part == OV_MEMDEV || o.part == OV_HW ? (void *)&d
													  : (void *)&l;
			override_apply(&o, obj, &err);
		}
		free(s);
	}
#elif defined(FUZZ_sched)
	static struct pipe_in in;
	if (size >= 6) {
		size_t at = 0;
		memset(&in, 0, sizeof in);
		in.kind = data[at++] % SCHED_N;
		in.m = 1 + data[at++] % PIPE_MAX_MB;
		in.layers = 1 + (data[at] | data[at + 1] << 8) % 300; /* enough to repeat */
		at += 2;
		uint8_t f = data[at++];
		in.attn_on_gpu = f & 1, in.duplex = f >> 1 & 1, in.link_on_net = f >> 2 & 1;
		in.nclass = 1 + (f >> 3) % PIPE_MAX_CLASSES;
		int first = (int8_t)data[at++];
		/* the rest: layer kinds, then durations on a lattice (ties), zeros
		 * included; once the bytes run out, a fixed pattern */
#define NEXT(dflt) (at < size ? data[at++] : (dflt))
		for (int l = 0; l < in.layers; l++)
			in.layer_class[l] = (unsigned char)(NEXT(l) % in.nclass);
		for (int i = 0; i < in.m; i++)
			for (int t = 0; t < T_ALL; t++)
				in.dur[i][t] = NEXT(i + 3 * t) * 1e-5;
		for (int c = 1; c < in.nclass; c++)
			for (int i = 0; i < in.m; i++)
				for (int t = 0; t < T_LAYER; t++)
					in.cdur[c][i][t] = NEXT(c + i + t) * 1e-5;
#undef NEXT
		struct pipe_out a, b, r;
		int ra = pipe_fast(&in, &a);
		in.first = first;
		int rb = pipe_fast(&in, &b), rr = pipe_list(&in, &r, NULL, 0);
		if (ra != rb || ra != rr)
			abort();
		if (ra == 0 && (a.makespan != b.makespan || a.order != b.order ||
				memcmp(a.busy, b.busy, sizeof a.busy) ||
				fabs(a.makespan - r.makespan) > 1e-9 * r.makespan))
			abort();
	}
#elif defined(FUZZ_design)
	/* --set items, one a line, on DeepSeek-V3.2 with KARAT, together */
	char *s = as_string(data, size);
	if (s) {
		const char *sets[DESIGN_MAX_SETS];
		int n = 0;
		for (char *save = NULL, *t = strtok_r(s, "\n", &save); t && n < DESIGN_MAX_SETS;
		     t = strtok_r(NULL, "\n", &save))
			sets[n++] = t;
		struct design_spec sp = DESIGN_SPEC_INIT;
		sp.model = "deepseek-v3.2", sp.system = "gpu-karat", sp.context = 4096;
		sp.samples = 4;
		sp.sets = sets;
		sp.nsets = n;
		static struct design_parts dp;
		struct kerr err;
		if (design_assemble(&sp, &dp, &err) == 0) {
			struct plan *p = plan_new(&dp.d, &err);
			struct result r;
			if (p)
				plan_eval(p, 8, 1, &r, &err);
			plan_free(p);
		}
		design_free(&dp);
		free(s);
	}
#elif defined(FUZZ_sweep)
	char *argv[] = {"karat", "sweep", (char *)put("s.ini", data, size), "--dry-run", NULL};
	karat_main(4, argv);
#elif defined(FUZZ_study)
	static struct study_def st;
	struct kerr err;
	study_load(put("s.ini", data, size), &st, &err);
#elif defined(FUZZ_shard)
	char *argv[] = {"karat", "merge", (char *)put("s.csv", data, size), NULL};
	karat_main(3, argv);
#elif defined(FUZZ_plot)
	put("tbt-batch.csv", data, size);
	char *argv[] = {"karat", "plot", "tbt-batch", "--from", fuzz_dir, NULL};
	karat_main(5, argv);
#else
#error "define one FUZZ_<target>"
#endif
	return 0;
}
