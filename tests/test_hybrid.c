/* test_hybrid.c: the hybrid host tier (system.hot_in_hbm, issue 29 item
 * 6): in the gather role, the requests whose whole cache fits in what
 * their GPU's HBM leaves after every request's index keys keep it there,
 * shortest first, and their device stages run on the GPU over no link. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"
#include "solve/plan.h" /* internal: which requests a sample keeps in HBM */
#include "solve_helpers.h"

/* A fixed context: every request stores s bytes on the host and sg (its
 * index keys) in HBM, and the GPUs take the same count n each; so each
 * GPU keeps min(n, floor((free - n sg) / s)) whole, by hand. */
Test(hybrid, the_requests_whole_in_hbm_by_hand)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-host-gather", 65536, NULL);
	s.sys.hot_in_hbm = HOT_ON;
	s.d.samples = 1;
	struct plan *p = plan(&s);
	double kv, idx;
	attn_storage(&s.m, &s.m.sp, 65536, design_mtp_layers(&s.d), &kv, &idx);
	/* DeepSeek-V3.2 indexes every layer: its KV on the host, its keys in HBM */
	cr_assert_float_eq(p->store[0], kv, 0.5);
	cr_assert_float_eq(p->store_gpu[0], idx, 0.5);
	double G = s.sys.gpus, free_gpu = p->free_gpu;
	int seen_some = 0;
	for (long n = 2; n <= 400; n *= 2) {
		struct sample_view v;
		struct kerr err;
		cr_assert_eq(plan_inspect(p, (double)(G * n), 1, 0, &v, &err), 0, "%s", err.msg);
		double per = floor((free_gpu - n * idx + 0.5) / kv);
		long hot = (long)fmax(0, fmin((double)n, per));
		cr_expect_eq(p->ws->nhot, (long)G * hot, "%ld per GPU: %ld whole in HBM, by hand %ld",
			     n, p->ws->nhot, (long)G * hot);
		cr_expect_float_eq(v.use_gpu, p->weights + n * idx + hot * kv, 1e-9 * v.use_gpu,
				   "%ld per GPU: HBM holds the weights, every key and %ld whole", n, hot);
		double host = G / s.sys.memdevs * (n - hot) * kv; /* a host serves 4 GPUs */
		cr_expect_float_eq(v.use_mem, host, 1e-9 * kv + 1, "%ld per GPU: the host holds the rest",
				   n);
		seen_some |= hot > 0 && hot < n;
	}
	cr_expect(seen_some, "some batch keeps part of its requests whole");
	plan_free(p);
}

/* With every request whole in HBM, the host runs nothing and the link
 * carries no gathered rows; without the tier, the same batch gathers
 * every request over it. */
Test(hybrid, a_batch_whole_in_hbm_crosses_no_link)
{
	static struct setup s;
	double busy_mem[2], busy_link[2];
	for (int on = 0; on < 2; on++) {
		load(&s, "deepseek-v3.2", "gpu-host-gather", 16384, NULL);
		s.sys.hot_in_hbm = on ? HOT_ON : HOT_OFF;
		struct plan *p = plan(&s);
		struct result r = eval(p, 16, 1);
		cr_assert(r.feasible, "%s", r.reason);
		if (on)
			cr_expect_eq(p->ws->nhot, 16, "every request is whole in HBM");
		busy_mem[on] = r.busy[RES_MEM], busy_link[on] = r.busy[RES_LINK];
		plan_free(p);
	}
	cr_expect_gt(busy_mem[0], 0, "without the tier the host gathers");
	cr_expect_eq(busy_mem[1], 0, "with it the host runs nothing");
	cr_expect_lt(busy_link[1], 0.01 * busy_link[0], "%g s on the link against %g s",
		     busy_link[1], busy_link[0]);
}

/* Only the gather role keeps whole caches in HBM: elsewhere the key is
 * refused with its reason. */
Test(hybrid, the_key_is_refused_outside_the_gather_role)
{
	static struct setup s;
	static const char *const systems[] = {"gpu-only", "gpu-karat"};
	for (int k = 0; k < 2; k++) {
		load(&s, "deepseek-v3.2", systems[k], 0, "agentic");
		s.sys.hot_in_hbm = HOT_ON;
		struct kerr err;
		cr_expect_neq(system_validate(&s.sys, NULL, &err), 0, "%s accepts it", systems[k]);
		cr_expect(strstr(err.msg, "hot_in_hbm") != NULL, "%s: %s", systems[k], err.msg);
	}
}

/* Where the hosts' capacity bounds the answer (MiniMax-M3, agentic, three
 * micro-batches), what
 * the tier keeps in HBM frees the hosts, so it admits more.  (Not an
 * invariant: a request whole in HBM moves its gather from the host to its
 * GPU, so a GPU-bound design can admit one or two fewer.) */
Test(hybrid, the_tier_admits_more_where_the_host_is_full)
{
	static struct setup s;
	double batch[2];
	for (int on = 0; on < 2; on++) {
		load(&s, "minimax-m3", "gpu-host-gather", 0, "agentic");
		s.sys.hot_in_hbm = on ? HOT_ON : HOT_OFF;
		struct plan *p = plan(&s);
		struct result r;
		struct kerr err;
		cr_assert_eq(plan_solve(p, 3, &r, &err), 0, "%s", err.msg);
		cr_assert(r.feasible, "%s", r.reason);
		if (!on)
			cr_expect_eq(r.bound, PB_MEMDEV, "without the tier the hosts are full");
		batch[on] = r.batch;
		plan_free(p);
	}
	cr_expect_gt(batch[1], batch[0], "%g with the tier, %g without", batch[1], batch[0]);
}
