/* cmd_show.c: `karat show NAME|FILE.ini`: every value as karat resolved it,
 * the line it came from and its source, then the derived figures. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "base/suggest.h"
#include "cli/load.h"
#include "karat.h"

/* Finds what NAME is: a model, a device or a link (zoo order). */
static int classify(const char *name, enum zoo_kind *k)
{
	char path[1024];
	struct kerr err;
	for (int i = 0; i < ZOO_STUDY; i++) /* a study is run, not shown */
		if (zoo_resolve((enum zoo_kind)i, name, path, sizeof path, &err) == 0) {
			if (!zoo_is_path(name)) {
				*k = (enum zoo_kind)i;
				return 0;
			}
			/* a path: the first section says what it is */
			struct ini_doc *d = ini_doc_load(path, &err);
			if (!d)
				return die_msg("%s", err.msg), 1;
			const char *s = d->nsec ? d->sec[0].name : "";
			int rc = 0;
			if (strcmp(s, "model") == 0)
				*k = ZOO_MODEL;
			else if (strcmp(s, "device") == 0)
				*k = ZOO_DEVICE;
			else if (strcmp(s, "link") == 0)
				*k = ZOO_LINK;
			else if (strcmp(s, "system") == 0)
				*k = ZOO_SYSTEM;
			else if (strcmp(s, "workload") == 0)
				*k = ZOO_WORKLOAD;
			else {
				die_msg("%s:%d: first section must be [model], [device], [link], "
					"[system] or [workload]",
					path, d->nsec ? d->sec[0].line : 1);
				rc = 1;
			}
			ini_doc_free(d);
			return rc;
		}
	/* the nearest name of any kind, as query suggests one */
	static char names[ZOO_STUDY][256][64];
	const char *all[ZOO_STUDY * 256 + ALGO_N];
	int n = 0;
	for (int i = 0; i < ZOO_STUDY; i++) {
		int got = zoo_list((enum zoo_kind)i, names[i], 256, &err);
		for (int j = 0; j < got; j++)
			all[n++] = names[i][j];
	}
	for (int i = 0; i < ALGO_N; i++)
		all[n++] = algo_names[i];
	char hint[128];
	suggest_hint(name, all, n, hint, sizeof hint);
	die_msg("unknown name '%.64s'%s (see karat list models, hw, systems, workloads, algos)",
		name, hint);
	return EXIT_USAGE;
}

static int print_values(const struct ini_doc *doc, const struct schema *s,
			const void *obj)
{
	static const char *const head[] = {"key", "value", "line", "source"};
	struct table t;
	table_init(&t, 4, head, NULL);
	for (int i = 0; i < doc->n; i++) {
		const struct ini_entry *e = &doc->e[i];
		if (!strcmp(e->section, RANGE_SECTION))
			continue; /* print_ranges' */
		const struct field *f = schema_field(s, e->section, e->key);
		char key[OUT_CELL], val[OUT_CELL], line[16];
		snprintf(key, sizeof key, "%s.%s", e->section, e->key);
		if (f)
			schema_format(f, obj, val, sizeof val);
		else /* an algorithm parameter: resolved in the table below */
			snprintf(val, sizeof val, "%s", e->value);
		snprintf(line, sizeof line, "%d", e->line);
		const char *cells[4] = {key, val, line, e->source[0] ? e->source : "(none)"};
		table_add(&t, cells);
	}
	printf("%s\n", doc->path);
	int rc = table_write(&t, stdout, 0) != 0;
	table_free(&t);
	return rc;
}

/* A device's or link's [range] (io/range.h): each assumed figure's low,
 * value and high, and why. */
static int print_ranges(const struct ini_doc *doc, const struct schema *s)
{
	static struct frange r[RANGE_MAX];
	struct kerr err;
	int n = range_read(doc, s, r, RANGE_MAX, &err);
	if (n <= 0)
		return n < 0 ? (die_msg("%s", err.msg), 1) : 0;
	static const char *const head[] = {"figure", "low", "value", "high", "line", "why"};
	static const int right[] = {0, 1, 1, 1, 1, 0};
	struct table t;
	table_init(&t, 6, head, right);
	for (int i = 0; i < n; i++) {
		char lo[64], v[64], hi[64], line[16];
		unit_format(r[i].lo, r[i].unit, lo, sizeof lo);
		unit_format(r[i].nominal, r[i].unit, v, sizeof v);
		unit_format(r[i].hi, r[i].unit, hi, sizeof hi);
		snprintf(line, sizeof line, "%d", r[i].line);
		const char *cells[6] = {r[i].key, lo, v, hi, line, r[i].why};
		table_add(&t, cells);
	}
	printf("\nranges of the assumed figures (karat run uncertainty draws each in its own):\n");
	int rc = table_write(&t, stdout, 0) != 0;
	table_free(&t);
	return rc;
}

