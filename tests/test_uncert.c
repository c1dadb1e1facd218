/* test_uncert.c: the headline's uncertainty (issue 30 item 7): a file's
 * [range] section read strictly, every assumed figure of the shipped
 * headline devices and links given one, the Latin hypercube's draws, the
 * quantiles and rank correlations against hand-computed ones, and the
 * study reproducible for a seed, end to end. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>

#include "helpers.h"
#include "karat.h"

#define DEV "[efficiency]\ngemm_compute = 0.7 ; assumed: x\n[memory]\nbandwidth = 1200 GB/s ; src: y\n" \
	    "[device]\nname = d ; assumed: z\n"

static int read_ranges(const char *text, struct frange *r, int max, struct kerr *err)
{
	struct ini_doc *d = ini_doc_parse("dev.ini", text, strlen(text), err);
	cr_assert_not_null(d, "%s", err->msg);
	int n = range_read(d, &device_schema, r, max, err);
	ini_doc_free(d);
	return n;
}

Test(range, a_range_reads_in_the_fields_units)
{
	struct frange r[4];
	struct kerr err;
	int n = read_ranges(DEV "[range]\nefficiency.gemm_compute = 0.5 .. 0.85 ; assumed: a\n"
				"memory.bandwidth = 900 GB/s .. 1.5 TB/s ; assumed: b\n", r, 4, &err);
	cr_assert_eq(n, 2, "%s", err.msg);
	cr_expect_str_eq(r[0].key, "efficiency.gemm_compute");
	cr_expect(r[0].lo == 0.5 && r[0].hi == 0.85 && r[0].nominal == 0.7);
	cr_expect(r[1].lo == 9e11 && r[1].hi == 1.5e12 && r[1].nominal == 1.2e12);
	cr_expect_eq(r[1].unit, U_BW);
	cr_expect_eq(r[1].line, 9);
	cr_expect_str_eq(r[1].why, "assumed: b");
}

Test(range, a_bad_range_is_refused_with_its_line)
{
	static const struct {
		const char *line, *want;
	} bad[] = {
		{"efficiency.nope = 0.5 .. 0.8 ; r", "not SECTION.KEY of a numeric"},
		{"device.name = 1 .. 2 ; r", "not SECTION.KEY of a numeric"},
		{"nodot = 1 .. 2 ; r", "not SECTION.KEY of a numeric"},
		{"efficiency.gather_memory = 0.5 .. 0.8 ; r", "the file does not set"},
		{"efficiency.gemm_compute = 0.5 ; r", "is not LOW .. HIGH"},
		{"efficiency.gemm_compute = 0.8 .. 0.5 ; r", "below HIGH"},
		{"efficiency.gemm_compute = 0 .. 0.8 ; r", "above zero"},
		{"efficiency.gemm_compute = 0.75 .. 0.8 ; r", "outside"},
		{"efficiency.gemm_compute = 0.5 .. 1.5 ; r", "the key's limits"},
		{"memory.bandwidth = 900 .. 1500 GB/s ; r", "range.memory.bandwidth:"},
		{"efficiency.gemm_compute = 0.5 .. 0.8", "say why"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char text[600];
		snprintf(text, sizeof text, DEV "[range]\n%s\n", bad[i].line);
		struct frange r[2];
		struct kerr err;
		cr_expect_eq(read_ranges(text, r, 2, &err), -1, "accepted: %s", bad[i].line);
		cr_expect(strstr(err.msg, bad[i].want), "%s: '%s' not in %s", bad[i].line,
			  bad[i].want, err.msg);
		cr_expect(strstr(err.msg, "dev.ini:8:"), "%s: no line in %s", bad[i].line, err.msg);
	}
}

/* A device file with a bad range does not load at all. */
Test(range, a_device_with_a_bad_range_does_not_load)
{
	char text[8192];
	read_text(zoo_path("hw/karat.ini"), text, sizeof text);
	char *r = strstr(text, "select.cores              = 8 .. 32");
	cr_assert_not_null(r);
	memcpy(strchr(r, '='), "=20", 3); /* "= 8" to "=20": 16 falls outside */
	const char *p = tmp_ini_str(0, text);
	struct kdevice d;
	struct kerr err;
	cr_expect_neq(zoo_load_device(p, &d, NULL, &err), 0);
	cr_expect(strstr(err.msg, "range.select.cores: the file's value 16 is outside"), "%s",
		  err.msg);
}

