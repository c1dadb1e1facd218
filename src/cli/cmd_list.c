/* cmd_list.c: `karat list models|hw|algos`. */
#include <string.h>

#include "cli/load.h"
#include "study/study.h"
#include "karat.h"

#define MAX_NAMES 256

static int list_models(void)
{
	static char names[MAX_NAMES][64];
	struct kerr err;
	int n = zoo_list(ZOO_MODEL, names, MAX_NAMES, &err);
	if (n < 0)
		return die_msg("%s", err.msg), 1;
	static const char *const head[] = {"name", "model", "attention", "algo",
					   "layers", "params", "KV_B_per_token",
					   "index_B_per_token"};
	static const int right[] = {0, 0, 0, 0, 1, 1, 1, 1};
	struct table t;
	table_init(&t, 8, head, right);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		struct kmodel m;
		char c[8][OUT_CELL];
		if (zoo_load_model(names[i], &m, NULL, &err) != 0) {
			die_msg("%s", err.msg);
			rc = 1;
			continue;
		}
		snprintf(c[0], OUT_CELL, "%s", names[i]);
		snprintf(c[1], OUT_CELL, "%s", m.name);
		snprintf(c[2], OUT_CELL, "%s", m.attn == ATTN_MLA ? "mla" : "gqa");
		double kv, idx;
		attn_bytes_per_token(&m, &m.sp, &kv, &idx);
		snprintf(c[3], OUT_CELL, "%s", algo_table[m.sp.algo].name);
		snprintf(c[4], OUT_CELL, "%g", m.layers);
		snprintf(c[5], OUT_CELL, "%.0fB", m.total_params / 1e9);
		snprintf(c[6], OUT_CELL, "%.0f", kv);
		snprintf(c[7], OUT_CELL, "%.0f", idx);
		const char *cells[8] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]};
		table_add(&t, cells);
	}
	if (table_write(&t, stdout, 0) != 0)
		rc = 1;
	table_free(&t);
	return rc;
}

static int list_hw(void)
{
	static char names[MAX_NAMES][64];
	struct kerr err;
	int n = zoo_list(ZOO_DEVICE, names, MAX_NAMES, &err);
	if (n < 0)
		return die_msg("%s", err.msg), 1;
	static const char *const head[] = {"device", "kind", "bf16_TFLOPS", "fp8_TFLOPS",
					   "memory_GB", "bw_GBps", "tdp_W", "link", "name"};
	static const int right[] = {0, 0, 1, 1, 1, 1, 1, 0, 0};
	struct table t;
	table_init(&t, 9, head, right);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		struct kdevice d;
		if (zoo_load_device(names[i], &d, NULL, &err) != 0) {
			die_msg("%s", err.msg);
			rc = 1;
			continue;
		}
		char c[9][OUT_CELL];
		snprintf(c[0], OUT_CELL, "%s", names[i]);
		snprintf(c[1], OUT_CELL, "%s", dev_kind_names[d.kind]);
		snprintf(c[2], OUT_CELL, "%g", d.peak[DT_BF16] / 1e12);
		snprintf(c[3], OUT_CELL, "%g", d.peak[DT_FP8] / 1e12);
		snprintf(c[4], OUT_CELL, "%g", d.mem_capacity / 1e9);
		snprintf(c[5], OUT_CELL, "%g", d.mem_bw / 1e9);
		snprintf(c[6], OUT_CELL, "%g", d.tdp);
		snprintf(c[7], OUT_CELL, "%s", d.link);
		snprintf(c[8], OUT_CELL, "%s", d.name);
		const char *cells[9] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]};
		table_add(&t, cells);
	}
	rc |= table_write(&t, stdout, 0) != 0;
	table_free(&t);

	n = zoo_list(ZOO_LINK, names, MAX_NAMES, &err);
	if (n < 0)
		return die_msg("%s", err.msg), 1;
	static const char *const lhead[] = {"link", "GBps_per_direction", "latency_us",
					    "efficiency", "pJ_per_bit", "name"};
	static const int lright[] = {0, 1, 1, 1, 1, 0};
	table_init(&t, 6, lhead, lright);
	for (int i = 0; i < n; i++) {
		struct klink l;
		if (zoo_load_link(names[i], &l, NULL, &err) != 0) {
			die_msg("%s", err.msg);
			rc = 1;
			continue;
		}
		char c[6][OUT_CELL];
		snprintf(c[0], OUT_CELL, "%s", names[i]);
		snprintf(c[1], OUT_CELL, "%g", l.bw / 1e9);
		snprintf(c[2], OUT_CELL, "%g", l.latency * 1e6);
		snprintf(c[3], OUT_CELL, "%g", l.efficiency);
		snprintf(c[4], OUT_CELL, "%g", l.energy_bit * 1e12);
		snprintf(c[5], OUT_CELL, "%s", l.name);
		const char *cells[6] = {c[0], c[1], c[2], c[3], c[4], c[5]};
		table_add(&t, cells);
	}
	printf("\n");
	rc |= table_write(&t, stdout, 0) != 0;
	table_free(&t);
	return rc;
}

