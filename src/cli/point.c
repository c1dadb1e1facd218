/* point.c (cli): design points from strings, overrides, CSV rows. */
#include "cli/point.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/load.h"
#include "karat.h"

const char *const point_head[] = {
	"model", "algo", "system", "workload", "schedule", "microbatches", "batch",
	"tbt_mean_s", "tbt_p99_s", "throughput_tok_s", "tdp_w", "tok_s_per_w",
	"energy_j_per_tok", "feasible", "reason",
	"gpus", "memdevs", "mtp", "mtp_accept", "slo_s", "samples", "seed",
	"ctx_mean_tokens", "ctx_clipped_share", "gpu_mem_use", "memdev_mem_use",
	"busy_gpu_s", "busy_memdev_s", "busy_link_s", "busy_net_s",
	"bubble_gpu", "bubble_memdev", "bubble_link", "bubble_net", "sharded_share",
	"ingest_bytes_per_step", "power_activity_w", "energy_activity_j_per_tok",
	"tok_s_per_w_activity", "overrides", "algo_params", "evaluation",
	"scaleup_link", "scaleout_link", "gpu_port", "bound_by", "busiest_resource",
	"busiest_share", "power_node_w", "tok_s_per_w_node", "capex_usd", "usd_per_mtok",
	"grow_first", "grow_first_margin", "prefill_j_per_tok", "prefill_node_j_per_tok",
	"prefix_reuse", "keepalive_s", "reload_bytes_per_step", "gpu_time_fitted_share"};
const int point_ncols = sizeof point_head / sizeof point_head[0];

/* What each column holds, for docs/formats.md (karat help formats). */
const char *const point_help[] = {
	"model (zoo name or file as given)", "attention algorithm the point ran",
	"system (zoo name or file)", "workload (zoo name or file; empty with a fixed context)",
	"pipeline schedule: serial, naive, ofms, cmr or ofms+cmr",
	"micro-batches the step is split into (the best count for auto)",
	"requests decoded together, all GPUs together (the solved batch for solve)",
	"mean time of one decode step over the sampled batches, s",
	"99th percentile of the step time, s (the SLO is on it)",
	"output tokens per second: batch x (1 + accepted draft tokens) / mean step",
	"TDP of every GPU and memory device of the system, W",
	"throughput per TDP, tokens/s/W (the paper's metric)", "TDP x mean step / tokens, J",
	"true when the batch fits every memory and meets the SLO",
	"why the point fails (empty when feasible), or a note on a limit of the search",
	"GPUs", "memory devices (0 without)", "draft tokens verified per step",
	"acceptance rate of a draft token", "the P99 TBT target, s",
	"sampled batches per evaluation", "random seed",
	"mean context of the sampled requests, tokens (after the model's window)",
	"share of sampled requests cut to the model's context window",
	"P99 over the samples of the fullest GPU's bytes over its capacity (less reserve)",
	"the same for the fullest memory device (empty without, or where the weights fill the HBM)",
	"GPU busy time per step (mean), s",
	"memory devices' busy time per step, s (empty without memory devices)",
	"device links' busy time per step, s (empty without memory devices)",
	"scale-up network's busy time per step, s", "GPU idle share of the step",
	"memory devices' idle share (empty without memory devices)",
	"device links' idle share (empty without memory devices)", "network's idle share",
	"share of requests split over several devices (none fits them whole)",
	"cache bytes ingested per step for newly admitted requests",
	"activity-based power: operators' pJ/FLOP and pJ/bit plus static power, W",
	"activity-based energy per token, J", "throughput per activity-based watt, tokens/s/W",
	"the --set and [set] overrides applied to the point",
	"the attention algorithm's parameters, name:key=value,...",
	"how the samples were evaluated: per-request (every request placed) or fluid (from sums)",
	"scale-up link (within a node)", "scale-out link (between nodes)",
	"the GPU's port to its memory devices (empty: the devices' own link)",
	"what bounds the point: for an infeasible one the limit it fails, for a solved answer "
	"the limit the next batch fails (slo:RESOURCE with the busiest resource, capacity:hbm, "
	"capacity:memdev, capacity:host, unsupported, work-limit, search-cap); empty for a "
	"feasible point at a given batch",
	"the resource busiest over the step: gpu, memdev, link or net",
	"its busy time over the mean step time",
	"drawn power counted whole: power_activity_w plus every device's share of its node or "
	"enclosure (hosts, NICs, switches, fans; device [node] share_power), W (empty where a "
	"device gives no [node] or [energy])",
	"throughput per node-counted watt, tokens/s/W",
	"price of every device and its share of its node or enclosure, USD (empty without [node])",
	"USD per million output tokens: capex over system.amortisation_years plus power_node_w "
	"at system.electricity_usd_per_kwh (empty without them)",
	"for a solved answer: the resource whose doubling alone carries the next batch "
	"(answer + 1) closest to feasible (gpu.compute, gpu.memory.bandwidth, "
	"memdev.memory.bandwidth, memdev_link.bandwidth, ...; none: no doubling helps); empty "
	"for a query or an answer bound by the search's limits",
	"with it doubled, the next batch's worst of P99 / SLO and memory use / capacity: below 1, "
	"the answer grows",
	"each request's prefill on GPUs like the system's, per output token: its new tokens "
	"(the workload's mean input less its prefix reuse) through every layer, the weights "
	"once per 8192-token chunk, the caches written, the all-to-all and the GPUs' static "
	"power while it computes, J (empty without [energy]); counted in the per-watt views "
	"and the cost with system.prefill_energy = on",
	"the same with the GPUs' node share (share_power) while it computes, J",
	"share of each admitted request's context its session's idle cache still holds: the "
	"workload's [keepalive] table at the keep-alive the batch leaves room for (else "
	"workload.prefix_reuse)",
	"how long idle sessions' caches are kept at this batch, s (empty: forever, without a "
	"[keepalive] table or with workload.keepalive = forever)",
	"bytes per step a GPU-only system's host tiers (system.host_cache, host_ssd) return to "
	"the GPUs over their ports, for sessions whose caches waited there",
	"share of the step's GPU work priced by kernel-level values fitted on this GPU's own "
	"measurements (fitted: in its file; karat show GPU lists them); the rest rests on a "
	"sibling's fits or on assumptions"};