/* Every numeric figure a headline device or link file says it assumed
 * (other than a zero: a share counted elsewhere) states its range. */
Test(range, every_assumed_figure_of_the_headline_devices_has_a_range)
{
	static const char *const files[] = {
		"hw/karat.ini", "hw/h200.ini", "hw/attacc.ini", "hw/duplex.ini",
		"hw/duplex-h200.ini", "hw/cxl-pnm.ini", "hw/host-ddr5.ini", "hw/links/cxl3.ini",
		"hw/links/pcie5.ini", "hw/links/ib-ndr.ini", "hw/links/hbm3e-h200.ini",
		"hw/links/nvlink4.ini"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		struct kerr err;
		struct ini_doc *d = ini_doc_load(zoo_path(files[i]), &err);
		cr_assert_not_null(d, "%s", err.msg);
		const struct schema *s = strstr(files[i], "links/") ? &link_schema : &device_schema;
		int checked = 0;
		for (int k = 0; k < d->n; k++) {
			const struct ini_entry *e = &d->e[k];
			const struct field *f = schema_field(s, e->section, e->key);
			if (!f || f->kind != FK_NUM || strncmp(e->source, "assumed:", 8) != 0)
				continue;
			double v;
			char why[200], key[2 * INI_NAME];
			cr_assert_eq(unit_parse(e->value, f->unit, &v, why, sizeof why), 0);
			if (v == 0)
				continue;
			snprintf(key, sizeof key, "%s.%s", e->section, e->key);
			cr_expect_not_null(ini_doc_find(d, "range", key), "%s:%d: %s is assumed and has "
					   "no [range]", files[i], e->line, key);
			checked++;
		}
		cr_expect(checked > 0 || strstr(files[i], "nvlink4"), "%s: nothing assumed?",
			  files[i]);
		cr_expect_geq(range_read(d, s, NULL, 0, &err), 0, "%s", err.msg);
		ini_doc_free(d);
	}
}

#define STUDY "[study]\ntitle = u\nmodels = deepseek-v3.2\nworkloads = azure-conv\n" \
	      "systems = gpu-only, gpu-karat\nbaseline = gpu-only\ngpus = 8\n"

static void setup_unc(const char *extra, struct study_def *sd, struct study_unc *u)
{
	char text[800];
	snprintf(text, sizeof text, STUDY "%s", extra);
	struct kerr err;
	cr_assert_eq(study_load(tmp_ini_str(1, text), sd, &err), 0, "%s", err.msg);
	cr_assert_eq(study_unc_setup(sd, u, &err), 0, "%s", err.msg);
}

Test(uncert, draws_are_a_latin_hypercube_reproducible_for_a_seed)
{
	static struct study_def sd;
	static struct study_unc u, v, w;
	setup_unc("draws = 20\ndraw_seed = 7\n", &sd, &u);
	setup_unc("draws = 20\ndraw_seed = 7\n", &sd, &v);
	setup_unc("draws = 20\ndraw_seed = 8\n", &sd, &w);
	/* karat.ini 20, h200.ini 11, cxl3 2, pcie5 2, ib-ndr 3 (efficiency,
	 * all-to-all overlap, energy), nvlink4 1 (its all-reduce floor) */
	cr_expect_eq(u.nfig, 39);
	cr_expect_eq(u.ndraw, 20);
	int differ = 0;
	for (int k = 0; k < u.nfig; k++) {
		const struct study_fig *f = &u.fig[k];
		int seen[20] = {0};
		for (int d = 0; d < 20; d++) {
			double x = u.x[d * u.nfig + k];
			cr_expect(x >= f->lo && x <= f->hi, "%s %s: %g outside", f->file, f->key, x);
			cr_expect_eq(x, v.x[d * v.nfig + k]);
			differ += x != w.x[d * w.nfig + k];
			if (f->unit == U_INT)
				continue; /* rounded: strata may share a whole number */
			int s = (int)floor(20 * log(x / f->lo) / log(f->hi / f->lo));
			seen[s < 20 ? s : 19]++;
		}
		for (int s = 0; s < 20 && f->unit != U_INT; s++)
			cr_expect_eq(seen[s], 1, "%s %s: stratum %d drawn %d times", f->file, f->key, s,
				     seen[s]);
	}
	cr_expect_gt(differ, 0, "another seed, the same draws");
	study_unc_free(&u), study_unc_free(&v), study_unc_free(&w);
}

