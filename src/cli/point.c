/* point.c (cli): design points from strings, overrides, CSV rows. */
#include "cli/point.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/units.h"
#include "cost/attn.h"
#include "cli/load.h"
#include "cli/override.h"
#include "zoo/design.h"

const char *const point_head[] = {
	"model", "algo", "system", "workload", "schedule", "microbatches", "batch",
	"tbt_mean_s", "tbt_p99_s", "throughput_tok_s", "tdp_w", "tok_s_per_w",
	"energy_j_per_tok", "feasible", "reason",
	"gpus", "memdevs", "mtp", "mtp_accept", "slo_s", "samples", "seed",
	"ctx_mean_tokens", "ctx_clipped_share", "gpu_mem_use", "memdev_mem_use",
	"busy_gpu_s", "busy_memdev_s", "busy_link_s", "busy_net_s",
	"bubble_gpu", "bubble_memdev", "bubble_link", "bubble_net", "sharded_share",
	"ingest_bytes_per_step", "overrides"};
const int point_ncols = sizeof point_head / sizeof point_head[0];

static int bad(struct kerr *err, int rc, const char *fmt, const char *a,
	       const char *b)
{
	kerr_set(err, 0, 0, fmt, a, b);
	return rc;
}

static int num(const char *opt, const char *text, enum unit_class u, double lo,
	       double hi, double *out, struct kerr *err)
{
	char why[160];
	if (unit_parse(text, u, out, why, sizeof why) != 0) {
		kerr_set(err, 0, 0, "--%s: %s", opt, why);
		return 2;
	}
	if (!(*out >= lo && *out <= hi)) {
		kerr_set(err, 0, 0, "--%s: %s is out of range [%g, %g]", opt, text, lo, hi);
		return 2;
	}
	return 0;
}

/* Stages of override application: what each section names. */
enum stage { ST_SYSTEM, ST_HW, ST_MODEL, ST_SPARSE, ST_WORKLOAD, ST_N };

static int section_stage(const char *sec)
{
	static const char *const hw[] = {"gpu", "memdev", "scaleup_link",
					 "scaleout_link", "memdev_link", "gpu_port", 0};
	if (strcmp(sec, "system") == 0)
		return ST_SYSTEM;
	for (int i = 0; hw[i]; i++)
		if (strcmp(sec, hw[i]) == 0)
			return ST_HW;
	if (override_is_model_section(sec))
		return ST_MODEL;
	if (strcmp(sec, "sparse") == 0)
		return ST_SPARSE;
	if (!strcmp(sec, "workload") || !strcmp(sec, "input") || !strcmp(sec, "output"))
		return ST_WORKLOAD;
	return -1;
}

/* Refuses device keys an override cannot change consistently. */
static int device_key_ok(const struct override *o, struct kerr *err)
{
	if (!strcmp(o->key, "kind") || !strcmp(o->key, "ops") || !strcmp(o->key, "link")) {
		kerr_set(err, 0, 0, "--set %s: copy the device file to change its %s", o->what,
			 o->key);
		return 0;
	}
	return 1;
}

static int apply_one(struct loaded *ld, int stage, const struct override *o,
		     struct kerr *err)
{
	const char *sec = o->section;
	switch (stage) {
	case ST_SYSTEM:
		return override_field(&system_schema, sec, o, &ld->sys, err);
	case ST_HW: {
		int mem = !strcmp(sec, "memdev") || !strcmp(sec, "memdev_link");
		if (mem && !system_has_memdev(&ld->sys)) {
			kerr_set(err, 0, 0, "--set %s: the system has no memory device", o->what);
			return 2;
		}
		if (!strcmp(sec, "gpu") || !strcmp(sec, "memdev"))
			return device_key_ok(o, err)
				       ? override_field(&device_schema, NULL, o,
							!strcmp(sec, "gpu") ? &ld->gpu : &ld->mem, err)
				       : 2;
		if (!strcmp(sec, "gpu_port") && !system_has_port(&ld->sys)) {
			kerr_set(err, 0, 0, "--set %s: the system has no GPU port", o->what);
			return 2;
		}
		struct klink *l = !strcmp(sec, "scaleup_link") ? &ld->up
				  : !strcmp(sec, "scaleout_link") ? &ld->out
				  : !strcmp(sec, "gpu_port") ? &ld->port : &ld->ml;
		return override_field(&link_schema, NULL, o, l, err);
	}
	case ST_MODEL:
	case ST_SPARSE:
		return override_model(o, &ld->m, &ld->sp, err);
	default:
		if (workload_set(&ld->wl, sec, o->key, o->value, err) == 0)
			return 0;
		char msg[KERR_MSG];
		snprintf(msg, sizeof msg, "%s", err->msg);
		kerr_set(err, 0, 0, "--set %s: %s", o->what, msg);
		return 1;
	}
}

