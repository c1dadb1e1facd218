/* cmd_plot.c: `karat plot [FIGURE...] [--from DIR] [--format png|svg|pdf]`:
 * re-renders figures from their CSVs alone, through a static table of
 * figures (name, CSV, gnuplot script in plots/, the columns it reads).  A
 * missing CSV, or one without a column the script reads, is an error that
 * names the file and the column; so is any warning gnuplot prints. */
#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/suggest.h"
#include "karat.h"

struct figure {
	const char *name, *what;
	const char *csv, *csv2;   /* in --from DIR; csv2: a second panel */
	const char *script;       /* in plots/ */
	const char *vars;         /* more -e variables, or "" */
	const char *cols[8];      /* the columns the script reads */
	const char *made_by;      /* what writes the CSV */
};

#define STUDY_COLS {"model", "algo", "workload", "system", "view", "tok_s_per_w", "vs_gpu_only"}
static const struct figure figures[] = {
	{"headline", "each system at its best, the headline study", "headline.csv", NULL,
	 "headline.gp", "", STUDY_COLS, "karat run headline"},
	{"training-free", "each system at its best, the training-free study",
	 "training-free.csv", NULL, "headline.gp", "", STUDY_COLS, "karat run training-free"},
	{"validation", "the model against published kernel timings", "validation.csv", NULL,
	 "validation.gp", "", {"kernel", "predicted", "measured", "unit"}, "karat validate"},
	{"ablation", "the schedules against the micro-batch count, per model",
	 "ablation.csv", "ablation-ep.csv", "ablation.gp",
	 "title1='8 GPUs, 32 devices, batch 768'; title2='32 GPUs, 128 devices, batch 3072'",
	 {"model", "schedule", "microbatches", "throughput_tok_s"},
	 "make run (karat sweep sweeps/ablation.ini, sweeps/ablation-ep.ini)"},
	{"sensitivity", "a tornado of the KARAT device's assumed figures, half and twice",
	 "sensitivity.csv", NULL, "tornado.gp", "", {"model", "vary", "tok_s_per_w"},
	 "make run (karat sweep sweeps/sensitivity.ini)"},
	{"tbt-batch", "P99 TBT against the batch per system, the SLO and the capacity wall",
	 "tbt-batch.csv", NULL, "tbt-batch.gp", "",
	 {"system", "batch", "tbt_p99_s", "slo_s", "reason"},
	 "make run (karat sweep sweeps/tbt-batch.ini)"},
	{"pareto", "throughput per TDP against P99 TBT per system, batch by batch",
	 "tbt-batch.csv", NULL, "pareto.gp", "",
	 {"system", "tbt_p99_s", "tok_s_per_w", "slo_s", "reason"},
	 "make run (karat sweep sweeps/tbt-batch.ini)"},
	{"cdf", "step times over the sampled batches, GPU-only against GPU + KARAT",
	 "steps-gpu-only.csv", "steps-gpu-karat.csv", "cdf.gp",
	 "title1='GPU-only, 8 GPUs, batch 24'; title2='GPU + KARAT, 8 GPUs, 32 devices, batch 769'",
	 {"tbt_s", "cdf"}, "make run (karat query --step-times)"},
	{"ops-roofline", "every decode operator on the roofline of the GPU and of KARAT",
	 "roofline-h200.csv", "roofline-karat.csv", "ops-roofline.gp",
	 "side2='cache'; title1='H200: DeepSeek-V3.2, 64 requests at 128K on 8 GPUs'; "
	 "title2='KARAT: the cache-side operators of the same step'",
	 {"op", "side", "intensity_flop_per_byte", "achieved_flops_per_s", "peak_flops_per_s",
	  "bandwidth_bytes_per_s"},
	 "make run (karat ops --roofline)"},
	{"timeline", "one sampled batch's schedule, naive against OFMS+CMR",
	 "timeline-naive.csv", "timeline-ofms-cmr.csv", "timeline.gp",
	 "title1='naive'; title2='OFMS+CMR'",
	 {"microbatch", "layer", "resource", "start_s", "end_s"},
	 "make run (karat query --timeline)"},
};
#define NFIG (int)(sizeof figures / sizeof *figures)

struct header {
	char names[64][64];
	int n, done;
};

static void on_field(void *s, size_t len, void *data)
{
	struct header *h = data;
	if (!h->done && h->n < 64)
		snprintf(h->names[h->n++], 64, "%.*s", (int)len, (const char *)s);
}

static void on_row(int c, void *data)
{
	(void)c;
	((struct header *)data)->done = 1;
}

/* The CSV exists, is a regular file, and its header (its first line: the
 * only part karat reads; gnuplot reads the rest) has every column f
 * reads. */
