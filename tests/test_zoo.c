/* test_zoo.c: every shipped model, device and link loads, every value in
 * them names its source, and each model's shape reproduces its published
 * parameter count and cache sizes. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

static int sourced(const char *s)
{
	return strncmp(s, "src:", 4) == 0 || strncmp(s, "derived:", 8) == 0 ||
	       strncmp(s, "assumed:", 8) == 0 || strncmp(s, "fitted:", 7) == 0 ||
	       strncmp(s, "sibling:", 8) == 0;
}

static void check_sources(const struct ini_doc *d)
{
	for (int i = 0; i < d->n; i++)
		cr_expect(sourced(d->e[i].source), "%s:%d: %s.%s has no src:/derived:/assumed:/fitted:/sibling: comment",
			  d->path, d->e[i].line, d->e[i].section, d->e[i].key);
}

Test(zoo, every_model_loads_is_sourced_and_matches_its_parameter_count)
{
	static char names[64][64];
	struct kerr err;
	int n = zoo_list(ZOO_MODEL, names, 64, &err);
	cr_assert_geq(n, 9, "%s", err.msg);
	static const char *const required[] = {"deepseek-v3.2", "deepseek-v3", "glm-5",
					       "glm-5.2", "minimax-m3", "kimi-k2",
					       "qwen3-235b-a22b", "llama-3.1-70b",
					       "llama-3.1-405b"};
	for (size_t r = 0; r < sizeof required / sizeof *required; r++) {
		int found = 0;
		for (int i = 0; i < n; i++)
			found |= strcmp(names[i], required[r]) == 0;
		cr_expect(found, "model %s missing from the zoo", required[r]);
	}
	for (int i = 0; i < n; i++) {
		struct kmodel m;
		struct ini_doc *doc = NULL;
		cr_assert_eq(zoo_load_model(names[i], &m, &doc, &err), 0, "%s", err.msg);
		check_sources(doc);
		struct param_count p;
		model_params(&m, &p);
		cr_expect(near(p.total, m.total_params, 0.02),
			  "%s: shape gives %.1fB parameters, published %.1fB", names[i],
			  p.total / 1e9, m.total_params / 1e9);
		ini_doc_free(doc);
	}
}

Test(zoo, published_cache_sizes)
{
	static const struct {
		const char *model;
		double kv, index;
	} want[] = {
		{"deepseek-v3.2", 40016, 8052}, {"deepseek-v3", 70272, 0},
		{"glm-5", 51168, 10296},        {"glm-5.2", 51168, 2772},
		{"minimax-m3", 61440, 7296},    {"kimi-k2", 70272, 0},
		{"qwen3-235b-a22b", 96256, 0}, {"llama-3.1-70b", 327680, 0},
		{"llama-3.1-405b", 516096, 0},
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		struct kmodel m;
		struct kerr err;
		cr_assert_eq(zoo_load_model(want[i].model, &m, NULL, &err), 0, "%s", err.msg);
		double kv, idx;
		attn_bytes_per_token(&m, &m.sp, &kv, &idx);
		cr_expect_eq(model_kv_bytes_token(&m), want[i].kv, "%s KV %g", want[i].model,
			     model_kv_bytes_token(&m));
		cr_expect_eq(kv, want[i].kv, "%s KV as kept %g", want[i].model, kv);
		cr_expect_eq(idx, want[i].index, "%s index %g", want[i].model, idx);
	}
}

Test(zoo, every_device_and_link_loads_and_is_sourced)
{
	static char names[64][64];
	struct kerr err;
	int n = zoo_list(ZOO_DEVICE, names, 64, &err);
	cr_assert_geq(n, 16, "%s", err.msg);
	for (int i = 0; i < n; i++) {
		struct kdevice d;
		struct klink l;
		struct ini_doc *doc = NULL;
		cr_assert_eq(zoo_load_device(names[i], &d, &doc, &err), 0, "%s", err.msg);
		check_sources(doc);
		ini_doc_free(doc);
		cr_expect_eq(zoo_load_link(d.link, &l, NULL, &err), 0, "%s: %s", names[i], err.msg);
	}
	n = zoo_list(ZOO_LINK, names, 64, &err);
	cr_assert_geq(n, 8, "%s", err.msg);
	for (int i = 0; i < n; i++) {
		struct klink l;
		struct ini_doc *doc = NULL;
		cr_assert_eq(zoo_load_link(names[i], &l, &doc, &err), 0, "%s", err.msg);
		check_sources(doc);
		ini_doc_free(doc);
	}
}

Test(zoo, karat_device_is_sized_for_the_dsa_scan)
{
	struct kdevice d;
	struct kerr err;
	cr_assert_eq(zoo_load_device("karat", &d, NULL, &err), 0, "%s", err.msg);
	double flop_per_byte = d.peak[DT_FP8] / d.mem_bw;
	cr_expect(flop_per_byte >= 125 && flop_per_byte <= 250, "%g FLOP/B", flop_per_byte);
	cr_expect_eq(d.kind, DEV_PNM);
	/* a fixed-function PIM refuses the index scan */
	cr_assert_eq(zoo_load_device("attacc", &d, NULL, &err), 0, "%s", err.msg);
	cr_expect(!(d.supports & (1u << OC_SCAN)));
	cr_expect(d.supports & (1u << OC_ATTENTION));
}

