/* test_price.c: what the solver's pieces cost (solve/price.c): the cache
 * side's times against karat ops, the GPU phases of every kind of layer
 * against the whole step, activity energy by hand, the sampled schedule,
 * the GPU's work, duplex in HBM and the gather role. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"
#include "solve/plan.h" /* internal: the plan's pricing */

#include "solve_helpers.h"

/* Every operator has a place in a layer's pipeline chain. */
Test(price, every_operator_has_a_phase)
{
	for (int k = 0; k < OP_N; k++)
		cr_expect_neq(phase_of[k], PH_NONE, "operator %s has no phase", op_table[k].name);
}

/* At 65,536 tokens and at 163,840 (beyond Qwen3's window), where one
 * request's top-k row is long enough that the GPUs' split selection
 * kernel (select.split) wins. */
Test(price, solver_cache_side_times_equal_ops)
{
	static struct setup s;
	static struct step st;
	const char *models[] = {"deepseek-v3.2", "glm-5.2", "minimax-m3", "qwen3-235b-a22b"};
	const char *systems[] = {"gpu-only", "gpu-karat"};
	const long ctx[] = {65536, 163840};
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < (i < 3 ? 4 : 2); k++) {
			load(&s, models[i], systems[k % 2], ctx[k / 2], NULL);
			s.d.mtp = 0;
			struct plan *p = plan(&s);
			double f[ATTN_MAX_SLOTS], b[ATTN_MAX_SLOTS], solver = 0;
			attn_request(&s.m, &s.m.sp, &p->layout, 0, ctx[k / 2], 1, f, b);
			for (int x = 0; x < p->layout.n; x++)
				solver += plan_slot_time(&p->slot_dev[x], &p->layout.s[x], f[x], b[x], 1);
			struct kbatch kb = {.requests = 1, .gpus = 1, .context = ctx[k / 2], .mtp = 0,
					    .sp = &s.m.sp};
			struct kerr err;
			cr_assert_eq(step_build(&s.m, &kb, &st, &err), 0, "%s", err.msg);
			const struct kdevice *dev = system_has_memdev(&s.sys) ? &s.mem : &s.gpu;
			double ops = 0;
			for (int x = 0; x < st.n; x++) {
				struct op_cost *o = &st.op[x];
				if (o->side != SIDE_CACHE)
					continue;
				roofline_op(o, dev, &s.up);
				ops += o->count * o->time;
			}
			cr_expect(near(solver, ops, 1e-9), "%s on %s at %ld: solver %g s, ops %g s",
				  models[i], systems[k % 2], ctx[k / 2], solver, ops);
			plan_free(p);
		}
}

/* Issue 12: every layer priced as its kind.  Summed over the layers, each
 * resource's work is what pricing every layer at the average gives (only
 * the schedule differs), and the fast schedule still equals the reference
 * on models with dense-FFN, dense-attention and index-sharing layers. */
Test(price, kinds_of_layer_keep_busy_times_and_fast_equals_exact)
{
	static struct setup a, b, c;
	const char *models[] = {"deepseek-v3.2", "glm-5.2", "minimax-m3"};
	const char *systems[] = {"gpu-only", "gpu-karat"};
	for (int mi = 0; mi < 3; mi++)
		for (int k = 0; k < 2; k++) {
			load(&a, models[mi], systems[k], 0, "agentic");
			load(&b, models[mi], systems[k], 0, "agentic");
			load(&c, models[mi], systems[k], 0, "agentic");
			a.d.samples = b.d.samples = c.d.samples = 8;
			b.d.average_layers = 1;
			c.d.exact = 1;
			struct plan *pa = plan(&a), *pb = plan(&b), *pc = plan(&c);
			cr_expect_gt(pa->nkinds, 1, "%s has one kind of layer", models[mi]);
			for (int m = 1; m <= 16; m += 5) {
				struct result x = eval(pa, 64, m), y = eval(pb, 64, m), z = eval(pc, 64, m);
				for (int r = 0; r < RES_N; r++)
					cr_expect(near(x.busy[r], y.busy[r], 1e-9), "%s %s m=%d %s: busy %.12g, "
						  "averaged %.12g", models[mi], systems[k], m, pipe_res_names[r],
						  x.busy[r], y.busy[r]);
				cr_expect(near(x.tbt_mean, z.tbt_mean, 1e-9) && near(x.tbt_p99, z.tbt_p99, 1e-9),
					  "%s %s m=%d: fast %.12g, exact %.12g", models[mi], systems[k], m,
					  x.tbt_mean, z.tbt_mean);
			}
			plan_free(pa), plan_free(pb), plan_free(pc);
		}
}

