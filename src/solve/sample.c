/* sample.c: one sampled decode batch on a plan: requests drawn from the
 * pool, placed (memory-aware, longest first where there is room, split
 * over a node's devices when no one device holds them; or round-robin),
 * assigned to micro-batches (arrival order or CMR), priced at the pace of
 * the slowest device (links, the GPU port, merges and cache ingest through
 * cost/roofline.c), and scheduled (sched/pipeline.h). */
#include "solve/plan.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cost/roofline.h"

/* Adds pool entry r's per-request values, divided among `parts` slices,
 * to the bucket of unit u on side sd.  Inlined everywhere: a whole
 * request (parts = 1) then adds without a division per value (x / 1 is
 * x, and the compiler drops it). */
static inline __attribute__((always_inline)) void
add_to_bucket(const struct plan_side *sd, struct plan_buckets *bk, int u, int r, double L,
	      double parts)
{
	bk->suml[u] += L / parts;
	const double *v = sd->pool + (size_t)r * sd->nres;
	double *acc = bk->acc + (size_t)u * sd->nres;
	for (int x = 0; x < sd->nres; x++)
		acc[x] += v[x] / parts;
}

/* Slices of request j in micro-batch i: each priced as a request of its
 * share of the context on its device (its own scan over its share, a
 * local top-k, attention over what it selected), on the GPU of that
 * device for the stages the GPU runs; each device gets the query. */
static void add_slices(const struct plan *p, struct plan_ws *w, long j, int i)
{
	int r = w->req_pool[j], n = w->nshard[j], D = p->devs, G = p->gpus;
	double L = p->ctx[r];
	for (int k = 0; k < n; k++) {
		int dev = w->shard_dev[j * PLAN_MAX_SHARDS + k], g = plan_gpu_of(p, dev);
		add_to_bucket(&p->mem_side, &w->mem_bk, i * D + dev, r, L, n);
		if (p->gpu_side.k)
			add_to_bucket(&p->gpu_side, &w->gpu_bk, i * G + g, r, L, n);
		w->dev_count[i * D + dev]++;
		w->link_count[i * p->link_units + (D >= G ? dev : g)]++;
	}
}

/* Per layer, the traffic of split requests in micro-batch i over the
 * scale-up link: each slice on another GPU than the request's gets the
 * query from that GPU (*bcast, before the attention) and sends back its
 * partial output (and top-k candidates), which the request's GPU merges
 * (a log-sum-exp reduction; *merge, after it).  The slowest GPU sets the
 * pace; a layer's slices move together. */
static void split_times(const struct plan *p, struct plan_ws *w, long B, int i, double *bcast,
			double *merge)
{
	int *remote = w->gpu_remote;
	memset(remote, 0, sizeof(int) * (size_t)p->gpus);
	for (long j = 0; j < B; j++)
		if (w->nshard[j] && w->req_mb[j] == i)
			for (int k = 0; k < w->nshard[j]; k++)
				remote[w->req_gpu[j]] += plan_gpu_of(p, w->shard_dev[j * PLAN_MAX_SHARDS + k]) !=
						      w->req_gpu[j];
	*bcast = *merge = 0;
	for (int g = 0; g < p->gpus; g++)
		if (remote[g]) {
			*merge = fmax(*merge, roofline_transfer(p->d.up, remote[g] * p->merge_bytes /
									p->layers));
			*bcast = fmax(*bcast, roofline_transfer(p->d.up, remote[g] * p->bcast_bytes /
									p->layers));
		}
}

/* Stage 1: the batch's requests drawn from the pool.  Sample s draws from
 * its own stream, so the batch of B + 1 holds the batch of B plus one
 * request (common random numbers across B and m): the draws the sample
 * kept (struct plan_placed) are read back, and the stream goes on from
 * the state after them. */
static void draw_requests(const struct plan *p, struct plan_ws *w, long B, int sample)
{
	const struct plan_placed *c = sample >= 0 && sample < w->nkept ? &w->kept[sample] : NULL;
	long j = c && c->n > 0 ? (c->n < B ? c->n : B) : 0;
	if (j > 0) {
		memcpy(w->req_pool, c->pool, sizeof(int) * (size_t)j);
		for (long t = 0; t < j; t++)
			w->req_key[t] = p->pool_key[w->req_pool[t]];
		if (j < B)
			memcpy(gsl_rng_state(w->rng), c->rng, gsl_rng_size(w->rng));
	} else {
		gsl_rng_set(w->rng, p->d.seed * 1000003UL + (unsigned long)sample + 1);
	}
	/* PLAN_POOL is a power of two and taus2 returns 32 uniform bits
	 * (plan_new checks): the top PLAN_POOL_BITS are a uniform pool index */
	for (; j < B; j++) {
		int r = (int)(gsl_rng_get(w->rng) >> (32 - PLAN_POOL_BITS));
		w->req_pool[j] = r;
		w->req_key[j] = p->pool_key[r];
	}
}

