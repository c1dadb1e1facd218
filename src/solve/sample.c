/* sample.c: one sampled decode batch on a plan: requests drawn from the
 * pool, placed (memory-aware, longest first where there is room, split
 * over a node's devices when no one device holds them; or round-robin),
 * assigned to micro-batches (arrival order or CMR), priced at the pace of
 * the slowest device (links, the GPU port, merges and cache ingest through
 * cost/roofline.c), and scheduled (sched/pipeline.h). */
#include "solve/plan.h"

#include <math.h>
#include <string.h>

#include "cost/roofline.h"

/* Requests to micro-batches, per GPU: arrival order in equal chunks; or
 * CMR (assign_mb): longest context first, to the micro-batch whose load on
 * the request's device is lowest, with counts within one of each other.
 * A GPU's requests are byg[gstart[g] .. gstart[g + 1]), in arrival order. */
static void assign_arrival(const struct plan *p, int m, int *mb)
{
	for (int g = 0; g < p->G; g++) {
		long n = p->gstart[g + 1] - p->gstart[g], acc = 0;
		int i = 0;
		for (long t = 0; t < n; t++) { /* i = floor(t * m / n), incrementally */
			mb[p->byg[p->gstart[g] + t]] = i;
			for (acc += m; acc >= n; acc -= n)
				i++;
		}
	}
}

/* The largest context sum of any (micro-batch, device): what sets the pace
 * of the attention stage. */
static double peak_load(struct plan *p, long B, int m, const int *mb)
{
	int D = p->D;
	memset(p->mbload, 0, sizeof(double) * (size_t)m * D);
	double peak = 0;
	for (long j = 0; j < B; j++) {
		double *l = &p->mbload[mb[j] * D + p->rdev[j]];
		*l += p->ctx[p->rq[j]];
		peak = *l > peak ? *l : peak;
	}
	return peak;
}

static void assign_mb(struct plan *p, long B, int m)
{
	int G = p->G, D = p->D;
	if (m == 1) { /* one micro-batch: nothing to balance */
		memset(p->rmb, 0, sizeof(int) * (size_t)B);
		return;
	}
	if (!sched_uses_cmr(p->d.sched)) {
		assign_arrival(p, m, p->rmb);
		return;
	}
	int *src = p->ord;
	order_longest(p, B, src);
	memset(p->mbload, 0, sizeof(double) * (size_t)m * D);
	memset(p->ccnt, 0, sizeof(int) * (size_t)m * G);
	memset(p->nbig, 0, sizeof(int) * (size_t)G);
	for (long t = 0; t < B; t++) {
		long j = src[t];
		int g = p->rgpu[j], dev = p->rdev[j], best = -1;
		/* counts stay within one of each other: n % m micro-batches take
		 * ceil(n / m), the others floor(n / m) */
		long n = p->gstart[g + 1] - p->gstart[g], lo = n / m, extra = n % m;
		int *big = &p->nbig[g];
		for (int i = 0; i < m; i++) {
			int c = p->ccnt[i * G + g];
			if (c > lo || (c == lo && (extra == 0 || *big >= extra)))
				continue;
			double li = p->mbload[i * D + dev];
			if (best < 0 || li < p->mbload[best * D + dev] ||
			    (li == p->mbload[best * D + dev] && c < p->ccnt[best * G + g]))
				best = i;
		}
		if (p->ccnt[best * G + g] == lo)
			(*big)++;
		p->rmb[j] = best;
		p->ccnt[best * G + g]++;
		p->mbload[best * D + dev] += p->ctx[p->rq[j]];
	}
	/* Greedy longest-first with equal counts is a heuristic; when the
	 * arrival order happens to balance better, keep it, so CMR is never
	 * worse balanced than naive. */
	double cmr = peak_load(p, B, m, p->rmb);
	assign_arrival(p, m, p->tmp);
	if (peak_load(p, B, m, p->tmp) < cmr)
		memcpy(p->rmb, p->tmp, sizeof(int) * (size_t)B);
}