static int check_csv(const struct figure *f, const char *path)
{
	struct kerr err;
	struct stat st;
	int fd = file_open_regular(path, "figure data", " (a figure reads a CSV file)", &st, &err);
	if (fd < 0) {
		die_msg("%s (figure %s: %s writes it)", err.msg, f->name, f->made_by);
		return 1;
	}
	static char buf[65536];
	size_t len = 0;
	ssize_t r = 0;
	while (len < sizeof buf && !memchr(buf, '\n', len) &&
	       ((r = read(fd, buf + len, sizeof buf - len)) > 0 || (r < 0 && errno == EINTR)))
		len += r > 0 ? (size_t)r : 0;
	close(fd);
	size_t end = 0;
	while (end < len && buf[end] != '\n')
		end++;
	if (end == len && len == sizeof buf) {
		die_msg("%s:1: a header longer than %zu bytes", path, sizeof buf);
		return 1;
	}
	static struct header h;
	memset(&h, 0, sizeof h);
	struct csv_parser p;
	int rc = 0;
	if (csv_init(&p, 0) != 0)
		rc = (die_msg("%s: cannot start the CSV parser", path), 1);
	if (!rc) {
		csv_parse(&p, buf, end, on_field, on_row, &h);
		csv_fini(&p, on_field, on_row, &h);
		csv_free(&p);
	}
	for (int i = 0; !rc && i < 8 && f->cols[i]; i++) {
		int k = 0;
		while (k < h.n && strcmp(h.names[k], f->cols[i]) != 0)
			k++;
		if (k == h.n)
			rc = (die_msg("%s:1: no column '%s' (figure %s reads it; %s writes the file)",
				      path, f->cols[i], f->name, f->made_by), 1);
	}
	return rc;
}

/* Runs the figure's script on its CSVs (cli/out.c gnuplot_render: a
 * warning is a failure, the old figure is kept). */
static int render(const struct figure *f, const char *dir, const char *fmt)
{
	char csv[1200], csv2[1200] = "", out[1200], vars[6000];
	snprintf(csv, sizeof csv, "%s/%s", dir, f->csv);
	if (check_csv(f, csv) != 0)
		return 1;
	if (f->csv2) {
		snprintf(csv2, sizeof csv2, "%s/%s", dir, f->csv2);
		if (check_csv(f, csv2) != 0)
			return 1;
	}
	snprintf(out, sizeof out, "%s/%s.%s", dir, f->name, fmt);
	if (!gnuplot_found()) { /* after the data's checks: they say more */
		die_msg("gnuplot not found (apt-get install gnuplot-nox)");
		return 1;
	}
	char q1[2500], q2[2500] = "", why[300];
	if (gp_quote(csv, q1, sizeof q1, why, sizeof why) != 0 ||
	    (f->csv2 && gp_quote(csv2, q2, sizeof q2, why, sizeof why) != 0)) {
		die_msg("%s", why);
		return 1;
	}
	snprintf(vars, sizeof vars, "datafile=%s; %s%s%s format='%s'; %s", q1,
		 f->csv2 ? "datafile2=" : "", q2, f->csv2 ? ";" : "", fmt, f->vars);
	return gnuplot_render(vars, f->script, out) != 0;
}

int cmd_plot(const struct args *a)
{
	const struct command *c = command_find("plot");
	const char *fmt = arg_get(c, a, "format");
	if (!fmt)
		fmt = "png";
	if (strcmp(fmt, "png") && strcmp(fmt, "svg") && strcmp(fmt, "pdf"))
		return usage_error(c, "--format: '%s' is not png, svg or pdf", fmt);
	const char *from = arg_get(c, a, "from");
	char dir[1100];
	if (from)
		snprintf(dir, sizeof dir, "%s", from);
	else
		snprintf(dir, sizeof dir, "%s/results", zoo_home());
	int want[NFIG] = {0};
	for (int i = 0; i < a->npos; i++) {
		int k = 0;
		while (k < NFIG && strcmp(figures[k].name, a->pos[i]) != 0)
			k++;
		if (k == NFIG) {
			const char *names[NFIG];
			for (int j = 0; j < NFIG; j++)
				names[j] = figures[j].name;
			char hint[128];
			suggest_hint(a->pos[i], names, NFIG, hint, sizeof hint);
			return usage_error(c, "unknown figure '%s'%s (headline, training-free, "
					   "validation, ablation, sensitivity, tbt-batch, pareto, cdf, ops-roofline, "
					   "timeline)", a->pos[i],
					   hint);
		}
		want[k] = 1;
	}
	int rc = 0;
	for (int k = 0; k < NFIG && rc == 0; k++)
		if (a->npos == 0 || want[k])
			rc = render(&figures[k], dir, fmt);
	return rc;
}
