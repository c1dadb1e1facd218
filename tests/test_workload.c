/* test_workload.c: workload INIs and trace CSVs: what loads, what is
 * refused with the file and line or row, and what the draws look like. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "karat.h"

static int load_text(const char *text, struct kworkload *w, struct kerr *err)
{
	return workload_load(tmp_ini_str(0, text), w, err);
}

#define HEAD "[workload]\nname = t\norigin = synthetic\n"

Test(workload, parametric_and_quantile_workloads_load)
{
	struct kworkload w;
	struct kerr err;
	cr_assert_eq(load_text(HEAD "[input]\ndist = lognormal\nmedian = 64K\nsigma = 0.5\n"
			       "max = 1M\n[output]\ndist = gamma\nshape = 2\nscale = 100\n", &w, &err),
		     0, "%s", err.msg);
	cr_expect_eq(w.in.kind, WD_LOGNORMAL);
	cr_expect_eq(w.in.median, 65536);
	cr_expect_eq(w.in.max, 1048576);
	workload_free(&w);
	cr_assert_eq(load_text(HEAD "[input]\ndist = quantiles\np0 = 10\np100 = 20\np50 = 12\n"
			       "[output]\ndist = fixed\nvalue = 7\n", &w, &err), 0, "%s", err.msg);
	cr_expect_eq(w.in.nq, 3);
	cr_expect(w.in.qp[1] == 0.5 && w.in.qv[1] == 12, "points sorted by percentile");
	workload_free(&w);
}

Test(workload, bad_files_name_the_line)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{HEAD "[input]\ndist = normal\n", ":5: input.dist"},
		{HEAD "[input]\ndist = lognormal\nmedian = 1K\n[output]\ndist = fixed\nvalue = 1\n",
		 "sigma"},
		{HEAD "[input]\ndist = quantiles\np0 = 5\np50 = 3\np100 = 9\n[output]\ndist = fixed\nvalue = 1\n",
		 "must not decrease"},
		{HEAD "[input]\ndist = quantiles\np0 = 5\np50 = 6\n[output]\ndist = fixed\nvalue = 1\n",
		 "p0 and p100"},
		{HEAD "[input]\ndist = quantiles\np0 = 5\np0 = 6\n", "duplicate"},
		{HEAD "[input]\ndist = fixed\nvalue = -3\n", ":6: input.value"},
		{HEAD "[input]\nwidth = 3\n", ":5: unknown key 'width' in [input]"},
		{HEAD "[inputs]\ndist = fixed\n", "unknown section [inputs]"},
		{"[workload]\nname = t\n[input]\ndist = fixed\nvalue = 1\n[output]\ndist = fixed\nvalue = 1\n",
		 ":1: workload.origin is required"},
		/* issue 10: errors about what is missing name the section's line, a
		 * distribution's its dist key */
		{"; c\n[workload]\norigin = synthetic\n", ":2: workload.name is required"},
		{HEAD "[input]\ndist = fixed\nvalue = 1\n[output]\n\ndist = gamma\nshape = 2\n",
		 ":9: output: gamma needs shape > 0 and scale > 0"},
		{HEAD "trace = x.csv\n", ":4: a trace needs workload.input_column"},
		/* a key of another distribution would be ignored: refused */
		{HEAD "[input]\ndist = fixed\nvalue = 1\nmedian = 5\n",
		 ":7: input.median does not apply to dist = fixed"},
		{HEAD "[input]\ndist = fixed\nvalue = 1\n[output]\ndist = fixed\nvalue = 1\nmin = 5\nmax = 2\n",
		 "exceeds max"},
		{HEAD "trace = /nonexistent/trace.csv\ninput_column = a\noutput_column = b\n",
		 "cannot open trace"},
		{HEAD "trace = x.csv\n", "input_column"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct kworkload w;
		struct kerr err;
		cr_expect_eq(load_text(bad[i].text, &w, &err), -1, "case %zu loaded", i);
		cr_expect(strstr(err.msg, bad[i].want) != NULL, "case %zu: '%s' lacks '%s'", i,
			  err.msg, bad[i].want);
	}
}

