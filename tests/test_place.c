/* test_place.c: placing a sampled batch's requests (solve/place.c) and
 * what placement decides: memory-aware admission against round-robin, the
 * memory reserve, requests sharded over devices (and the query their
 * remote slices need), devices sharing their GPU's port (with the NIC's
 * bytes to other nodes), the MTP layer's own cache, and the cache ingest
 * they take in, by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"
#include "solve/plan.h" /* internal: the link bytes a plan prices */
#include "solve_helpers.h"

/* Issue 11: memory-aware admission.  A slow reference replays the rule on
 * a sampled batch: in arrival order (online, the default; issue 29 item
 * 3) or longest first (offline-lpt), each request on the device with the
 * most free room that holds it, ties to the lowest summed context. */
Test(place, memory_aware_places_on_the_roomiest_device_in_its_order)
{
	static struct setup s;
	const char *systems[] = {"gpu-only", "gpu-karat", "gpu-only", "gpu-karat"};
	for (int k = 0; k < 4; k++) {
		load(&s, "deepseek-v3.2", systems[k], 0, "agentic");
		s.sys.kv_shard = SHARD_OFF; /* whole requests: the rule replayed here */
		s.sys.placement = k < 2 ? PLACE_ONLINE : PLACE_OFFLINE_LPT;
		struct plan *p = plan(&s);
		struct sample_view v;
		struct kerr err;
		long B = 60;
		cr_assert_eq(plan_inspect(p, (double)B, 1, 3, &v, &err), 0, "%s", err.msg);
		int G = (int)s.sys.gpus, D = system_has_memdev(&s.sys) ? (int)s.sys.memdevs : G;
		double cap = D == G && !system_has_memdev(&s.sys)
				     ? s.gpu.mem_capacity - weights_by_hand(&s)
				     : s.mem.mem_capacity;
		double used[64] = {0}, ctxsum[64] = {0};
		/* the order it placed them in: as they arrived (NULL says so), or
		 * longest first */
		static int arrival[64];
		for (int t = 0; t < 64; t++)
			arrival[t] = t;
		if (k < 2)
			cr_assert_null(v.order, "%s: online placement is in arrival order", systems[k]);
		else
			cr_assert_not_null(v.order, "%s: memory-aware placement kept", systems[k]);
		const int *order = v.order ? v.order : arrival;
		for (long t = 1; t < B && k >= 2; t++)
			cr_expect_geq(v.ctx[order[t - 1]], v.ctx[order[t]], "longest first");
		for (long t = 0; t < B; t++) {
			long j = order[t];
			double kv, idx;
			attn_storage(&s.m, &s.m.sp, v.ctx[j], design_mtp_layers(&s.d), &kv, &idx);
			int dev = v.dev[j];
			for (int u = 0; u < D; u++) /* no device had more room */
				cr_expect_geq(cap - used[dev], cap - used[u] - 0.5,
					      "%s: request %ld on %d, %d had more room", systems[k], j,
					      dev, u);
			for (int u = 0; u < D; u++) /* and of those as roomy, less context */
				if (used[u] == used[dev])
					cr_expect_leq(ctxsum[dev], ctxsum[u], "%s: tie to %d", systems[k],
						      u);
			used[dev] += kv + idx;
			ctxsum[dev] += v.ctx[j];
			if (system_has_memdev(&s.sys))
				cr_expect_eq(dev / (D / G), v.gpu[j], "a device of its own GPU");
		}
		plan_free(p);
	}
}

/* The largest batch at one micro-batch where capacity is the only limit
 * (an SLO of 100 s), on gpus GPUs (0: the file's), with an admission rule
 * and placement order, at samples sampled batches (0: the default). */
static double capacity_answer(struct setup *s, const char *model, const char *system,
			      double gpus, int admission, int placement, int samples)
{
	load(s, model, system, 0, "agentic");
	if (gpus > 0)
		s->sys.gpus = gpus;
	if (samples > 0)
		s->d.samples = samples;
	s->d.slo = 100;
	s->sys.admission = admission, s->sys.placement = placement;
	struct plan *p = plan(s);
	struct result r;
	struct kerr err;
	cr_assert_eq(plan_solve(p, 1, &r, &err), 0, "%s", err.msg);
	plan_free(p);
	return r.batch;
}