/* The GPU phases of the kinds, times their layers, plus the tail, are the
 * whole step's GPU side phase by phase. */
Test(price, gpu_phases_of_the_kinds_sum_to_the_whole_step)
{
	static struct setup s;
	static struct step whole;
	load(&s, "glm-5.2", "gpu-karat", 0, "agentic");
	struct plan *p = plan(&s);
	struct kerr err;
	const long n = 12;
	cr_assert_eq(plan_ensure_memo(p, p->ws, n + 1), 0);
	const double *ph = plan_gpu_phases(p, p->ws, n);
	cr_assert_not_null(ph, "%s", p->ws->fail.msg);
	struct kbatch kb = {.requests = (double)n * p->gpus, .gpus = p->gpus, .context = 1,
			    .mtp = s.d.mtp, .sp = s.d.sp, .gpu_only = 1,
			    .imbalance = system_moe_imbalance(&s.sys)};
	cr_assert_eq(step_build(&s.m, &kb, &whole, &err), 0, "%s", err.msg);
	double want[PH_N] = {0}, got[PH_N] = {0};
	for (int i = 0; i < whole.n; i++) {
		struct op_cost *o = &whole.op[i];
		roofline_op(o, &s.gpu, &s.up);
		/* one node: the all-to-all runs on the scale-up link */
		double t = o->side == SIDE_LINK
				   ? roofline_a2a(&s.up, o->bytes, o->kind == OP_DISPATCH)
				   : o->time;
		want[phase_of[o->kind]] += o->count * t;
	}
	cr_assert_leq(s.sys.gpus, s.sys.gpus_per_node);
	for (int k = 0; k <= p->nkinds; k++)
		for (int x = 0; x < PH_N; x++)
			got[x] += (k < p->nkinds ? p->kind_layers[k] : 1) * ph[k * PLAN_PH_STRIDE + x];
	for (int x = 0; x < PH_N; x++)
		cr_expect(near(got[x], want[x], 1e-12), "phase %d: kinds %.15g, whole %.15g", x,
			  got[x], want[x]);
	cr_expect_gt(want[PH_PRE], 0);
	plan_free(p);
}

/* Issue 12: activity-based energy.  GPU-only at one fixed context, one
 * micro-batch: every GPU runs the whole step of its share of the batch,
 * so the energy is G x (sum over the step's operators of FLOPs x J/FLOP of
 * their type + bytes x 8 x J/bit of HBM, the all-to-all's bytes at the
 * scale-up link's J/bit) + G x static power x step time; a fixed context
 * ingests nothing.  The H200's figures: 0.355 pJ per FP8 FLOP, 0.71 BF16,
 * 1.42 FP32, 3.5 pJ/bit, 110 W (its loaded idle). */
