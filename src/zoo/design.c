/* design.c: loading a whole design point from zoo names. */
#include "zoo/design.h"

#include <string.h>

void design_link(struct design_parts *dp)
{
	int mem = system_has_memdev(&dp->sys);
	struct design *d = &dp->d;
	d->m = &dp->m, d->sp = &dp->m.sp, d->sys = &dp->sys, d->gpu = &dp->gpu;
	d->mem = mem ? &dp->mem : NULL;
	d->up = &dp->up, d->out = &dp->out;
	d->mlink = mem ? &dp->ml : NULL;
	d->port = system_has_port(&dp->sys) ? &dp->port : NULL;
	d->wl = &dp->wl;
}

int design_load(struct design_parts *dp, const char *model, const char *system,
		const char *workload, double context, struct kerr *err)
{
	memset(dp, 0, sizeof *dp);
	if (zoo_load_model(model, &dp->m, NULL, err) != 0 ||
	    zoo_load_system(system, &dp->sys, NULL, err) != 0 ||
	    zoo_load_device(dp->sys.gpu, &dp->gpu, NULL, err) != 0 ||
	    zoo_load_link(dp->sys.scaleup_link, &dp->up, NULL, err) != 0 ||
	    zoo_load_link(dp->sys.scaleout_link, &dp->out, NULL, err) != 0)
		return -1;
	if (system_has_memdev(&dp->sys) &&
	    (zoo_load_device(dp->sys.memdev, &dp->mem, NULL, err) != 0 ||
	     zoo_load_link(dp->sys.memdev_link, &dp->ml, NULL, err) != 0))
		return -1;
	if (system_has_port(&dp->sys) && zoo_load_link(dp->sys.gpu_port, &dp->port, NULL, err) != 0)
		return -1;
	if (context > 0)
		workload_fixed(&dp->wl, context);
	else if (zoo_load_workload(workload, &dp->wl, err) != 0)
		return -1;
	dp->d = (struct design){.sched = DESIGN_DEFAULT_SCHED, .mtp = dp->m.mtp_draft,
				.accept = dp->m.mtp_accept, .slo = DESIGN_DEFAULT_SLO_S,
				.samples = DESIGN_DEFAULT_SAMPLES, .seed = DESIGN_DEFAULT_SEED};
	design_link(dp);
	return 0;
}

void design_free(struct design_parts *dp)
{
	workload_free(&dp->wl);
}
