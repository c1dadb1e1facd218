/* design.c: assembling a whole design point (design.h). */
#include "zoo/design.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cost/attn.h"
#include "cost/tp.h"
#include "zoo/override.h"

void design_link(struct design_parts *dp)
{
	int mem = system_has_memdev(&dp->sys);
	struct design *d = &dp->d;
	d->m = &dp->m, d->sp = &dp->sp, d->sys = &dp->sys, d->gpu = &dp->gpu;
	d->mem = mem ? &dp->mem : NULL;
	d->up = &dp->up, d->out = &dp->out;
	d->mlink = mem ? &dp->ml : NULL;
	d->port = system_has_port(&dp->sys) ? &dp->port : NULL;
	d->host = !mem && dp->sys.host_cache > 0 ? &dp->port : NULL;
	d->wl = &dp->wl;
}

/* When each override applies: what it names must be loaded, and what it
 * changes must not be loaded yet. */
enum stage { ST_MODEL, ST_SPARSE, ST_SYSTEM, ST_PARTS, ST_WORKLOAD };

static enum stage stage_of(enum ov_part p)
{
	switch (p) {
	case OV_MODEL: return ST_MODEL;
	case OV_SPARSE: return ST_SPARSE;
	case OV_SYSTEM: return ST_SYSTEM;
	case OV_WORKLOAD: return ST_WORKLOAD;
	default: return ST_PARTS;
	}
}

/* Records what failed; returns rc. */
static int blame(struct design_parts *dp, enum design_input in, int set, int rc)
{
	dp->fail = in;
	dp->fail_set = set;
	return rc;
}

/* The description an override of a device or link sets, or NULL with err
 * when the system has no such part. */
static void *part_of(struct design_parts *dp, const struct override *o, struct kerr *err)
{
	const struct ksystem *s = &dp->sys;
	switch (o->part) {
	case OV_GPU: return &dp->gpu;
	case OV_SCALEUP: return &dp->up;
	case OV_SCALEOUT: return &dp->out;
	case OV_MEMDEV:
	case OV_MEMDEV_LINK:
		if (!system_has_memdev(s)) {
			kerr_set(err, 0, 0, "%s: the system has no memory device", o->what);
			return NULL;
		}
		return o->part == OV_MEMDEV ? (void *)&dp->mem : (void *)&dp->ml;
	case OV_GPU_PORT:
		if (!system_has_port(s)) {
			kerr_set(err, 0, 0, "%s: the system has no GPU port", o->what);
			return NULL;
		}
		return &dp->port;
	default:
		kerr_set(err, 0, 0, "%s: '%s' names a lone device or its link; a system's are "
			 "gpu, memdev, scaleup_link, scaleout_link, memdev_link and gpu_port",
			 o->what, ov_part_names[o->part]);
		return NULL;
	}
}

_Static_assert(DESIGN_MAX_SETS <= 64, "design_parts.applied is a 64-bit mask");

/* The file a system's device or link role names ("" for none). */
static const char *role_name(const struct ksystem *s, enum ov_part p)
{
	switch (p) {
	case OV_GPU: return s->gpu;
	case OV_MEMDEV: return system_has_memdev(s) ? s->memdev : "";
	case OV_SCALEUP: return s->scaleup_link;
	case OV_SCALEOUT: return s->scaleout_link;
	case OV_MEMDEV_LINK: return system_has_memdev(s) ? s->memdev_link : "";
	case OV_GPU_PORT: return system_has_port(s) ? s->gpu_port : "";
	default: return "";
	}
}

/* Applies the overrides of one stage, in the order given. */
static int apply_stage(const struct design_spec *s, const struct override *ov,
		       struct design_parts *dp, enum stage st, struct kerr *err)
{
	for (int i = 0; i < s->nsets; i++) {
		const struct override *o = &ov[i];
		if (stage_of(o->part) != st)
			continue;
		if (s->skip_memdev_sets && !system_has_memdev(&dp->sys) && override_is_memdev(o))
			continue;
		if (o->only[0] && st == ST_PARTS) {
			const char *is = role_name(&dp->sys, o->part);
			if (strcmp(is, o->only) != 0) {
				if (s->skip_memdev_sets)
					continue; /* a sweep or study: the points it is for */
				kerr_set(err, 0, 0, "%s: the system's %s is %s, not %s", o->what,
					 ov_part_names[o->part], is[0] ? is : "none", o->only);
				return blame(dp, DI_SET, i, -2);
			}
		}
		void *obj = NULL;
		switch (st) {
		case ST_MODEL: obj = &dp->m; break;
		case ST_SPARSE: obj = &dp->sp; break;
		case ST_SYSTEM: obj = &dp->sys; break;
		case ST_WORKLOAD:
			if (!s->workload) {
				kerr_set(err, 0, 0, "%s: the context is fixed; workload sections "
					 "do not apply", o->what);
				return blame(dp, DI_SET, i, -2);
			}
			obj = &dp->wl;
			break;
		case ST_PARTS:
			if (!(obj = part_of(dp, o, err)))
				return blame(dp, DI_SET, i, -2);
			break;
		}
		int rc = override_apply(o, obj, err);
		if (rc)
			return blame(dp, DI_SET, i, rc);
		dp->applied |= 1ULL << i;
	}
	return 0;
}