Test(zoo, unknown_names_and_paths)
{
	char path[256];
	struct kerr err = {""};
	cr_expect_eq(zoo_resolve(ZOO_MODEL, "gpt-7", path, sizeof path, &err), ZOO_BAD_NAME);
	/* the library names no command; the CLI adds "(see karat list models)"
	 * (test_cli checks the whole message) */
	cr_expect_str_eq(err.msg, "unknown model 'gpt-7'");
	cr_expect_eq(zoo_resolve(ZOO_MODEL, "deepseek-v32", path, sizeof path, &err), ZOO_BAD_NAME);
	cr_expect_str_eq(err.msg, "unknown model 'deepseek-v32' (did you mean 'deepseek-v3.2'?)");
	cr_expect_eq(zoo_resolve(ZOO_MODEL, "../etc/passwd", path, sizeof path, &err), 0,
		     "paths are taken as given");
	cr_expect_eq(zoo_resolve(ZOO_DEVICE, "H200!", path, sizeof path, &err), ZOO_BAD_NAME);
}

/* The notes the project was built from, outside the repository: no
 * shipped file, code or doc may cite them. */
static const char *const notes[] = {"shared/reference", "shared/seeds", "hardware.md", "models.md",
				    "calibration.md", "traces.md", "DESIGN.md", "sparse_attention.md",
				    "STYLE.md", "peers.md", "style-anchors.md"};

/* Every source a shipped file cites is one a reader of the repository can
 * reach: no file outside it (the notes the project was built from), and
 * every tag of the form NAME_X cited in a comment is defined at the end of
 * the same file as "; NAME_X = URL or reference". */