static const char *tmp_csv(const char *text)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/karat-trace-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

Test(workload, traces_with_crlf_quotes_and_no_final_newline)
{
	double *in, *out;
	long n;
	struct kerr err;
	const char *p = tmp_csv("TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
				"2023-11-16 18:17:03.97,4808,10\r\n\"x,y\",3180,8\r\n1,77,0");
	cr_assert_eq(workload_read_trace(p, "ContextTokens", "GeneratedTokens", NULL, &in, &out, &n,
					 &err), 0, "%s", err.msg);
	cr_expect_eq(n, 3);
	cr_expect(in[0] == 4808 && out[0] == 10 && in[1] == 3180 && in[2] == 77 && out[2] == 0);
	free(in), free(out);
	/* columns in another order, LF endings */
	p = tmp_csv("out,junk,in\n5,a,100\n6,b,200\n");
	cr_assert_eq(workload_read_trace(p, "in", "out", NULL, &in, &out, &n, &err), 0, "%s", err.msg);
	cr_expect(n == 2 && in[1] == 200 && out[1] == 6);
	free(in), free(out);
}

Test(workload, bad_trace_rows_are_named)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"a,b\n1,2\n3,x\n", ":3: column b: 'x'"},
		{"a,b\n1,2\n3\n", ":3: 1 fields"},
		{"a,b\n1,2\n-3,4\n", ":3: column a"},
		{"a,b\n1.5,2\n", ":2: column a"},
		{"a,c\n1,2\n", ":1: header has no column 'b'"},
		{"a,b\n", "no rows"},
		{"", "empty trace"},
		{"a,b\n0,3\n", ":2: input length must be >= 1"},
		/* issue 9: as strict as the INI reader */
		{"a,b\n1,0x10\n", ":2: column b: '0x10'"},
		{"a,a,b\n1,2,3\n", ":1: header names column 'a' twice"},
		{"a,b\n1,+2\n", ":2: column b: '+2'"},
		{"a,b\n1,1e3\n", ":2: column b: '1e3'"},
		{"a,b\n1,\"2\n3,4\n", "bad quoting"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		double *in, *out;
		long n;
		struct kerr err;
		cr_expect_eq(workload_read_trace(tmp_csv(bad[i].text), "a", "b", NULL, &in, &out, &n, &err),
			     -1, "case %zu", i);
		cr_expect(strstr(err.msg, bad[i].want) != NULL, "case %zu: '%s' lacks '%s'", i,
			  err.msg, bad[i].want);
	}
}

Test(workload, trace_buffers_with_nul_or_bom)
{
	double *in, *out;
	long n;
	struct kerr err;
	static const char nul[] = "a,b\n1,2\n3,\0\n";
	cr_expect_eq(workload_parse_trace("t.csv", nul, sizeof nul - 1, "a", "b", NULL, &in, &out, &n,
					  &err), -1);
	cr_expect(strstr(err.msg, "t.csv:3: a NUL byte"), "%s", err.msg);
	/* a byte-order mark is skipped, not taken into the first header name */
	static const char bom[] = "\xef\xbb\xbf" "a,b\n7,8\n";
	cr_assert_eq(workload_parse_trace("t.csv", bom, sizeof bom - 1, "a", "b", NULL, &in, &out, &n,
					  &err), 0, "%s", err.msg);
	cr_expect_eq(n, 1);
	cr_expect_eq(in[0], 7);
	cr_expect_eq(out[0], 8);
	free(in), free(out);
}

Test(workload, trace_must_be_a_regular_file)
{
	double *in, *out;
	long n;
	struct kerr err;
	cr_expect_eq(workload_read_trace("/dev/zero", "a", "b", NULL, &in, &out, &n, &err), -1);
	cr_expect(strstr(err.msg, "/dev/zero: not a regular file"), "%s", err.msg);
}