/* Memory-aware placement never admits fewer than round-robin, and it lets
 * GPU-only use the HBM that round-robin leaves free (issue 11: 24 vs about
 * 83 requests for GLM-5.2 on 16 H200s). */
Test(place, memory_aware_never_admits_fewer_than_round_robin)
{
	static struct setup s;
	const struct {
		const char *model, *system;
		double gpus;
	} pts[] = {{"glm-5.2", "gpu-only", 16}, {"minimax-m3", "gpu-only", 8},
		   {"deepseek-v3.2", "gpu-only", 8}, {"deepseek-v3.2", "gpu-karat", 8}};
	for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
		double b[2];
		for (int a = 0; a < 2; a++)
			b[a] = capacity_answer(&s, pts[i].model, pts[i].system, pts[i].gpus,
					       a ? ADMIT_ROUND_ROBIN : ADMIT_MEMORY, PLACE_ONLINE, 0);
		cr_expect_geq(b[0], b[1], "%s on %s: memory-aware %g < round-robin %g",
			      pts[i].model, pts[i].system, b[0], b[1]);
		if (i == 0)
			cr_expect_geq(b[0], 2 * b[1], "GLM-5.2 on 16 GPUs: %g vs %g", b[0], b[1]);
	}
}

/* Issue 29 item 3: placing requests as they arrive never admits more
 * than the offline longest-first packer, where capacity is the only
 * limit (one micro-batch, an SLO no step misses). */
Test(place, online_never_admits_more_than_the_packer)
{
	static struct setup s;
	const struct {
		const char *model, *system;
	} pts[] = {{"glm-5.2", "gpu-only"},       {"minimax-m3", "gpu-only"},
		   {"deepseek-v3.2", "gpu-only"}, {"glm-5.2", "gpu-attacc"},
		   {"glm-5.2", "gpu-duplex"},     {"deepseek-v3.2", "gpu-duplex-hbm"},
		   {"glm-5.2", "gpu-host-gather"}};
	int fewer = 0;
	for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
		double b[2];
		for (int a = 0; a < 2; a++)
			b[a] = capacity_answer(&s, pts[i].model, pts[i].system, 0, ADMIT_MEMORY,
					       a ? PLACE_OFFLINE_LPT : PLACE_ONLINE, 64);
		cr_expect_leq(b[0], b[1], "%s on %s: online %g > offline-lpt %g", pts[i].model,
			      pts[i].system, b[0], b[1]);
		fewer += b[0] < b[1];
	}
	cr_expect_gt(fewer, 0, "the packer fits more somewhere: else the test shows nothing");
}

/* Issue 11: the HBM reserve is taken off before anything is placed: with a
 * 10% reserve, weights of exactly 90% of capacity fit and a byte more
 * capacity-less-reserve than that does not; a reserve in bytes works the
 * same way. */
Test(place, memory_reserve_is_subtracted_before_placement)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-karat", 65536, NULL);
	s.d.slo = 10;
	s.d.samples = 1;
	double w = weights_by_hand(&s);
	s.gpu.mem_reserve = (struct share_bytes){0, 0.1};
	s.gpu.mem_capacity = w / 0.9;
	cr_expect(near(device_cache_capacity(&s.gpu), w, 1e-12));
	struct plan *p = plan(&s);
	cr_expect(eval(p, 1, 1).feasible, "%s", eval(p, 1, 1).reason);
	plan_free(p);
	s.gpu.mem_reserve = (struct share_bytes){8e9, 0};
	s.gpu.mem_capacity = w + 8e9 - 1;
	p = plan(&s);
	struct result r = eval(p, 1, 1);
	cr_expect(!r.feasible);
	cr_expect(strstr(r.reason, "(capacity less reserve)") != NULL, "%s", r.reason);
	plan_free(p);
	/* GPU-only: the caches fill capacity less reserve less weights */
	load(&s, "deepseek-v3.2", "gpu-only", 65536, NULL);
	double kv, idx;
	attn_storage(&s.m, &s.m.sp, 65536, design_mtp_layers(&s.d), &kv, &idx);
	s.d.slo = 10;
	s.d.samples = 1;
	s.gpu.mem_reserve = (struct share_bytes){0, 0.1};
	s.gpu.mem_capacity = (w + 3 * (kv + idx)) / 0.9;
	p = plan(&s);
	cr_expect(eval(p, 3 * s.sys.gpus, 1).feasible, "three requests a GPU fit");
	cr_expect(!eval(p, 3 * s.sys.gpus + 1, 1).feasible, "a fourth does not");
	plan_free(p);
}