/* Slices of request j in micro-batch i: each priced as a request of its
 * share of the context on its device (its own scan over its share, a
 * local top-k, attention over what it selected), on the GPU of that
 * device for the stages the GPU runs; each device gets the query. */
static void add_slices(struct plan *p, long j, int i)
{
	struct side *sm = &p->sm, *sg = &p->sg;
	int r = p->rq[j], n = p->nshard[j], D = p->D, G = p->G;
	double L = p->ctx[r];
	for (int k = 0; k < n; k++) {
		int dev = p->shard_dev[j * MAX_SHARDS + k], g = plan_gpu_of(p, dev);
		int um = i * D + dev, ug = i * G + g;
		sm->suml[um] += L / n;
		const double *v = sm->pool + (size_t)r * sm->nres;
		double *acc = sm->acc + (size_t)um * sm->nres;
		for (int x = 0; x < sm->nres; x++)
			acc[x] += v[x] / n;
		if (sg->k) {
			sg->suml[ug] += L / n;
			v = sg->pool + (size_t)r * sg->nres;
			acc = sg->acc + (size_t)ug * sg->nres;
			for (int x = 0; x < sg->nres; x++)
				acc[x] += v[x] / n;
		}
		p->dcnt[um]++;
		p->lcnt[i * p->LB + (p->D >= p->G ? dev : g)]++;
	}
}

/* Per step, the merge of split requests in micro-batch i: each slice on
 * another GPU than the request's sends its partial output (and top-k
 * candidates) over the scale-up link to that GPU, which merges them (a
 * log-sum-exp reduction); the slowest GPU sets the pace. */
static double merge_time(struct plan *p, long B, int i)
{
	int *remote = p->nbig; /* free once micro-batches are assigned */
	memset(remote, 0, sizeof(int) * (size_t)p->G);
	for (long j = 0; j < B; j++)
		if (p->nshard[j] && p->rmb[j] == i)
			for (int k = 0; k < p->nshard[j]; k++)
				remote[p->rgpu[j]] += plan_gpu_of(p, p->shard_dev[j * MAX_SHARDS + k]) !=
						      p->rgpu[j];
	double worst = 0; /* per layer, the slices' outputs arrive together */
	for (int g = 0; g < p->G; g++)
		if (remote[g])
			worst = fmax(worst, p->layers * roofline_transfer(p->d.up, remote[g] *
									  p->merge_bytes / p->layers));
	return worst;
}

/* The slowest unit (device or GPU) of one side in micro-batch i: its
 * cache-side time for the layers (t) and for the MTP layer (tm). */
static void side_peak(const struct plan *p, const struct side *sd, int i, int units,
		      const int *cnt, int want_gpu, double *t, double *tm)
{
	*t = *tm = 0;
	for (int u = 0; u < units; u++) {
		int c = cnt[i * units + u];
		if (!c)
			continue;
		double v[MAXV];
		side_values(sd, i * units + u, c, v);
		double a = bucket_time(p, &p->lay, p->sd, p->map, v, want_gpu);
		double b = bucket_time(p, &p->laym, p->sdm, p->mapm, v, want_gpu);
		*t = a > *t ? a : *t;
		*tm = b > *tm ? b : *tm;
	}
}