/* Stage 4: every request's cache-side values summed into the bucket of
 * its (micro-batch, device) and (micro-batch, GPU), with the request
 * counts per GPU, device and link. */
static void fill_buckets(const struct plan *p, struct plan_ws *w, long B, int m)
{
	int G = p->gpus, D = p->devs;
	const struct plan_side *sm = &p->mem_side, *sg = &p->gpu_side;
	memset(w->mem_bk.acc, 0, sizeof(double) * (size_t)m * D * sm->nres);
	memset(w->mem_bk.suml, 0, sizeof(double) * (size_t)m * D);
	memset(w->gpu_bk.acc, 0, sizeof(double) * (size_t)m * G * sg->nres);
	memset(w->gpu_bk.suml, 0, sizeof(double) * (size_t)m * G);
	memset(w->gpu_count, 0, sizeof(int) * (size_t)m * G);
	memset(w->dev_count, 0, sizeof(int) * (size_t)m * D);
	memset(w->link_count, 0, sizeof(int) * (size_t)m * p->link_units);
	if (p->hot) {
		memset(w->hot_bk.acc, 0, sizeof(double) * (size_t)m * G * sm->nres);
		memset(w->hot_bk.suml, 0, sizeof(double) * (size_t)m * G);
		memset(w->hot_count, 0, sizeof(int) * (size_t)m * G);
	}
	double tot = 0;
	for (long j = 0; j < B; j++) {
		int g = w->req_gpu[j], dev = w->req_dev[j], i = w->req_mb[j], r = w->req_pool[j];
		w->gpu_count[i * G + g]++;
		tot += p->ctx[r];
		if (w->nshard[j]) {
			add_slices(p, w, j, i);
			continue;
		}
		double L = p->ctx[r];
		if (sg->k)
			add_to_bucket(sg, &w->gpu_bk, i * G + g, r, L, 1);
		if (p->hot && w->req_hot[j]) { /* its device stages on its GPU, no link */
			add_to_bucket(sm, &w->hot_bk, i * G + g, r, L, 1);
			w->hot_count[i * G + g]++;
			continue;
		}
		add_to_bucket(sm, &w->mem_bk, i * D + dev, r, L, 1);
		w->dev_count[i * D + dev]++;
		w->link_count[i * p->link_units + (D >= G ? dev : g)]++;
	}
	w->ctx_last = tot;
}

/* A transfer of dev bytes over the busiest device link and port bytes
 * over the busiest GPU port (NULL: none): it runs at the slower of the
 * two, since the port carries what all of a GPU's devices exchange. */
static double transfer(const struct klink *ml, const struct klink *port, double dev,
		       double via_port)
{
	return fmax(roofline_transfer(ml, dev), port ? roofline_transfer(port, via_port) : 0);
}

/* Requests of micro-batch i on its busiest device link (c, given) and on
 * its busiest GPU port. */
static double port_requests(const struct plan *p, struct plan_ws *w, int i)
{
	double n = 0;
	for (int g = 0; g < p->gpus; g++) {
		int s = 0;
		for (int k = 0; k < p->devs_per_gpu; k++)
			s += w->link_count[i * p->link_units + g * p->devs_per_gpu + k];
		n = s > n ? s : n;
	}
	return n;
}

/* Stage 5a: each non-empty micro-batch's load from the buckets of its
 * placed requests, into w->mbl; returns how many there are, or -1 when a
 * GPU step cannot be built (w->fail says why). */
