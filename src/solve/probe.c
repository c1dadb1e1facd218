/* probe.c: what would move a solved answer most (solve.h plan_probe).  The
 * answer B is the largest batch that meets the SLO and fits; B + 1 fails
 * one of them.  For each resource the design has, the probe doubles it
 * alone and evaluates B + 1 again at the answer's micro-batch count: the
 * worst of P99 / SLO and each memory's use / capacity (the margin, above 1
 * for a batch that fails) says how far that doubling carries the next
 * batch.  The resource with the lowest margin is the one to grow first.
 * A cheap probe, not a re-solve: one evaluation per resource, on at most
 * PROBE_SAMPLES sampled batches (the same for every resource, so the
 * margins compare; a ranking, not a new answer), without energy, and
 * stopped early once it cannot beat the best so far (its margin then
 * reads INFINITY). */
#include <math.h>
#include <string.h>

#include "solve/plan.h"

#define PROBE_SAMPLES 64 /* assumed: a quarter of the default 256, enough to rank */

const char *const probe_names[PR_N] = {
	"gpu.compute", "gpu.memory.bandwidth", "gpu.memory.capacity", "memdev.compute",
	"memdev.memory.bandwidth", "memdev.memory.capacity", "memdev.select",
	"memdev_link.bandwidth", "gpu_port.bandwidth", "scaleup.bandwidth",
	"scaleout.bandwidth"};

/* The copies a probe changes; the design points into them. */
struct probed {
	struct design d;
	struct kdevice gpu, mem;
	struct klink up, out, ml, port;
};

static void copy(struct probed *x, const struct design *d)
{
	x->d = *d;
	x->gpu = *d->gpu, x->d.gpu = &x->gpu;
	x->up = *d->up, x->d.up = &x->up;
	x->out = *d->out, x->d.out = &x->out;
	if (d->mem)
		x->mem = *d->mem, x->d.mem = &x->mem;
	if (d->mlink)
		x->ml = *d->mlink, x->d.mlink = &x->ml;
	if (d->port)
		x->port = *d->port, x->d.port = &x->port;
	x->d.progress = NULL;
	x->d.threads = 0;
	if (x->d.samples > PROBE_SAMPLES)
		x->d.samples = PROBE_SAMPLES;
}

static void twice(double *v, int n)
{
	for (int i = 0; i < n; i++)
		v[i] *= 2;
}

/* Doubles resource k in x; 0 when the design has no such resource. */
static int grow(struct probed *x, int k)
{
	struct kdevice *g = &x->gpu, *m = x->d.mem ? &x->mem : NULL;
	int outside = m && x->d.sys->memdev_in_hbm != IN_HBM_YES;
	switch (k) {
	case PR_GPU_COMPUTE:
		twice(g->peak, DT_N);
		return 1;
	case PR_GPU_BW:
		g->mem_bw *= 2;
		return 1;
	case PR_GPU_CAP:
		g->mem_capacity *= 2;
		return 1;
	case PR_MEM_COMPUTE:
		return m ? (twice(m->peak, DT_N), 1) : 0;
	case PR_MEM_BW:
		return m ? (m->mem_bw *= 2, 1) : 0;
	case PR_MEM_CAP:
		return outside ? (m->mem_capacity *= 2, 1) : 0;
	case PR_MEM_SELECT:
		if (!m || !(device_select_rate(m) > 0))
			return 0;
		m->select_unit_rate *= 2, m->select_core_rate *= 2;
		return 1;
	case PR_MLINK:
		return outside && x->d.mlink ? (x->ml.bw *= 2, 1) : 0;
	case PR_PORT:
		return outside && x->d.port ? (x->port.bw *= 2, 1) : 0;
	case PR_UP:
		return x->d.sys->gpus > 1 ? (x->up.bw *= 2, 1) : 0;
	default:
		return x->d.sys->gpus > x->d.sys->gpus_per_node ? (x->out.bw *= 2, 1) : 0;
	}
}

/* The margin of batch B at m micro-batches on plan p: the worst of P99
 * over the SLO and each memory's P99 use over its capacity; *time gets
 * the first alone.  Only the margin is wanted, so no energy is priced;
 * and where it is known to be over `limit` (INFINITY: never) the
 * evaluation stops early and *out is INFINITY: that resource cannot be
 * the best (plan_eval_at's early exit, with the margin's own limit). */