/* Issue 11: a request one byte too large for any device is split over two
 * devices of its node (kv_shard on) and pays the merge over the scale-up
 * link, or makes the point infeasible (off). */
Test(place, a_request_too_large_for_one_device_is_sharded)
{
	static struct setup s;
	const char *systems[] = {"gpu-only", "gpu-karat"};
	for (int k = 0; k < 2; k++) {
		load(&s, "deepseek-v3.2", systems[k], 131072, NULL);
		s.d.slo = 10, s.d.samples = 1;
		int mem = system_has_memdev(&s.sys);
		double kv, idx, w = weights_by_hand(&s);
		attn_storage(&s.m, &s.m.sp, 131072, design_mtp_layers(&s.d), &kv, &idx);
		s.gpu.mem_reserve = (struct share_bytes){0, 0};
		if (mem)
			s.mem.mem_capacity = kv + idx; /* exactly one request */
		else
			s.gpu.mem_capacity = w + kv + idx;
		struct plan *p = plan(&s);
		struct result whole = eval(p, 1, 1);
		cr_expect(whole.feasible, "%s: exactly full fits whole: %s", systems[k], whole.reason);
		cr_expect_eq(whole.sharded, 0);
		plan_free(p);
		if (mem)
			s.mem.mem_capacity -= 1;
		else
			s.gpu.mem_capacity -= 1;
		p = plan(&s);
		struct result split = eval(p, 1, 1);
		cr_expect(split.feasible, "%s: split over two: %s", systems[k], split.reason);
		cr_expect_eq(split.sharded, 1, "%s: the one request is split", systems[k]);
		struct sample_view v;
		struct kerr err;
		cr_assert_eq(plan_inspect(p, 1, 1, 0, &v, &err), 0, "%s", err.msg);
		cr_expect_eq(v.nshard[0], 2, "%s: two slices", systems[k]);
		if (!mem) /* the slices sit on two GPUs: the merge crosses NVLink */
			cr_expect_gt(split.tbt_mean, whole.tbt_mean, "the merge costs time");
		plan_free(p);
		s.sys.kv_shard = SHARD_OFF;
		p = plan(&s);
		struct result off = eval(p, 1, 1);
		cr_expect(!off.feasible, "%s: not split, it does not fit", systems[k]);
		cr_expect(strstr(off.reason, "memory") != NULL, "%s", off.reason);
		plan_free(p);
	}
}

/* Issue 29 item 7: a split request's slices on another GPU's devices
 * attend with its query, which the request's GPU sends them over the
 * scale-up link before the attention.  One device per GPU, one request
 * too large for a device, one micro-batch (every task in series): the
 * step is longer by exactly a layer's query transfer per layer, and the
 * bytes are the query of every layer. */
Test(place, a_split_requests_query_reaches_its_remote_slices)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-karat", 131072, NULL);
	s.d.slo = 10, s.d.samples = 1;
	s.sys.memdevs = s.sys.gpus; /* a slice on another device is on another GPU */
	double kv, idx;
	attn_storage(&s.m, &s.m.sp, 131072, design_mtp_layers(&s.d), &kv, &idx);
	s.mem.mem_capacity = kv + idx - 1;
	struct plan *p = plan(&s);
	double q = 0;
	for (int c = 0; c < LC_N; c++)
		q += p->layout.cls_query[c];
	cr_expect_gt(q, 0);
	cr_expect(near(p->bcast_bytes, q, 1e-12), "%g, queries %g", p->bcast_bytes, q);
	struct result with = eval(p, 1, 1);
	cr_assert_eq(with.sharded, 1, "%s", with.reason);
	struct sample_view v;
	struct kerr err;
	cr_assert_eq(plan_inspect(p, 1, 1, 0, &v, &err), 0, "%s", err.msg);
	cr_assert_eq(v.nshard[0], 2);
	double b = p->bcast_bytes;
	p->bcast_bytes = 0;
	struct result without = eval(p, 1, 1);
	double want = p->layers * roofline_transfer(&s.up, b / p->layers);
	cr_expect(near(with.tbt_mean - without.tbt_mean, want, 1e-9), "%.9g s more, want %.9g",
		  with.tbt_mean - without.tbt_mean, want);
	plan_free(p);
}