Test(price, activity_energy_by_hand)
{
	static struct setup s;
	static struct step st;
	load(&s, "deepseek-v3.2", "gpu-only", 32768, NULL);
	s.d.samples = 1;
	s.d.mtp = 0, s.d.accept = 0;
	cr_expect(near(s.gpu.e_flop[DT_FP8], 0.355e-12, 1e-12));
	cr_expect_eq(s.gpu.e_static, 110);
	struct plan *p = plan(&s);
	struct result r = eval(p, 64, 1);
	struct kerr err;
	struct kbatch kb = {.requests = 64, .gpus = s.sys.gpus, .context = 32768, .sp = &s.m.sp,
			    .imbalance = system_moe_imbalance(&s.sys)};
	cr_assert_eq(step_build(&s.m, &kb, &st, &err), 0, "%s", err.msg);
	double e = 0;
	for (int i = 0; i < st.n; i++) {
		const struct op_cost *o = &st.op[i];
		if (o->side == SIDE_LINK)
			e += o->count * o->bytes * 8 * s.up.energy_bit;
		else
			e += o->count * (o->flops * device_energy_flop(&s.gpu, o->dt) +
					 o->bytes * 8 * 3.5e-12);
	}
	double want = s.sys.gpus * (e + 110 * r.tbt_mean);
	cr_expect(near(r.energy_act, want, 1e-9), "plan %.12g J, by hand %.12g J", r.energy_act, want);
	cr_expect(near(r.power_act, want / r.tbt_mean, 1e-9));
	cr_expect(near(r.tok_per_w_act * r.j_per_tok_act, 1, 1e-12));
	/* TDP is an upper bound on the activity power */
	cr_expect_lt(r.power_act, r.tdp);
	plan_free(p);
	/* a device without [energy] figures: no activity estimate, no guess */
	load(&s, "deepseek-v3.2", "gpu-attacc", 32768, NULL);
	cr_assert(device_has_energy(&s.mem));
	memset(s.mem.e_flop, 0, sizeof s.mem.e_flop);
	s.mem.e_bit = s.mem.e_static = 0;
	p = plan(&s);
	r = eval(p, 64, 1);
	cr_expect(isnan(r.energy_act) && isnan(r.tok_per_w_act));
	plan_free(p);
}

/* Power counted whole and the cost per token, by hand from the files:
 * gpu-host-gather is 8 H200s (287.5 W node share each, $35,000 and an
 * $18,750 node share) and 2 host sockets (no share: the node's own, so
 * their 36 W static is taken back out of the activity power).  The node
 * view adds 8 x 287.5 - 2 x 36 = 2,228 W; capex 8 x 53,750 = $430,000;
 * the cost is capex over 4 years of 365.25 days plus the node power at
 * $0.096 per kWh, per million tokens. */
Test(price, node_power_and_cost_by_hand)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-host-gather", 32768, NULL);
	cr_expect_eq(s.gpu.node_power, 287.5);
	cr_expect_eq(s.mem.e_static, 36);
	struct plan *p = plan(&s);
	struct result r = eval(p, 64, 1);
	cr_expect(near(r.power_node - r.power_act, 2228, 1e-12), "%.12g", r.power_node - r.power_act);
	cr_expect_eq(r.capex, 430000);
	cr_expect(near(r.tok_per_w_node * r.power_node, r.throughput, 1e-12));
	double usd_s = 430000 / (4 * 365.25 * 86400) + r.power_node * 0.096 / 3.6e6;
	cr_expect(near(r.usd_per_mtok, usd_s / r.throughput * 1e6, 1e-12));
	/* the TDP view charges the sockets' 360 W each, the node view the node */
	cr_expect_eq(r.tdp, 8 * 700 + 2 * 360);
	plan_free(p);
	/* GPU + KARAT: its devices bring their price, enclosure share and power */
	static struct setup k;
	load(&k, "deepseek-v3.2", "gpu-karat", 32768, NULL);
	p = plan(&k);
	r = eval(p, 64, 1);
	cr_expect(near(r.power_node - r.power_act, 8 * 287.5 + 16 * 20, 1e-12));
	cr_expect_eq(r.capex, 8 * 53750 + 16 * (25500 + 2000));
	plan_free(p);
	/* without prices in the system, no cost; without [node], no node view */
	k.sys.usd_per_kwh = 0;
	p = plan(&k);
	r = eval(p, 64, 1);
	cr_expect(isnan(r.usd_per_mtok) && isfinite(r.power_node));
	plan_free(p);
	k.gpu.has_node = 0;
	p = plan(&k);
	r = eval(p, 64, 1);
	cr_expect(isnan(r.power_node) && isnan(r.capex) && isnan(r.usd_per_mtok));
	plan_free(p);
}

