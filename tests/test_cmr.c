/* test_cmr.c: CMR's assignment of a GPU's requests to micro-batches
 * (solve/assign.c): longest context first, to the micro-batch
 * whose load on the request's device is lowest, counts within one of
 * each other; never worse balanced than arrival order; and its integer
 * keys choose as its comparisons do. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "karat.h"
#include "solve/plan.h" /* internal: plan.ctx_top, to force the comparisons */

#include "solve_helpers.h"

/* Largest context sum on one (micro-batch, device). */
static double peak(const struct sample_view *v, int m, int ndev)
{
	static double load[16 * 1024];
	memset(load, 0, sizeof(double) * (size_t)m * (size_t)ndev);
	double pk = 0;
	for (long j = 0; j < v->n; j++) {
		double *l = &load[v->mb[j] * ndev + v->dev[j]];
		*l += v->ctx[j];
		pk = *l > pk ? *l : pk;
	}
	return pk;
}

Test(cmr, is_never_worse_balanced_than_arrival_order)
{
	static struct setup a, b;
	load(&a, "deepseek-v3.2", "gpu-karat", 0, "mooncake-conv");
	load(&b, "deepseek-v3.2", "gpu-karat", 0, "mooncake-conv");
	a.d.sched = SCHED_OFMS, b.d.sched = SCHED_OFMS_CMR;
	a.d.samples = b.d.samples = 20;
	struct plan *pa = plan(&a), *pb = plan(&b);
	int ndev = (int)a.sys.memdevs, better = 0, total = 0;
	for (int m = 2; m <= 16; m += 2)
		for (double B = 16; B <= 1000; B *= 2)
			for (int smp = 0; smp < 20; smp++) {
				struct sample_view va, vb;
				struct kerr err;
				cr_assert_eq(plan_inspect(pa, B, m, smp, &va, &err), 0);
				double naive = peak(&va, m, ndev);
				cr_assert_eq(plan_inspect(pb, B, m, smp, &vb, &err), 0);
				double cmr = peak(&vb, m, ndev);
				cr_expect_leq(cmr, naive, "m=%d B=%g: cmr %g > naive %g", m, B, cmr, naive);
				/* equal counts per micro-batch on each GPU, +-1 */
				int cnt[8][16] = {{0}};
				for (long j = 0; j < vb.n; j++)
					cnt[vb.gpu[j]][vb.mb[j]]++;
				for (int g = 0; g < 8; g++)
					for (int i = 1; i < m; i++)
						cr_expect_leq(abs(cnt[g][i] - cnt[g][0]), 1);
				if (B / ndev >= 2 * m) /* room to rebalance */
					better += cmr < naive, total++;
			}
	cr_expect_gt(better * 2, total, "CMR should usually balance better (%d of %d)", better,
		     total);
	plan_free(pa);
	plan_free(pb);
}

/* The same micro-batch for every request of sample smp at batch B. */
static void same_choices(struct plan *keys, struct plan *cmp, double B, int m, int smp,
			 const char *sys, const char *wl)
{
	struct sample_view x, y;
	struct kerr err;
	cr_assert_eq(plan_inspect(keys, B, m, smp, &x, &err), 0, "%s", err.msg);
	cr_assert_eq(plan_inspect(cmp, B, m, smp, &y, &err), 0, "%s", err.msg);
	cr_expect_eq(memcmp(x.mb, y.mb, sizeof(int) * (size_t)x.n), 0,
		     "%s %s m=%d B=%g sample %d: micro-batches differ", sys, wl, m, B, smp);
	cr_expect(x.tbt == y.tbt, "%.17g %.17g", x.tbt, y.tbt);
}

/* Where every context is a whole number of tokens, CMR picks a request's
 * micro-batch as the least of integer keys packing (load, count, index)
 * (assign.c), over the whole batch, or GPU by GPU in a large one where
 * each device belongs to one GPU; otherwise by comparing the three in
 * turn, over the whole batch.  Over agentic requests (many cut to the
 * window: equal loads, ties decided by count and index) and a
 * trace workload, with devices of their own, without devices and with
 * two devices for eight GPUs, every way chooses the same micro-batch for
 * every request. */
Test(cmr, integer_keys_choose_as_the_comparisons_do)
{
	static struct setup s;
	static const char *const sys[] = {"gpu-karat", "gpu-only", "gpu-host-gather"},
			  *const wl[] = {"agentic", "azure-conv"};
	static const int ms[] = {2, 3, 5, 8, 16};
	static const double bs[] = {7, 33, 100, 517, 2000};
	for (int k = 0; k < 6; k++) {
		load(&s, "deepseek-v3.2", sys[k / 2], 0, wl[k % 2]);
		s.d.sched = SCHED_OFMS_CMR, s.d.samples = 4;
		struct plan *keys = plan(&s), *cmp = plan(&s);
		cr_assert_geq(keys->ctx_top, 0, "%s: whole-token contexts", wl[k % 2]);
		cmp->ctx_top = -1; /* as if some context were not whole */
		for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
			for (size_t b = 0; b < sizeof bs / sizeof *bs; b++)
				for (int smp = 0; smp < 4; smp++)
					same_choices(keys, cmp, bs[b], ms[a], smp, sys[k / 2],
						     wl[k % 2]);
		for (int a = 0; a < 2; a++) /* past PLAN_CMR_BY_GPU_MIN: by GPU */
			same_choices(keys, cmp, a ? 40000 : 20011, a ? 16 : 3, a, sys[k / 2],
				     wl[k % 2]);
		plan_free(keys);
		plan_free(cmp);
	}
}
