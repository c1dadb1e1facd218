/* cmd_run.c: `karat run`, the main job.  Until the system model exists it
 * prints the per-operator tables of the three sparse-attention models at
 * 128K context on an H200 and on the KARAT device, and writes each as CSV
 * to results/ops-MODEL-DEVICE.csv. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/load.h"
#include "cli/report.h"

static const char *const study_models[] = {"deepseek-v3.2", "glm-5.2", "minimax-m3"};
static const char *const study_devices[] = {"h200", "karat"};
#define STUDY_CONTEXT 131072.0

static int one(const char *model, const char *hw, double batch)
{
	struct kmodel m;
	struct kdevice d;
	struct klink l;
	int rc = load_setup_args(model, hw, &m, &d, &l);
	if (rc)
		return rc;
	struct ops_setup o = {.m = &m, .d = &d, .l = &l, .dev_label = hw,
			      .link_label = d.link};
	o.b = (struct kbatch){.requests = batch, .gpus = 1, .context = STUDY_CONTEXT,
			      .mtp = m.mtp_draft, .sp = &m.sp};
	static struct step s;
	struct table t;
	if (ops_table(&o, &s, &t, 0) != 0)
		return 1;
	printf("\n");
	ops_heading(&o, &s, stdout);
	rc = table_write(&t, stdout, 0) != 0;
	ops_footer(&o, &s, stdout);
	table_free(&t);
	if (ops_table(&o, &s, &t, 1) != 0)
		return 1;
	char path[1200];
	snprintf(path, sizeof path, "%s/results/ops-%s-%s.csv", zoo_home(), model, hw);
	rc |= write_atomic(path, &t, 1) != 0;
	table_free(&t);
	if (!rc)
		printf("wrote %s\n", path);
	return rc;
}

int cmd_run(const struct args *a)
{
	const struct command *c = command_find("run");
	double batch = 64;
	const char *b = arg_get(c, a, "batch");
	if (b && parse_count("batch", b, 0, 1, 1e6, &batch))
		return EXIT_USAGE;
	char dir[1100];
	snprintf(dir, sizeof dir, "%s/results", zoo_home());
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		die_msg("%s: cannot create: %s", dir, strerror(errno));
		return 1;
	}
	printf("karat run: one decode step at %g-token context, batch %g, one GPU or "
	       "device,\neach model's own MTP setting.  The system model (placement, "
	       "pipeline, SLO solver) comes later.\n", STUDY_CONTEXT, batch);
	int rc = 0;
	for (size_t i = 0; i < sizeof study_models / sizeof *study_models; i++)
		for (size_t j = 0; j < sizeof study_devices / sizeof *study_devices; j++)
			rc |= one(study_models[i], study_devices[j], batch);
	return rc ? 1 : 0;
}