/* Formats an algorithm's parameters with their defaults: "topk=2048 ...". */
static void param_defaults(const struct algo_row *a, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < a->nparams && used + 2 < n; i++) {
		const struct algo_param *p = &a->params[i];
		const struct sp_param_info *info = &sp_params[p->p];
		if (info->is_dtype)
			used += (size_t)snprintf(buf + used, n - used, "%s%s=%s", i ? " " : "",
						 info->key, dtype_names[(int)p->value]);
		else
			used += (size_t)snprintf(buf + used, n - used, "%s%s=%g", i ? " " : "",
						 info->key, p->value);
	}
}

static int list_algos(void)
{
	static const char *const head[] = {"algo", "training_free", "granularity", "index",
					   "description", "parameters (published defaults)"};
	struct table t;
	table_init(&t, 6, head, NULL);
	for (int i = 0; i < ALGO_N; i++) {
		const struct algo_row *a = algo_row(i);
		char params[OUT_CELL];
		param_defaults(a, params, sizeof params);
		const char *cells[6] = {algo_names[i], a->training_free ? "yes" : "no", a->granularity,
					a->has_index ? "yes" : "no", a->desc, params};
		table_add(&t, cells);
	}
	int rc = table_write(&t, stdout, 0) != 0;
	table_free(&t);
	printf("\n'karat show ALGO' lists each parameter's source.  Swap an algorithm "
	       "in with\n--algo NAME[:key=value,...]; trained-only ones need --force on "
	       "a model not\ntrained for them.\n");
	return rc;
}

static int list_systems(void)
{
	static char names[MAX_NAMES][64];
	struct kerr err;
	int n = zoo_list(ZOO_SYSTEM, names, MAX_NAMES, &err);
	if (n < 0)
		return die_msg("%s", err.msg), 1;
	static const char *const head[] = {"system", "gpu", "gpus", "memdev", "memdevs",
					   "memdev_link", "name"};
	static const int right[] = {0, 0, 1, 0, 1, 0, 0};
	struct table t;
	table_init(&t, 7, head, right);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		struct ksystem s;
		if (zoo_load_system(names[i], &s, NULL, &err) != 0) {
			die_msg("%s", err.msg);
			rc = 1;
			continue;
		}
		char c[3][OUT_CELL];
		snprintf(c[0], OUT_CELL, "%g", s.gpus);
		snprintf(c[1], OUT_CELL, "%g", s.memdevs);
		snprintf(c[2], OUT_CELL, "%s", system_has_memdev(&s) ? s.memdev_link : "-");
		const char *cells[7] = {names[i], s.gpu, c[0], s.memdev, c[1], c[2], s.name};
		table_add(&t, cells);
	}
	rc |= table_write(&t, stdout, 0) != 0;
	table_free(&t);
	return rc;
}

static int list_workloads(void)
{
	static char names[MAX_NAMES][64];
	struct kerr err;
	int n = zoo_list(ZOO_WORKLOAD, names, MAX_NAMES, &err);
	if (n < 0)
		return die_msg("%s", err.msg), 1;
	static const char *const head[] = {"workload", "origin", "name"};
	struct table t;
	table_init(&t, 3, head, NULL);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		struct kworkload w;
		if (zoo_load_workload(names[i], &w, &err) != 0) {
			die_msg("%s", err.msg);
			rc = 1;
			continue;
		}
		const char *cells[3] = {names[i], wl_origin_names[w.origin], w.name};
		table_add(&t, cells);
		workload_free(&w);
	}
	rc |= table_write(&t, stdout, 0) != 0;
	table_free(&t);
	printf("\n'karat show NAME' prints a workload's values and the contexts it draws.\n");
	return rc;
}

static int list_studies(void)
{
	static char names[MAX_NAMES][64];
	static struct study_def sd;
	struct kerr err;
	int n = zoo_list(ZOO_STUDY, names, MAX_NAMES, &err);
	if (n < 0)
		return die_msg("%s", err.msg), 1;
	static const char *const head[] = {"study", "title"};
	struct table t;
	table_init(&t, 2, head, NULL);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char path[1100];
		if (zoo_resolve(ZOO_STUDY, names[i], path, sizeof path, &err) != 0 ||
		    study_load(path, &sd, &err) != 0) {
			die_msg("%s", err.msg);
			rc = 1;
			continue;
		}
		const char *cells[2] = {names[i], sd.title};
		table_add(&t, cells);
	}
	rc |= table_write(&t, stdout, 0) != 0;
	table_free(&t);
	printf("\n'karat run NAME' runs one; 'karat run' runs them all.\n");
	return rc;
}

int cmd_list(const struct args *a)
{
	const char *what = a->pos[0];
	if (strcmp(what, "models") == 0)
		return list_models();
	if (strcmp(what, "hw") == 0)
		return list_hw();
	if (strcmp(what, "algos") == 0)
		return list_algos();
	if (strcmp(what, "systems") == 0)
		return list_systems();
	if (strcmp(what, "workloads") == 0)
		return list_workloads();
	if (strcmp(what, "studies") == 0)
		return list_studies();
	const struct command *c = command_find("list");
	return usage_error(c, "cannot list '%.40s'", what);
}
