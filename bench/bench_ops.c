/* bench_ops.c: `make bench`.  (1) Cost-model throughput: operators built
 * and timed per second on one core (step_build + step_time, no allocation).
 * (2) Process time of `karat ops` for every zoo model.  Medians of repeated
 * runs; warm-up excluded; conditions printed with the numbers. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "karat.h"

#include "bench_util.h"

#ifndef BENCH_CFLAGS
#define BENCH_CFLAGS "(see Makefile)"
#endif

/* Evaluates steps for batches 1..256 until min_s has passed; returns
 * operators per second. */
static double ops_rate(const struct kmodel *m, const struct kdevice *d,
		       const struct klink *l, double min_s, double *sink)
{
	static struct step s;
	struct kerr err;
	long ops = 0;
	double t0 = now(), t;
	do {
		for (int B = 1; B <= 256; B++) {
			struct kbatch b = {.requests = B, .gpus = 8, .context = 131072,
					   .mtp = m->mtp_draft};
			if (step_build(m, &b, &s, &err) != 0) {
				fprintf(stderr, "bench: %s\n", err.msg);
				exit(1);
			}
			*sink += step_time(&s, d, l);
			ops += s.n;
		}
		t = now() - t0;
	} while (t < min_s);
	return ops / t;
}

static double ops_time(const char *bin, const char *model)
{
	char *argv[] = {(char *)bin, "ops", "--model", (char *)model, "--hw", "h200", "--batch",
			"64", "--context", "128K", "--format", "csv", NULL};
	return process_time(argv);
}

int main(int argc, char **argv)
{
	const char *bin = argc > 1 ? argv[1] : KARAT_DATADIR "/build/karat";
	struct kerr err;
	struct kdevice d;
	struct klink l;
	if (zoo_load_device("h200", &d, NULL, &err) || zoo_load_link(d.link, &l, NULL, &err)) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 1;
	}
	printf("karat bench: one core, CFLAGS %s\n", BENCH_CFLAGS);
	printf("cost model: step_build + step_time, batches 1..256, 8 GPUs, 128K context, "
	       "h200; median of 7 runs of >= 0.3 s\n");
	static const char *const models[] = {"deepseek-v3.2", "glm-5.2", "minimax-m3",
					     "llama-3.1-70b", "qwen3-235b-a22b"};
	double sink = 0;
	for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
		struct kmodel m;
		if (zoo_load_model(models[i], &m, NULL, &err)) {
			fprintf(stderr, "bench: %s\n", err.msg);
			return 1;
		}
		ops_rate(&m, &d, &l, 0.1, &sink); /* warm-up */
		double r[7];
		for (int k = 0; k < 7; k++)
			r[k] = ops_rate(&m, &d, &l, 0.3, &sink);
		double med = median(r, 7); /* sorts r */
		printf("  %-16s %6.1f M operators/s (median; min %.1f, max %.1f)\n", models[i],
		       med / 1e6, r[0] / 1e6, r[6] / 1e6);
	}
	printf("process time of `karat ops ... --batch 64 --context 128K --format csv` "
	       "(user + system), median of 21 runs:\n");
	static char names[64][64];
	int n = zoo_list(ZOO_MODEL, names, 64, &err);
	for (int i = 0; i < n; i++) {
		double t[21];
		ops_time(bin, names[i]);
		for (int k = 0; k < 21; k++)
			t[k] = ops_time(bin, names[i]);
		double med = median(t, 21); /* sorts t */
		printf("  %-16s %6.2f ms (max %.2f ms)\n", names[i], 1e3 * med, 1e3 * t[20]);
	}
	return sink < 0; /* keep the work observable */
}