Test(workload, context_is_input_plus_a_uniform_share_of_output)
{
	struct kworkload w;
	struct kerr err;
	cr_assert_eq(load_text(HEAD "[input]\ndist = fixed\nvalue = 1000\n"
			       "[output]\ndist = fixed\nvalue = 500\n", &w, &err), 0, "%s", err.msg);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 3);
	double sum = 0, lo = 1e9, hi = 0;
	for (int i = 0; i < 20000; i++) {
		double L = workload_draw_context(&w, r);
		sum += L, lo = L < lo ? L : lo, hi = L > hi ? L : hi;
	}
	cr_expect(lo >= 1000 && hi <= 1499, "[%g, %g]", lo, hi);
	cr_expect(fabs(sum / 20000 - 1249.5) < 3, "mean %g", sum / 20000);
	gsl_rng_free(r);
	workload_free(&w);
}

Test(workload, quantile_draws_follow_the_table)
{
	struct kworkload w;
	struct kerr err;
	cr_assert_eq(load_text(HEAD "[input]\ndist = quantiles\np0 = 100\np50 = 1000\np90 = 5000\n"
			       "p100 = 10000\n[output]\ndist = fixed\nvalue = 1\n", &w, &err), 0, "%s",
		     err.msg);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 9);
	static double x[40000];
	for (int i = 0; i < 40000; i++)
		x[i] = wl_dist_draw(&w.in, r);
	gsl_sort(x, 1, 40000);
	cr_expect(fabs(workload_quantile(x, 40000, 0.5) - 1000) < 30);
	cr_expect(fabs(workload_quantile(x, 40000, 0.9) - 5000) < 100);
	cr_expect(x[0] >= 100 && x[39999] <= 10000);
	gsl_rng_free(r);
	workload_free(&w);
}

/* The shipped Azure tables against the public trace, when it is here. */
Test(workload, shipped_tables_match_the_public_traces)
{
	const char *trace = KARAT_DATADIR "/../shared/traces/azure-llm-inference-2023/"
					  "AzureLLMInferenceTrace_code.csv";
	if (traces_absent("shipped_tables_match_the_public_traces", trace)) {
		cr_skip_test("skipped: ../shared/traces is absent");
		return;
	}
	double *in, *out;
	long n;
	struct kerr err;
	cr_assert_eq(workload_read_trace(trace, "ContextTokens", "GeneratedTokens", NULL, &in, &out, &n,
					 &err), 0, "%s", err.msg);
	cr_expect_eq(n, 8819, "the trace has 8,819 requests");
	struct kworkload w;
	cr_assert_eq(zoo_load_workload("azure-code", &w, &err), 0, "%s", err.msg);
	gsl_sort(in, 1, (size_t)n);
	gsl_sort(out, 1, (size_t)n);
	for (int i = 0; i < w.in.nq; i++)
		cr_expect(fabs(workload_quantile(in, n, w.in.qp[i]) - w.in.qv[i]) <= 0.5,
			  "input p%g", 100 * w.in.qp[i]);
	for (int i = 0; i < w.out.nq; i++)
		cr_expect(fabs(workload_quantile(out, n, w.out.qp[i]) - w.out.qv[i]) <= 0.5,
			  "output p%g", 100 * w.out.qp[i]);
	cr_expect_eq(workload_quantile(in, n, 0.5), 1469, "the trace's p50 input is 1,469");
	free(in), free(out);
	workload_free(&w);
}

