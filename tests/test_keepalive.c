/* test_keepalive.c: prefix reuse that costs capacity (issue 29 item 4).
 * A workload's [keepalive] table (what keeping idle caches buys), its
 * errors, the Weka table recomputed from the trace, and the reuse each
 * system's spare capacity allows: by hand, monotone, and the host tier. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"
#include "solve/plan.h" /* internal: plan_reuse */

#include "solve_helpers.h"

#define HEAD "[workload]\nname = t\norigin = synthetic\nprefix_reuse = 0.95\n" \
	     "[input]\ndist = fixed\nvalue = 1000\n[output]\ndist = fixed\nvalue = 100\n"

static int load_text(const char *text, struct kworkload *w, struct kerr *err)
{
	return workload_load(tmp_ini_str(0, text), w, err);
}

/* Two rows, written out of order: keeping caches 10 s reuses 0.5 and
 * leaves each idle 5 s on average; 100 s reuses 0.9, idle 20 s.  A mean
 * idle time of 12.5 s lies half way along the second segment: kept 55 s,
 * reuse 0.7.  2.5 s is half way from the origin: 5 s, 0.25.  Past the
 * table: its last row.  forever (or no table): prefix_reuse. */
Test(keepalive, table_interpolates_by_hand)
{
	struct kworkload w;
	struct kerr err;
	cr_assert_eq(load_text(HEAD "[keepalive]\n100s = 0.9, 20 s\n10s = 0.5, 5 s\n", &w, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(w.ka.n, 2);
	cr_expect(w.ka.t[0] == 10 && w.ka.t[1] == 100, "rows sorted by their time");
	double keep, r = workload_reuse_within(&w, 12.5, &keep);
	cr_expect(near(r, 0.7, 1e-12) && near(keep, 55, 1e-12), "reuse %g kept %g s", r, keep);
	r = workload_reuse_within(&w, 2.5, &keep);
	cr_expect(near(r, 0.25, 1e-12) && near(keep, 5, 1e-12), "reuse %g kept %g s", r, keep);
	r = workload_reuse_within(&w, 1e9, &keep);
	cr_expect(r == 0.9 && keep == 100, "past the table: %g, %g s", r, keep);
	r = workload_reuse_within(&w, 0, &keep);
	cr_expect(r == 0 && keep == 0, "no room: %g, %g s", r, keep);
	w.keepalive = WK_FOREVER;
	r = workload_reuse_within(&w, 1, &keep);
	cr_expect(r == 0.95 && isinf(keep), "forever: prefix_reuse (%g)", r);
	w.keepalive = WK_CAPACITY, w.prefix_reuse = 0.6;
	r = workload_reuse_within(&w, 12.5, &keep);
	cr_expect(r == 0.6, "never above prefix_reuse: %g", r);
	workload_free(&w);
	cr_assert_eq(load_text(HEAD, &w, &err), 0, "%s", err.msg);
	r = workload_reuse_within(&w, 0, &keep);
	cr_expect(r == 0.95 && isinf(keep), "without a table: prefix_reuse (%g)", r);
	workload_free(&w);
}

Test(keepalive, bad_rows_name_the_line)
{
	static const struct {
		const char *rows, *msg;
		int line;
	} bad[] = {
		{"10 = 0.5, 5 s\n", "the key is a keep-alive time", 12},
		{"10s = 0.5\n", "is not 'REUSE, IDLE'", 12},
		{"10s = 0.5, 5 s, 3\n", "is not 'REUSE, IDLE'", 12},
		{"10s = 1.5, 5 s\n", "is not a share in [0, 1]", 12},
		{"10s = 0.5, 11 s\n", "cannot stay idle 11 s", 12},
		{"10s = x, 5 s\n", "reuse:", 12},
		{"10s = 0.5, 5 s\n20s = 0.4, 6 s\n", "cannot reuse less", 13},
		{"10s = 0.5, 5 s\n20s = 0.6, 4 s\n", "cannot reuse less or leave them idle", 13},
		{"10s = 0.5, 5 s\n10000ms = 0.5, 5 s\n", "10 s is given twice", 13},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char text[512];
		snprintf(text, sizeof text, HEAD "[keepalive]\n%s", bad[i].rows);
		struct kworkload w;
		struct kerr err;
		cr_expect_eq(load_text(text, &w, &err), -1, "case %zu loaded", i);
		cr_expect(strstr(err.msg, bad[i].msg) != NULL, "case %zu: %s", i, err.msg);
		char at[16];
		snprintf(at, sizeof at, ".ini:%d:", bad[i].line);
		cr_expect(strstr(err.msg, at) != NULL, "case %zu names line %d: %s", i, bad[i].line,
			  err.msg);
	}
	struct kworkload w;
	struct kerr err;
	cr_expect_eq(load_text("[workload]\nname = t\norigin = synthetic\nkeepalive = always\n", &w, &err), -1);
	cr_expect(strstr(err.msg, "capacity") != NULL, "%s", err.msg);
}

/* The shipped table against the trace, computed here on its own: per
 * session (trace_id, agent_id) in call order, a call whose think time
 * (negative as 0) is within KEEP and whose context grew brings only what
 * exceeds the previous context and output, else its whole context; each
 * call then waits idle until its session's next call, at most KEEP (a
 * session's last call KEEP).  The CSV has no quoting (DERIVED.txt). */
#define MAX_SESSIONS 4096
Test(keepalive, weka_table_is_the_trace)
{
	const char *csv = KARAT_DATADIR "/../shared/traces/weka-agentic-coding/weka_calls.csv";
	if (traces_absent("weka_table_is_the_trace", csv)) {
		cr_skip_test("skipped: ../shared/traces is absent");
		return;
	}
	struct kworkload w;
	struct kerr err;
	cr_assert_eq(zoo_load_workload("agentic-weka", &w, &err), 0, "%s", err.msg);
	cr_assert_gt(w.ka.n, 5, "agentic-weka has a [keepalive] table");
	int n = w.ka.n;
	FILE *f = fopen(csv, "r");
	cr_assert_not_null(f);
	static char key[MAX_SESSIONS][48];
	static double last_ctx[MAX_SESSIONS], last_out[MAX_SESSIONS];
	double newt[WL_MAX_KEEPALIVE] = {0}, idle[WL_MAX_KEEPALIVE] = {0}, ctx_sum = 0;
	long calls = 0;
	int ns = 0;
	char line[512];
	cr_assert_not_null(fgets(line, sizeof line, f)); /* the header */
	while (fgets(line, sizeof line, f)) {
		char *col[11], *s = line;
		int k = 0;
		for (; k < 11 && s; k++) {
			col[k] = s;
			s = strchr(s, ',');
			if (s)
				*s++ = 0;
		}
		cr_assert_eq(k, 11, "row %ld has 11 columns", calls + 2);
		char id[48];
		snprintf(id, sizeof id, "%s|%s", col[0], col[1]);
		double ctx = atof(col[4]), out = atof(col[5]), think = fmax(atof(col[7]), 0);
		int j = 0;
		while (j < ns && strcmp(key[j], id) != 0)
			j++;
		calls++, ctx_sum += ctx;
		if (j == ns) { /* the session's first call: all new */
			cr_assert_lt(ns, MAX_SESSIONS);
			snprintf(key[ns++], sizeof key[0], "%s", id);
			for (int i = 0; i < n; i++)
				newt[i] += ctx;
		} else {
			double prev = last_ctx[j] + last_out[j];
			for (int i = 0; i < n; i++) {
				int kept = think <= w.ka.t[i] && ctx > last_ctx[j];
				newt[i] += kept ? fmax(ctx - prev, 0) : ctx;
				idle[i] += fmin(think, w.ka.t[i]);
			}
		}
		last_ctx[j] = ctx, last_out[j] = out;
	}
	fclose(f);
	cr_expect_eq(calls, 49334);
	cr_expect_eq(ns, 773, "%d sessions", ns);
	for (int i = 0; i < n; i++) {
		double reuse = 1 - newt[i] / ctx_sum, mean = (idle[i] + ns * w.ka.t[i]) / calls;
		cr_expect(fabs(reuse - w.ka.reuse[i]) <= 0.00005, "%g s: reuse %.5f, table %.4f",
			  w.ka.t[i], reuse, w.ka.reuse[i]);
		cr_expect(fabs(mean - w.ka.idle[i]) <= 0.005, "%g s: idle %.3f s, table %.2f s",
			  w.ka.t[i], mean, w.ka.idle[i]);
	}
	workload_free(&w);
}

/* More room never lowers the reuse: over the shipped table, finely. */
Test(keepalive, reuse_is_monotone_in_the_room)
{
	struct kworkload w;
	struct kerr err;
	cr_assert_eq(zoo_load_workload("agentic", &w, &err), 0, "%s", err.msg);
	double last = -1, last_keep = -1;
	for (double s = 0; s < 3000; s += 0.37) {
		double keep, r = workload_reuse_within(&w, s, &keep);
		cr_expect(r >= last && keep >= last_keep, "at %g s: %g after %g", s, r, last);
		last = r, last_keep = keep;
	}
	cr_expect(last <= w.prefix_reuse);
	workload_free(&w);
}

/* GPU-only, DeepSeek-V3.2, agentic at batch B: the room idle caches have
 * is the HBM the weights leave less B mean caches; calls finish at
 * B (1 + a d) / out per step of the SLO; each waits idle as large as a
 * mean cache.  So the mean idle time allowed is
 * room x slo / (B (1 + a d) / out x cache), which the table turns into the
 * reuse; the host tier adds its 1.5 TB of DRAM per node to the room, then
 * its 28 TB of NVMe; the bytes they return are the admissions' caches
 * times the reuse they add.  With
 * keepalive = forever, the old ingest: (1 - prefix_reuse) of each. */
Test(keepalive, gpu_only_reuse_by_hand)
{
	static struct setup s;
	load(&s, "deepseek-v3.2", "gpu-only", 0, "agentic");
	struct plan *p = plan(&s);
	long B = 16;
	double G = s.sys.gpus, slo = s.d.slo, out = workload_mean_output(&s.wl);
	double adm = (1 + s.d.accept * s.d.mtp) / out;
	double cache = p->mean_store + p->mean_store_gpu;
	double room = G * (p->cap_gpu - p->weights) - B * cache;
	cr_assert_gt(room, 0, "batch %ld leaves HBM to idle caches", B);
	double per_s = B * adm / slo * cache, keep, keep_h;
	double near_r = workload_reuse_within(&s.wl, room / per_s, &keep);
	double host = 1.5e12 * G / s.sys.gpus_per_node, ssd = 28e12 * G / s.sys.gpus_per_node;
	double keep_s, host_r = workload_reuse_within(&s.wl, (room + host) / per_s, &keep_h);
	double all_r = workload_reuse_within(&s.wl, (room + host + ssd) / per_s, &keep_s);
	struct plan_reuse u;
	plan_reuse(p, B, &u);
	cr_expect(near(u.near, near_r, 1e-12) && near(u.keep_near, keep, 1e-12),
		  "near: %g (hand %g)", u.near, near_r);
	cr_expect(near(u.host, host_r, 1e-12) && near(u.keep_host, keep_h, 1e-12),
		  "with the host DRAM: %g (hand %g)", u.host, host_r);
	cr_expect(near(u.reuse, all_r, 1e-12) && near(u.keep_s, keep_s, 1e-12),
		  "with its NVMe: %g (hand %g)", u.reuse, all_r);
	cr_expect(u.reuse > u.host && u.host > u.near, "each tier adds reuse: %g > %g > %g",
		  u.reuse, u.host, u.near);
	double kv, idx;
	attn_storage(&s.m, &s.m.sp, fmin(workload_mean_input(&s.wl), s.m.max_context),
		     design_mtp_layers(&s.d), &kv, &idx);
	cr_expect(near(u.ingest, B * adm * (1 - u.reuse) * (kv + idx), 1e-12));
	cr_expect(near(u.reload, B * adm * (u.reuse - u.near) * (kv + idx), 1e-12));
	cr_expect(near(u.from_ssd, B * adm * (u.reuse - u.host) * (kv + idx), 1e-12));
	plan_free(p);
	/* a slow disk bounds the step: every sample waits for its reads */
	s.sys.host_ssd_read = 1e6;
	p = plan(&s);
	struct result r = eval(p, B, 1);
	double floor_s = u.from_ssd / (1e6 * G / s.sys.gpus_per_node);
	cr_expect(r.tbt_mean >= floor_s * (1 - 1e-12) && r.tbt_mean <= floor_s * (1 + 1e-9),
		  "step %g s, the NVMe's reads %g s", r.tbt_mean, floor_s);
	plan_free(p);
	s.sys.host_ssd_read = 48e9;
	s.wl.keepalive = WK_FOREVER;
	p = plan(&s);
	plan_reuse(p, B, &u);
	cr_expect(u.reuse == s.wl.prefix_reuse && u.reload == 0);
	cr_expect(near(u.ingest, B * adm * (1 - s.wl.prefix_reuse) * (kv + idx),
		       1e-12));
	plan_free(p);
}

/* A larger batch leaves less room: reuse never rises with it, on every
 * system, and the host tier never gives less than HBM alone. */
Test(keepalive, reuse_falls_with_the_batch)
{
	static struct setup s;
	const char *systems[] = {"gpu-only", "gpu-karat", "gpu-host-gather", "gpu-attacc"};
	for (int k = 0; k < 4; k++) {
		load(&s, "glm-5.2", systems[k], 0, "agentic");
		struct plan *p = plan(&s);
		double last = 2;
		for (long B = 1; B < 20000; B = B * 5 / 4 + 1) {
			struct plan_reuse u;
			plan_reuse(p, B, &u);
			cr_expect(u.reuse <= last && u.reuse >= u.near, "%s at %ld: %g after %g",
				  systems[k], B, u.reuse, last);
			last = u.reuse;
		}
		cr_expect(last < s.wl.prefix_reuse, "%s: a full memory costs reuse", systems[k]);
		plan_free(p);
	}
}

/* The host tier is a GPU-only option. */
Test(keepalive, host_cache_is_for_gpu_only)
{
	static struct setup s;
	struct kerr err;
	const char *sets[] = {"system.host_cache=1TB"};
	struct design_spec spec = DESIGN_SPEC_INIT;
	spec.model = "glm-5.2", spec.system = "gpu-karat", spec.workload = "agentic";
	spec.sets = sets, spec.nsets = 1;
	cr_expect_lt(design_assemble(&spec, &s, &err), 0);
	cr_expect(strstr(err.msg, "system.host_cache and host_ssd are for systems without memory devices"),
		  "%s", err.msg);
	design_free(&s);
	/* a disk tier needs its host DRAM and its read rate; host_ssd = 0
	 * turns the disk off (its read rate then reads nothing) */
	static const struct {
		const char *set, *msg;
	} bad[] = {
		{"system.host_cache=0", "system.host_ssd needs system.host_cache"},
		{"system.host_ssd_read=0B/s", "system.host_ssd needs system.host_ssd_read"},
		{"system.host_ssd=0", NULL},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const char *one[] = {bad[i].set};
		spec.system = "gpu-only", spec.sets = one, spec.nsets = 1;
		int rc = design_assemble(&spec, &s, &err);
		if (!bad[i].msg) {
			cr_expect_eq(rc, 0, "%s", err.msg);
			cr_expect(s.d.host && s.sys.host_ssd == 0 && s.sys.host_cache > 0);
		} else {
			cr_expect_lt(rc, 0, "%s", bad[i].set);
			cr_expect(strstr(err.msg, bad[i].msg), "%s: %s", bad[i].set, err.msg);
		}
		design_free(&s);
	}
}