/* A draw's overrides name each figure's file in each role, only on the
 * systems that have it there, and read back to the drawn value. */
Test(uncert, overrides_read_back_to_the_draws)
{
	static struct study_def sd;
	static struct study_unc u;
	setup_unc("draws = 4\n", &sd, &u);
	cr_expect_eq(sd.draw_seed, 1);
	static char sets[ARGS_MAX_MANY][STUDY_SET_LEN];
	for (int sy = 0; sy < 2; sy++) {
		study_unc_sets(&u, 3, sy, sets[0], STUDY_SET_LEN);
		int karat = 0;
		for (int i = 0; i < u.nset[sy]; i++) {
			struct override o;
			struct kerr err;
			cr_assert_eq(override_parse(sets[i], &o, &err), 0, "%s: %s", sets[i], err.msg);
			karat += strstr(sets[i], "memdev[karat].") != NULL;
			int k = 0;
			while (k < u.nfig && (strcmp(u.fig[k].file, o.only) ||
					      !strstr(sets[i], u.fig[k].key)))
				k++;
			cr_assert_lt(k, u.nfig, "%s", sets[i]);
			double v;
			char why[200];
			cr_assert_eq(unit_parse(o.value, u.fig[k].unit, &v, why, sizeof why), 0, "%s",
				     why);
			cr_expect(near(v, u.x[3 * u.nfig + k], 1e-8), "%s: %g", sets[i],
				  u.x[3 * u.nfig + k]);
		}
		cr_expect_eq(karat, sy ? 20 : 0, "system %d: %d KARAT overrides", sy, karat);
	}
	cr_expect_eq(u.nset[0], 11 + 3 + 1, "gpu-only: the H200's, InfiniBand's and NVLink's");
	study_unc_free(&u);
}

/* On a hand-built grid whose ratio rises with figure 0's draws, the rows'
 * quantiles are GSL's over the draws, figure 0 ranks first at +1, and a
 * draw where a side serves nothing is left out. */
Test(uncert, rows_are_the_quantiles_and_rank_correlations)
{
	static struct study_def sd;
	static struct study_unc u;
	setup_unc("draws = 9\n", &sd, &u);
	enum { D = 9 };
	struct study_point pt[2 * (D + 1)];
	int start[2 * (D + 1) + 1];
	static struct result res[2 * (D + 1)];
	memset(pt, 0, sizeof pt);
	memset(res, 0, sizeof res);
	for (int i = 0; i < 2 * (D + 1); i++) {
		pt[i].system = i % 2, pt[i].step = i / 2, start[i] = i;
		res[i].feasible = 1;
		res[i].tok_per_w = 1;
	}
	start[2 * (D + 1)] = 2 * (D + 1);
	res[1].tok_per_w = 2; /* nominal */
	double q[D];
	int n = 0;
	for (int d = 0; d < D; d++) {
		double x = u.x[d * u.nfig + 0];
		res[2 * (d + 1) + 1].tok_per_w = 1 + x / u.fig[0].hi;
		if (d == 4)
			res[2 * (d + 1)].feasible = 0; /* the baseline serves nothing */
		else
			q[n++] = 1 + x / u.fig[0].hi;
	}
	struct study_grid g = {.pt = pt, .n = 2 * (D + 1), .ngroup = D + 1, .nsystem = 2,
			       .baseline = 0, .start = start};
	struct study_unc_row r;
	cr_assert_eq(study_unc_nrows(&g, &sd), 1);
	cr_assert_eq(study_unc_rows(&sd, &u, &g, res, SM_TDP, &r), 0);
	gsl_sort(q, 1, n);
	cr_expect_eq(r.n, 8);
	cr_expect_eq(r.nominal, 2);
	/* the 10th, 50th and 90th percentiles of 8 sorted values by hand:
	 * position (n - 1) x p, linear between neighbours */
	cr_expect(near(r.p10, q[0] + 0.7 * (q[1] - q[0]), 1e-12), "%g", r.p10);
	cr_expect(near(r.p50, q[3] + 0.5 * (q[4] - q[3]), 1e-12), "%g", r.p50);
	cr_expect(near(r.p90, q[6] + 0.3 * (q[7] - q[6]), 1e-12), "%g", r.p90);
	cr_expect(r.lo == q[0] && r.hi == q[7]);
	cr_expect(r.lo <= r.p10 && r.p10 <= r.p50 && r.p50 <= r.p90 && r.p90 <= r.hi);
	cr_expect_eq(r.order[0], 0);
	cr_expect(near(r.rho[0], 1, 1e-12), "%g", r.rho[0]);
	cr_expect(near(r.noise, 2 / sqrt(7.0), 1e-12));
	/* an energy figure cannot move throughput per TDP: no correlation */
	for (int k = 0; k < u.nfig; k++)
		if (!strncmp(u.fig[k].key, "energy.", 7) || !strncmp(u.fig[k].key, "node.", 5))
			cr_expect(isnan(r.rho[k]), "%s %s: %g", u.fig[k].file, u.fig[k].key, r.rho[k]);
	study_unc_free(&u);
}