Test(workload, every_shipped_workload_and_system_loads_and_is_sourced)
{
	static char names[64][64];
	struct kerr err;
	int n = zoo_list(ZOO_WORKLOAD, names, 64, &err);
	cr_assert_geq(n, 5, "%s", err.msg);
	int agentic = 0;
	for (int i = 0; i < n; i++) {
		struct kworkload w;
		cr_expect_eq(zoo_load_workload(names[i], &w, &err), 0, "%s", err.msg);
		char path[1024];
		zoo_resolve(ZOO_WORKLOAD, names[i], path, sizeof path, &err);
		struct ini_doc *d = ini_doc_load(path, &err);
		cr_assert_not_null(d, "%s", err.msg);
		for (int k = 0; k < d->n; k++)
			cr_expect(!strncmp(d->e[k].source, "src:", 4) ||
					  !strncmp(d->e[k].source, "derived:", 8) ||
					  !strncmp(d->e[k].source, "assumed:", 8),
				  "%s:%d has no source", d->path, d->e[k].line);
		ini_doc_free(d);
		if (strcmp(names[i], "agentic") == 0) {
			agentic = 1;
			cr_expect_eq(w.in.max, 1048576, "agentic reaches 10^6 tokens");
			cr_expect_neq(w.origin, WO_TRACE, "agentic must say it is not a trace");
		}
		workload_free(&w);
	}
	cr_expect(agentic);
	static const char *const systems[] = {"gpu-only", "gpu-host-offload", "gpu-attacc",
					      "gpu-duplex", "gpu-cxl-pnm", "gpu-karat"};
	for (int i = 0; i < 6; i++) {
		struct ksystem s;
		struct ini_doc *d = NULL;
		cr_expect_eq(zoo_load_system(systems[i], &s, &d, &err), 0, "%s", err.msg);
		for (int k = 0; d && k < d->n; k++)
			cr_expect(!strncmp(d->e[k].source, "src:", 4) ||
					  !strncmp(d->e[k].source, "derived:", 8) ||
					  !strncmp(d->e[k].source, "assumed:", 8),
				  "%s:%d has no source", d->path, d->e[k].line);
		ini_doc_free(d);
	}
}

/* Length-biased draws from the real conversation trace reproduce the
 * trace's decode-step-weighted statistics (mean 1,226, p50 1,267, computed
 * from its columns apart from karat): each request counted once per output
 * token. */
Test(workload, trace_draws_are_weighted_by_output)
{
	const char *dir = KARAT_DATADIR "/../shared/traces/azure-llm-inference-2023";
	char ini[512];
	snprintf(ini, sizeof ini, "[workload]\nname = conv\norigin = trace\n"
		 "trace = %s/AzureLLMInferenceTrace_conv.csv\ninput_column = ContextTokens\n"
		 "output_column = GeneratedTokens\n", dir);
	char csv[512];
	snprintf(csv, sizeof csv, "%s/AzureLLMInferenceTrace_conv.csv", dir);
	if (traces_absent("trace_draws_are_weighted_by_output", csv)) {
		cr_skip_test("skipped: ../shared/traces is absent");
		return;
	}
	struct kworkload w;
	struct kerr err;
	cr_assert_eq(load_text(ini, &w, &err), 0, "%s", err.msg);
	cr_expect_eq(w.n_trace, 19366);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 1);
	enum { N = 200000 };
	static double x[N];
	for (int i = 0; i < N; i++)
		x[i] = workload_draw_context(&w, r);
	gsl_rng_free(r);
	double mean = 0;
	for (int i = 0; i < N; i++)
		mean += x[i] / N;
	gsl_sort(x, 1, N);
	cr_expect(fabs(mean - 1226) < 0.02 * 1226, "mean %g (the trace's weighted mean: 1,226)", mean);
	cr_expect(fabs(workload_quantile(x, N, 0.5) - 1267) < 0.03 * 1267, "p50 %g (1,267)",
		  workload_quantile(x, N, 0.5));
	cr_expect(fabs(workload_quantile(x, N, 0.99) - 4152) < 0.05 * 4152, "p99 %g (4,152)",
		  workload_quantile(x, N, 0.99));
	workload_free(&w);
}

/* Length-biased draws against the definition: the biased mean of a
 * distribution is E[X^2] / E[X] of the plain (clamped) one. */