/* Issue 14 item 8: the timeline of one sampled batch is pipe_list's
 * schedule of exactly the tasks plan_sample priced: its makespan is the
 * sample's step time, every task runs once, after the one before it in its
 * micro-batch's chain, and no resource runs two tasks at once. */
Test(price, timeline_is_the_sampled_schedule)
{
	static struct setup s;
	load(&s, "glm-5.2", "gpu-karat", 0, "agentic");
	struct plan *p = plan(&s);
	struct kerr err;
	const int m = 3;
	long nev = m * ((long)s.m.layers * T_LAYER + (T_ALL - T_LAYER)), n;
	struct pipe_event *ev = malloc(sizeof *ev * (size_t)nev);
	double span;
	cr_assert_eq(plan_timeline(p, 96, m, 2, ev, nev, &n, &span, &err), 0, "%s", err.msg);
	cr_expect_eq(n, nev);
	struct sample_view v;
	cr_assert_eq(plan_inspect(p, 96, m, 2, &v, &err), 0, "%s", err.msg);
	cr_expect(near(span, v.tbt, 1e-9), "timeline %.12g, sample %.12g", span, v.tbt);
	double last_end[PIPE_MAX_MB] = {0}, busy_until[RES_N] = {0}, top = 0;
	for (long i = 0; i < n; i++) {
		const struct pipe_event *e = &ev[i];
		cr_assert(e->mb >= 0 && e->mb < m && e->res >= 0 && e->res < RES_N);
		cr_expect_geq(e->start, last_end[e->mb] - 1e-15, "event %ld starts before its chain's "
			      "last task ends", i);
		cr_expect_geq(e->start, busy_until[e->res] - 1e-15, "event %ld overlaps on %s", i,
			      pipe_res_names[e->res]);
		last_end[e->mb] = e->end;
		if (e->end > e->start) /* a zero-length task holds nothing */
			busy_until[e->res] = e->end;
		top = fmax(top, e->end);
		if (i)
			cr_expect_geq(e->start, ev[i - 1].start, "events in start order");
	}
	cr_expect(near(top, span, 1e-12));
	cr_expect_eq(plan_timeline(p, 96, m, 0, ev, nev - 1, &n, &span, &err), -1);
	free(ev);
	plan_free(p);
}

/* Issue 15: --microbatches auto skips a count whose GPU work alone bounds
 * its throughput below the best so far, at batches below the least one
 * whose caches alone failed.  The bound needs one micro-batch's GPU work
 * to be non-decreasing in its request count, and that batch to fail at
 * every count; and the pruned search must pick what solving every count
 * and keeping the best picks. */