_Static_assert(sizeof point_help / sizeof *point_help == sizeof point_head / sizeof *point_head,
	       "a description per column");

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

/* The options of ps as a typed spec (the strings stay ps's), and the
 * micro-batches and batch, which are not part of a design. */
static int parse_spec(const struct point_spec *ps, struct design_spec *s,
		      struct loaded *ld, struct kerr *err)
{
	int rc;
	*s = (struct design_spec)DESIGN_SPEC_INIT;
	s->model = ps->model, s->system = ps->system, s->algo = ps->algo;
	s->workload = ps->workload;
	s->sets = ps->sets, s->nsets = ps->nsets;
	s->force = ps->force, s->exact = ps->exact;
	s->skip_memdev_sets = ps->skip_memdev_sets;
	if (ps->workload && ps->context)
		return bad(err, 2, "give --workload or --context, not both%s%s", "", "");
	if (ps->context && (rc = num("context", ps->context, U_TOKENS, 1, 1e9, &s->context,
				     err)) != 0)
		return rc;
	if (ps->schedule) {
		int k = 0;
		while (sched_names[k] && strcmp(sched_names[k], ps->schedule))
			k++;
		if (!sched_names[k])
			return bad(err, 2, "--schedule: '%s' is not serial, naive, ofms, cmr or "
				   "ofms+cmr%s", ps->schedule, "");
		s->sched = k;
	}
	double x;
	ld->mb = 0;
	if (ps->mb && strcmp(ps->mb, "auto") != 0) {
		if ((rc = num("microbatches", ps->mb, U_INT, 1, PIPE_MAX_MB, &x, err)) != 0)
			return rc;
		ld->mb = (int)x;
	}
	if (s->sched == SCHED_SERIAL && ld->mb != 1) {
		if (ps->mb && ld->mb > 1)
			return bad(err, 2, "--schedule serial runs one micro-batch (got "
				   "--microbatches %s)%s", ps->mb, "");
		ld->mb = 1;
	}
	ld->batch = 0;
	if (ps->batch && (rc = num("batch", ps->batch, U_TOKENS, 1, PLAN_MAX_BATCH,
				   &ld->batch, err)) != 0)
		return rc;
	if (ps->mtp && (rc = num("mtp", ps->mtp, U_INT, 0, 64, &s->mtp, err)) != 0)
		return rc;
	if (ps->accept && (rc = num("mtp-accept", ps->accept, U_REAL, 0, 1, &s->accept,
				    err)) != 0)
		return rc;
	if (ps->slo_ms) {
		if ((rc = num("slo-ms", ps->slo_ms, U_REAL, 1e-3, 1e6, &x, err)) != 0)
			return rc;
		s->slo_s = x / 1e3;
	}
	if (ps->samples) {
		if ((rc = num("samples", ps->samples, U_INT, 1, 1e6, &x, err)) != 0)
			return rc;
		s->samples = (int)x;
	}
	if (ps->seed && (rc = num("seed", ps->seed, U_INT, 0, 4294967295.0, &s->seed, err)) != 0)
		return rc;
	return 0;
}