/* Checks the description of one part again, as its file is checked, when
 * overrides of that part were applied (zoo/override.h override_recheck). */
static int recheck(const struct design_spec *s, const struct override *ov,
		   struct design_parts *dp, enum ov_part part, enum zoo_kind kind,
		   const char *name, void *obj, struct kerr *err)
{
	int which[DESIGN_MAX_SETS], n = 0, blamed;
	for (int i = 0; i < s->nsets; i++)
		if (ov[i].part == part && ((dp->applied >> i) & 1))
			which[n++] = i;
	if (override_recheck(kind, name, obj, ov, which, n, &blamed, err) != 0)
		return blame(dp, DI_SET, blamed, -1);
	return 0;
}

/* The model, its algorithm and their overrides. */
static int load_model(const struct design_spec *s, const struct override *ov,
		      struct design_parts *dp, struct kerr *err)
{
	int rc = zoo_load_model(s->model, &dp->m, NULL, err);
	if (rc)
		return blame(dp, DI_MODEL, 0, rc);
	if ((rc = apply_stage(s, ov, dp, ST_MODEL, err)) != 0 ||
	    (rc = recheck(s, ov, dp, OV_MODEL, ZOO_MODEL, s->model, &dp->m, err)) != 0)
		return rc;
	dp->sp = dp->m.sp;
	if (s->algo && sparse_parse_spec(s->algo, &dp->m.sp, &dp->sp, err) != 0)
		return blame(dp, DI_ALGO, 0, -2);
	if ((rc = apply_stage(s, ov, dp, ST_SPARSE, err)) != 0)
		return rc;
	if ((rc = attn_applicable(&dp->m, &dp->sp, s->force, err)) != 0)
		return blame(dp, rc == -2 ? DI_FORCE : DI_ALGO, 0, -1);
	return 0;
}

/* The system, its overrides, and every device and link it then names. */
static int load_system(const struct design_spec *s, const struct override *ov,
		       struct design_parts *dp, struct kerr *err)
{
	struct ksystem *sy = &dp->sys;
	int rc = zoo_load_system(s->system, sy, NULL, err);
	if (rc)
		return blame(dp, DI_SYSTEM, 0, rc);
	if ((rc = apply_stage(s, ov, dp, ST_SYSTEM, err)) != 0)
		return rc;
	if (s->skip_memdev_sets && !system_has_memdev(sy))
		sy->memdevs = 0; /* a sweep's memdevs key does not apply here */
	if (system_validate(sy, NULL, err) != 0)
		return blame(dp, DI_SYSTEM, 0, -1);
	if ((rc = zoo_load_device(sy->gpu, &dp->gpu, NULL, err)) != 0)
		return blame(dp, DI_PART, 0, rc);
	if (system_inherit(sy, &dp->gpu, err) != 0) /* the GPU's own links */
		return blame(dp, DI_SYSTEM, 0, -1);
	if ((rc = zoo_load_link(sy->scaleup_link, &dp->up, NULL, err)) != 0 ||
	    (rc = zoo_load_link(sy->scaleout_link, &dp->out, NULL, err)) != 0)
		return blame(dp, DI_PART, 0, rc);
	if (system_has_memdev(sy) &&
	    ((rc = zoo_load_device(sy->memdev, &dp->mem, NULL, err)) != 0 ||
	     (rc = zoo_load_link(sy->memdev_link, &dp->ml, NULL, err)) != 0))
		return blame(dp, DI_PART, 0, rc);
	if (system_has_port(sy) && (rc = zoo_load_link(sy->gpu_port, &dp->port, NULL, err)) != 0)
		return blame(dp, DI_PART, 0, rc);
	if (!system_has_memdev(sy) && sy->host_cache > 0) { /* reached over the GPU's port */
		if (!dp->gpu.port[0])
			return blame(dp, DI_SYSTEM, 0, kerr_set(err, 0, 0, "system.host_cache needs "
						"a GPU with a port to its host (%s gives no "
						"device.port)", sy->gpu));
		if ((rc = zoo_load_link(dp->gpu.port, &dp->port, NULL, err)) != 0)
			return blame(dp, DI_PART, 0, rc);
	}
	if ((rc = apply_stage(s, ov, dp, ST_PARTS, err)) != 0 ||
	    (rc = recheck(s, ov, dp, OV_GPU, ZOO_DEVICE, sy->gpu, &dp->gpu, err)) != 0)
		return rc;
	if (system_has_memdev(sy) &&
	    (rc = recheck(s, ov, dp, OV_MEMDEV, ZOO_DEVICE, sy->memdev, &dp->mem, err)) != 0)
		return rc;
	if (tp_check(&dp->m, sy, &dp->up, err) != 0) /* the model is loaded by now */
		return blame(dp, DI_SYSTEM, 0, -1);
	return 0;
}

