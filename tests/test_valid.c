/* test_valid.c: validation tables and `karat validate` (issue 13): strict
 * reading with FILE:LINE errors, each kernel priced as `karat ops` prices
 * it (a hand-computed GEMM, the attention operator of a step), the shipped
 * tables all read and price, and the command on a small fixture. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "karat.h"

#define HEAD "kernel,model,device,dtype,batch,context,heads,q_len,topk,m,n,k,groups,gpus,measured,unit,source\n"

#define HEAD2 "kernel,model,device,dtype,batch,context,heads,q_len,topk,m,n,k,groups,gpus,measured,unit,source,scaleout_link,a2a_route\n"

#define HEAD3 "kernel,model,device,dtype,batch,context,heads,q_len,topk,m,n,k,groups,gpus,measured,unit,source,scaleout_link,a2a_route,a2a_sends\n"

static const char *tmp_csv(int slot, const char *text)
{
	static char paths[4][64];
	const char *ini = tmp_ini_str(slot, text);
	cr_assert(ini);
	char *p = paths[slot & 3];
	snprintf(p, 64, "%.*s.csv", (int)(strlen(ini) - 4), ini);
	cr_assert_eq(rename(ini, p), 0);
	return p;
}

static void read_fails(const char *text, const char *want, int line)
{
	struct vtable t;
	struct kerr err;
	const char *p = tmp_csv(0, text);
	cr_expect_eq(vtable_read(p, &t, &err), -1, "%s accepted", text);
	cr_expect(strstr(err.msg, want), "'%s' not in: %s", want, err.msg);
	char where[128];
	snprintf(where, sizeof where, "%s:%d:", p, line);
	cr_expect(strstr(err.msg, where), "'%s' not in: %s", where, err.msg);
	unlink(p);
}

Test(valid, bad_tables_fail_with_file_and_line)
{
	read_fails("kernel,model\n", "the header has 2 columns, expected 17 (or 19", 1);
	read_fails("kernel,modle,device\n", "column 2 must be 'model'", 1);
	read_fails(HEAD "conv,,h800,fp8,,,,,,64,64,64,,,1,us,x\n", "unknown kernel 'conv'", 2);
	read_fails(HEAD "gemm,,h800,fp8,,,,,,64,64,,,,1,us,x\n", "gemm needs k", 2);
	read_fails(HEAD "gemm,,h800,fp8,4,,,,,64,64,64,,,1,us,x\n", "gemm does not take batch", 2);
	read_fails(HEAD "gemm,,h800,fp8,,,,,,64,64,64,,,1,tok_s_per_gpu,x\n", "unit of gemm must be us",
		   2);
	read_fails(HEAD "gemm,,h800,fp8,,,,,,64,64,6x,,,1,us,x\n", "k: '6x' is not a number", 2);
	read_fails(HEAD "gemm,,h800,fp8,,,,,,64,64,64,,,1,us,\n", "source are required", 2);
	read_fails(HEAD "gemm,,h800,fp9,,,,,,64,64,64,,,1,us,x\n", "dtype 'fp9'", 2);
	read_fails(HEAD "mla_decode,,h100,bf16,1,4096,128,1,,,,,,,20,us,x\n", "needs a model", 2);
	read_fails(HEAD, "no rows", 1);
	read_fails(HEAD "gemm,,h800,fp8,,,,,,64,64,64,,,1,us,\"x\n", "", 2);
	/* the two optional columns: an all-to-all's link and route across nodes */
	read_fails(HEAD2 "dispatch,deepseek-v3,b200,fp8,128,,,,,,,,,16,186,us,x,efa4,ring\n",
		   "a2a_route 'ring' is not flat or hierarchical", 2);
	read_fails(HEAD2 "gemm,,h800,fp8,,,,,,64,64,64,,,1,us,x,efa4,\n",
		   "gemm does not take scaleout_link, a2a_route or a2a_sends", 2);
	read_fails(HEAD2 "gemm,,h800,fp8,,,,,,64,64,64,,,1,us,x,,flat\n",
		   "gemm does not take scaleout_link, a2a_route or a2a_sends", 2);
	/* and what the row's kernels send of a token */
	read_fails(HEAD3 "dispatch,deepseek-v3,b200,fp8,128,,,,,,,,,8,50,us,x,,,copy\n",
		   "a2a_sends 'copy' is not expert or gpu", 2);
	read_fails(HEAD3 "gemm,,h800,fp8,,,,,,64,64,64,,,1,us,x,,,gpu\n",
		   "gemm does not take scaleout_link, a2a_route or a2a_sends", 2);
	read_fails(HEAD2 "dispatch,deepseek-v3,b200,fp8,128,,,,,,,,,16,186,us,x\n",
		   "17 fields, expected 19", 2);
	read_fails(HEAD "dispatch,deepseek-v3,b200,fp8,128,,,,,,,,,16,186,us,x,efa4,flat\n",
		   "more than 17 fields", 2);
	read_fails("kernel,model,device,dtype,batch,context,heads,q_len,topk,m,n,k,groups,gpus,"
		   "measured,unit,source,scaleout_link\n", "the header has 18 columns", 1);
}