/* Applies the overrides of one stage, in the order given. */
static int apply_sets(const struct point_spec *ps, struct loaded *ld, int stage,
		      struct kerr *err)
{
	for (int i = 0; i < ps->nsets; i++) {
		struct override o;
		int rc = override_split(ps->sets[i], &o, err);
		if (rc)
			return rc;
		int st = section_stage(o.section);
		if (st < 0)
			return bad(err, 2, "--set %s: unknown section '%s' (system, gpu, memdev, "
				   "scaleup_link, scaleout_link, memdev_link, model sections, "
				   "sparse, workload, input, output)", ps->sets[i], o.section);
		if (st != stage)
			continue;
		if (st == ST_WORKLOAD && !ps->workload)
			return bad(err, 2, "--set %s: the context is fixed (--context); "
				   "workload sections do not apply%s", ps->sets[i], "");
		if (ps->skip_memdev_sets && !system_has_memdev(&ld->sys) &&
		    (!strcmp(o.section, "memdev") || !strcmp(o.section, "memdev_link") ||
		     (!strcmp(o.section, "system") && (!strcmp(o.key, "memdevs") ||
						       !strcmp(o.key, "memdev_link")))))
			continue;
		if ((rc = apply_one(ld, st, &o, err)) != 0)
			return rc;
	}
	return 0;
}

static int load_parts(const struct point_spec *ps, struct loaded *ld, struct kerr *err)
{
	int rc;
	if ((rc = load_model(ps->model, &ld->m, err)) != 0)
		return rc;
	if ((rc = apply_sets(ps, ld, ST_MODEL, err)) != 0)
		return rc;
	ld->sp = ld->m.sp;
	if (ps->algo && sparse_parse_spec(ps->algo, &ld->m.sp, &ld->sp, err) != 0)
		return cli_prefix(err, "--algo: ", ""), 2;
	if ((rc = apply_sets(ps, ld, ST_SPARSE, err)) != 0)
		return rc;
	if ((rc = attn_applicable(&ld->m, &ld->sp, ps->force, err)) != 0)
		return cli_prefix(err, "", rc == -2 ? " (--force costs it anyway)" : ""), 1;
	if ((rc = load_system(ps->system, &ld->sys, err)) != 0)
		return rc;
	if ((rc = apply_sets(ps, ld, ST_SYSTEM, err)) != 0)
		return rc;
	if (ps->skip_memdev_sets && !system_has_memdev(&ld->sys))
		ld->sys.memdevs = 0; /* a sweep's memdevs key does not apply here */
	if (system_validate(&ld->sys, NULL, err) != 0)
		return 1;
	if ((rc = load_device(ld->sys.gpu, &ld->gpu, err)) != 0 ||
	    (rc = load_link(ld->sys.scaleup_link, &ld->up, err)) != 0 ||
	    (rc = load_link(ld->sys.scaleout_link, &ld->out, err)) != 0)
		return rc;
	if (system_has_memdev(&ld->sys) &&
	    ((rc = load_device(ld->sys.memdev, &ld->mem, err)) != 0 ||
	     (rc = load_link(ld->sys.memdev_link, &ld->ml, err)) != 0))
		return rc;
	if (system_has_port(&ld->sys) && (rc = load_link(ld->sys.gpu_port, &ld->port, err)) != 0)
		return rc;
	if ((rc = apply_sets(ps, ld, ST_HW, err)) != 0)
		return rc;
	if (ps->workload && ps->context)
		return bad(err, 2, "give --workload or --context, not both%s%s", "", "");
	if (ps->workload) {
		if ((rc = load_workload(ps->workload, &ld->wl, err)) != 0)
			return rc;
	} else {
		double L;
		if ((rc = num("context", ps->context, U_TOKENS, 1, 1e9, &L, err)) != 0)
			return rc;
		if (L > ld->m.max_context) { /* as ops does: never clipped silently */
			kerr_set(err, 0, 0, "context %s (%g tokens) exceeds %s's maximum of %g "
				 "tokens", ps->context, L, ld->m.name, ld->m.max_context);
			return 1;
		}
		workload_fixed(&ld->wl, L);
		snprintf(ld->wl.name, sizeof ld->wl.name, "fixed-%s", ps->context);
	}
	return apply_sets(ps, ld, ST_WORKLOAD, err);
}