Test(workload, length_biased_draws_match_the_definition)
{
	static const char *const dists[] = {
		"dist = lognormal\nmedian = 300\nsigma = 0.9\nmin = 16\nmax = 2000\n",
		"dist = lognormal\nmedian = 300\nsigma = 0.5\n",
		"dist = gamma\nshape = 1.5\nscale = 200\nmax = 900\nmin = 50\n",
		"dist = quantiles\np0 = 1\np50 = 100\np90 = 400\np100 = 2000\n",
	};
	for (int k = 0; k < 4; k++) {
		char ini[512];
		snprintf(ini, sizeof ini, HEAD "[input]\ndist = fixed\nvalue = 1\n[output]\n%s",
			 dists[k]);
		struct kworkload w;
		struct kerr err;
		cr_assert_eq(load_text(ini, &w, &err), 0, "%s", err.msg);
		gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(r, 5);
		double s1 = 0, s2 = 0, b = 0;
		enum { N = 400000 };
		for (int i = 0; i < N; i++) {
			double x = wl_dist_draw(&w.out, r);
			s1 += x, s2 += x * x;
			b += wl_dist_draw_biased(&w.out, r);
		}
		cr_expect(fabs(b / N - s2 / s1) < 0.01 * s2 / s1, "case %d: biased mean %g, "
			  "E[X^2]/E[X] %g", k, b / N, s2 / s1);
		gsl_rng_free(r);
		workload_free(&w);
	}
}

Test(workload, overrides_apply_or_are_refused)
{
	struct kworkload w;
	struct kerr err;
	char ini[512];
	const char *csv = tmp_csv("a,b,c\n10,2,30\n20,4,40\n");
	snprintf(ini, sizeof ini, HEAD "trace = %s\ninput_column = a\noutput_column = b\n", csv);
	cr_assert_eq(load_text(ini, &w, &err), 0, "%s", err.msg);
	cr_expect_eq(workload_set(&w, "input", "median", "5K", &err), -1,
		     "a trace workload has no [input] to change");
	cr_expect(strstr(err.msg, "draws from a trace") != NULL, "%s", err.msg);
	cr_assert_eq(workload_set(&w, "workload", "input_column", "c", &err), 0, "%s", err.msg);
	cr_expect(w.n_trace == 2 && w.trace_in[0] == 30 && w.trace_in[1] == 40,
		  "changing the column re-reads the trace");
	workload_free(&w);
	cr_assert_eq(load_text(HEAD "[input]\ndist = fixed\nvalue = 9\n[output]\ndist = fixed\n"
			       "value = 1\n", &w, &err), 0, "%s", err.msg);
	cr_expect_eq(workload_set(&w, "input", "value", "64K", &err), 0, "%s", err.msg);
	cr_expect_eq(w.in.value, 65536);
	cr_expect_eq(workload_set(&w, "input", "dist", "lognormal", &err), -1,
		     "lognormal without median and sigma");
	cr_expect_eq(workload_set(&w, "output", "shape", "3", &err), -1, "shape on a fixed");
	cr_expect(strstr(err.msg, "output.shape does not apply to dist = fixed"), "%s", err.msg);
	cr_expect_eq(workload_set(&w, "output", "width", "3", &err), -1);
	cr_expect(strstr(err.msg, "unknown key 'width' in [output]"), "%s", err.msg);
	workload_free(&w);
}

/* Issue 14 item 3: the Weka agentic-coding workloads.  Their tables are the
 * trace's quantiles (all calls, and the calls to 1M-window models: rows
 * whose model starts with claude-sonnet-4, 15,628 of 49,334 per
 * DERIVED.txt), and drawing from the CSV itself through a workload file
 * with the same row filter gives the same decode contexts within 3%. */