/* The exit status of a failed assembly, its message in the CLI's words:
 * which option was wrong, where the names are listed. */
static int assembly_status(const struct point_spec *ps, const struct design_parts *dp,
			   int rc, struct kerr *err)
{
	int usage = rc == -2;
	switch (dp->fail) {
	case DI_MODEL:
		if (usage)
			load_hint(ZOO_MODEL, ps->model, err);
		break;
	case DI_SYSTEM:
		if (usage)
			load_hint(ZOO_SYSTEM, ps->system, err);
		break;
	case DI_WORKLOAD:
		if (usage)
			load_hint(ZOO_WORKLOAD, ps->workload, err);
		break;
	case DI_PART:
		if (usage)
			load_hint(ZOO_DEVICE, "", err);
		break;
	case DI_ALGO:
		if (usage)
			cli_prefix(err, "--algo: ", "");
		break;
	case DI_FORCE:
		cli_prefix(err, "", " (--force costs it anyway)");
		break;
	case DI_CONTEXT: {
		char pre[96];
		snprintf(pre, sizeof pre, "--context %.40s: ", ps->context ? ps->context : "");
		cli_prefix(err, pre, "");
		break;
	}
	case DI_SET:
		cli_set_error(err);
		break;
	default:
		break;
	}
	return usage ? 2 : 1;
}

int point_load(const struct point_spec *ps, struct loaded *ld, struct kerr *err)
{
	memset(ld, 0, sizeof *ld);
	if (!ps->model || !ps->system || (!ps->workload && !ps->context))
		return bad(err, 2, "--model, --system and --workload (or --context) are "
			   "required%s%s", "", "");
	struct design_spec s;
	int rc = parse_spec(ps, &s, ld, err);
	if (rc)
		return rc;
	if ((rc = design_assemble(&s, &ld->p, err)) != 0)
		return assembly_status(ps, &ld->p, rc, err);
	if (!ps->workload)
		snprintf(ld->p.wl.name, sizeof ld->p.wl.name, "fixed-%s", ps->context);
	arg_label(ps->model, ld->label[0], sizeof ld->label[0]);
	snprintf(ld->label[1], sizeof ld->label[1], "%s", ps->algo ? ps->algo :
		 algo_names[ld->p.sp.algo]);
	arg_label(ps->system, ld->label[2], sizeof ld->label[2]);
	if (ps->workload)
		arg_label(ps->workload, ld->label[3], sizeof ld->label[3]);
	else
		snprintf(ld->label[3], sizeof ld->label[3], "%s", ld->p.wl.name);
	size_t o = 0;
	for (int i = 0; i < ps->nsets; i++) {
		if (!((ld->p.applied >> i) & 1))
			continue; /* skipped here: not this point's (the column says what ran) */
		size_t need = strlen(ps->sets[i]) + (o ? 1 : 0);
		if (need >= POINT_SET_LEN || o + need >= sizeof ld->sets)
			return bad(err, 2, "--set %.60s...: an override is longer than %s "
				   "characters", ps->sets[i], "319");
		o += (size_t)snprintf(ld->sets + o, sizeof ld->sets - o, "%s%s",
				      o ? ";" : "", ps->sets[i]);
	}
	for (int k = 0; k < 4; k++) /* labels come from names of bounded length */
		if (strlen(ld->label[k]) + 1 >= sizeof ld->label[k])
			return bad(err, 2, "name too long: %.60s...%s", ld->label[k], "");
	return 0;
}

void point_probe(const struct loaded *ld, struct plan *p, struct result *r)
{
	struct probe pb;
	struct kerr err;
	r->probed = 0, r->grow = -1, r->grow_margin = NAN;
	if (!r->feasible || plan_probe(&ld->p.d, p, r, &pb, &err) != 0 || !isfinite(pb.base))
		return; /* nothing to probe (the columns stay empty) */
	r->probed = 1, r->grow = pb.best;
	r->grow_margin = pb.best >= 0 ? pb.margin[pb.best] : NAN;
}