/* Issue 29 item 7: the GPU's NIC sits behind its port (GPUDirect RDMA),
 * so the all-to-all's bytes to another node's GPUs cross the port beside
 * the devices' traffic.  16 GPUs on 2 nodes: 8 of a GPU's 15 peers are
 * remote, so 8/15 of its all-to-all bytes go out and as many come in.
 * With the device links made very fast the port binds, and each layer's
 * transfer out is longer by those bytes at the port's rate. */
Test(place, the_cross_node_all_to_all_shares_the_gpu_port)
{
	static struct setup s;
	double busy[2], want = 0;
	for (int via = 0; via < 2; via++) {
		load(&s, "deepseek-v3.2", "gpu-karat", 65536, NULL);
		s.ml.bw = 1e15;
		s.sys.gpus = 16, s.sys.memdevs = 16;
		s.d.samples = 1, s.d.slo = 10;
		s.sys.scaleout_via_port = via ? VIA_PORT_YES : VIA_PORT_NO;
		struct plan *p = plan(&s);
		cr_assert(s.d.port != NULL);
		cr_expect(near(p->a2a_port, via ? 8.0 / 15 : 0, 1e-15), "%g", p->a2a_port);
		busy[via] = eval(p, 64, 1).busy[RES_LINK];
		if (via) { /* 4 requests on each GPU */
			const double *ph = plan_gpu_phases(p, p->ws, 4);
			cr_assert_not_null(ph);
			for (int k = 0; k < p->nkinds; k++)
				want += p->kind_layers[k] * 8.0 / 15 * ph[k * PLAN_PH_STRIDE + PLAN_PH_A2A] /
					(s.port.bw * s.port.efficiency);
		}
		plan_free(p);
	}
	cr_expect_gt(want, 0);
	cr_expect(near(busy[1] - busy[0], want, 1e-6), "%.9g s more on the port, want %.9g",
		  busy[1] - busy[0], want);
	/* on one node nothing leaves it */
	load(&s, "deepseek-v3.2", "gpu-karat", 65536, NULL);
	struct plan *p = plan(&s);
	cr_expect_eq(p->a2a_port, 0);
	plan_free(p);
}

/* Issue 11: the memory devices behind a GPU share its one port.  With the
 * device links made very fast, the port sets the link time: two devices
 * per GPU move what one did, through the same port (the same link time);
 * without a port each device's private link halves it. */
Test(place, devices_behind_a_gpu_share_its_port)
{
	static struct setup s;
	double busy[2][2]; /* [port][devices per GPU - 1] */
	for (int port = 0; port < 2; port++)
		for (int per = 1; per <= 2; per++) {
			load(&s, "deepseek-v3.2", "gpu-karat", 65536, NULL);
			cr_assert(system_has_port(&s.sys), "gpu-karat has a GPU port");
			s.ml.bw = 1e15; /* the device links never bind */
			s.sys.memdevs = 8 * per;
			s.d.samples = 1, s.d.slo = 10;
			if (!port)
				s.d.port = NULL;
			struct plan *p = plan(&s);
			busy[port][per - 1] = eval(p, 64, 1).busy[RES_LINK];
			plan_free(p);
		}
	cr_expect(near(busy[1][1], busy[1][0], 1e-6), "shared port: %g vs %g", busy[1][1],
		  busy[1][0]);
	cr_expect_gt(busy[1][0], 10 * busy[0][0], "PCIe 5 port against a 1 PB/s link");
	/* private links of real bandwidth: two devices a GPU halve the time
	 * each link needs (less its fixed latency) */
	double priv[2];
	for (int per = 1; per <= 2; per++) {
		load(&s, "deepseek-v3.2", "gpu-karat", 65536, NULL);
		s.sys.memdevs = 8 * per;
		s.d.samples = 1, s.d.slo = 10, s.d.port = NULL;
		struct plan *p = plan(&s);
		priv[per - 1] = eval(p, 64, 1).busy[RES_LINK];
		plan_free(p);
	}
	cr_expect_lt(priv[1], 0.6 * priv[0], "private links: %g vs %g", priv[1], priv[0]);
}