/* A device's or link's kernel-level values by calibration status
 * (io/calib.h): fitted on its own measurements (named), carried over from a
 * sibling (named), or assumed; then the counts. */
static int print_calibration(const struct ini_doc *doc)
{
	int count[CAL_N];
	if (cal_count(doc, count) == 0)
		return 0;
	static const char *const head[] = {"value", "status", "from"};
	struct table t;
	table_init(&t, 3, head, NULL);
	for (int s = 0; s < CAL_N; s++)
		for (int i = 0; i < doc->n; i++) {
			const struct ini_entry *e = &doc->e[i];
			char key[OUT_CELL], from[80];
			if (!cal_is_kernel_value(e->section, e->key) ||
			    (int)cal_status_of(e->source, from, sizeof from) != s)
				continue;
			snprintf(key, sizeof key, "%s.%s", e->section, e->key);
			const char *cells[3] = {key, cal_status_names[s], from};
			table_add(&t, cells);
		}
	printf("\ncalibration of the kernel-level values (fitted: on this device's own published "
	       "measurements, those named; sibling: carried over from the one named; assumed: "
	       "anything else):\n");
	int rc = table_write(&t, stdout, 0) != 0;
	printf("%d fitted, %d sibling, %d assumed\n", count[CAL_FITTED], count[CAL_SIBLING],
	       count[CAL_ASSUMED]);
	table_free(&t);
	return rc;
}

/* How the shipped tables measure device `name` (valid.h): its rows'
 * error where a value is fitted on the table and where none is. */
static int print_measured(const char *name)
{
	struct vsummary s;
	struct kerr err;
	if (valid_device_summary(name, &s, &err) != 0)
		return die_msg("%s", err.msg), 1;
	if (!s.tables) {
		printf("\nno shipped table (validation/) measures %s: nothing checks its values "
		       "against measurements of it\n", name);
		return 0;
	}
	printf("\nmeasured in %d shipped tables (karat validate; fit: a shipped value is fitted "
	       "on the table, check: none is, out of sample):\n", s.tables);
	const struct verr *v[2] = {&s.fit, &s.check};
	static const char *const role[2] = {"fit", "check"};
	for (int i = 0; i < 2; i++)
		if (v[i]->n)
			printf("  %-5s %4d rows  %5.1f%% mean absolute error (worst %+.0f%%, %s:%d)\n",
			       role[i], v[i]->n, 100 * v[i]->sum / v[i]->n, 100 * v[i]->worst,
			       v[i]->worst_table, v[i]->worst_line);
		else
			printf("  %-5s    0 rows\n", role[i]);
	return 0;
}

/* The parameters of sp's algorithm: value, and where it came from. */
static int print_params(const struct sparse_cfg *sp)
{
	const struct algo_row *a = algo_row(sp->algo);
	static const char *const head[] = {"parameter", "value", "origin"};
	struct table t;
	table_init(&t, 3, head, NULL);
	for (int i = 0; i < a->nparams; i++) {
		const struct algo_param *p = &a->params[i];
		const struct sp_param_info *info = &sp_params[p->p];
		char key[OUT_CELL], val[OUT_CELL], origin[OUT_CELL];
		snprintf(key, sizeof key, "sparse.%s", info->key);
		char def[64];
		if (info->is_dtype) {
			snprintf(val, sizeof val, "%s", dtype_names[(int)sp->p[p->p]]);
			snprintf(def, sizeof def, "%s", dtype_names[(int)p->value]);
		} else {
			unit_format(sp->p[p->p], info->unit, val, sizeof val);
			unit_format(p->value, info->unit, def, sizeof def);
		}
		if (sp->set & (1ul << p->p))
			snprintf(origin, sizeof origin, "given (default %s: %s)", def, p->source);
		else
			snprintf(origin, sizeof origin, "default: %s", p->source);
		const char *cells[3] = {key, val, origin};
		table_add(&t, cells);
	}
	int rc = 0;
	if (a->nparams)
		rc = table_write(&t, stdout, 0) != 0;
	table_free(&t);
	return rc;
}