static int parse_design(const struct point_spec *ps, struct loaded *ld,
			struct kerr *err)
{
	struct design *d = &ld->d;
	int rc;
	d->sched = DESIGN_DEFAULT_SCHED;
	if (ps->schedule) {
		int k = 0;
		while (sched_names[k] && strcmp(sched_names[k], ps->schedule))
			k++;
		if (!sched_names[k])
			return bad(err, 2, "--schedule: '%s' is not serial, naive, ofms, cmr or "
				   "ofms+cmr%s", ps->schedule, "");
		d->sched = k;
	}
	double x;
	ld->mb = 0;
	if (ps->mb && strcmp(ps->mb, "auto") != 0) {
		if ((rc = num("microbatches", ps->mb, U_INT, 1, PIPE_MAX_MB, &x, err)) != 0)
			return rc;
		ld->mb = (int)x;
	}
	if (d->sched == SCHED_SERIAL && ld->mb != 1) {
		if (ps->mb && ld->mb > 1)
			return bad(err, 2, "--schedule serial runs one micro-batch (got "
				   "--microbatches %s)%s", ps->mb, "");
		ld->mb = 1;
	}
	ld->batch = 0;
	if (ps->batch && (rc = num("batch", ps->batch, U_INT, 1, PLAN_MAX_BATCH,
				   &ld->batch, err)) != 0)
		return rc;
	d->mtp = ld->m.mtp_draft;
	d->accept = ld->m.mtp_accept;
	if (ps->mtp && (rc = num("mtp", ps->mtp, U_INT, 0, 64, &d->mtp, err)) != 0)
		return rc;
	if (ps->accept && (rc = num("mtp-accept", ps->accept, U_REAL, 0, 1, &d->accept,
				    err)) != 0)
		return rc;
	d->slo = DESIGN_DEFAULT_SLO_S;
	if (ps->slo_ms) {
		if ((rc = num("slo-ms", ps->slo_ms, U_REAL, 1e-3, 1e6, &x, err)) != 0)
			return rc;
		d->slo = x / 1e3;
	}
	d->samples = DESIGN_DEFAULT_SAMPLES;
	if (ps->samples) {
		if ((rc = num("samples", ps->samples, U_INT, 1, 1e6, &x, err)) != 0)
			return rc;
		d->samples = (int)x;
	}
	d->seed = DESIGN_DEFAULT_SEED;
	if (ps->seed) {
		if ((rc = num("seed", ps->seed, U_INT, 0, 4294967295.0, &x, err)) != 0)
			return rc;
		d->seed = (unsigned long)x;
	}
	d->exact = ps->exact;
	return 0;
}