Test(price, gpu_work_is_monotone_and_pruned_auto_equals_every_count)
{
	static struct setup s;
	const char *models[] = {"deepseek-v3.2", "glm-5.2", "minimax-m3", "llama-3.1-70b",
				"qwen3-235b-a22b"};
	const char *systems[] = {"gpu-only", "gpu-karat", "gpu-attacc"};
	for (int a = 0; a < 5; a++)
		for (int b = 0; b < 3; b++) {
			load(&s, models[a], systems[b], 0, "agentic");
			s.d.samples = 16;
			struct plan *p = plan(&s);
			double prev = 0;
			for (long n = 1; n <= 4096; n++) { /* the bound reads to 4,096 */
				double t = plan_gpu_work(p, p->ws, n);
				cr_assert(t >= prev, "%s %s: GPU work %.9g at %ld requests, %.9g at %ld",
					  models[a], systems[b], t, n, prev, n - 1);
				prev = t;
			}
			struct result best, x, autor;
			struct kerr err;
			for (int m = 1; m <= PIPE_MAX_MB; m++) {
				cr_assert_eq(plan_solve(p, m, &x, &err), 0, "%s", err.msg);
				if (m == 1 || (x.feasible && (!best.feasible || x.throughput > best.throughput)))
					best = x;
			}
			/* auto on a fresh plan: what its own probes found, no more */
			struct plan *q = plan(&s);
			cr_assert_eq(plan_solve(q, 0, &autor, &err), 0, "%s", err.msg);
			cr_expect(autor.mb == best.mb && autor.batch == best.batch &&
					  autor.throughput == best.throughput,
				  "%s %s: auto m=%d batch %.0f, every count m=%d batch %.0f", models[a],
				  systems[b], autor.mb, autor.batch, best.mb, best.batch);
			/* the batch whose caches failed fails at every count, on memory */
			if (b == 0 && best.feasible) /* capacity-bound: its caches fail above it */
				cr_expect(isfinite(q->ws->mem_fail), "%s on GPU-only: no batch failed on memory",
					  models[a]);
			for (int m = 1; isfinite(q->ws->mem_fail) && m <= 4; m *= 2) {
				struct result f = eval(p, q->ws->mem_fail, m);
				cr_expect(!f.feasible && (f.gpu_use > 1 || f.mem_use > 1),
					  "%s %s m=%d: batch %.0f fits (GPU %.4f, device %.4f)", models[a],
					  systems[b], m, q->ws->mem_fail, f.gpu_use, f.mem_use);
			}
			plan_free(p), plan_free(q);
		}
}

/* Issue 14 item 4: Duplex in the GPU's own HBM (system.memdev_in_hbm).
 * The caches share what the weights leave of the GPU's HBM, so the
 * largest batch the memory holds is GPU-only's (the same bytes in the same
 * capacity); the devices add no TDP; and the key is refused where it
 * cannot hold. */
Test(price, duplex_in_hbm_shares_the_gpus_capacity_and_tdp)
{
	static struct setup g, d;
	load(&g, "deepseek-v3.2", "gpu-only", 65536, NULL);
	load(&d, "deepseek-v3.2", "gpu-duplex-hbm", 65536, NULL);
	g.d.slo = d.d.slo = 1000; /* capacity alone decides */
	struct plan *pg = plan(&g), *pd = plan(&d);
	struct result rg, rd;
	struct kerr err;
	cr_assert_eq(plan_solve(pg, 1, &rg, &err), 0, "%s", err.msg);
	cr_assert_eq(plan_solve(pd, 1, &rd, &err), 0, "%s", err.msg);
	cr_expect(rg.feasible && rd.feasible && rg.batch > 8, "%s / %s", rg.reason, rd.reason);
	cr_expect_eq(rd.batch, rg.batch, "Duplex in HBM holds %g requests, GPU-only %g", rd.batch,
		     rg.batch);
	struct result over = eval(pd, rd.batch + 8, 1);
	cr_expect(!over.feasible && strstr(over.reason, "the GPU's HBM less reserve and weights"),
		  "%s", over.reason);
	cr_expect_eq(rd.tdp, 8 * d.gpu.tdp, "TDP %g W: the devices' own must not be added", rd.tdp);
	plan_free(pg), plan_free(pd);
	/* one device per GPU, and only with a memory device */
	struct ksystem sys = d.sys;
	sys.memdevs = 16;
	cr_expect_neq(system_validate(&sys, NULL, &err), 0);
	cr_expect(strstr(err.msg, "must equal system.gpus"), "%s", err.msg);
	sys = g.sys;
	sys.memdev_in_hbm = IN_HBM_YES;
	cr_expect_neq(system_validate(&sys, NULL, &err), 0);
	cr_expect(strstr(err.msg, "memdev is none"), "%s", err.msg);
}

/* Issue 14 item 4: host offload with the GPU selecting and attending
 * (system.memdev_role = gather, InfiniGen/ShadowKV style).  The host keeps
 * the KV rows and gathers the selected ones; the GPU runs the index write,
 * scan, top-k (before the link) and the attention (after the rows come
 * back); the link carries the rows back instead of the output, and the
 * attention query no longer goes out. */