static int load_workload(const struct design_spec *s, const struct override *ov,
			 struct design_parts *dp, struct kerr *err)
{
	if (s->workload) {
		int rc = zoo_load_workload(s->workload, &dp->wl, err);
		if (rc)
			return blame(dp, DI_WORKLOAD, 0, rc);
	} else {
		if (!(s->context >= 1) || s->context != floor(s->context)) {
			kerr_set(err, 0, 0, "a fixed context must be a whole number of tokens "
				 ">= 1 (got %g)", s->context);
			return blame(dp, DI_CONTEXT, 0, -2);
		}
		if (s->context > dp->m.max_context) { /* never clipped silently */
			kerr_set(err, 0, 0, "a context of %.0f tokens exceeds %s's maximum of %.0f "
				 "tokens",
				 s->context, dp->m.name, dp->m.max_context);
			return blame(dp, DI_CONTEXT, 0, -1);
		}
		workload_fixed(&dp->wl, s->context);
	}
	int rc = apply_stage(s, ov, dp, ST_WORKLOAD, err);
	if (rc)
		return rc;
	int which[DESIGN_MAX_SETS], n = 0, blamed;
	for (int i = 0; i < s->nsets; i++)
		if (ov[i].part == OV_WORKLOAD && ((dp->applied >> i) & 1))
			which[n++] = i;
	if (override_settle(&dp->wl, ov, which, n, &blamed, err) != 0)
		return blame(dp, DI_SET, blamed, -1);
	return 0;
}

/* The run settings, each given or at its default. */
static int settings(const struct design_spec *s, struct design_parts *dp, struct kerr *err)
{
	struct design *d = &dp->d;
	d->sched = s->sched >= 0 ? s->sched : DESIGN_DEFAULT_SCHED;
	d->mtp = isnan(s->mtp) ? dp->m.mtp_draft : s->mtp;
	d->accept = isnan(s->accept) ? dp->m.mtp_accept : s->accept;
	d->slo = isnan(s->slo_s) ? DESIGN_DEFAULT_SLO_S : s->slo_s;
	d->samples = s->samples >= 0 ? s->samples : DESIGN_DEFAULT_SAMPLES;
	d->seed = s->seed >= 0 ? (unsigned long)s->seed : DESIGN_DEFAULT_SEED;
	d->exact = s->exact;
	d->per_request = s->exact; /* the reference in both */
	d->average_layers = dp->sys.layers == LAYERS_AVERAGE;
	if (d->sched >= SCHED_N) {
		kerr_set(err, 0, 0, "unknown schedule %d", d->sched);
		return blame(dp, DI_SETTING, 0, -2);
	}
	return 0;
}

int design_assemble(const struct design_spec *s, struct design_parts *dp,
		    struct kerr *err)
{
	memset(dp, 0, sizeof *dp);
	if (!s->model || !s->system || (!s->workload && !(s->context > 0))) {
		kerr_set(err, 0, 0, "a design needs a model, a system and a workload or context");
		return blame(dp, DI_NONE, 0, -2);
	}
	if (s->nsets < 0 || s->nsets > DESIGN_MAX_SETS) {
		kerr_set(err, 0, 0, "%d overrides; at most %d", s->nsets, DESIGN_MAX_SETS);
		return blame(dp, DI_SET, 0, -2);
	}
	struct override ov[DESIGN_MAX_SETS];
	for (int i = 0; i < s->nsets; i++) {
		if (override_parse(s->sets[i], &ov[i], err) != 0)
			return blame(dp, DI_SET, i, -2);
		/* ROLE[NAME]: NAME must be a device or link there is, or the
		 * override would apply nowhere, silently */
		char path[1024];
		if (ov[i].only[0] &&
		    zoo_resolve(ov[i].part == OV_GPU || ov[i].part == OV_MEMDEV ? ZOO_DEVICE
										   : ZOO_LINK,
				ov[i].only, path, sizeof path, err) != 0) {
			char why[KERR_MSG];
			snprintf(why, sizeof why, "%s", err->msg);
			kerr_set(err, 0, 0, "%s: %s", ov[i].what, why);
			return blame(dp, DI_SET, i, -2);
		}
	}
	int rc;
	if ((rc = load_model(s, ov, dp, err)) != 0 || (rc = load_system(s, ov, dp, err)) != 0 ||
	    (rc = load_workload(s, ov, dp, err)) != 0 || (rc = settings(s, dp, err)) != 0)
		return rc;
	design_link(dp);
	return 0;
}

int design_load(struct design_parts *dp, const char *model, const char *system,
		const char *workload, double context, struct kerr *err)
{
	struct design_spec s = DESIGN_SPEC_INIT;
	s.model = model, s.system = system;
	s.workload = context > 0 ? NULL : workload;
	s.context = context;
	return design_assemble(&s, dp, err);
}

void design_free(struct design_parts *dp)
{
	workload_free(&dp->wl);
}