Test(zoo, every_cited_source_is_reachable)
{
	static const char *const dirs[] = {"models", "hw", "hw/links", "hw/systems", "workloads",
					   "studies", "sweeps", "validation", "plots"};
	static const char *const outside[] = {"../shared", "seeds/"}; /* and notes[] */
	int files = 0;
	for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
		char dir[1200];
		snprintf(dir, sizeof dir, "%s/%s", KARAT_DATADIR, dirs[d]);
		DIR *dp = opendir(dir);
		cr_assert_not_null(dp, "%s", dir);
		for (struct dirent *e; (e = readdir(dp));) {
			size_t n = strlen(e->d_name);
			if (n < 5 || (strcmp(e->d_name + n - 4, ".ini") && strcmp(e->d_name + n - 4, ".csv") &&
				      strcmp(e->d_name + n - 3, ".gp")))
				continue;
			char path[2400];
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			static char text[1 << 20];
			read_text(path, text, sizeof text);
			files++;
			for (size_t k = 0; k < sizeof outside / sizeof *outside; k++)
				cr_expect(!strstr(text, outside[k]), "%s cites %s, which is not in the repository",
					  path, outside[k]);
			for (size_t k = 0; k < sizeof notes / sizeof *notes; k++)
				cr_expect(!strstr(text, notes[k]), "%s cites %s, which is not in the repository",
					  path, notes[k]);
			/* tags: capitals and digits with an underscore, in comments */
			for (const char *line = text; *line;) {
				size_t ll = strcspn(line, "\n");
				const char *semi = memchr(line, ';', ll);
				for (const char *q = semi; q && q < line + ll; q++) {
					if (!isupper((unsigned char)*q) || isalnum((unsigned char)q[-1]) || q[-1] == '_')
						continue;
					size_t len = strspn(q, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
					if (len < 4 || !memchr(q, '_', len) || isalnum((unsigned char)q[len]) ||
					    q[len - 1] == '_' || (size_t)(q + len - line) > ll) {
						q += len ? len - 1 : 0;
						continue;
					}
					char def[96];
					snprintf(def, sizeof def, "\n; %.*s = ", (int)len, q);
					cr_expect(strstr(text, def) != NULL,
						  "%s: tag %.*s is cited but not defined at the end of the file", path,
						  (int)len, q);
					q += len - 1;
				}
				line += ll + (line[ll] == '\n');
			}
		}
		closedir(dp);
	}
	cr_expect_gt(files, 60);
}

/* The code, its tests and its docs cite sources a reader can reach too:
 * none names the notes the project was built from (they are not in the
 * repository).  Each hit is reported with its file. */
static int notes_hits, notes_files;

static int scan_for_notes(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st, (void)f;
	size_t n = strlen(path);
	if (type != FTW_F || strstr(path, "/tests/test_zoo.c") ||
	    !((n > 2 && (!strcmp(path + n - 2, ".c") || !strcmp(path + n - 2, ".h"))) ||
	      (n > 3 && !strcmp(path + n - 3, ".md")) || (n > 4 && !strcmp(path + n - 4, ".def"))))
		return 0;
	static char text[1 << 20];
	read_text(path, text, sizeof text);
	notes_files++;
	for (size_t k = 0; k < sizeof notes / sizeof *notes; k++)
		if (strstr(text, notes[k])) {
			notes_hits++;
			cr_expect(0, "%s cites %s, which is not in the repository", path, notes[k]);
		}
	return 0;
}

Test(zoo, code_and_docs_cite_no_notes_outside_the_repository)
{
	static const char *const roots[] = {"src", "tests", "bench", "docs", "README.md", "CONTRIBUTING.md"};
	for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) {
		char root[1200];
		snprintf(root, sizeof root, "%s/%s", KARAT_DATADIR, roots[i]);
		cr_expect_eq(nftw(root, scan_for_notes, 16, FTW_PHYS), 0, "%s", root);
	}
	cr_expect_gt(notes_files, 150, "files read: %d", notes_files);
	cr_expect_eq(notes_hits, 0);
}

/* Issue 28 item 2: a kernel-level value's source says how it was
 * calibrated: fitted, sibling NAME, or (anything else) assumed. */