static void model_derived(const struct kmodel *m)
{
	struct param_count p;
	model_params(m, &p);
	double kv, idx;
	attn_bytes_per_token(m, &m->sp, &kv, &idx);
	printf("\nattention algorithm %s (%s)\n", algo_names[m->sp.algo],
	       algo_row(m->sp.algo)->desc);
	print_params(&m->sp);
	printf("\nderived:\n");
	printf("  KV cache per token per layer   %.0f B (model layout)\n", model_kv_bytes_layer(m));
	printf("  KV cache per token             %.0f B (%g layers, as %s keeps it)\n", kv,
	       m->layers, algo_names[m->sp.algo]);
	printf("  index keys per token           %.0f B (%g layers own an indexer)\n", idx,
	       sparse_index_layers(&m->sp, m->layers));
	printf("  parameters from the shape      %.2fB (published %.2fB, %+.1f%%)\n",
	       p.total / 1e9, m->total_params / 1e9,
	       100 * (p.total / m->total_params - 1));
	printf("  weights on 1 GPU               %.1f GB\n", model_weight_bytes(m, 1) / 1e9);
}

static int show_algo(const struct algo_info *info)
{
	const struct algo_row *a = info->row;
	printf("%s: %s\n  training-free: %s; granularity: %s; source: %s\n\n", info->name,
	       a->desc, a->training_free ? "yes" : "no", a->granularity, a->source);
	struct sparse_cfg sp;
	sparse_cfg_init(&sp, info->id);
	if (!a->nparams)
		printf("no parameters\n");
	return print_params(&sp);
}

static void device_derived(const struct kdevice *d)
{
	printf("\nderived (ridge point = peak x eff_c / (bandwidth x eff_m)):\n");
	for (int t = 0; t < DT_N; t++) {
		if (d->peak[t] <= 0)
			continue;
		printf("  %-5s GEMM ridge %.0f FLOP/B, scan ridge %.0f FLOP/B\n",
		       dtype_names[t], roofline_ridge(d, OC_GEMM, (enum dtype)t),
		       roofline_ridge(d, OC_SCAN, (enum dtype)t));
	}
	if (d->peak[DT_FP32] <= 0)
		printf("  no fp32 peak given: fp32 work (norms, top-k, sampling) runs at the bf16 rate\n");
	double sel = device_select_rate(d);
	if (sel > 0) {
		printf("  top-k selection: at most %.3g scores/s (%s)", sel,
		       d->select_unit_rate > 0 ? "select.unit_rate" : "select.cores x select.core_rate");
		if (d->select_row_rate > 0)
			printf(", and a row's own pass at %.3g scores/s, %s", d->select_row_rate,
			       !(d->select_overlap >= 1) ? "the longer of the two"
			       : d->select_overlap == 1  ? "the two added"
							 : "the two joined by select.overlap");
		if (d->select_split > 1)
			printf(";\n    or, where faster, a split kernel: each row over %.0f SMs, %.3g us "
			       "fixed (select.split)", d->select_split, d->select_split_fixed * 1e6);
		printf("\n");
	} else
		printf("  top-k selection: no rate declared; top-k runs at its roofline (scan class)\n");
	printf("  runs operator classes:");
	for (int c = 0; c < OC_N; c++)
		if (d->supports & (1u << c))
			printf(" %s", op_class_names[c]);
	printf("\n");
}

/* A workload: its values, then the contexts it draws (input + uniform
 * share of output), 100,000 draws with seed 1. */
static int show_workload(const char *name)
{
	struct kworkload w;
	struct kerr err;
	if (zoo_load_workload(name, &w, &err) != 0)
		return die_msg("%s", err.msg), 1;
	char path[1024];
	zoo_resolve(ZOO_WORKLOAD, name, path, sizeof path, &err);
	struct ini_doc *doc = ini_doc_load(path, &err);
	int rc = doc ? print_values(doc, &workload_schema, &w) : 1;
	ini_doc_free(doc);
	enum { N = 100000 };
	static double x[N];
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 1);
	for (int i = 0; i < N; i++)
		x[i] = workload_draw_context(&w, r);
	gsl_rng_free(r);
	gsl_sort(x, 1, N);
	printf("\n%s (%s): decode contexts over %d draws: mean %.0f, p50 %.0f, p90 %.0f, "
	       "p99 %.0f, max %.0f tokens\n", w.name, wl_origin_names[w.origin], N,
	       gsl_stats_mean(x, 1, N), workload_quantile(x, N, 0.5),
	       workload_quantile(x, N, 0.9), workload_quantile(x, N, 0.99), x[N - 1]);
	workload_free(&w);
	return rc;
}