Test(price, gather_role_attends_on_the_gpu_after_the_rows_come_back)
{
	static struct setup s, a;
	load(&s, "deepseek-v3.2", "gpu-host-gather", 32768, NULL);
	s.sys.hot_in_hbm = HOT_OFF; /* every request gathered (test_hybrid.c: the tier) */
	load(&a, "deepseek-v3.2", "gpu-host-offload", 32768, NULL);
	struct plan *p = plan(&s), *pa = plan(&a);
	int seen = 0;
	for (int k = 0; k < p->layout.n; k++) {
		enum op_kind op = p->layout.s[k].kind;
		const struct plan_slot_rate *sd = &p->slot_dev[k];
		int first_write = k % ATTN_SLOTS_PER_CLASS == 0;
		if (op == OP_GATHER || (op == OP_CACHE_WRITE && first_write))
			cr_expect(!sd->on_gpu, "slot %d (%s) left the host", k, op_table[op].name);
		else
			cr_expect(sd->on_gpu, "slot %d (%s) is not on the GPU", k, op_table[op].name);
		cr_expect_eq(sd->after, op == OP_ATTENTION, "slot %d (%s): after %d", k,
			     op_table[op].name, sd->after);
		if (op != OP_ATTENTION)
			continue;
		int c = p->layout.s[k].lc;
		seen++;
		cr_expect(p->post_b[k] > 0);
		cr_expect(near(p->cls_back[c], p->post_b[k] * p->layout.s[k].layers, 1e-12),
			  "class %d: back %.6g, rows %.6g", c, p->cls_back[c],
			  p->post_b[k] * p->layout.s[k].layers);
		double f[ATTN_MAX_SLOTS], b[ATTN_MAX_SLOTS]; /* every request is at 32K */
		attn_request(s.d.m, s.d.sp, &p->layout, 0, 32768, p->q, f, b);
		cr_expect(near(p->post_b[k], b[k - 1], 1e-12) && p->layout.s[k - 1].kind == OP_GATHER,
			  "the rows back are the gather's %.6g B, not %.6g", b[k - 1], p->post_b[k]);
		cr_expect(p->cls_back[c] > p->layout.cls_back[c],
			  "the rows (%.3g B) should outweigh the output (%.3g B)", p->cls_back[c],
			  p->layout.cls_back[c]);
		cr_expect(near(p->cls_out[c], pa->cls_out[c] - p->layout.cls_query[c] +
						      attn_ids_bytes(s.d.m, s.d.sp, &p->layout, (enum lclass)c,
								     32768, p->q) - p->layout.cls_index[c],
			       1e-9), "class %d: out %.6g", c, p->cls_out[c]);
	}
	cr_expect_gt(seen, 0);
	cr_expect(p->keys_on_gpu && p->has_post);
	/* one sample: the attention is in the post-attention task, the host's
	 * task is the gather alone */
	struct pipe_out po;
	double ug, um;
	cr_assert_eq(plan_ensure_batch(p, p->ws, 64), 0);
	cr_assert_eq(plan_ensure_memo(p, p->ws, 64), 0);
	double t = plan_sample(p, p->ws, 16, 1, 0, 0, 1, &po, &ug, &um);
	cr_assert(isfinite(t), "%s", p->ws->fail.msg);
	const struct plan_mb *l = &p->ws->mbl[0];
	double fbp = 0, fb = 0;
	for (int c = 0; c < LC_N; c++)
		fbp += l->fbp[c], fb += l->fb[c];
	cr_expect(fbp > 0 && fb > 0, "post %.3g, pre %.3g", fbp, fb);
	plan_free(p), plan_free(pa);
	/* the role needs a memory device */
	struct ksystem sys = s.sys;
	struct kerr err;
	snprintf(sys.memdev, sizeof sys.memdev, "none");
	sys.memdevs = 0;
	cr_expect_neq(system_validate(&sys, NULL, &err), 0);
	cr_expect(strstr(err.msg, "memdev_role is gather but system.memdev is none"), "%s", err.msg);
	/* a dense attention gathers nothing: the whole cache it reads comes back */
	load(&s, "qwen3-235b-a22b", "gpu-host-gather", 4096, NULL);
	p = plan(&s);
	for (int k = 0; k < p->layout.n; k++)
		if (p->slot_dev[k].after) {
			double f[ATTN_MAX_SLOTS], b[ATTN_MAX_SLOTS];
			attn_request(s.d.m, s.d.sp, &p->layout, 0, 4096, p->q, f, b);
			cr_expect(b[k - 1] == 0 && near(p->post_b[k], b[k], 1e-12),
				  "dense: back %.6g, its attention reads %.6g", p->post_b[k], b[k]);
		}
	plan_free(p);
}