/* Issue 11: cache ingest by hand.  Inputs of 64K tokens, outputs of 1000,
 * no MTP: a batch of 64 admits 64 / 1000 requests a step, each bringing
 * the KV and index rows of its 64K input, less the share its session
 * already holds. */
Test(place, cache_ingest_by_hand)
{
	static struct setup s;
	static const char text[] = "[workload]\nname = t\norigin = synthetic\n"
				   "prefix_reuse = 0.25\n[input]\ndist = fixed\nvalue = 64K\n"
				   "[output]\ndist = fixed\nvalue = 1000\n";
	for (int k = 0; k < 2; k++) {
		load(&s, "deepseek-v3.2", k ? "gpu-karat" : "gpu-only", 65536, NULL);
		struct kerr err;
		workload_free(&s.wl);
		cr_assert_eq(workload_parse("t.ini", text, sizeof text - 1, &s.wl, &err), 0, "%s",
			     err.msg);
		s.d.mtp = 0, s.d.samples = 4, s.d.slo = 10;
		double kv, idx;
		attn_storage(&s.m, &s.m.sp, 65536, design_mtp_layers(&s.d), &kv, &idx);
		struct plan *p = plan(&s);
		struct result r = eval(p, 64, 1);
		cr_expect(near(r.ingest, 64.0 / 1000 * 0.75 * (kv + idx), 1e-12), "%g", r.ingest);
		/* it is a load on the link (or the network for GPU-only), not free */
		struct result busy = r;
		s.wl.prefix_reuse = 1; /* sessions hold everything: nothing moves */
		plan_free(p);
		p = plan(&s);
		r = eval(p, 64, 1);
		cr_expect_eq(r.ingest, 0);
		int res = k ? RES_LINK : RES_NET;
		cr_expect_gt(busy.busy[res], r.busy[res], "ingest occupies %s",
			     pipe_res_names[res]);
		plan_free(p);
	}
}


/* Issue 12: where the GPU runs the scan and the top-k (AttAcc and Duplex
 * have no scan class), the index keys stay in HBM: the device link carries
 * the selected indices out instead of the indexer's query and key rows.
 * DeepSeek-V3.2, q = 2: per layer and request the link gains 2 x 2048 x
 * 4 B of indices and loses 2 x (132 B of key + 64 x 128 x 1 B of query +
 * 64 x 4 B of head weights); 61 layers. */
Test(place, a_gpu_selection_sends_indices_not_index_rows)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-duplex", 0, "agentic");
	struct plan *p = plan(&s);
	cr_assert(p->keys_on_gpu);
	double want = p->layout.cls_out[LC_SPARSE] - 61 * 2 * (132 + 8192 + 256) + 61 * 2 * 2048 * 4.0;
	cr_expect(near(p->cls_out[LC_SPARSE], want, 1e-12), "%.17g, by hand %.17g",
		  p->cls_out[LC_SPARSE], want);
	plan_free(p);
	load(&s, "deepseek-v3.2", "gpu-karat", 0, "agentic");
	p = plan(&s);
	cr_assert(!p->keys_on_gpu);
	cr_expect_eq(p->cls_out[LC_SPARSE], p->layout.cls_out[LC_SPARSE]);
	plan_free(p);
}

/* Issue 29 item 7: the MTP module is a decoder layer with a cache of its
 * own, which a request keeps wherever a draft runs.  DeepSeek-V3.2 at
 * 65,536 tokens: a layer keeps a 656-byte MLA row and a 132-byte index
 * key per token, so 61 layers keep 65,536 x 61 x 788 = 3,150,184,448 B
 * and with the MTP layer 65,536 x 62 x 788 = 3,201,826,816 B.  GLM-5.2's
 * MTP layer reuses the last indexer's selection (mtp_share): it keeps KV
 * but no index of its own. */
