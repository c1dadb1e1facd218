/* test_ini.c: strict INI loading: every error class gives FILE:LINE and a
 * reason, and no input crashes the loader. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

/* A minimal valid dense model; tests break one thing at a time. */
static const char *good_model =
	"[model]\n"
	"name = tiny ; assumed: test\n"
	"layers = 2\n"
	"hidden = 64\n"
	"vocab = 100\n"
	"max_context = 4K\n"
	"total_params = 1e6\n"
	"mtp_layers = 0\n"
	"[attention]\n"
	"kind = gqa\n"
	"heads = 4\n"
	"kv_heads = 2\n"
	"head_dim = 16\n"
	"[sparse]\n"
	"algo = gqa\n"
	"[ffn]\n"
	"dense_layers = 2\n"
	"dense_inter = 128\n"
	"[dtypes]\n"
	"weights = bf16\n"
	"embedding = bf16\n"
	"activations = bf16\n"
	"kv = bf16\n"
	"kv_scale_bytes = 0\n"
	"attention = bf16\n"
	"[decode]\n"
	"mtp_draft_tokens = 0\n"
	"mtp_acceptance = 0\n";

/* Replaces the first occurrence of `from` in the good model by `to`. */
static const char *variant(const char *from, const char *to)
{
	static char buf[4096];
	const char *p = strstr(good_model, from);
	cr_assert(p, "fixture lacks '%s'", from);
	snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - good_model), good_model, to,
		 p + strlen(from));
	return buf;
}

/* Loads text as a model; expects failure with "path:line:" and reason. */
static void expect_error(const char *text, int line, const char *reason)
{
	const char *path = tmp_ini_str(0, text);
	struct kmodel m;
	struct kerr err = {""};
	int rc = zoo_load_model(path, &m, NULL, &err);
	cr_assert_eq(rc, -1, "expected an error containing '%s'", reason);
	char loc[128];
	snprintf(loc, sizeof loc, "%s:%d: ", path, line);
	cr_expect(strncmp(err.msg, loc, strlen(loc)) == 0, "message '%s' should start '%s'",
		  err.msg, loc);
	cr_expect(strstr(err.msg, reason), "message '%s' lacks '%s'", err.msg, reason);
	remove(path);
}

Test(ini, good_fixture_loads)
{
	const char *path = tmp_ini_str(0, good_model);
	struct kmodel m;
	struct kerr err = {""};
	cr_assert_eq(zoo_load_model(path, &m, NULL, &err), 0, "%s", err.msg);
	cr_expect_eq(m.layers, 2);
	cr_expect_eq(m.max_context, 4096);
	cr_expect_str_eq(m.name, "tiny");
	remove(path);
}

Test(ini, unknown_section_and_key)
{
	expect_error(variant("[ffn]\n", "[fnn]\n"), 16, "unknown section [fnn]");
	expect_error(variant("layers = 2\n", "layer = 2\n"), 3, "unknown key 'layer' in [model]");
}

Test(ini, missing_required_key_and_section)
{
	expect_error(variant("layers = 2\n", ""), 1, "missing required key 'layers' in [model]");
	expect_error(variant("head_dim = 16\n", ""), 9, "missing key 'head_dim' in [attention]");
	const char *no_decode = "[model]\nname = x\n";
	expect_error(no_decode, 1, "missing required key");
}

Test(ini, malformed_and_out_of_range_numbers)
{
	expect_error(variant("hidden = 64\n", "hidden = 6 4\n"), 4, "model.hidden");
	expect_error(variant("hidden = 64\n", "hidden = sixty\n"), 4, "not a number");
	expect_error(variant("hidden = 64\n", "hidden = 64.5\n"), 4, "whole");
	expect_error(variant("hidden = 64\n", "hidden = nan\n"), 4, "finite");
	expect_error(variant("hidden = 64\n", "hidden = inf\n"), 4, "finite");
	expect_error(variant("hidden = 64\n", "hidden = 0\n"), 4, "greater than zero");
	expect_error(variant("hidden = 64\n", "hidden = -64\n"), 4, "greater than zero");
	expect_error(variant("mtp_acceptance = 0\n", "mtp_acceptance = 1.5\n"), 28, "out of range");
	expect_error(variant("kind = gqa\n", "kind = mha\n"), 10, "not one of: gqa, mla");
	expect_error(variant("weights = bf16\n", "weights = int3\n"), 20, "not one of");
}

Test(ini, duplicates_and_structure)
{
	expect_error(variant("hidden = 64\n", "hidden = 64\nhidden = 64\n"), 5,
		     "duplicate key 'hidden' in [model] (first at line 4)");
	expect_error(variant("[ffn]\n", "[model]\n"), 16, "section [model] repeated");
	expect_error("layers = 2\n[model]\n", 1, "before any [section]");
	expect_error(variant("[ffn]\n", "[ffn\n"), 16, "syntax error");
	expect_error(variant("layers = 2\n", "layers\n"), 3, "syntax error");
	expect_error(variant("layers = 2\n", "layers =\n"), 3, "no value");
	expect_error(variant("[ffn]\n", "[f n]\n"), 16, "bad section name");
}

