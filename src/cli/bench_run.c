/* bench_run.c: shared by `karat bench` and `karat calibrate`. */
#include "cli/bench_run.h"
#include "cli/progress.h"

#include <string.h>

#include "karat.h"

#ifndef KARAT_KERNEL_FLAGS
#define KARAT_KERNEL_FLAGS "?"
#endif

int bench_plan_from_args(const struct command *c, const struct args *a,
			 struct bench_plan *p)
{
	memset(p, 0, sizeof *p);
	p->min_time = 0.2;
	const char *mt = arg_get(c, a, "min-time");
	if (mt) {
		char why[160];
		if (unit_parse(mt, U_TIME, &p->min_time, why, sizeof why) != 0)
			return usage_error(c, "--min-time: %s", why);
		if (p->min_time <= 0 || p->min_time > 60)
			return usage_error(c, "--min-time must be in (0, 60 s]");
	}
	for (int i = 0; i < a->npos; i++) {
		/* a name runs its kernel and its variants (topk: topk, topk_simd) */
		size_t len = strlen(a->pos[i]);
		int found = 0;
		for (int j = 0; j < kernel_count && p->nk < BENCH_MAX_KERNELS; j++) {
			const char *nm = kernel_table[j]->name;
			if (strncmp(nm, a->pos[i], len) == 0 && (nm[len] == 0 || nm[len] == '_')) {
				int dup = 0;
				for (int x = 0; x < p->nk; x++)
					dup |= p->k[x] == kernel_table[j];
				if (!dup)
					p->k[p->nk++] = kernel_table[j];
				found = 1;
			}
		}
		if (!found) {
			char list[256] = "";
			size_t used = 0;
			for (int j = 0; j < kernel_count; j++)
				used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
							 j ? ", " : "", kernel_table[j]->name);
			return usage_error(c, "unknown kernel '%.40s' (kernels: %s)", a->pos[i], list);
		}
	}
	if (!p->nk)
		for (int j = 0; j < kernel_count; j++)
			p->k[p->nk++] = kernel_table[j];
	return 0;
}

int bench_execute(const struct bench_plan *p, struct bench_data *d, int human, int quiet)
{
	FILE *info = human ? stdout : stderr;
	const char *pre = human ? "" : "karat bench: ";
	struct kerr err;
	memset(d, 0, sizeof *d);
	if (measure_roof(p->min_time, &d->roof, &err) != 0) {
		die_msg("%s", err.msg);
		return -1;
	}
	fprintf(info, "%sconditions: %d threads (OpenMP), kernels built with %s\n", pre,
		d->roof.threads, KARAT_KERNEL_FLAGS);
	fprintf(info, "%sroofline of this CPU: memory %.2f GB/s (triad %.2f GB/s on 3 x 128 MiB "
		"doubles, read-only %.2f GB/s; best runs), FP32 FMA peak %.1f GFLOP/s "
		"(%.1f on one thread; ridge %.1f FLOP/B)\n", pre, d->roof.bw / 1e9,
		d->roof.bw_triad / 1e9, d->roof.bw_read / 1e9, d->roof.peak / 1e9,
		d->roof.peak1 / 1e9, d->roof.peak / d->roof.bw);
	char why[400];
	if (roof_check(&d->roof, why, sizeof why) != 0) {
		d->untrusted = 1;
		die_msg("warning: %s", why);
	}
	fprintf(info, "%stiming: warm-up excluded, repetitions until %.3g s and at least 5, "
		"median reported; CLOCK_MONOTONIC\n", pre, p->min_time);
	struct progress pg;
	progress_begin(&pg, "karat bench", "kernel sizes",
		       (long)p->nk * KERNEL_SIZES, quiet);
	for (int i = 0; i < p->nk; i++) {
		const struct kernel_def *k = p->k[i];
		progress_clear(&pg);
		fprintf(info, "%s%s: %s; sizes in %s\n", pre, k->name, k->shape, k->size_name);
		fflush(info);
		for (int s = 0; s < KERNEL_SIZES && d->n < BENCH_MAX; s++) {
			progress_update(&pg, (long)i * KERNEL_SIZES + s, k->name);
			if (bench_kernel(k, k->sizes[s], &d->roof, p->min_time, &d->res[d->n], &err)) {
				die_msg("%s", err.msg);
				return -1;
			}
			d->clock_res = d->res[d->n].t.clock_res_s;
			if (result_check(&d->res[d->n], why, sizeof why) != 0)
				die_msg("warning: %s", why); /* calibrate refuses a fit above 1 */
			d->n++;
		}
	}
	progress_end(&pg, "every kernel measured");
	fprintf(info, "%sclock resolution %.0f ns\n", pre, d->clock_res * 1e9);
	return 0;
}