double plan_sample(struct plan *p, long B, int m, int sample, struct pipe_out *po,
		   double *use_g, double *use_m)
{
	/* Sample s draws from its own stream, so the batch of B + 1 holds the
	 * batch of B plus one request (common random numbers across B, m). */
	gsl_rng_set(p->rng, p->d.seed * 1000003UL + (unsigned long)sample + 1);
	const struct design *d = &p->d;
	int G = p->G, D = p->D;
	/* POOL is a power of two and taus2 returns 32 uniform bits (plan_new
	 * checks): the top POOL_BITS are a uniform pool index */
	for (long j = 0; j < B; j++)
		p->rq[j] = (int)(gsl_rng_get(p->rng) >> (32 - POOL_BITS));
	p->placed = plan_place(p, B);
	if (m > 1) /* one micro-batch needs no per-GPU order */
		plan_group_by_gpu(p, B, p->placed);
	assign_mb(p, B, m);
	struct side *sm = &p->sm, *sg = &p->sg;
	memset(sm->acc, 0, sizeof(double) * (size_t)m * D * sm->nres);
	memset(sm->suml, 0, sizeof(double) * (size_t)m * D);
	memset(sg->acc, 0, sizeof(double) * (size_t)m * G * sg->nres);
	memset(sg->suml, 0, sizeof(double) * (size_t)m * G);
	memset(p->gcnt, 0, sizeof(int) * (size_t)m * G);
	memset(p->dcnt, 0, sizeof(int) * (size_t)m * D);
	memset(p->lcnt, 0, sizeof(int) * (size_t)m * p->LB);
	for (long j = 0; j < B; j++) {
		int g = p->rgpu[j], dev = p->rdev[j], i = p->rmb[j], r = p->rq[j];
		int um = i * D + dev, ug = i * G + g;
		double L = p->ctx[r];
		if (p->nshard[j]) {
			add_slices(p, j, i);
			p->gcnt[ug]++;
			continue;
		}
		sm->suml[um] += L;
		const double *v = sm->pool + (size_t)r * sm->nres;
		double *acc = sm->acc + (size_t)um * sm->nres;
		for (int k = 0; k < sm->nres; k++)
			acc[k] += v[k];
		if (sg->k) {
			sg->suml[ug] += L;
			v = sg->pool + (size_t)r * sg->nres;
			acc = sg->acc + (size_t)ug * sg->nres;
			for (int k = 0; k < sg->nres; k++)
				acc[k] += v[k];
		}
		p->gcnt[ug]++;
		p->dcnt[um]++;
		p->lcnt[i * p->LB + (p->D >= p->G ? dev : g)]++;
	}
	/* price each micro-batch at the pace of its slowest device */
	/* links are full duplex: what goes out and what comes back do not
	 * queue behind each other; devices on the GPU's NVLink share it with
	 * the expert all-to-all */
	struct pipe_in in = {.kind = d->sched, .m = m, .layers = (int)p->layers,
			     .attn_on_gpu = !p->has_mem, .duplex = 1,
			     .link_on_net = d->port && !strcmp(d->sys->gpu_port, d->sys->scaleup_link)};
	double L = p->layers;
	const struct klink *ml = d->mlink;
	in.m = 0; /* an empty micro-batch (more of them than requests) does not run */
	for (int i = 0; i < m; i++) {
		int n = 0, c = 0;
		for (int g = 0; g < G; g++)
			n = p->gcnt[i * G + g] > n ? p->gcnt[i * G + g] : n;
		if (n == 0)
			continue;
		for (int k = 0; k < p->LB; k++)
			c = p->lcnt[i * p->LB + k] > c ? p->lcnt[i * p->LB + k] : c;
		double attn, attn_m, fb = 0, fbm = 0;
		side_peak(p, sm, i, D, p->dcnt, 0, &attn, &attn_m);
		if (p->has_mem && sg->k) /* stages the memory device hands to the GPU */
			side_peak(p, sg, i, G, p->gcnt, 1, &fb, &fbm);
		const double *ph = gpu_phases(p, n);
		if (!ph)
			return NAN; /* p->fail says why */
		double merge = p->nsharded ? merge_time(p, B, i) : 0;
		double *du = in.dur[in.m++];
		du[T_PRE] = (ph[PH_PRE] + fb) / L;
		du[T_ATTN] = attn / L;
		du[T_POST] = ph[PH_POST] / L + merge / L;
		du[T_DISP] = ph[PH_DISP] / L;
		if (!p->has_mem) { /* GPU-only: caches come from the prefill side over
				    * the scale-out link, beside the all-to-all */
			double ing = plan_ingest_bytes(p, B);
			if (ing > 0)
				du[T_DISP] += ing / p->G / (d->out->bw * d->out->efficiency) / (m * L);
		}
		du[T_EXP] = ph[PH_EXP] / L;
		du[T_COMB] = ph[PH_COMB] / L;
		du[T_TAIL_G] = ph[PH_TAIL] + fbm * d->mtp;
		du[T_TAIL_M] = attn_m * d->mtp;
		if (p->has_mem && c > 0) {
			/* a transfer runs at the slower of its device link and its
			 * share of the GPU's port: the port carries what all of the
			 * GPU's devices exchange */
			double n_dev = c, n_port = 0;
			const struct klink *port = d->port && p->D >= p->G ? d->port : NULL;
			for (int g = 0; port && g < G; g++) {
				int s = 0;
				for (int k = 0; k < p->per; k++)
					s += p->lcnt[i * p->LB + g * p->per + k];
				n_port = s > n_port ? s : n_port;
			}
			/* cache ingest into the devices, spread over the step's
			 * micro-batches and layers: the devices of a GPU take its
			 * share through its port */
			double ing = plan_ingest_bytes(p, B) / (m * L);
			double out = p->lay.out_bytes / L, back = p->lay.back_bytes / L;
			double mtp = p->laym.out_bytes + p->laym.back_bytes;
			du[T_OUT] = fmax(roofline_transfer(ml, n_dev * out + ing / p->D),
					 port ? roofline_transfer(port, n_port * out + ing / p->G) : 0);
			du[T_BACK] = fmax(roofline_transfer(ml, n_dev * back),
					  port ? roofline_transfer(port, n_port * back) : 0);
			du[T_TAIL_L] = d->mtp > 0 ? d->mtp * 2 *
					fmax(roofline_transfer(ml, n_dev * mtp / 2),
					     port ? roofline_transfer(port, n_port * mtp / 2) : 0) : 0;
		} else {
			du[T_OUT] = du[T_BACK] = du[T_TAIL_L] = 0;
		}
	}
	/* capacity: the fullest GPU and memory device of this batch */
	double ug = 0, um = 0;
	for (int g = 0; g < G; g++) {
		double u = p->weights + p->gpu_store[g];
		if (!p->has_mem)
			u += p->dev_store[g];
		ug = u > ug ? u : ug;
	}
	if (p->has_mem)
		for (int dev = 0; dev < D; dev++)
			um = p->dev_store[dev] > um ? p->dev_store[dev] : um;
	*use_g = ug, *use_m = um;
	for (int i = 0; i < in.m; i++)
		for (int t = 0; t < T_ALL; t++)
			if (!isfinite(in.dur[i][t])) {
				memset(po, 0, sizeof *po);
				return INFINITY;
			}
	if (d->exact ? pipe_list(&in, po, NULL, 0) : pipe_fast(&in, po)) {
		kerr_set(&p->fail, 0, 0, "the pipeline schedule refused its input (%d "
			 "micro-batches, %d layers, or a negative duration)", in.m, in.layers);
		return NAN;
	}
	return po->makespan;
}