static int exact_loads(const struct plan *p, struct plan_ws *w, long B, int m, int want_energy)
{
	int G = p->gpus, D = p->devs, nm = 0;
	double e_a2a = want_energy ? plan_a2a_energy(p) : 0;
	for (int i = 0; i < m; i++) {
		int n = 0, c = 0;
		for (int g = 0; g < G; g++)
			n = w->gpu_count[i * G + g] > n ? w->gpu_count[i * G + g] : n;
		if (n == 0)
			continue;
		struct plan_mb *l = &w->mbl[nm++];
		for (int k = 0; k < p->link_units; k++)
			c = w->link_count[i * p->link_units + k] > c ? w->link_count[i * p->link_units + k] : c;
		l->n = n, l->c = c;
		/* the sides' activity energy, in the walks that price them: the
		 * devices' (the GPUs' caches without devices), then the stages the
		 * memory device hands to the GPU */
		double e_mem = 0, e_gpu = 0;
		plan_side_peak(p, &p->mem_side, &w->mem_bk, i, D, w->dev_count, W_DEVICE, l->attn,
			       &l->attn_m, want_energy ? &e_mem : NULL, 0);
		memset(l->fb, 0, sizeof l->fb);
		memset(l->fbp, 0, sizeof l->fbp);
		l->fbm = l->fbpm = 0;
		if (p->has_mem && p->gpu_side.k) /* stages the memory device hands to the GPU */
			plan_side_peak(p, &p->gpu_side, &w->gpu_bk, i, G, w->gpu_count, W_GPU_PRE,
				       l->fb, &l->fbm, want_energy ? &e_gpu : NULL, 1);
		if (p->hot)
			plan_hot_post_peak(p, w, i, l->fbp, &l->fbpm, want_energy ? &e_gpu : NULL);
		else if (p->has_post)
			plan_side_peak(p, &p->gpu_side, &w->gpu_bk, i, G, w->gpu_count, W_GPU_POST,
				       l->fbp, &l->fbpm, NULL, 0);
		l->merge = l->bcast = 0;
		if (w->nsharded)
			split_times(p, w, B, i, &l->bcast, &l->merge);
		l->n_port = p->has_mem && c > 0 && p->d.port && D >= G ? port_requests(p, w, i) : 0;
		l->energy = 0;
		if (!want_energy)
			continue;
		for (int g = 0; g < G; g++)
			if (w->gpu_count[i * G + g]) {
				double e = plan_gpu_energy(p, w, w->gpu_count[i * G + g], e_a2a);
				if (isnan(e))
					return -1;
				l->energy += e;
			}
		l->energy += e_mem;
		l->energy += e_gpu; /* 0 where the GPU runs no device stage */
	}
	return nm;
}

/* Stage 5b: the tasks of the nm non-empty micro-batches of w->mbl, priced
 * at the pace of their slowest device, layer kind by layer kind, into
 * in->dur and in->cdur (in->m counts them).  Returns -1 when the GPU side
 * cannot be built (w->fail says why). */
static int price(const struct plan *p, struct plan_ws *w, int m, int nm, struct pipe_in *in)
{
	const struct design *d = &p->d;
	const struct klink *ml = d->mlink;
	const struct klink *port = d->port && p->devs >= p->gpus ? d->port : NULL;
	int G = p->gpus, D = p->devs, nk = p->nkinds;
	double layers = p->layers;
	/* cache ingest, spread over the step's micro-batches and layers: from
	 * the prefill side over the scale-out link (GPU-only, beside the
	 * all-to-all), or into the devices (a GPU's share through its port) */
	double ing = w->reuse.ingest / (m * layers);
	in->m = nm; /* an empty micro-batch (more of them than requests) does not run */
	for (int mi = 0; mi < nm; mi++) {
		const struct plan_mb *l = &w->mbl[mi];
		const double *ph = plan_gpu_phases(p, w, l->n);
		if (!ph)
			return -1;
		/* every request whole in HBM: the link still brings the new caches */
		int links = p->has_mem && (l->c > 0 || (p->hot && ing > 0));
		double c = l->c, n_port = links && port ? l->n_port : 0;
		for (int k = 0; k < nk; k++) {
			int cl = p->kinds[k].cls;
			double lc = p->layout.cls_layers[cl];
			const double *pk = ph + k * PLAN_PH_STRIDE;
			double *du = k ? in->cdur[k][mi] : in->dur[mi];
			du[T_PRE] = pk[PH_PRE] + l->fb[cl] / lc;
			du[T_ATTN] = l->attn[cl] / lc;
			du[T_POST] = pk[PH_POST] + l->merge + l->fbp[cl] / lc;
			du[T_DISP] = pk[PH_DISP];
			if (!p->has_mem && ing > 0)
				du[T_DISP] += ing / G / (d->out->bw * d->out->efficiency);
			du[T_EXP] = pk[PH_EXP];
			du[T_COMB] = pk[PH_COMB];
			if (links) {
				double out = p->cls_out[cl] / lc, back = p->cls_back[cl] / lc;
				/* what the GPU's NIC sends and receives to other nodes
				 * in this layer's all-to-all crosses the port too */
				double nic = port ? p->a2a_port * pk[PLAN_PH_A2A] : 0;
				du[T_OUT] = transfer(ml, port, c * out + ing / D,
						     n_port * out + ing / G + nic) + l->bcast;
				du[T_BACK] = transfer(ml, port, c * back, n_port * back + nic);
			} else {
				du[T_OUT] = du[T_BACK] = 0;
			}
		}
		if (d->average_layers && nk > 1) /* count-weighted mean of the kinds */
			for (int t = 0; t < T_LAYER; t++) {
				double sum = 0;
				for (int k = 0; k < nk; k++)
					sum += p->kind_layers[k] * (k ? in->cdur[k][mi][t] : in->dur[mi][t]);
				in->dur[mi][t] = sum / layers;
			}
		double *du = in->dur[mi];
		du[T_TAIL_G] = ph[nk * PLAN_PH_STRIDE + PH_TAIL] + (l->fbm + l->fbpm) * d->mtp;
		du[T_TAIL_M] = l->attn_m * d->mtp;
		double mtp = p->mtp_link;
		du[T_TAIL_L] = links && d->mtp > 0
				       ? d->mtp * 2 * transfer(ml, port, c * mtp / 2, n_port * mtp / 2)
				       : 0;
	}
	return 0;
}