Test(uncert, a_draws_study_refuses_steps_and_axes)
{
	static const char *const bad[] = {"slos_ms = 50, 100\n", "gpu_types = h200\n",
					  "[steps]\na = none\n"};
	for (int i = 0; i < 3; i++) {
		char text[600];
		snprintf(text, sizeof text, STUDY "draws = 4\n%s", bad[i]);
		static struct study_def sd;
		struct kerr err;
		cr_expect_neq(study_load(tmp_ini_str(1, text), &sd, &err), 0, "accepted: %s", bad[i]);
		cr_expect(strstr(err.msg, ":8: study.draws: an uncertainty study has no"), "%s",
			  err.msg);
	}
}

/* karat run on a small uncertainty study: the same seed writes the same
 * CSVs, P10 <= P50 <= P90 inside the draws' range, and the drivers CSV
 * names every figure once per row. */
Test(uncert, a_small_study_is_reproducible_for_its_seed)
{
	char dir[] = "/tmp/karat-unc-XXXXXX", path[600], args[800];
	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/unc.ini", dir);
	cr_assert_eq(write_text(path, STUDY "memdevs_per_gpu = 2\ndraws = 6\nsamples = 8\n"), 0);
	static char first[1 << 14], again[1 << 14], drv[1 << 16];
	static char out[1 << 16], err[1 << 12];
	for (int k = 0; k < 2; k++) {
		snprintf(args, sizeof args, "run %s --out %s --quiet", path, dir);
		cr_assert_eq(run_karat(args, out, sizeof out, err, sizeof err), 0, "%s", err);
		snprintf(path + strlen(dir), sizeof path - strlen(dir), "/unc.csv");
		read_text(path, k ? again : first, sizeof first);
		snprintf(path + strlen(dir), sizeof path - strlen(dir), "/unc.ini");
	}
	cr_expect_str_eq(first, again);
	cr_expect(strstr(out, "over 6 draws of the assumed figures: P10 "), "%s", out);
	const char *row = strchr(first, '\n');
	cr_assert_not_null(row);
	double v[6];
	const char *c = row + 1;
	for (int i = 0, col = 0; col < 16 && c; col++) { /* nominal .. max: columns 11-16 */
		if (col >= 10)
			v[i++] = atof(c);
		c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
	}
	cr_expect(v[4] <= v[1] && v[1] <= v[2] && v[2] <= v[3] && v[3] <= v[5],
		  "min %g p10 %g p50 %g p90 %g max %g", v[4], v[1], v[2], v[3], v[5]);
	snprintf(path + strlen(dir), sizeof path - strlen(dir), "/unc-drivers.csv");
	read_text(path, drv, sizeof drv);
	int lines = 0;
	for (const char *p = drv; (p = strchr(p, '\n')); p++)
		lines++;
	cr_expect_eq(lines, 1 + 39, "%s", drv);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}