void point_free(struct loaded *ld)
{
	design_free(&ld->p);
}

/* Zero printed as 0, never -0. */
static double nz(double x)
{
	return x == 0 ? 0 : x;
}

const char *point_busiest(const struct loaded *ld, const struct result *r, double *share)
{
	static const char *const name[RES_BACK] = {"gpu", "memdev", "link", "net"};
	int mem = system_has_memdev(&ld->p.sys), best = RES_GPU;
	double top = -1;
	for (int x = 0; x < RES_BACK; x++) {
		if (!mem && (x == RES_MEM || x == RES_LINK))
			continue; /* resources it does not have */
		double b = x == RES_LINK ? fmax(r->busy[x], r->busy[RES_BACK]) : r->busy[x];
		if (b > top)
			top = b, best = x;
	}
	*share = r->tbt_mean > 0 ? top / r->tbt_mean : 0;
	return name[best];
}

void point_bound(const struct loaded *ld, const struct result *r, const char *busiest,
		 char *buf, size_t n)
{
	int host = ld->p.d.mem && ld->p.d.mem->kind == DEV_CPU;
	switch (r->bound) {
	case PB_SLO:
		snprintf(buf, n, "slo:%s", busiest);
		break;
	case PB_HBM:
		snprintf(buf, n, "capacity:hbm");
		break;
	case PB_MEMDEV:
		snprintf(buf, n, host ? "capacity:host" : "capacity:memdev");
		break;
	case PB_UNSUPPORTED:
		snprintf(buf, n, "unsupported");
		break;
	case PB_WORK:
		snprintf(buf, n, "work-limit");
		break;
	case PB_CAP:
		snprintf(buf, n, "search-cap");
		break;
	default:
		buf[0] = '\0';
	}
}

/* n values into cells from i on, each empty where it is not finite (a
 * figure a file does not give); returns the next cell. */
static int finite_cells(char cells[][OUT_CELL], const char **out, int i, const double *v,
			int n)
{
	for (int k = 0; k < n; k++, i++) {
		out[i] = cells[i];
		if (isfinite(v[k]))
			snprintf(cells[i], OUT_CELL, "%.6g", nz(v[k]));
		else
			cells[i][0] = '\0';
	}
	return i;
}