/* Activity energy of one sampled step (docs/solver.md): every GPU's
 * operators at its own request count in each micro-batch and every
 * device's cache-side work (w->mbl's energy), the bits each link carries,
 * and every device's static power over the makespan (every device gives
 * its [energy]: p->has_energy). */
static double step_energy(const struct plan *p, const struct plan_ws *w, long B, int nm,
			  double makespan)
{
	const struct design *d = &p->d;
	int G = p->gpus, D = p->devs;
	double e = makespan * (G * d->gpu->e_static +
			       (p->has_mem && !p->in_hbm ? D * d->mem->e_static : 0));
	for (int i = 0; i < nm; i++)
		e += w->mbl[i].energy;
	/* links: queries, new rows and outputs of every request, and the
	 * caches ingested (into the devices, or from the prefill side) */
	double ing = w->reuse.ingest;
	if (p->has_mem) {
		double per = d->mtp * p->mtp_link;
		for (int c = 0; c < LC_N; c++)
			per += p->cls_out[c] + p->cls_back[c];
		e += ((double)(B - (p->hot ? w->nhot : 0)) * per + ing) * 8 * d->mlink->energy_bit;
	} else {
		e += ing * 8 * d->out->energy_bit;
		if (d->host)
			e += w->reuse.reload * 8 * d->host->energy_bit;
	}
	return e;
}

/* The bytes on the fullest GPU and memory device of this batch. */
static void fullest(const struct plan *p, struct plan_ws *w, double *use_g, double *use_m)
{
	double ug = 0, um = 0;
	for (int g = 0; g < p->gpus; g++) {
		double u = p->weights + w->gpu_store[g];
		if (!p->has_mem)
			u += w->dev_store[g];
		ug = u > ug ? u : ug;
	}
	if (p->has_mem)
		for (int dev = 0; dev < p->devs; dev++)
			um = w->dev_store[dev] > um ? w->dev_store[dev] : um;
	*use_g = ug, *use_m = um;
}