/* A system: its values, with any system.KEY overrides applied, then the
 * links it runs on (its own, or those its GPU names). */
static int show_system(const char *name, const struct args *a, struct ini_doc **doc)
{
	struct ksystem sy;
	struct kerr err;
	if (zoo_load_system(name, &sy, doc, &err) != 0)
		return die_msg("%s", err.msg), 1;
	char given_up[SYS_NAME], given_port[SYS_NAME];
	for (int i = 0; i < a->nmany; i++) {
		struct override o;
		if (override_parse(a->many[i], &o, &err) != 0) {
			cli_set_error(&err);
			return die_msg("%s", err.msg), EXIT_USAGE;
		}
		if (o.part != OV_SYSTEM) {
			die_msg("--set %s: show takes system.KEY overrides only", o.what);
			return EXIT_USAGE;
		}
		int rc = override_apply(&o, &sy, &err);
		if (rc) {
			cli_set_error(&err);
			return die_msg("%s", err.msg), rc == -2 ? EXIT_USAGE : 1;
		}
	}
	if (a->nmany && system_validate(&sy, NULL, &err) != 0)
		return die_msg("%s", err.msg), 1;
	int rc = print_values(*doc, &system_schema, &sy);
	snprintf(given_up, sizeof given_up, "%s", sy.scaleup_link);
	snprintf(given_port, sizeof given_port, "%s", sy.gpu_port);
	struct kdevice gpu;
	if (zoo_load_device(sy.gpu, &gpu, NULL, &err) != 0 || system_inherit(&sy, &gpu, &err) != 0)
		return die_msg("%s", err.msg), 1;
	printf("\nlinks in use: scale-up %s (%s), scale-out %s", sy.scaleup_link,
	       given_up[0] ? "the system's" : "the GPU's device.link", sy.scaleout_link);
	if (system_has_memdev(&sy))
		printf(", GPU port %s (%s)", system_has_port(&sy) ? sy.gpu_port : "none",
		       !given_port[0] ? "the GPU's device.port" :
		       strcmp(given_port, "scaleup") == 0 ? "the scale-up link" : "the system's");
	printf("; GPU %s\n", sy.gpu);
	return rc;
}

int cmd_show(const struct args *a)
{
	const char *name = a->pos[0];
	const struct algo_info *algo = algo_find(name);
	if (algo)
		return show_algo(algo);
	enum zoo_kind k;
	int rc = classify(name, &k);
	if (rc)
		return rc;
	struct kerr err;
	struct ini_doc *doc = NULL;
	if (k != ZOO_SYSTEM && a->nmany > 0) {
		die_msg("--set: show takes overrides for a system only (system.KEY=VALUE)");
		return EXIT_USAGE;
	}
	if (k == ZOO_MODEL) {
		struct kmodel m;
		if (zoo_load_model(name, &m, &doc, &err) != 0)
			return die_msg("%s", err.msg), 1;
		rc = print_values(doc, &model_schema, &m);
		model_derived(&m);
	} else if (k == ZOO_DEVICE) {
		struct kdevice d;
		if (zoo_load_device(name, &d, &doc, &err) != 0)
			return die_msg("%s", err.msg), 1;
		/* the tables name zoo devices: a file given by path is not one */
		rc = print_values(doc, &device_schema, &d) || print_calibration(doc) ||
		     (!zoo_is_path(name) && print_measured(name)) ||
		     print_ranges(doc, &device_schema);
		device_derived(&d);
	} else if (k == ZOO_LINK) {
		struct klink l;
		if (zoo_load_link(name, &l, &doc, &err) != 0)
			return die_msg("%s", err.msg), 1;
		rc = print_values(doc, &link_schema, &l) || print_calibration(doc) ||
		     print_ranges(doc, &link_schema);
	} else if (k == ZOO_SYSTEM) {
		rc = show_system(name, a, &doc);
	} else {
		rc = show_workload(name);
	}
	ini_doc_free(doc);
	return rc;
}