Test(place, the_mtp_layer_keeps_its_own_cache)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-only", 65536, NULL);
	cr_assert_eq(design_mtp_layers(&s.d), 1);
	double kv0, idx0, kv1, idx1;
	attn_storage(&s.m, &s.m.sp, 65536, 0, &kv0, &idx0);
	attn_storage(&s.m, &s.m.sp, 65536, 1, &kv1, &idx1);
	cr_expect_eq(kv0 + idx0, 3150184448.0);
	cr_expect_eq(kv1 + idx1, 3201826816.0);
	cr_expect_eq(kv1 - kv0, 65536.0 * 656);
	s.d.mtp = 0;
	cr_expect_eq(design_mtp_layers(&s.d), 0, "no draft, no MTP cache");
	load(&s, "glm-5.2", "gpu-only", 65536, NULL);
	attn_storage(&s.m, &s.m.sp, 65536, 0, &kv0, &idx0);
	attn_storage(&s.m, &s.m.sp, 65536, design_mtp_layers(&s.d), &kv1, &idx1);
	cr_expect_gt(kv1, kv0);
	cr_expect_eq(idx1, idx0, "GLM-5.2's MTP layer shares the indexer's selection");
}

/* Issue 28 item 4: a hierarchical all-to-all.  GPU-only DeepSeek-V3.2 on
 * 64 GPUs (8 nodes of 8), 8 routed experts a token: flat, a GPU's
 * dispatch bytes b split 7/63 inside its node and 56/63 to other nodes.
 * Hierarchical, a token crosses once to each other node any of its 8
 * copies land on: 7 (1 - (7/8)^8) crossings for its 8 x 7/8 remote
 * copies, so the scale-out link carries 56/63 b (1 - (7/8)^8); the
 * scale-up link carries the 7/63 b as before plus the 7/8 of the remote
 * copies the receiving GPU forwards.  Both phases are priced by hand. */
Test(place, a_hierarchical_all_to_all_crosses_each_node_once)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-only", 65536, NULL);
	s.sys.gpus = 64, s.sys.a2a_route = A2A_HIER;
	struct plan *p = plan(&s);
	double f = 1 - pow(7.0 / 8, 8);
	cr_expect(near(p->a2a_cross, f, 1e-15), "%.17g", p->a2a_cross);
	const double *ph = plan_gpu_phases(p, p->ws, 16);
	cr_assert_not_null(ph);
	int moe = p->nkinds - 1; /* the MoE layers' kind */
	double b = ph[moe * PLAN_PH_STRIDE + PLAN_PH_A2A] / 2; /* dispatch; combine likewise */
	struct step *st = &p->ws->step; /* the MoE layer's operators, again */
	double disp = 0, comb = 0;
	struct kbatch kb = {.requests = 16.0 * 64, .gpus = 64, .context = 1, .mtp = s.d.mtp,
			    .sp = s.d.sp, .gpu_only = 1, .part = STEP_LAYER, .kind = p->kinds[moe],
			    .imbalance = system_moe_imbalance(&s.sys)};
	struct kerr err;
	cr_assert_eq(step_build(&s.m, &kb, st, &err), 0, "%s", err.msg);
	for (int i = 0; i < st->n; i++)
		if (st->op[i].kind == OP_DISPATCH)
			disp = st->op[i].bytes;
		else if (st->op[i].kind == OP_COMBINE)
			comb = st->op[i].bytes;
	cr_assert(disp > 0 && comb > 0 && b > 0);
	double want = 0;
	const double bytes[2] = {disp, comb};
	for (int j = 0; j < 2; j++) {
		double away = bytes[j] * 56 / 63;
		want += fmax(roofline_a2a(&s.up, bytes[j] * 7 / 63 + away * 7 / 8, j == 0),
			     roofline_a2a(&s.out, away * f, j == 0));
	}
	double got = ph[moe * PLAN_PH_STRIDE + PH_DISP] + ph[moe * PLAN_PH_STRIDE + PH_COMB];
	cr_expect(near(got, want, 1e-12), "%.9g s, by hand %.9g s", got, want);
	plan_free(p);
	/* flat moves every remote copy: more time on the scale-out link */
	s.sys.a2a_route = A2A_FLAT;
	p = plan(&s);
	ph = plan_gpu_phases(p, p->ws, 16);
	cr_expect_eq(p->a2a_cross, 1);
	cr_expect_gt(ph[moe * PLAN_PH_STRIDE + PH_DISP] + ph[moe * PLAN_PH_STRIDE + PH_COMB], got);
	plan_free(p);
}