static int margin(struct plan *p, double B, int m, double limit, double *out, double *time,
		  struct kerr *err)
{
	const struct design *d = plan_design(p);
	struct result r;
	int early = isfinite(limit);
	int rc = plan_eval_at(p, p->ws, B, m, &r, early ? PLAN_EARLY : 0, early ? limit : 1, err);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		*out = INFINITY;
		return 0;
	}
	double worst = fmax(r.tbt_p99 / d->slo, r.gpu_use);
	*out = isfinite(r.mem_use) ? fmax(worst, r.mem_use) : worst;
	if (time)
		*time = r.tbt_p99 / d->slo;
	return 0;
}

/* The pipeline resource whose time resource k shortens (-1: a capacity). */
static int unit_of(int k)
{
	switch (k) {
	case PR_GPU_COMPUTE:
	case PR_GPU_BW:
		return RES_GPU;
	case PR_MEM_COMPUTE:
	case PR_MEM_BW:
	case PR_MEM_SELECT:
		return RES_MEM;
	case PR_MLINK:
	case PR_PORT:
		return RES_LINK;
	case PR_UP:
	case PR_OUT:
		return RES_NET;
	default:
		return -1;
	}
}

/* The order to probe in: the resources of time by how long the answer
 * kept their unit busy, most first (ties by k), then the capacities: the
 * likely best comes early, and the others then stop as soon as they
 * cannot beat it (a capacity that does not bind leaves the step's time
 * as it was, over the best of time, and stops within a few samples).
 * The best is the least margin with ties to the lowest k, as in any
 * order. */
static void probe_order(const struct result *r, int order[PR_N])
{
	double key[PR_N];
	for (int k = 0; k < PR_N; k++) {
		int u = unit_of(k);
		key[k] = u < 0 ? -1 /* after every busy time */
			 : u == RES_LINK ? fmax(r->busy[RES_LINK], r->busy[RES_BACK]) : r->busy[u];
		int i = k;
		for (; i > 0 && key[order[i - 1]] < key[k]; i--) /* stable: ties keep k's order */
			order[i] = order[i - 1];
		order[i] = k;
	}
}

int plan_probe(const struct design *d, struct plan *solved, const struct result *r,
	       struct probe *pb, struct kerr *err)
{
	pb->best = -1;
	pb->base = NAN; /* nothing probed until the next batch is evaluated */
	for (int k = 0; k < PR_N; k++)
		pb->margin[k] = NAN;
	if (!r->feasible || !(r->bound == PB_SLO || r->bound == PB_HBM || r->bound == PB_MEMDEV))
		return 0; /* no answer, or bound by the search's own limits */
	double B = r->batch + 1;
	int m = r->mb > 0 ? r->mb : 1;
	struct probed x;
	copy(&x, d);
	double time;
	/* the others borrow its pool, and it the solver's placements of the
	 * batches below B + 1 (placed once: plan_kept_swap) */
	struct plan *base = plan_new_like(&x.d, solved, err);
	int held = base && solved && plan_kept_swap(base, solved);
	int rc = base ? margin(base, B, m, INFINITY, &pb->base, &time, err) : -1;
	/* where a memory's use binds, a resource of time (every one but the
	 * capacities) lowers the step, never a use: its margin is the base
	 * exactly, and is not evaluated */
	int use_binds = rc == 0 && time < pb->base;
	int order[PR_N];
	probe_order(r, order);
	for (int i = 0; i < PR_N && rc == 0; i++) {
		int k = order[i];
		struct probed y;
		copy(&y, d);
		if (!grow(&y, k))
			continue;
		int cap = k == PR_GPU_CAP || k == PR_MEM_CAP;
		if (use_binds && !cap) {
			pb->margin[k] = pb->base;
		} else {
			/* ranked, not measured: it stops once it cannot beat the
			 * best so far (or the base) */
			double lim = pb->best >= 0 ? pb->margin[pb->best] : pb->base;
			struct plan *p = plan_new_like(&y.d, base, err);
			int lent = p && plan_kept_swap(p, base); /* B's placements, placed once */
			rc = p ? margin(p, B, m, lim, &pb->margin[k], NULL, err) : -1;
			if (lent)
				plan_kept_swap(p, base);
			plan_free(p);
		}
		if (rc == 0 && pb->margin[k] < pb->base &&
		    (pb->best < 0 || pb->margin[k] < pb->margin[pb->best] ||
		     (pb->margin[k] == pb->margin[pb->best] && k < pb->best)))
			pb->best = k;
	}
	if (held) /* the solver's placements go back */
		plan_kept_swap(base, solved);
	plan_free(base);
	return rc;
}