int point_load(const struct point_spec *ps, struct loaded *ld, struct kerr *err)
{
	memset(ld, 0, sizeof *ld);
	if (!ps->model || !ps->system || (!ps->workload && !ps->context))
		return bad(err, 2, "--model, --system and --workload (or --context) are "
			   "required%s%s", "", "");
	int rc = load_parts(ps, ld, err);
	if (rc == 0)
		rc = parse_design(ps, ld, err);
	if (rc)
		return rc;
	struct design *d = &ld->d;
	d->m = &ld->m, d->sp = &ld->sp, d->sys = &ld->sys, d->gpu = &ld->gpu;
	d->mem = system_has_memdev(&ld->sys) ? &ld->mem : NULL;
	d->up = &ld->up, d->out = &ld->out;
	d->mlink = d->mem ? &ld->ml : NULL;
	d->port = system_has_port(&ld->sys) ? &ld->port : NULL;
	d->wl = &ld->wl;
	arg_label(ps->model, ld->label[0], sizeof ld->label[0]);
	snprintf(ld->label[1], sizeof ld->label[1], "%s", ps->algo ? ps->algo :
		 algo_table[ld->sp.algo].name);
	arg_label(ps->system, ld->label[2], sizeof ld->label[2]);
	if (ps->workload)
		arg_label(ps->workload, ld->label[3], sizeof ld->label[3]);
	else
		snprintf(ld->label[3], sizeof ld->label[3], "%s", ld->wl.name);
	size_t o = 0;
	for (int i = 0; i < ps->nsets; i++) {
		size_t need = strlen(ps->sets[i]) + (i ? 1 : 0);
		if (need >= POINT_SET_LEN || o + need >= sizeof ld->sets)
			return bad(err, 2, "--set %.60s...: an override is longer than %s "
				   "characters", ps->sets[i], "319");
		o += (size_t)snprintf(ld->sets + o, sizeof ld->sets - o, "%s%s",
				      i ? ";" : "", ps->sets[i]);
	}
	for (int k = 0; k < 4; k++) /* labels come from names of bounded length */
		if (strlen(ld->label[k]) + 1 >= sizeof ld->label[k])
			return bad(err, 2, "name too long: %.60s...%s", ld->label[k], "");
	return 0;
}

void point_free(struct loaded *ld)
{
	workload_free(&ld->wl);
}

/* Zero printed as 0, never -0. */
static double nz(double x)
{
	return x == 0 ? 0 : x;
}

void point_cells(const struct loaded *ld, const struct result *r,
		 char cells[][OUT_CELL], const char **out)
{
	const struct design *d = &ld->d;
	int i = 0;
#define CELL(...) (out[i] = cells[i], snprintf(cells[i++], OUT_CELL, __VA_ARGS__))
	for (int k = 0; k < 4; k++)
		out[i++] = ld->label[k];
	CELL("%s", sched_names[d->sched]);
	CELL("%d", r->mb);
	CELL("%.0f", nz(r->batch));
	CELL("%.6g", nz(r->tbt_mean));
	CELL("%.6g", nz(r->tbt_p99));
	CELL("%.6g", nz(r->throughput));
	CELL("%.6g", nz(r->tdp));
	CELL("%.6g", nz(r->tok_per_w));
	CELL("%.6g", nz(r->j_per_tok));
	CELL("%s", r->feasible ? "true" : "false");
	CELL("%s", r->reason);
	CELL("%g", nz(ld->sys.gpus));
	CELL("%g", nz(system_has_memdev(&ld->sys) ? ld->sys.memdevs : 0));
	CELL("%g", nz(d->mtp));
	CELL("%g", nz(d->accept));
	CELL("%g", nz(d->slo));
	CELL("%d", d->samples);
	CELL("%lu", d->seed);
	CELL("%.6g", nz(r->ctx_mean));
	CELL("%.4g", nz(r->clipped));
	CELL("%.4g", nz(r->gpu_use));
	CELL("%.4g", nz(r->mem_use));
	/* a full-duplex link is as busy as its busier direction */
	for (int x = 0; x < RES_BACK; x++)
		CELL("%.6g", nz(x == RES_LINK ? fmax(r->busy[x], r->busy[RES_BACK]) : r->busy[x]));
	for (int x = 0; x < RES_BACK; x++)
		CELL("%.4f", nz(x == RES_LINK ? fmin(r->bubble[x], r->bubble[RES_BACK])
					      : r->bubble[x]));
	CELL("%.4g", nz(r->sharded));
	CELL("%.6g", nz(r->ingest));
	out[i++] = ld->sets;
#undef CELL
}