Test(zoo, calibration_status_reads_the_source_tag)
{
	char name[64];
	cr_expect_eq(cal_status_of("fitted: validation/deepgemm-h800.csv; x", name, sizeof name),
		     CAL_FITTED);
	cr_expect_str_eq(name, "validation/deepgemm-h800.csv");
	cr_expect_eq(cal_status_of("fitted: validation/a.csv (its rows), a fit", name, sizeof name),
		     CAL_FITTED);
	cr_expect_str_eq(name, "validation/a.csv");
	cr_expect_eq(cal_status_of("fitted: the README's H800 figure; x (y)", name, sizeof name),
		     CAL_FITTED);
	cr_expect_str_eq(name, "the README's H800 figure");
	cr_expect_eq(cal_status_of("sibling: h800 (the same SM90 kernels); x", name, sizeof name),
		     CAL_SIBLING);
	cr_expect_str_eq(name, "h800");
	cr_expect_eq(cal_status_of("src: a datasheet", name, sizeof name), CAL_ASSUMED);
	cr_expect_eq(cal_status_of("derived: another simulator's figure", name, sizeof name),
		     CAL_ASSUMED);
	cr_expect_str_eq(name, "");
	cr_expect(cal_is_kernel_value("efficiency", "gather_memory"));
	cr_expect(cal_is_kernel_value("select", "unit_rate") && cal_is_kernel_value("link", "a2a_floor"));
	cr_expect(!cal_is_kernel_value("kernel", "sms") && !cal_is_kernel_value("memory", "bandwidth"));
}

/* Every shipped device and link: a sibling names a device or link of the
 * zoo, a fit on a table names one that exists; the Hopper fits are the
 * H800's own, the other Hopper parts carry them over, and B200 fits its
 * selection. */
static void check_calibration(const struct ini_doc *doc, int *fitted, int *sibling)
{
	*fitted = *sibling = 0;
	for (int k = 0; k < doc->n; k++) {
		const struct ini_entry *e = &doc->e[k];
		char from[256], path[1024];
		struct kerr err;
		if (!cal_is_kernel_value(e->section, e->key))
			continue;
		enum cal_status s = cal_status_of(e->source, from, sizeof from);
		if (s == CAL_SIBLING) {
			(*sibling)++;
			cr_expect(zoo_resolve(ZOO_DEVICE, from, path, sizeof path, &err) == 0 ||
				  zoo_resolve(ZOO_LINK, from, path, sizeof path, &err) == 0,
				  "%s:%d: sibling '%s' is no device or link", doc->path, e->line, from);
		} else if (s == CAL_FITTED) {
			(*fitted)++;
			cr_expect(from[0], "%s:%d: a fit that names nothing", doc->path, e->line);
			if (!strncmp(from, "validation/", 11)) {
				FILE *f = fopen(zoo_path(from), "r");
				cr_expect_not_null(f, "%s:%d: no table %s", doc->path, e->line, from);
				if (f)
					fclose(f);
			}
		}
	}
}

Test(zoo, every_device_and_link_says_its_calibration)
{
	static char names[64][64];
	struct kerr err;
	int n = zoo_list(ZOO_DEVICE, names, 64, &err);
	for (int i = 0; i < n; i++) {
		struct kdevice d;
		struct ini_doc *doc = NULL;
		int fitted, sibling;
		cr_assert_eq(zoo_load_device(names[i], &d, &doc, &err), 0, "%s", err.msg);
		check_calibration(doc, &fitted, &sibling);
		if (!strcmp(names[i], "h800"))
			cr_expect_geq(fitted, 8, "the Hopper fits are the H800's own");
		if (!strcmp(names[i], "h200") || !strcmp(names[i], "h100"))
			cr_expect(fitted == 0 && sibling >= 9, "%s carries the H800's fits", names[i]);
		if (!strcmp(names[i], "b200"))
			cr_expect_geq(fitted, 3, "B200 fits its selection and attention floor");
		ini_doc_free(doc);
	}
	n = zoo_list(ZOO_LINK, names, 64, &err);
	for (int i = 0; i < n; i++) {
		struct klink l;
		struct ini_doc *doc = NULL;
		int fitted, sibling;
		cr_assert_eq(zoo_load_link(names[i], &l, &doc, &err), 0, "%s", err.msg);
		check_calibration(doc, &fitted, &sibling);
		if (!strcmp(names[i], "nvlink4") || !strcmp(names[i], "ib-ndr"))
			cr_expect_geq(fitted, 1, "%s: its all-to-all floor is measured", names[i]);
		ini_doc_free(doc);
	}
}