/* A fixed context draws the same batch in every sample, so the evaluator
 * prices sample 0 for all of them; each sample priced on its own (as
 * plan_inspect does) must give that same step time and bytes. */

/* Issue 29: a device whose top-k runs on other units than its scan
 * (select.pipelined) overlaps one request's top-k with the next one's
 * scan.  By hand, 2 layers, max join, no overheads:
 *  - scan 3e12 FLOPs at 1e-12 s = 3 s, 1e9 B at 1e-9 s = 1 s: 3 s a layer;
 *  - top-k 1e10 at 1e-10 = 1 s, 5e8 B = 0.5 s: 1 s a layer;
 *  - their memory together: 1.5 s a layer.
 * Serial: 2 x (3 + 1) = 8 s.  Piped over 4 requests: 6 + 2 / 4 = 6.5 s;
 * one request: no overlap, 8 s.  With the top-k's bytes at 2e8 and a
 * 0.5e12-FLOP scan, both stages take 1 s a layer but the memory 1.2 s:
 * 2.4 + 2 / 4 = 2.9 s, against 4 in series. */
Test(price, pipelined_scan_and_topk_by_hand)
{
	static struct plan p;
	static struct kdevice dev;
	p.has_mem = 1;
	dev.select_pipelined = 1;
	struct attn_layout lay = {.n = ATTN_SLOTS_PER_CLASS};
	struct plan_slot_rate sd[ATTN_SLOTS_PER_CLASS];
	struct plan_vmap map[ATTN_SLOTS_PER_CLASS];
	for (int s = 0; s < lay.n; s++) {
		lay.s[s].layers = 2, lay.s[s].lc = LC_SPARSE;
		sd[s] = (struct plan_slot_rate){.ic = 1e-12, .im = 1e-9, .dev = &dev};
		map[s] = (struct plan_vmap){.f = 2 * s, .b = 2 * s + 1};
	}
	sd[3].ic = 1e-10;
	double v[2 * ATTN_SLOTS_PER_CLASS] = {0};
	v[4] = 3e12, v[5] = 1e9, v[6] = 1e10, v[7] = 5e8;
	cr_assert(plan_slots_piped(sd, &lay, 2));
	cr_expect_not(plan_slots_piped(sd, &lay, 3));
	double per[LC_N];
	cr_expect(near(plan_bucket_time(&p, &lay, sd, map, v, 4, W_DEVICE, per), 6.5, 1e-12));
	cr_expect(near(per[LC_SPARSE], 6.5, 1e-12));
	cr_expect(near(plan_bucket_time(&p, &lay, sd, map, v, 1, W_DEVICE, NULL), 8, 1e-12));
	v[4] = 0.5e12, v[7] = 2e8;
	cr_expect(near(plan_bucket_time(&p, &lay, sd, map, v, 4, W_DEVICE, NULL), 2.9, 1e-12));
	dev.select_pipelined = 0; /* the GPU's way: in series */
	cr_expect(near(plan_bucket_time(&p, &lay, sd, map, v, 4, W_DEVICE, NULL), 4, 1e-12));
}