Test(workload, weka_tables_are_the_traces_and_draw_alike)
{
	const char *csv = KARAT_DATADIR "/../shared/traces/weka-agentic-coding/weka_calls.csv";
	if (traces_absent("weka_tables_are_the_traces_and_draw_alike", csv)) {
		cr_skip_test("skipped: ../shared/traces is absent");
		return;
	}
	const char *names[] = {"agentic-weka", "agentic-weka-1m"};
	const struct trace_filter sonnet = {"model", "claude-sonnet-4"};
	const long rows[] = {49334, 15628};
	for (int k = 0; k < 2; k++) {
		double *in, *out;
		long n;
		struct kerr err;
		cr_assert_eq(workload_read_trace(csv, "context_tokens", "output_tokens",
						 k ? &sonnet : NULL, &in, &out, &n, &err), 0, "%s",
			     err.msg);
		cr_expect_eq(n, rows[k], "%s: %ld rows", names[k], n);
		struct kworkload w, t;
		cr_assert_eq(zoo_load_workload(names[k], &w, &err), 0, "%s", err.msg);
		gsl_sort(in, 1, (size_t)n);
		for (int i = 0; i < w.in.nq; i++)
			cr_expect(fabs(workload_quantile(in, n, w.in.qp[i]) - w.in.qv[i]) <= 0.5,
				  "%s input p%g", names[k], 100 * w.in.qp[i]);
		free(in), free(out);
		/* the same calls drawn from the CSV itself */
		char text[1024];
		snprintf(text, sizeof text, "[workload]\nname = weka-direct\norigin = trace\n"
			 "trace = %s\ninput_column = context_tokens\noutput_column = output_tokens\n%s",
			 csv, k ? "filter_column = model\nfilter_prefix = claude-sonnet-4\n" : "");
		cr_assert_eq(workload_load(tmp_ini_str(0, text), &t, &err), 0, "%s", err.msg);
		cr_expect_eq(t.n_trace, rows[k]);
		gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
		gsl_rng_set(r, 7);
		double a = 0, b = 0;
		for (int i = 0; i < 100000; i++)
			a += workload_draw_context(&w, r), b += workload_draw_context(&t, r);
		cr_expect(near(a, b, 0.03), "%s: tables %.0f, trace %.0f mean decode context",
			  names[k], a / 1e5, b / 1e5);
		gsl_rng_free(r);
		workload_free(&w), workload_free(&t);
	}
	/* a filter that keeps nothing, or names no column, is an error */
	double *in, *out;
	long n;
	struct kerr err;
	const struct trace_filter none = {"model", "gpt-"}, nocol = {"vendor", "x"};
	cr_expect_eq(workload_read_trace(csv, "context_tokens", "output_tokens", &none, &in, &out,
					 &n, &err), -1);
	cr_expect(strstr(err.msg, "no row's model starts with 'gpt-'"), "%s", err.msg);
	cr_expect_eq(workload_read_trace(csv, "context_tokens", "output_tokens", &nocol, &in, &out,
					 &n, &err), -1);
	cr_expect(strstr(err.msg, "no column 'vendor'"), "%s", err.msg);
}

/* The row filter on a hand-made trace, and its keys' pairing. */
Test(workload, trace_row_filter_by_hand)
{
	const char *csv = "id,model,in,out\n1,alpha-1,100,10\n2,beta,200,20\n3,alpha-2,300,30\n";
	const struct trace_filter keep = {"model", "alpha"};
	double *in, *out;
	long n;
	struct kerr err;
	cr_assert_eq(workload_parse_trace("t.csv", csv, strlen(csv), "in", "out", &keep, &in, &out,
					  &n, &err), 0, "%s", err.msg);
	cr_expect_eq(n, 2);
	cr_expect(in[0] == 100 && in[1] == 300 && out[1] == 30);
	free(in), free(out);
	/* rows that are dropped are still checked */
	const char *bad = "model,in,out\nalpha,100,10\nbeta,x,20\n";
	cr_expect_eq(workload_parse_trace("t.csv", bad, strlen(bad), "in", "out", &keep, &in, &out,
					  &n, &err), -1);
	cr_expect(strstr(err.msg, "t.csv:3:"), "%s", err.msg);
	struct kworkload w;
	cr_expect_eq(workload_load(tmp_ini_str(1, "[workload]\nname = x\norigin = trace\n"
					       "trace = /nonexistent.csv\ninput_column = a\n"
					       "output_column = b\nfilter_column = model\n"), &w, &err), -1);
	cr_expect(strstr(err.msg, "go together"), "%s", err.msg);
}