/* A row's scale-out link and route price it: an all-to-all over 2 nodes
 * of efa4 (hierarchical) as roofline_a2a_nodes gives on nvlink5 and efa4
 * with the route's share of bytes, and an unknown link is refused by
 * name. */
Test(valid, an_all_to_all_row_takes_its_scaleout_link_and_route)
{
	struct vtable t;
	struct kerr err;
	static const char csv[] = HEAD2
		"dispatch,deepseek-v3,b200,fp8,128,,,,,,,,,16,186,us,x,efa4,hierarchical\n"
		"dispatch,deepseek-v3,b200,fp8,128,,,,,,,,,16,186,us,x,efa4,\n"
		"dispatch,deepseek-v3,b200,fp8,128,,,,,,,,,16,186,us,x,,\n"
		"dispatch,deepseek-v3,b200,fp8,128,,,,,,,,,16,186,us,x,efa9,\n";
	cr_assert_eq(vtable_parse("t.csv", csv, sizeof csv - 1, &t, &err), 0, "%s", err.msg);
	struct klink up, efa, ib;
	cr_assert_eq(zoo_load_link("nvlink5", &up, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link("efa4", &efa, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link("ib-ndr", &ib, NULL, &err), 0, "%s", err.msg);
	/* 128 tokens x 8 copies of 7,168 FP8 values and 56 FP32 scales, 15/16
	 * leaving the GPU; 2 nodes: a token crosses to the other node unless
	 * all 8 copies stay, 2 (1 - 2^-8) / 8 of its copies' bytes */
	double bytes = 128 * 8 * 7392.0 * 15 / 16, cross = 2 * (1 - pow(0.5, 8)) / 8, v;
	double want[3] = {roofline_a2a_nodes(&up, &efa, 16, 8, cross, bytes, 1),
			  roofline_a2a_nodes(&up, &efa, 16, 8, 1, bytes, 1),
			  roofline_a2a_nodes(&up, &ib, 16, 8, 1, bytes, 1)};
	cr_assert_lt(want[0], want[1], "hierarchical moves fewer bytes across");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(valid_model(&t.rows[i], &v, &err), 0, "%s", err.msg);
		cr_expect(fabs(v * 1e-6 / want[i] - 1) < 1e-12, "row %d: %g us, want %g us", i, v,
			  want[i] * 1e6);
	}
	/* hand check of the first: efa4's floor plus one node's term plus
	 * the crossing bytes (half the copies leaving go to the other node)
	 * over 0.793 of 50 GB/s */
	double by_hand = 133.9e-6 + 66.4e-6 + bytes * 8 / 15 * cross / (50e9 * 0.793);
	cr_expect(fabs(want[0] / by_hand - 1) < 1e-12, "%g us, by hand %g us", want[0] * 1e6,
		  by_hand * 1e6);
	cr_expect_eq(valid_model(&t.rows[3], &v, &err), -1);
	cr_expect(strstr(err.msg, "efa9"), "%s", err.msg);
	/* a dispatch_combine row is its dispatch (FP8 here) plus the combine
	 * of the model's BF16 activations: 128 x 8 x 7,168 x 2 bytes */
	struct vrow pair = t.rows[0];
	pair.kernel = VK_A2A_PAIR;
	double back = 128 * 8 * 7168 * 2.0 * 15 / 16;
	double sum = want[0] + roofline_a2a_nodes(&up, &efa, 16, 8, cross, back, 0);
	cr_assert_eq(valid_model(&pair, &v, &err), 0, "%s", err.msg);
	cr_expect(fabs(v * 1e-6 / sum - 1) < 1e-12, "pair: %g us, want %g us", v, sum * 1e6);
	cr_expect_eq(valid_a2a_bytes(&pair, 0, &v, &err), -1, "a pair is not one kernel");
	vtable_free(&t);
}

/* A row's a2a_sends prices its kernels as they send, whatever the link's
 * own: one copy per GPU holding any of a token's experts (gpu) moves the
 * bytes valid_a2a_bytes gives with per_gpu, fewer than one per routed
 * expert, which nvlink5's kernels send and an empty column keeps. */
Test(valid, an_all_to_all_row_takes_what_its_kernels_send)
{
	struct vtable t;
	struct kerr err;
	static const char csv[] = HEAD3
		"dispatch,deepseek-v3,b200,fp8,8192,,,,,,,,,8,447,us,x,,,gpu\n"
		"dispatch,deepseek-v3,b200,fp8,8192,,,,,,,,,8,447,us,x,,,expert\n"
		"dispatch,deepseek-v3,b200,fp8,8192,,,,,,,,,8,447,us,x,,,\n";
	cr_assert_eq(vtable_parse("t.csv", csv, sizeof csv - 1, &t, &err), 0, "%s", err.msg);
	cr_assert(t.rows[0].sends == A2A_PER_GPU && t.rows[1].sends == A2A_PER_EXPERT &&
		  t.rows[2].sends == -1);
	struct klink up, ib;
	cr_assert_eq(zoo_load_link("nvlink5", &up, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(zoo_load_link("ib-ndr", &ib, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(up.a2a_sends, A2A_PER_EXPERT, "the test's premise: nvlink5 sends per expert");
	double gpu, expert, v[3];
	cr_assert_eq(valid_a2a_bytes(&t.rows[0], 1, &gpu, &err), 0, "%s", err.msg);
	cr_assert_eq(valid_a2a_bytes(&t.rows[0], 0, &expert, &err), 0, "%s", err.msg);
	cr_assert_lt(gpu, expert);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(valid_model(&t.rows[i], &v[i], &err), 0, "%s", err.msg);
	double want = roofline_a2a_nodes(&up, &ib, 8, 8, 1, gpu, 1);
	cr_expect(fabs(v[0] * 1e-6 / want - 1) < 1e-12, "%g us, want %g", v[0], want * 1e6);
	cr_expect_eq(v[1], v[2], "expert is nvlink5's own");
	cr_expect_lt(v[0], v[1]);
	vtable_free(&t);
}

/* A made-up GPU: 100 TFLOPS BF16 (FP8 runs there), 1 TB/s, every
 * efficiency 0.5, 1 us per kernel, no tile model.  An FP8 GEMM of
 * 64 x 1024 x 1024: 134,217,728 FLOPs at 50 TFLOPS = 2.684 us; bytes
 * (1024 + 64) x 1024 + 2 x 64 x 1024 = 1,245,184 at 0.5 TB/s = 2.490 us;
 * the compute bound plus 1 us. */
Test(valid, a_gemm_row_is_the_roofline_by_hand)
{
	const char *gpu =
		"[device]\nname = g\nkind = gpu\nlink = nvlink4\ntdp = 100 W\n"
		"[compute]\nbf16 = 100 TFLOPS\n[memory]\ncapacity = 10 GB\nbandwidth = 1 TB/s\n"
		"[efficiency]\ngemm_compute = 0.5\ngemm_memory = 0.5\nattention_compute = 0.5\n"
		"attention_memory = 0.5\nscan_compute = 0.5\nscan_memory = 0.5\n"
		"gather_memory = 0.5\nelementwise_memory = 0.5\noverhead = 1 us\n";
	struct vrow r = {.kernel = VK_GEMM, .dtype = "fp8", .m = 64, .n = 1024, .k = 1024,
			 .batch = NAN, .context = NAN, .heads = NAN, .q_len = NAN, .topk = NAN,
			 .groups = NAN, .gpus = NAN, .measured = 1};
	snprintf(r.device, sizeof r.device, "%s", tmp_ini_str(1, gpu));
	double us;
	struct kerr err;
	cr_assert_eq(valid_model(&r, &us, &err), 0, "%s", err.msg);
	cr_expect(near(us, 2 * 64.0 * 1024 * 1024 / 50e12 * 1e6 + 1, 1e-12), "%.17g", us);
	/* two groups: twice the work, one kernel */
	r.kernel = VK_GROUPED, r.groups = 2;
	cr_assert_eq(valid_model(&r, &us, &err), 0, "%s", err.msg);
	cr_expect(near(us, 2 * 2 * 64.0 * 1024 * 1024 / 50e12 * 1e6 + 1, 1e-12), "%.17g", us);
}

/* An attention row is the attention operator of one layer of `karat ops`:
 * DeepSeek-V3 on H800, 32 requests at 8K, 128 heads, one query token. */
Test(valid, an_attention_row_is_the_ops_operator)
{
	struct vrow r = {.kernel = VK_MLA, .model = "deepseek-v3", .device = "h800",
			 .batch = 32, .context = 8192, .heads = 128, .q_len = 1, .topk = NAN,
			 .m = NAN, .n = NAN, .k = NAN, .groups = NAN, .gpus = NAN, .measured = 1};
	double us;
	struct kerr err;
	cr_assert_eq(valid_model(&r, &us, &err), 0, "%s", err.msg);
	struct kmodel m;
	struct kdevice d;
	struct klink l;
	static struct step s;
	cr_assert_eq(zoo_load_model("deepseek-v3", &m, NULL, &err), 0);
	cr_assert_eq(zoo_load_device("h800", &d, NULL, &err), 0);
	cr_assert_eq(zoo_load_link(d.link, &l, NULL, &err), 0);
	struct kbatch b = {.requests = 32, .gpus = 1, .context = 8192};
	cr_assert_eq(step_build(&m, &b, &s, &err), 0, "%s", err.msg);
	step_time(&s, &d, &l);
	double t = -1;
	for (int i = 0; i < s.n; i++)
		if (s.op[i].kind == OP_ATTENTION)
			t = s.op[i].time;
	cr_expect(near(us, t * 1e6, 1e-12), "%g against %g", us, t * 1e6);
	/* at least the two kernels' fixed time */
	cr_expect(us >= 2 * d.fixed[OC_ATTENTION] * 1e6);
}

/* Every shipped table (each CSV in validation/, so a new one cannot be
 * missed) reads and every row prices to a finite value. */
Test(valid, shipped_tables_read_and_price)
{
	DIR *dir = opendir(zoo_path("validation"));
	cr_assert(dir, "no validation/ folder");
	int tables = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".csv"))
			continue;
		char name[300];
		snprintf(name, sizeof name, "validation/%s", e->d_name);
		struct vtable t;
		struct kerr err;
		cr_assert_eq(vtable_read(zoo_path(name), &t, &err), 0, "%s", err.msg);
		cr_expect(t.n > 0, "%s has no rows", name);
		for (int j = 0; j < t.n; j++) {
			double v;
			cr_expect_eq(valid_model(&t.rows[j], &v, &err), 0, "%s:%d: %s", name,
				     t.rows[j].line, err.msg);
			cr_expect(isfinite(v) && v > 0);
		}
		vtable_free(&t);
		tables++;
	}
	closedir(dir);
	cr_expect(tables >= 18, "only %d tables", tables);
}

static char out[1 << 16], errbuf[1 << 12];

/* The command on a fixture: the error per row and overall, the CSV. */
Test(valid, command_reports_and_writes_the_csv)
{
	const char *p = tmp_csv(2, HEAD "gemm,,h800,fp8,,,,,,64,2112,7168,,,10,us,fixture\n"
					"gemm,,h800,fp8,,,,,,64,4096,7168,,,13.1,us,fixture\n");
	char dir[] = "/tmp/karat-valid-XXXXXX", args[512];
	cr_assert(mkdtemp(dir));
	snprintf(args, sizeof args, "validate %s --out %s", p, dir);
	cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	cr_expect(strstr(out, "mean absolute error"), "%s", out);
	cr_expect(strstr(out, "gemm "), "%s", out);
	/* and per family: the H800 is a Hopper part (device.family) */
	cr_expect(strstr(out, "mean absolute error by family") && strstr(out, "  hopper "), "%s", out);
	char csv[600];
	snprintf(csv, sizeof csv, "%s/validation.csv", dir);
	FILE *f = fopen(csv, "r");
	cr_assert(f, "no %s", csv);
	char line[512];
	cr_assert(fgets(line, sizeof line, f));
	cr_expect_str_eq(line, "table,line,kernel,model,device,dtype,batch,context,heads,q_len,topk,"
			       "m,n,k,groups,gpus,predicted,measured,error_pct,unit,source,family,"
			       "role\n");
	int rows = 0;
	while (fgets(line, sizeof line, f)) { /* a table of one's own is out of sample */
		rows++;
		cr_expect(strstr(line, ",hopper,check\n"), "%s", line);
	}
	fclose(f);
	cr_expect_eq(rows, 2);
	/* out of sample: both rows, 10 us measured against its model, and the
	 * worst of them named with its line */
	cr_expect(strstr(out, "(2 rows, check)"), "%s", out);
	const char *o = strstr(out, "mean absolute error out of sample");
	cr_assert(o, "%s", out);
	cr_expect(strstr(o, "(2 rows; worst ") && strstr(o, p), "%s", o);
	/* and no row in sample: no shipped value is fitted on the fixture */
	const char *in = strstr(out, "mean absolute error in sample");
	cr_expect(in && in < o && strstr(in, "  none: no row's table is fitted on"), "%s", out);
	/* a missing table is an error naming it */
	snprintf(args, sizeof args, "validate /nonexistent/t.csv --out %s", dir);
	cr_expect_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 1);
	cr_expect(strstr(errbuf, "/nonexistent/t.csv"), "%s", errbuf);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
	unlink(p);
}

/* Issue 28's bar: on the shipped tables its values are fitted on, each
 * device family's mean error is 10% or less, as `karat validate` prints
 * it in sample (and it names none over the goal). */
Test(valid, every_family_is_within_ten_percent_in_sample)
{
	char dir[] = "/tmp/karat-valid-in-XXXXXX", args[512], path[600];
	cr_assert(mkdtemp(dir));
	snprintf(args, sizeof args, "validate --quiet --out %s", dir);
	cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	const char *in = strstr(out, "mean absolute error in sample");
	cr_assert_not_null(in, "%s", out);
	const char *end = strstr(in, "mean absolute error out of sample");
	cr_assert_not_null(end, "%s", out);
	int families = 0;
	for (const char *l = strchr(in, '\n'); l && l + 1 < end; l = strchr(l + 1, '\n')) {
		char name[32];
		double pct;
		int n;
		if (sscanf(l + 1, " %31s %lf%% (%d rows", name, &pct, &n) != 3)
			continue;
		cr_expect(n > 0, "%s: no rows", name);
		cr_expect_leq(pct, 10.0, "%s: %.1f%% mean error on its own tables", name, pct);
		families += strcmp(name, "all") != 0;
	}
	cr_expect_geq(families, 4, "%d families in sample:\n%s", families, in);
	cr_expect(!strstr(in, "over the goal") || strstr(in, "over the goal") > end, "%s", in);
	for (int k = 0; k < 2; k++) { /* what --out wrote, then the folder */
		snprintf(path, sizeof path, "%s/validation.%s", dir, k ? "png" : "csv");
		unlink(path);
	}
	cr_expect_eq(rmdir(dir), 0, "%s: --out wrote more than validation.csv and .png", dir);
}

/* Tables named without --out are priced and printed, and nothing is
 * written: results/validation.csv holds the whole shipped set's rows,
 * which the docs' figures and `karat show` read. */
Test(valid, named_tables_without_out_write_nothing)
{
	const char *p = tmp_csv(2, HEAD "gemm,,h800,fp8,,,,,,64,2112,7168,,,10,us,fixture\n");
	const char *bin = getenv("KARAT_BIN") ? getenv("KARAT_BIN") : KARAT_DATADIR "/build/karat";
	char dir[] = "/tmp/karat-valid-cwd-XXXXXX", cmd[1200], path[700];
	static char log[1 << 14];
	cr_assert(mkdtemp(dir));
	snprintf(cmd, sizeof cmd, "cd %s && %s validate %s >log 2>&1", dir, bin, p);
	cr_expect_eq(system(cmd), 0);
	snprintf(path, sizeof path, "%s/log", dir);
	read_text(path, log, sizeof log);
	cr_expect(strstr(log, "(1 rows, check)") &&
			  strstr(log, "not written: with tables named, --out DIR writes DIR/validation.csv"),
		  "%s", log);
	unlink(path);
	snprintf(path, sizeof path, "%s/results", dir);
	cr_expect_neq(access(path, F_OK), 0, "%s was made", path);
	cr_expect_eq(rmdir(dir), 0, "%s holds more than the log", dir);
	unlink(p);
}

/* An MLA row's dtype is the cache its kernel reads, latent and rotary part
 * alike, with one scale for the tensor (empty: the model's layout).  On
 * the B200 (the max of compute and memory, no p-norm) at 16 heads and one
 * query token every row is memory-bound, so a row takes two kernel fixed
 * times plus its bytes over (bandwidth x attention_memory): 576 cache
 * bytes a token at FP8, 1,152 at BF16 and DeepSeek-V3's own (BF16, no
 * scales), plus each head's BF16 query in (576) and output out (512). */
Test(valid, an_mla_rows_dtype_is_the_cache_its_kernel_reads)
{
	static const char csv[] = HEAD
		"mla_decode,deepseek-v3,b200,fp8,64,4096,16,1,,,,,,,100,us,s\n"
		"mla_decode,deepseek-v3,b200,bf16,64,4096,16,1,,,,,,,100,us,s\n"
		"mla_decode,deepseek-v3,b200,,64,4096,16,1,,,,,,,100,us,s\n";
	struct vtable t;
	struct kerr err;
	cr_assert_eq(vtable_parse("t.csv", csv, sizeof csv - 1, &t, &err), 0, "%s", err.msg);
	cr_assert_eq(t.n, 3);
	struct kdevice d;
	cr_assert_eq(zoo_load_device("b200", &d, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(d.overlap, 0);
	double a = 2 * device_fixed(&d, OC_ATTENTION, 0), per_token[3] = {576, 1152, 1152};
	for (int i = 0; i < 3; i++) {
		double us, bytes = 64 * 4096 * per_token[i] + 64 * 16 * (576 + 512) * 2;
		double want = a + bytes / (d.mem_bw * d.eff_m[OC_ATTENTION]);
		cr_assert_eq(valid_model(&t.rows[i], &us, &err), 0, "%s", err.msg);
		cr_expect(fabs(us * 1e-6 / want - 1) < 1e-9, "row %d: %.6g us, by hand %.6g us",
			  i + 1, us, want * 1e6);
	}
	vtable_free(&t);
	read_fails(HEAD "mla_decode,deepseek-v3,b200,int8,64,4096,16,1,,,,,,,100,us,s\n",
		   "dtype 'int8'", 2);
}

/* Which shipped tables a value is fitted on comes from the zoo's own
 * source comments: each table's data in a fit clause, not a table the
 * comment only remarks on.  The rest check the model out of sample. */
Test(valid, fitted_tables_are_those_the_zoo_names_in_a_fit)
{
	static struct vfits f;
	struct kerr err;
	cr_assert_eq(valid_fits_load(&f, &err), 0, "%s", err.msg);
	static const char *const fit[] = {
		"validation/deepgemm-h800.csv",      /* the H800's GEMM class */
		"validation/topk-b200.csv",          /* the B200's selection */
		"validation/a2a-fabric-lib-h100-prefill.csv", /* second of "a and b" */
		"validation/gemm-mi300x-rocm-maf.csv", /* "validation/a and validation/b" */
		"validation/a2a-deepep-b200-efa-slowest.csv"};
	static const char *const check[] = {
		"validation/gemm-h200-azure.csv",     /* the H200 carries the H800's */
		"validation/flashmla-sparse-b200.csv", /* remarked on in a fitted comment */
		"validation/a2a-deepep-b200-efa.csv",  /* the same, without its folder */
		"validation/a2a-pplx-efa-awslabs.csv", /* named after a ',' */
		"validation/deepseek-production-h800.csv",
		"deepgemm-h800.csv",                  /* not a shipped table's path */
		"validation/x/deepgemm-h800.csv", "other/validation/deepgemm-h800.csv"};
	for (size_t i = 0; i < sizeof fit / sizeof *fit; i++)
		cr_expect(valid_fits_has(&f, fit[i]), "%s", fit[i]);
	for (size_t i = 0; i < sizeof check / sizeof *check; i++)
		cr_expect(!valid_fits_has(&f, check[i]), "%s", check[i]);
	/* every name is a table that is there */
	for (int i = 0; i < f.n; i++) {
		char path[1200];
		snprintf(path, sizeof path, "%s/validation/%s", zoo_home(), f.name[i]);
		cr_expect_eq(access(path, R_OK), 0, "a fit names %s, which is not shipped", f.name[i]);
	}
}

/* docs/validation.md's list of tables says "not fitted" of exactly the
 * tables no shipped value is fitted on. */
Test(valid, the_docs_say_not_fitted_of_the_check_tables)
{
	static struct vfits f;
	struct kerr err;
	cr_assert_eq(valid_fits_load(&f, &err), 0, "%s", err.msg);
	static char doc[1 << 17];
	read_text(KARAT_DATADIR "/docs/validation.md", doc, sizeof doc);
	cr_assert(doc[0], "docs/validation.md cannot be read");
	int seen = 0;
	for (char *l = doc; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "| `", 3) != 0)
			continue;
		char name[128], shown[160];
		const char *e = strchr(l + 3, '`');
		if (!e || e - (l + 3) >= (long)sizeof name || !strstr(l + 3, ".csv` |"))
			continue;
		snprintf(name, sizeof name, "%.*s", (int)(e - (l + 3)), l + 3);
		snprintf(shown, sizeof shown, "validation/%s", name);
		size_t len = strcspn(l, "\n");
		int says = len >= 12 && !strncmp(l + len - 12, "not fitted |", 12);
		cr_expect_eq(says, !valid_fits_has(&f, shown),
			     "docs/validation.md: %s is %s, so its row should%s end \"not fitted\"",
			     name, says ? "fitted on" : "out of sample", says ? " not" : "");
		seen++;
	}
	cr_expect_geq(seen, 30, "docs/validation.md lists %d tables", seen);
}

/* karat show DEVICE says how the shipped tables measure it: its rows'
 * count and mean error by role are those of validate's CSV for that
 * device; a device no table measures says so. */
Test(valid, show_gives_a_devices_error_by_role)
{
	char dir[] = "/tmp/karat-valid-show-XXXXXX", args[256];
	cr_assert(mkdtemp(dir));
	snprintf(args, sizeof args, "validate --quiet --out %s", dir);
	cr_assert_eq(run_karat(args, out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	char csv[600];
	snprintf(csv, sizeof csv, "%s/validation.csv", dir);
	FILE *f = fopen(csv, "r");
	cr_assert(f, "no %s", csv);
	static char line[4096];
	int n[2] = {0};
	double sum[2] = {0};
	cr_assert(fgets(line, sizeof line, f));
	while (fgets(line, sizeof line, f)) {
		char *field[20], copy[4096], *c = copy;
		snprintf(copy, sizeof copy, "%s", line);
		int k = 0;
		for (; c && k < 20; k++) { /* the first 20 columns hold no comma */
			field[k] = c;
			if ((c = strchr(c, ',')))
				*c++ = '\0';
		}
		cr_assert_eq(k, 20, "%s", line);
		if (strcmp(field[4], "b200") != 0)
			continue;
		const char *role = strrchr(line, ',') + 1;
		int chk = strncmp(role, "check", 5) == 0;
		n[chk]++, sum[chk] += fabs(atof(field[18]));
	}
	fclose(f);
	cr_assert(n[0] > 0 && n[1] > 0, "the B200 has rows of both roles: %d, %d", n[0], n[1]);
	cr_assert_eq(run_karat("show b200", out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	static const char *const role[2] = {"\n  fit ", "\n  check "};
	for (int c = 0; c < 2; c++) {
		const char *at = strstr(out, role[c]);
		cr_assert(at, "show b200 gives no %s line: %s", role[c] + 3, out);
		int got_n;
		double got;
		cr_assert_eq(sscanf(at + strlen(role[c]), " %d rows %lf%%", &got_n, &got), 2, "%s", at);
		cr_expect_eq(got_n, n[c], "%s: %d rows, the CSV %d", role[c] + 3, got_n, n[c]);
		cr_expect(fabs(got - sum[c] / n[c]) < 0.05, "%s: %.1f%%, the CSV %.2f%%", role[c] + 3,
			  got, sum[c] / n[c]);
	}
	cr_assert_eq(run_karat("show b300", out, sizeof out, errbuf, sizeof errbuf), 0, "%s", errbuf);
	cr_expect(strstr(out, "no shipped table (validation/) measures b300"), "%s", out);
	/* the tables name zoo devices: a file given by its path is not one */
	cr_assert_eq(run_karat("show " KARAT_DATADIR "/hw/b200.ini", out, sizeof out, errbuf,
			       sizeof errbuf), 0, "%s", errbuf);
	cr_expect(!strstr(out, "measured in") && !strstr(out, "no shipped table"), "%s", out);
	snprintf(csv, sizeof csv, "%s/validation.png", dir);
	unlink(csv);
	snprintf(csv, sizeof csv, "%s/validation.csv", dir);
	unlink(csv);
	rmdir(dir);
}