/* The pipelined selection never takes longer than the serial one: on the
 * zoo's KARAT and CXL-PNM designs, every batch and micro-batch count
 * tried, the P99 and mean step with select.pipelined = 1 are at most
 * those with 0, and strictly less somewhere. */
Test(price, pipelined_selection_never_exceeds_serial)
{
	static struct setup a, b;
	const char *systems[] = {"gpu-karat", "gpu-cxl-pnm"};
	for (int k = 0; k < 2; k++) {
		load(&a, "deepseek-v3.2", systems[k], 0, "agentic");
		load(&b, "deepseek-v3.2", systems[k], 0, "agentic");
		cr_assert_eq(a.mem.select_pipelined, 1, "%s pipelines its selection", systems[k]);
		b.mem.select_pipelined = 0;
		a.d.samples = b.d.samples = 8;
		struct plan *pa = plan(&a), *pb = plan(&b);
		int less = 0;
		for (long B = 16; B <= 1024; B *= 4)
			for (int m = 1; m <= 4; m++) {
				struct result x = eval(pa, (double)B, m), y = eval(pb, (double)B, m);
				cr_expect_leq(x.tbt_p99, y.tbt_p99 * (1 + 1e-12), "%s B=%ld m=%d",
					      systems[k], B, m);
				cr_expect_leq(x.tbt_mean, y.tbt_mean * (1 + 1e-12));
				less += x.tbt_p99 < y.tbt_p99 * (1 - 1e-9);
			}
		cr_expect_gt(less, 0, "%s: pipelining never helped", systems[k]);
		plan_free(pa), plan_free(pb);
	}
}

/* Issue 29 item 6: in the gather role the dense-attention layers' caches
 * stay in HBM, where the GPU attends over them; nothing of theirs crosses
 * the link.  MiniMax-M3's 3 dense layers keep 4 KV heads x 128 dims x
 * (K and V) x 1 B (FP8) = 1,024 B per token each: at 32,768 tokens,
 * 3 x 32,768 x 1,024 = 100,663,296 B of each request sit in HBM. */
Test(price, gather_role_keeps_dense_layers_in_hbm)
{
	static struct setup s;
	load(&s, "minimax-m3", "gpu-host-gather", 32768, NULL);
	struct plan *p = plan(&s);
	cr_assert(p->dense_in_hbm && p->gpu_stores);
	double kvd, idxd, kv, idx;
	attn_storage_of(s.d.m, s.d.sp, 32768, design_mtp_layers(&s.d), 1u << LC_DENSE, &kvd, &idxd);
	attn_storage(s.d.m, s.d.sp, 32768, design_mtp_layers(&s.d), &kv, &idx);
	cr_expect_eq(kvd, 100663296.0);
	cr_expect_eq(idxd, 0);
	cr_expect(near(p->store[0] + p->store_gpu[0], kv + idx, 1e-12), "every byte kept once");
	cr_expect_geq(p->store_gpu[0], kvd, "the dense layers' KV in HBM");
	cr_expect(near(p->store[0], kv - kvd, 1e-12), "the host keeps the sparse layers' KV");
	int dense = 0;
	for (int k = 0; k < p->layout.n; k++)
		if (p->layout.s[k].lc == LC_DENSE) {
			dense++;
			cr_expect(p->slot_dev[k].on_gpu && !p->slot_dev[k].after, "dense slot %d", k);
		}
	cr_expect_gt(dense, 0);
	cr_expect_eq(p->cls_out[LC_DENSE], 0);
	cr_expect_eq(p->cls_back[LC_DENSE], 0);
	/* the offload role keeps them on the host */
	load(&s, "minimax-m3", "gpu-host-offload", 32768, NULL);
	struct plan *q = plan(&s);
	cr_expect(!q->dense_in_hbm);
	cr_expect_gt(q->cls_out[LC_DENSE] + q->cls_back[LC_DENSE], 0);
	plan_free(p), plan_free(q);
}