Test(ini, cross_field_rules)
{
	expect_error(variant("kv_heads = 2\n", "kv_heads = 3\n"), 12, "multiple of kv_heads");
	expect_error(variant("algo = gqa\n", "algo = mla\n"), 15, "needs mla attention");
	expect_error(variant("algo = gqa\n", "algo = gqa\ntopk = 5\n"), 16, "not a parameter of gqa");
	expect_error(variant("algo = gqa\n", "algo = quest\nblock = 0\n"), 16, "out of range");
	expect_error(variant("algo = gqa\n", "algo = quest\nbudget = 8\n"), 15, "smaller than one page");
	expect_error(variant("dense_layers = 2\n", "dense_layers = 3\n"), 17, "exceeds layers");
	expect_error(variant("dense_layers = 2\n", "dense_layers = 1\n"), 17,
		     "missing key 'experts'");
	expect_error(variant("mtp_draft_tokens = 0\n", "mtp_draft_tokens = 1\n"), 27,
		     "needs mtp_layers");
}

Test(ini, empty_truncated_and_crlf)
{
	expect_error("", 1, "missing required section [model]");
	/* truncated mid-line: the key has no value */
	expect_error("[model]\nname = x\nlay", 3, "syntax error");
	/* CRLF line ends and no final newline still load */
	char crlf[4096];
	size_t n = 0;
	for (const char *p = good_model; *p; p++) {
		if (*p == '\n')
			crlf[n++] = '\r';
		crlf[n++] = *p;
	}
	n -= 2; /* drop the final CRLF */
	const char *path = tmp_ini(0, crlf, n);
	struct kmodel m;
	struct kerr err;
	cr_expect_eq(zoo_load_model(path, &m, NULL, &err), 0, "%s", err.msg);
	remove(path);
}

Test(ini, binary_and_huge_lines)
{
	static const char junk[] = "[model]\nname = \x01\x02\x00\xff\n";
	const char *path = tmp_ini(0, junk, sizeof junk - 1);
	struct kmodel m;
	struct kerr err = {""};
	cr_expect_eq(zoo_load_model(path, &m, NULL, &err), -1);
	cr_expect(strstr(err.msg, ":2: binary data"), "%s", err.msg);
	remove(path);

	size_t big = 1 << 20;
	char *line = malloc(big + 32);
	memcpy(line, "[model]\nname = ", 15);
	memset(line + 15, 'a', big);
	memcpy(line + 15 + big, "\n", 2);
	path = tmp_ini(0, line, strlen(line));
	cr_expect_eq(zoo_load_model(path, &m, NULL, &err), -1);
	cr_expect(strstr(err.msg, ":2: line too long"), "%s", err.msg);
	remove(path);
	free(line);
}

Test(ini, comments_are_kept_as_sources)
{
	const char *path = tmp_ini_str(0, "[link]\nname = x ; src: a; b\n"
					  "bandwidth = 1 GB/s # derived: y\n"
					  "latency = 1 us\nefficiency = 1\nenergy = 1 pJ/bit\n");
	struct klink l;
	struct ini_doc *doc = NULL;
	struct kerr err;
	cr_assert_eq(zoo_load_link(path, &l, &doc, &err), 0, "%s", err.msg);
	cr_expect_str_eq(ini_doc_find(doc, "link", "name")->source, "src: a; b");
	cr_expect_str_eq(ini_doc_find(doc, "link", "bandwidth")->source, "derived: y");
	cr_expect_str_eq(ini_doc_find(doc, "link", "latency")->source, "");
	cr_expect_str_eq(l.name, "x");
	ini_doc_free(doc);
	remove(path);
}

Test(ini, not_a_file)
{
	struct kmodel m;
	struct kerr err = {""};
	cr_expect_eq(zoo_load_model("/tmp", &m, NULL, &err), -1);
	cr_expect(strstr(err.msg, "not a regular file"), "%s", err.msg);
	cr_expect_eq(zoo_load_model("/nonexistent/x.ini", &m, NULL, &err), -1);
	cr_expect(strstr(err.msg, "cannot open"), "%s", err.msg);
}

/* Deep nonsense and random bytes: the loader answers, never crashes. */
Test(ini, random_and_nonsense_inputs_never_crash)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 2026);
	static const char *const pieces[] = {"[", "]", "=", ";", "#", "\n", " ",
					     "model", "layers", "[model]\n", "1e308",
					     "\r", "\t", "name", "K", "GB/s", ":"};
	char buf[8192];
	for (int iter = 0; iter < 300; iter++) {
		size_t n = 0, want = gsl_rng_uniform_int(r, sizeof buf - 64);
		int mode = iter % 3;
		while (n < want) {
			if (mode == 0) { /* raw bytes */
				buf[n++] = (char)gsl_rng_uniform_int(r, 256);
			} else { /* token soup */
				const char *p = pieces[gsl_rng_uniform_int(r, 17)];
				size_t l = strlen(p);
				memcpy(buf + n, p, l);
				n += l;
			}
		}
		const char *path = tmp_ini(0, buf, n);
		struct kmodel m;
		struct kerr err = {""};
		if (zoo_load_model(path, &m, NULL, &err) != 0)
			cr_assert(strncmp(err.msg, path, strlen(path)) == 0,
				  "error without location: %s", err.msg);
		remove(path);
	}
	/* a thousand nested brackets and sections */
	char *deep = malloc(200000);
	size_t n = 0;
	for (int i = 0; i < 5000; i++)
		n += (size_t)sprintf(deep + n, "[s%d]\n[[[[\n", i);
	const char *path = tmp_ini(0, deep, n);
	struct kmodel m;
	struct kerr err = {""};
	cr_expect_eq(zoo_load_model(path, &m, NULL, &err), -1);
	remove(path);
	free(deep);
	gsl_rng_free(r);
}