double plan_sample(const struct plan *p, struct plan_ws *w, long B, int m, int sample,
		   int fluid, int want_energy, struct pipe_out *po, double *use_g,
		   double *use_m)
{
	const struct design *d = &p->d;
	int nm;
	want_energy = want_energy && p->has_energy;
	plan_reuse(p, B, &w->reuse); /* what the batch's admissions move */
	if (fluid) { /* stages 1-5a from the batch's sums */
		if (plan_fluid_sample(p, w, B, m, sample, want_energy, &nm, use_g, use_m) != 0)
			return NAN; /* w->fail says why */
	} else {
		draw_requests(p, w, B, sample);
		w->placed = plan_place(p, w, B, sample);          /* stage 2: placement */
		if (m > 1) /* one micro-batch needs no per-GPU order */
			plan_group_by_gpu(p, w, B, w->placed);
		plan_assign_mb(p, w, B, m);                       /* stage 3: micro-batches */
		fill_buckets(p, w, B, m);                         /* stage 4 */
		if ((nm = exact_loads(p, w, B, m, want_energy)) < 0)
			return NAN;
		fullest(p, w, use_g, use_m);
	}
	/* links are full duplex: what goes out and what comes back do not
	 * queue behind each other; devices on the GPU's NVLink share it with
	 * the expert all-to-all */
	struct pipe_in *in = &w->pin; /* 14 KB: set field by field, not cleared */
	in->kind = d->sched, in->layers = (int)p->layers;
	in->attn_on_gpu = !p->has_mem, in->duplex = 1;
	in->link_on_net = d->port && !strcmp(d->sys->gpu_port, d->sys->scaleup_link);
	in->nclass = d->average_layers ? 1 : p->nkinds;
	if (in->nclass > 1)
		memcpy(in->layer_class, p->layer_kind, (size_t)p->layers);
	if (price(p, w, m, nm, in) != 0)
		return NAN; /* w->fail says why */
	for (int i = 0; i < in->m; i++)
		for (int t = 0; t < T_ALL; t++)
			if (!isfinite(in->dur[i][t])) { /* a stage no device runs */
				memset(po, 0, sizeof *po);
				return INFINITY;
			}
	/* stage 6: the pipeline schedule */
	if (d->exact ? pipe_list(in, po, NULL, 0) : pipe_fast(in, po)) {
		kerr_set(&w->fail, 0, 0, "the pipeline schedule refused its input (%d "
			 "micro-batches, %d layers, or a negative duration)", in->m, in->layers);
		return NAN;
	}
	in->first = po->order; /* this worker's next sample tries it first */
	if (d->host) { /* the host tiers' reload runs beside the step, over the GPUs'
		       * own ports (GPU-only uses them for nothing else), what comes
		       * from the NVMe at its read rate too: it bounds the step only
		       * where it takes longer */
		const struct plan_reuse *u = &w->reuse;
		double rl = u->reload / p->gpus / (d->host->bw * d->host->efficiency);
		if (u->from_ssd > 0)
			rl = fmax(rl, u->from_ssd / p->ssd_read);
		po->makespan = fmax(po->makespan, rl);
	}
	w->energy_last = want_energy ? step_energy(p, w, B, nm, po->makespan) : NAN;
	return po->makespan;
}

int plan_inspect(struct plan *p, double batch, int m, int sample,
		 struct sample_view *v, struct kerr *err)
{
	if (!(batch >= 1) || batch != floor(batch) || batch > PLAN_MAX_BATCH || m < 1 ||
	    m > PIPE_MAX_MB || sample < 0 || sample >= p->d.samples)
		return kerr_set(err, 0, 0, "plan_inspect: batch, m or sample out of range");
	long B = (long)batch;
	struct plan_ws *w = p->ws;
	if (plan_ensure_batch(p, w, 2 * B) != 0 || plan_ensure_memo(p, w, B / p->gpus + 2) != 0)
		return kerr_set(err, 0, 0, "out of memory for a batch of %ld", B);
	struct pipe_out po;
	double ug, um;
	/* the view is of placed requests (never the fluid path); no energy */
	v->tbt = plan_sample(p, w, B, m, sample, 0, 0, &po, &ug, &um);
	if (isnan(v->tbt))
		return kerr_set(err, 0, 0, "%s", w->fail.msg);
	v->n = B;
	v->ctx = w->lctx_view;
	for (long j = 0; j < B; j++)
		w->lctx_view[j] = p->ctx[w->req_pool[j]];
	v->gpu = w->req_gpu, v->dev = w->req_dev, v->mb = w->req_mb;
	v->use_gpu = ug, v->use_mem = um;
	v->order = w->placed; /* CMR re-sorts w->req_order into the same order */
	v->nshard = w->nshard;
	return 0;
}

int plan_timeline(struct plan *p, double batch, int m, int sample, struct pipe_event *ev,
		  long nev, long *n, double *makespan, struct kerr *err)
{
	struct sample_view v;
	if (plan_inspect(p, batch, m, sample, &v, err) != 0)
		return -1;
	if (!isfinite(v.tbt))
		return kerr_set(err, 0, 0, "batch %.0f: a stage runs on no device, so there is no "
				"schedule to show", batch);
	const struct pipe_in *in = &p->ws->pin; /* as plan_sample left it */
	long need = (long)in->m * ((long)in->layers * T_LAYER + (T_ALL - T_LAYER));
	if (need > nev)
		return kerr_set(err, 0, 0, "the schedule has %ld tasks, more than the %ld asked for",
				need, nev);
	struct pipe_out po;
	if (pipe_list(in, &po, ev, nev) != 0)
		return kerr_set(err, 0, 0, "the pipeline schedule refused its input");
	*n = need;
	*makespan = po.makespan;
	return 0;
}

const struct design *plan_design(const struct plan *p)
{
	return &p->d;
}