/* Online placement keeps each sample's draws and placement across
 * evaluations and draws and places only the requests past what it kept
 * (place.c, struct plan_placed).  Over batches that go up and down, past
 * a device's capacity (requests split, then overfull), on GPUs, devices
 * and a host shared by GPUs with keys in HBM, every sample's requests,
 * placement, stores and step time equal a workspace that draws and
 * places every batch afresh, bit for bit. */
Test(place, a_kept_placement_equals_one_placed_afresh)
{
	static struct setup s;
	static const char *const systems[] = {"gpu-only", "gpu-karat", "gpu-host-gather"};
	static const long walk[] = {40, 12, 90, 91, 60, 200, 150, 400, 399, 700, 30, 1000};
	for (int k = 0; k < 3; k++) {
		load(&s, "deepseek-v3.2", systems[k], 0, "agentic");
		s.d.samples = 4;
		if (system_has_memdev(&s.sys)) /* room for about 100 requests */
			s.mem.mem_capacity = 100 * 6e9 / s.sys.memdevs;
		struct plan *kept = plan(&s), *fresh = plan(&s);
		fresh->ws->keep_off = 1;
		long shards = 0, over = 0;
		for (size_t i = 0; i < sizeof walk / sizeof *walk; i++)
			for (int smp = 0; smp < 4; smp++) {
				struct sample_view a, b;
				struct kerr err;
				cr_assert_eq(plan_inspect(kept, (double)walk[i], 2, smp, &a, &err), 0, "%s", err.msg);
				cr_assert_eq(plan_inspect(fresh, (double)walk[i], 2, smp, &b, &err), 0, "%s", err.msg);
				long B = walk[i];
				cr_expect_eq(memcmp(a.ctx, b.ctx, sizeof(double) * (size_t)B), 0,
					     "%s batch %ld sample %d: draws", systems[k], B, smp);
				cr_expect_eq(memcmp(a.dev, b.dev, sizeof(int) * (size_t)B), 0,
					     "%s batch %ld sample %d: devices", systems[k], B, smp);
				cr_expect_eq(memcmp(a.gpu, b.gpu, sizeof(int) * (size_t)B), 0,
					     "%s batch %ld sample %d: GPUs", systems[k], B, smp);
				cr_expect_eq(memcmp(a.nshard, b.nshard, sizeof(int) * (size_t)B), 0,
					     "%s batch %ld sample %d: slices", systems[k], B, smp);
				cr_expect(a.use_gpu == b.use_gpu && a.use_mem == b.use_mem &&
						  (a.tbt == b.tbt || (isinf(a.tbt) && isinf(b.tbt))),
					  "%s batch %ld sample %d: %.17g %.17g, %.17g %.17g, %.17g %.17g",
					  systems[k], B, smp, a.use_gpu, b.use_gpu, a.use_mem, b.use_mem,
					  a.tbt, b.tbt);
				for (long j = 0; j < B; j++)
					shards += a.nshard[j] > 0;
				over += b.use_mem > (system_has_memdev(&s.sys) ? s.mem.mem_capacity : 1e300) ||
					b.use_gpu > s.gpu.mem_capacity;
			}
		cr_expect_gt(kept->ws->kept[0].n, 0, "%s: sample 0 kept its placement", systems[k]);
		if (k == 1)
			cr_expect(shards > 0 && over > 0, "%s: %ld slices, %ld overfull samples",
				  systems[k], shards, over);
		if (k == 0)
			cr_expect_gt(over, 0, "%s: some batch overfills HBM", systems[k]);
		plan_free(kept);
		plan_free(fresh);
	}
}