void point_cells(const struct loaded *ld, const struct result *r,
		 char cells[][OUT_CELL], const char **out)
{
	const struct design *d = &ld->p.d;
	int i = 0;
#define CELL(...) (out[i] = cells[i], snprintf(cells[i++], OUT_CELL, __VA_ARGS__))
	for (int k = 0; k < 4; k++)
		out[i++] = ld->label[k];
	CELL("%s", sched_names[d->sched]);
	CELL("%d", r->mb_ran > 0 ? r->mb_ran : r->mb); /* the count that ran */
	CELL("%.0f", nz(r->batch));
	CELL("%.6g", nz(r->tbt_mean));
	CELL("%.6g", nz(r->tbt_p99));
	CELL("%.6g", nz(r->throughput));
	CELL("%.6g", nz(r->tdp));
	CELL("%.6g", nz(r->tok_per_w));
	CELL("%.6g", nz(r->j_per_tok));
	CELL("%s", r->feasible ? "true" : "false");
	CELL("%s", r->reason);
	CELL("%g", nz(ld->p.sys.gpus));
	CELL("%g", nz(system_has_memdev(&ld->p.sys) ? ld->p.sys.memdevs : 0));
	CELL("%g", nz(d->mtp));
	CELL("%g", nz(d->accept));
	CELL("%g", nz(d->slo));
	CELL("%d", d->samples);
	CELL("%lu", d->seed);
	CELL("%.6g", nz(r->ctx_mean));
	CELL("%.4g", nz(r->clipped));
	CELL("%.4g", nz(r->gpu_use));
	/* a system without memory devices has neither them nor their links:
	 * their columns are empty, not an idle 1.0000 */
	int mem = system_has_memdev(&ld->p.sys);
	if (!mem || isnan(r->mem_use)) /* none, or no capacity for them at all */
		CELL("%s", "");
	else
		CELL("%.4g", nz(r->mem_use));
	/* a full-duplex link is as busy as its busier direction */
	for (int x = 0; x < RES_BACK; x++)
		if (!mem && (x == RES_MEM || x == RES_LINK))
			CELL("%s", "");
		else
			CELL("%.6g", nz(x == RES_LINK ? fmax(r->busy[x], r->busy[RES_BACK]) : r->busy[x]));
	for (int x = 0; x < RES_BACK; x++)
		if (!mem && (x == RES_MEM || x == RES_LINK))
			CELL("%s", "");
		else
			CELL("%.4f", nz(x == RES_LINK ? fmin(r->bubble[x], r->bubble[RES_BACK])
						      : r->bubble[x]));
	CELL("%.4g", nz(r->sharded));
	CELL("%.6g", nz(r->ingest));
	/* activity energy: empty where a device gives no [energy] figures */
	const double act[3] = {r->power_act, r->j_per_tok_act, r->tok_per_w_act};
	i = finite_cells(cells, out, i, act, 3);
	out[i++] = ld->sets;
	out[i] = cells[i]; /* every parameter of the algorithm that ran */
	sparse_format_spec(d->sp, cells[i++], OUT_CELL);
	CELL("%s", r->fluid ? "fluid" : "per-request"); /* how the samples were drawn */
	/* the links that ran: a system's own, or its GPU's */
	CELL("%s", ld->p.sys.scaleup_link);
	CELL("%s", ld->p.sys.scaleout_link);
	CELL("%s", system_has_port(&ld->p.sys) ? ld->p.sys.gpu_port : "");
	double share;
	const char *busiest = point_busiest(ld, r, &share);
	char bound[64];
	point_bound(ld, r, busiest, bound, sizeof bound);
	CELL("%s", bound);
	CELL("%s", busiest);
	CELL("%.4g", nz(share));
	/* power counted whole and cost: empty where a file gives no figures */
	const double whole[4] = {r->power_node, r->tok_per_w_node, r->capex, r->usd_per_mtok};
	i = finite_cells(cells, out, i, whole, 4);
	CELL("%s", !r->probed ? "" : r->grow >= 0 ? probe_names[r->grow] : "none");
	i = finite_cells(cells, out, i, &r->grow_margin, 1);
	const double pre[2] = {r->prefill_j_tok, r->prefill_node_j_tok};
	i = finite_cells(cells, out, i, pre, 2);
	CELL("%.4g", nz(r->reuse));
	if (isfinite(r->keepalive_s))
		CELL("%.6g", r->keepalive_s);
	else /* forever */
		CELL("%s", "");
	CELL("%.6g", nz(r->reload));
	i = finite_cells(cells, out, i, &r->gpu_fitted, 1);
#undef CELL
}

void point_fail_cells(const struct point_spec *ps, const char *msg,
		      char cells[][OUT_CELL], const char **out)
{
	const char *given[] = {ps->model, ps->algo, ps->system, ps->workload, ps->schedule,
			       ps->mb, ps->batch};
	for (int i = 0; i < point_ncols; i++) {
		cells[i][0] = '\0';
		out[i] = cells[i];
	}
	for (int i = 0; i < 7; i++)
		snprintf(cells[i], OUT_CELL, "%s", given[i] ? given[i] : "");
	snprintf(cells[13], OUT_CELL, "false");
	snprintf(cells[14], OUT_CELL, "%s", msg);
	/* the rest of what tells points apart, as given */
	const struct {
		const char *col, *v;
	} more[] = {{"mtp", ps->mtp}, {"mtp_accept", ps->accept}, {"samples", ps->samples},
		    {"seed", ps->seed}};
	for (size_t k = 0; k < sizeof more / sizeof *more; k++)
		for (int i = 0; i < point_ncols; i++)
			if (more[k].v && strcmp(point_head[i], more[k].col) == 0)
				snprintf(cells[i], OUT_CELL, "%s", more[k].v);
	char *end;
	double ms = ps->slo_ms ? strtod(ps->slo_ms, &end) : NAN;
	for (int i = 0; i < point_ncols; i++) {
		if (strcmp(point_head[i], "slo_s") == 0 && ps->slo_ms && !*end)
			snprintf(cells[i], OUT_CELL, "%g", ms / 1e3);
		if (strcmp(point_head[i], "overrides") == 0) {
			size_t u = 0;
			for (int k = 0; k < ps->nsets && u < OUT_CELL; k++)
				u += (size_t)snprintf(cells[i] + u, OUT_CELL - u, "%s%s", k ? ";" : "",
						      ps->sets[k]);
		}
	}
}