int plan_inspect(struct plan *p, double batch, int m, int sample,
		 struct sample_view *v, struct kerr *err)
{
	if (!(batch >= 1) || batch != floor(batch) || batch > PLAN_MAX_BATCH || m < 1 ||
	    m > MB || sample < 0 || sample >= p->d.samples)
		return kerr_set(err, 0, 0, "plan_inspect: batch, m or sample out of range");
	long B = (long)batch;
	if (ensure_batch(p, 2 * B) != 0 || ensure_memo(p, B / p->G + 2) != 0)
		return kerr_set(err, 0, 0, "out of memory for a batch of %ld", B);
	struct pipe_out po;
	double ug, um;
	v->tbt = plan_sample(p, B, m, sample, &po, &ug, &um);
	if (isnan(v->tbt))
		return kerr_set(err, 0, 0, "%s", p->fail.msg);
	v->n = B;
	v->ctx = p->lctx_view;
	for (long j = 0; j < B; j++)
		p->lctx_view[j] = p->ctx[p->rq[j]];
	v->gpu = p->rgpu, v->dev = p->rdev, v->mb = p->rmb;
	v->use_gpu = ug, v->use_mem = um;
	v->order = p->placed; /* CMR re-sorts p->ord into the same order */
	v->nshard = p->nshard;
	return 0;
}
