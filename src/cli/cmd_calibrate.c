/* cmd_calibrate.c: `karat calibrate`: benchmark every kernel, fit its
 * efficiency and fixed overhead over sizes (GSL least squares), write a
 * calibrated CPU device INI and a CSV, and draw the roofline with gnuplot. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/bench_run.h"
#include "karat.h"

struct fitted {
	const struct kernel_def *k;
	struct kernel_fit fit;
	double max_err;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median efficiency of the kernels of class cls bound as asked; 0 if none. */
static double class_eff(const struct fitted *f, int n, enum op_class cls, int compute,
		       char *names, size_t len)
{
	double v[16];
	int m = 0;
	size_t used = 0;
	names[0] = '\0';
	for (int i = 0; i < n; i++)
		if (f[i].k->cls == cls && f[i].fit.compute_bound == compute) {
			v[m++] = fmin(1, f[i].fit.efficiency);
			used += (size_t)snprintf(names + used, len - used, "%s%s", m > 1 ? ", " : "",
						 f[i].k->name);
		}
	if (!m)
		return 0;
	qsort(v, (size_t)m, sizeof *v, cmp_double);
	return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static int write_ini(const char *path, const struct bench_data *d, const struct fitted *f,
		     int n)
{
	char date[32];
	time_t now = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
	double mem = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
	static char text[8192];
	size_t u = 0;
#define OUT(...) (u += (size_t)snprintf(text + u, sizeof text - u, __VA_ARGS__))
	OUT("; This CPU as a device, measured by `karat calibrate` on %s.\n"
	    "; Peak and bandwidth come from its microbenchmarks; each efficiency from\n"
	    "; a least-squares fit of one kernel's time over three sizes.\n\n", date);
	OUT("[device]\nname = This CPU (%d threads, calibrated %s) ; derived: karat calibrate\n",
	    d->roof.threads, date);
	OUT("kind = cpu ; derived: karat calibrate measures the CPU it runs on\n");
	OUT("link = pcie5 ; assumed: a host CPU reaches GPUs over PCIe Gen5 x16\n");
	OUT("tdp = %d W ; assumed: %d cores at 8.4 W (a 270 W 32-core Ice Lake-SP socket per core); "
	    "a VM has no power counter\n", (int)ceil(8.4 * d->roof.threads), d->roof.threads);
	OUT("\n[compute]\nfp32 = %.4g TFLOPS ; derived: FP32 FMA chains on %d threads, best run\n",
	    d->roof.peak / 1e12, d->roof.threads);
	OUT("bf16 = %.4g TFLOPS ; derived: the FP32 peak (the kernels widen BF16 and FP8 to FP32)\n",
	    d->roof.peak / 1e12);
	OUT("\n[memory]\ncapacity = %.4g GB ; derived: physical pages x page size (sysconf)\n",
	    mem / 1e9);
	OUT("bandwidth = %.4g GB/s ; derived: the better of triad a = b + s*c on 3 x 128 MiB "
	    "(%.4g GB/s) and a read-only sum on 2 x 128 MiB (%.4g GB/s), best runs\n",
	    d->roof.bw / 1e9, d->roof.bw_triad / 1e9, d->roof.bw_read / 1e9);
	OUT("\n[efficiency]\n");
	static const struct {
		const char *key;
		enum op_class cls;
		int compute;
		enum op_class fallback_cls;
	} slots[] = {
		{"gemm_compute", OC_GEMM, 1, OC_SCAN}, {"gemm_memory", OC_GEMM, 0, OC_ATTENTION},
		{"attention_compute", OC_ATTENTION, 1, OC_ATTENTION},
		{"attention_memory", OC_ATTENTION, 0, OC_ATTENTION},
		{"scan_compute", OC_SCAN, 1, OC_SCAN}, {"scan_memory", OC_SCAN, 0, OC_SCAN},
		{"gather_memory", OC_GATHER, 0, OC_GATHER},
	};
	for (size_t i = 0; i < sizeof slots / sizeof *slots; i++) {
		char names[256];
		double e = class_eff(f, n, slots[i].cls, slots[i].compute, names, sizeof names);
		if (e > 0) {
			OUT("%s = %.3f ; derived: fit of %s\n", slots[i].key, e, names);
			continue;
		}
		e = class_eff(f, n, slots[i].fallback_cls, slots[i].compute, names, sizeof names);
		if (e > 0)
			OUT("%s = %.3f ; derived: no %s kernel; fit of %s (%s)\n", slots[i].key, e,
			    op_class_names[slots[i].cls], names, op_class_names[slots[i].fallback_cls]);
		else
			OUT("%s = 0.5 ; assumed: no kernel of this class ran %s-bound here\n",
			    slots[i].key, slots[i].compute ? "compute" : "memory");
	}
	OUT("elementwise_memory = %.3f ; derived: the triad against the memory roof\n",
	    d->roof.bw_triad / d->roof.bw);
	double over[16];
	for (int i = 0; i < n; i++)
		over[i] = f[i].fit.overhead_s;
	qsort(over, (size_t)n, sizeof *over, cmp_double);
	OUT("overhead = %.3g us ; derived: median fixed time of the kernel fits\n",
	    1e6 * over[n / 2]);
#undef OUT
	return write_text_atomic(path, text);
}

static int draw(const char *dir, const struct bench_data *d)
{
	char dat[1200], png[1200], cmd[4096];
	snprintf(dat, sizeof dat, "%s/roofline.dat", dir);
	snprintf(png, sizeof png, "%s/roofline.png", dir);
	static char text[16384];
	size_t u = 0;
	for (int i = 0; i < d->n; i++) {
		const struct kernel_result *r = &d->res[i];
		if (r->flops <= 0)
			continue; /* gather does no arithmetic: no point on a FLOP/s plot */
		u += (size_t)snprintf(text + u, sizeof text - u, "%.6g %.6g %s %.0f\n",
				      r->flops / r->bytes, r->flops / r->t.median_s, r->k->name,
				      r->size);
	}
	if (write_text_atomic(dat, text) != 0)
		return -1;
	if (!gnuplot_found()) {
		die_msg("gnuplot not found; skipped %s (sudo apt-get install gnuplot-nox)", png);
		return 0;
	}
	char q[2500], why[300];
	if (gp_quote(dat, q, sizeof q, why, sizeof why) != 0) {
		die_msg("%s", why);
		return -1;
	}
	snprintf(cmd, sizeof cmd, "peak=%.6g; bw=%.6g; datafile=%s;", d->roof.peak, d->roof.bw, q);
	return gnuplot_render(cmd, "roofline.gp", png);
}

int cmd_calibrate(const struct args *a)
{
	const struct command *c = command_find("calibrate");
	struct bench_plan plan;
	int rc = bench_plan_from_args(c, a, &plan);
	if (rc)
		return rc;
	char dir[1024];
	const char *out = arg_get(c, a, "out");
	snprintf(dir, sizeof dir, "%s", out ? out : "");
	if (!out)
		snprintf(dir, sizeof dir, "results"); /* in the current folder */
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		die_msg("%s: cannot create: %s", dir, strerror(errno));
		return 1;
	}
	static struct bench_data d;
	if (bench_execute(&plan, &d, 1, arg_get(c, a, "quiet") != NULL) != 0)
		return 1;
	if (d.untrusted) { /* efficiencies above 1 would be written as facts */
		die_msg("calibration refused: the measurements failed the checks above; "
			"nothing written (rerun on a quiet machine)");
		return 1;
	}
	static struct fitted f[16];
	int nf = 0;
	static const char *const head[] = {"kernel", "size", "threads", "time_s", "predicted_s",
					   "calibrated_s", "error", "best_s"};
	struct table csv;
	table_init(&csv, 8, head, NULL);
	for (int i = 0; i < d.n;) {
		int j = i;
		while (j < d.n && d.res[j].k == d.res[i].k)
			j++;
		struct kerr err;
		f[nf].k = d.res[i].k;
		if (fit_kernel(&d.res[i], j - i, &d.roof, &f[nf].fit, &err) != 0) {
			die_msg("%s", err.msg);
			table_free(&csv);
			return 1;
		}
		for (int s = i; s < j; s++) {
			const struct kernel_result *r = &d.res[s];
			double cal = fit_predict(&f[nf].fit, r, &d.roof);
			double e = (cal - r->t.min_s) / r->t.min_s; /* what was fitted */
			f[nf].max_err = fmax(f[nf].max_err, fabs(e));
			char cell[8][OUT_CELL];
			snprintf(cell[0], OUT_CELL, "%s", r->k->name);
			snprintf(cell[1], OUT_CELL, "%.0f", r->size);
			snprintf(cell[2], OUT_CELL, "%d", d.roof.threads);
			snprintf(cell[3], OUT_CELL, "%.9g", r->t.median_s);
			snprintf(cell[4], OUT_CELL, "%.9g", r->predicted);
			snprintf(cell[5], OUT_CELL, "%.9g", cal);
			snprintf(cell[6], OUT_CELL, "%.4f", e);
			snprintf(cell[7], OUT_CELL, "%.9g", r->t.min_s);
			const char *cells[8] = {cell[0], cell[1], cell[2], cell[3], cell[4], cell[5],
						cell[6], cell[7]};
			table_add(&csv, cells);
		}
		if (f[nf].fit.efficiency > ROOF_TOLERANCE) {
			die_msg("calibration refused: %s fits an efficiency of %.2f of its %s "
				"roof, above 1; nothing written (a busy host slows some sizes "
				"more than others: rerun on a quiet machine)", f[nf].k->name,
				f[nf].fit.efficiency,
				f[nf].fit.compute_bound ? "compute" : "memory");
			table_free(&csv);
			return 1;
		}
		nf++;
		i = j;
	}
	printf("\n%-12s %-8s %10s %12s %16s\n", "kernel", "bound", "efficiency", "overhead_us",
	       "max |error| fit");
	for (int i = 0; i < nf; i++)
		printf("%-12s %-8s %10.3f %12.2f %15.1f%%\n", f[i].k->name,
		       f[i].fit.compute_bound ? "compute" : "memory", f[i].fit.efficiency,
		       1e6 * f[i].fit.overhead_s, 100 * f[i].max_err);
	char path[1200];
	snprintf(path, sizeof path, "%s/calibration.csv", dir);
	rc = write_atomic(path, &csv, 1);
	table_free(&csv);
	if (!rc)
		printf("wrote %s\n", path);
	snprintf(path, sizeof path, "%s/cpu-calibrated.ini", dir);
	if (!rc && (rc = write_ini(path, &d, f, nf)) == 0)
		printf("wrote %s (use: karat ops --hw %s, or --eff-from %s)\n", path, path, path);
	if (!rc)
		rc = draw(dir, &d);
	return rc ? 1 : 0;
}
