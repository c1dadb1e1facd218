/* main.c: the karat command table and dispatcher.  `karat help` is made
 * from the same table. */
#include "cli/cli.h"
#include "base/suggest.h"

#include <string.h>

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "karat.h"

#define STR_(x) #x
#define STR(x) STR_(x) /* a default, spelled into the help */

#ifndef KARAT_VERSION
#define KARAT_VERSION "unknown"
#endif

static const struct optdef no_opts[] = {{0, 0, 0, 0, 0}};
static const struct optdef show_opts[] = {
	{"set", 1, "a system: override system.key=value first (system.gpu=b200 shows the "
	 "links it then runs on; repeatable)", 1, 0},
	{0, 0, 0, 0, 0}};
static const struct optdef ops_opts[] = {
	{"model", 1, "zoo name or INI path of the model", 0, 0},
	{"hw", 1, "zoo name or INI path of the device", 0, 0},
	{"batch", 1, "requests in the batch, all GPUs together", 0, 0},
	{"context", 1, "context length of every request (K = 1024, M = 1048576)", 0, 0},
	{"gpus", 1, "GPUs: attention data-parallel, experts expert-parallel (default 1)", 0, 0},
	{"mtp", 1, "draft tokens verified per step (default: the model's)", 0, 0},
	{"algo", 1, "attention algorithm NAME[:key=value,...] (default: the model's; karat list algos)", 0, 0},
	{"force", 0, "allow a trained-only algorithm on a model not trained for it", 0, 0},
	{"eff-from", 1, "take efficiencies and overhead from this device (e.g. results/cpu-calibrated.ini)", 0, 0},
	{"set", 1, "override SECTION.KEY=VALUE: model sections, sparse.*, hw.* (the device), link.* (repeatable)", 1, 0},
	{"format", 1, "table (default) or csv", 0, 0},
	{"roofline", 1, "also write each operator as a roofline point to this CSV", 0, 0},
	{0, 0, 0, 0, 0}};
static const struct optdef bench_opts[] = {
	{"format", 1, "table (default) or csv", 0, 0},
	{"min-time", 1, "minimum timed duration per kernel and size (default 200ms)", 0, 0},
	{"quiet", 0, "no progress on stderr (shown on a terminal for work past 2 s)", 0, 'q'},
	{0, 0, 0, 0, 0}};
static const struct optdef calibrate_opts[] = {
	{"min-time", 1, "minimum timed duration per kernel and size (default 200ms)", 0, 0},
	{"out", 1, "folder for the calibrated INI, CSV and figure (default: results/ in the current folder)", 0, 0},
	{"quiet", 0, "no progress on stderr (shown on a terminal for work past 2 s)", 0, 'q'},
	{0, 0, 0, 0, 0}};
#define POINT_OPTS \
	{"model", 1, "zoo name or INI path of the model", 0, 0}, \
	{"algo", 1, "attention algorithm NAME[:key=value,...] (default: the model's)", 0, 0}, \
	{"system", 1, "zoo name or INI path of the system (karat list systems)", 0, 0}, \
	{"workload", 1, "zoo name or INI path of the workload (karat list workloads)", 0, 0}, \
	{"context", 1, "instead of a workload: every request at this context", 0, 0}, \
	{"microbatches", 1, "1..16 or auto (default auto)", 0, 0}, \
	{"schedule", 1, "serial, naive, ofms, cmr or ofms+cmr (default " DESIGN_DEFAULT_SCHED_NAME ")", 0, 0}, \
	{"mtp", 1, "draft tokens per step (default: the model's)", 0, 0}, \
	{"mtp-accept", 1, "acceptance rate of a draft token (default: the model's)", 0, 0}, \
	{"slo-ms", 1, "P99 time-between-tokens target in ms (default " STR(DESIGN_DEFAULT_SLO_MS) ")", 0, 0}, \
	{"samples", 1, "sampled batches per evaluation (default " STR(DESIGN_DEFAULT_SAMPLES) ")", 0, 0}, \
	{"seed", 1, "random seed (default " STR(DESIGN_DEFAULT_SEED) ")", 0, 0}, \
	{"set", 1, "override a key as karat show prints it: section.key=value, or role.section.key=value for a device or link (repeatable; see docs/sweeps.md)", 1, 0}, \
	{"force", 0, "allow a trained-only algorithm on a model not trained for it", 0, 0}, \
	{"exact", 0, "the reference: every request placed and every layer scheduled, at any batch (slower)", 0, 0}, \
	{"format", 1, "table (default) or csv", 0, 0}
#define POINT_FILES \
	{"quiet", 0, "no progress on stderr (shown on a terminal for work past 2 s)", 0, 'q'}, \
	{"jobs", 1, "threads the sampled batches are evaluated on, also -j N (default 1); "  \
	 "every result is the same for any count", 0, 'j'}, \
	{"timeline", 1, "also write the reference schedule of sampled batch 0 to this CSV", 0, 0}, \
	{"step-times", 1, "also write every sample's step time, sorted (rank,tbt_s,cdf,point), to this CSV", 0, 0}
static const struct optdef query_opts[] = {
	POINT_OPTS,
	{"batch", 1, "requests in the batch, all GPUs together", 0, 0},
	POINT_FILES,
	{0, 0, 0, 0, 0}};
static const struct optdef solve_opts[] = {POINT_OPTS, POINT_FILES, {0, 0, 0, 0, 0}};
static const struct optdef sweep_opts[] = {
	{"jobs", 1, "worker threads, also -j N (default 1); output is identical for any count", 0, 'j'},
	{"output", 1, "CSV file to write, - for stdout (default: [sweep] output, else results/NAME.csv)", 0, 0},
	{"set", 1, "override section.key=value for every point (repeatable)", 1, 0},
	{"dry-run", 0, "load and check every point, print the count, evaluate nothing", 0, 0},
	{"shard", 1, "K/N: evaluate shard K of N alone (its rows go to FILE.partial as they "
	 "finish; run again, it goes on where it stopped), for karat merge", 0, 0},
	{"shards", 1, "N, with --dry-run: how the points fall to N shards, and the lines to run "
	 "and merge them", 0, 0},
	{"log", 1, "FILE: append a line per finished point (point, seconds, feasible)", 0, 0},
	{"probe", 0, "solved points also say what to grow first (grow_first; one more "
	 "evaluation of 64 samples per resource)", 0, 0},
	{"quiet", 0, "no progress on stderr (shown on a terminal for work past 2 s)", 0, 'q'},
	{0, 0, 0, 0, 0}};
static const struct optdef merge_opts[] = {
	{"output", 1, "CSV file to write, - for stdout (the default)", 0, 0},
	{0, 0, 0, 0, 0}};
static const struct optdef quantiles_opts[] = {
	{"input-column", 1, "column of input (context) lengths", 0, 0},
	{"output-column", 1, "column of output lengths", 0, 0},
	{"filter-column", 1, "keep only the rows whose this column ...", 0, 0},
	{"filter-prefix", 1, "... starts with this text", 0, 0},
	{0, 0, 0, 0, 0}};
static const struct optdef validate_opts[] = {
	{"out", 1, "folder for validation.csv and validation.png (default: results/ in the current folder)", 0, 0},
	{"quiet", 0, "no progress on stderr (shown on a terminal for work past 2 s)", 0, 'q'},
	{0, 0, 0, 0, 0}};
static const struct optdef plot_opts[] = {
	{"from", 1, "folder of the CSVs, where the figures go too (default: results/ in the current folder)", 0, 0},
	{"format", 1, "png (default), svg or pdf", 0, 0},
	{0, 0, 0, 0, 0}};
static const struct optdef run_opts[] = {
	{"jobs", 1, "worker threads, also -j N (default: the online CPUs)", 0, 'j'},
	{"out", 1, "folder for the results (default: results/ in the current folder, made when missing)", 0, 0},
	{"set", 1, "override section.key=value for every point (repeatable)", 1, 0},
	{"quiet", 0, "no progress on stderr (shown on a terminal for work past 2 s)", 0, 'q'},
	{0, 0, 0, 0, 0}};

const struct command commands[] = {
	{"help", cmd_help, "[COMMAND]", "show commands, or one command's options",
	 no_opts, 0, 1},
	{"list", cmd_list, "models|hw|systems|workloads|algos|studies",
	 "list the zoo: models, devices and links, systems, workloads, attention algorithms",
	 no_opts, 1, 1},
	{"show", cmd_show, "NAME|FILE.ini [--set system.key=value]", "resolved values of a model, device, link, system, workload or algorithm with the source of each; a device's calibration and measured error",
	 show_opts, 1, 1},
	{"ops", cmd_ops,
	 "--model M --hw H --batch B --context L [--gpus G] [--mtp D] [--algo A[:k=v,...]] [--force] [--eff-from DEV] [--set k=v] [--format csv]",
	 "per-operator FLOPs, bytes, time and bound of one decode step", ops_opts, 0, 0},
	{"bench", cmd_bench, "[KERNEL...] [--format csv] [--min-time T]",
	 "time the validation kernels on this CPU against its measured roofline", bench_opts, 0, 8},
	{"calibrate", cmd_calibrate, "[--min-time T] [--out DIR]",
	 "fit per-kernel efficiencies, write a calibrated CPU device INI, CSV and roofline figure",
	 calibrate_opts, 0, 0},
	{"query", cmd_query,
	 "--model M --system S (--workload W | --context L) --batch B [options]",
	 "one design point: step time mean and P99, throughput, per TDP, capacity; kept even when infeasible",
	 query_opts, 0, 0},
	{"solve", cmd_solve, "--model M --system S (--workload W | --context L) [options]",
	 "the largest batch that fits and meets the P99 TBT SLO (best micro-batch count with auto)",
	 solve_opts, 0, 0},
	{"sweep", cmd_sweep, "FILE.ini [--jobs N] [--output FILE.csv] [--set k=v] [--dry-run] "
	 "[--shard K/N | --shards N] [--log FILE]",
	 "evaluate the Cartesian product of a sweep file's lists; one CSV row per point",
	 sweep_opts, 1, 1},
	{"merge", cmd_merge, "SHARD.csv... [--output FILE.csv]",
	 "join the CSVs of sweep --shard K/N into exactly the unsharded sweep's output",
	 merge_opts, 1, ARGS_MAX_POS},
	{"quantiles", cmd_quantiles, "TRACE.csv --input-column C --output-column C",
	 "percentile tables of a trace's lengths, as [input] and [output] workload sections",
	 quantiles_opts, 1, 1},
	{"validate", cmd_validate, "[TABLE.csv...] [--out DIR]",
	 "the model against the published kernel timings in validation/: error per row, table, kernel, family, and out of sample",
	 validate_opts, 0, ARGS_MAX_POS},
	{"plot", cmd_plot, "[FIGURE...] [--from DIR] [--format png|svg|pdf]",
	 "re-render figures from their CSVs: headline, axes, reconcile, training-free, validation, ablation, sensitivity, tbt-batch, pareto, cdf, ops-roofline, timeline",
	 plot_opts, 0, ARGS_MAX_POS},
	{"run", cmd_run, "[STUDY...] [--jobs N] [--out DIR] [--set k=v]",
	 "the main job: the studies in studies/ (or those named), each system at its best, to results/",
	 run_opts, 0, ARGS_MAX_POS},
	{0, 0, 0, 0, 0, 0, 0}};

const struct command *command_find(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* "unknown command 'x'" with the nearest command's name. */
static int unknown_command(const struct command *to, const char *name)
{
	const char *names[64];
	int n = 0;
	for (const struct command *c = commands; c->name && n < 64; c++)
		names[n++] = c->name;
	char hint[128];
	suggest_hint(name, names, n, hint, sizeof hint);
	return usage_error(to, "unknown command '%.40s'%s (try 'karat help')", name, hint);
}

/* One command's usage, summary and options. */
static int command_help(const struct command *c)
{
	printf("usage: karat %s %s\n  %s\n", c->name, c->usage, c->summary);
	for (int i = 0; c->opts[i].name; i++)
		printf("  --%-13s %s\n", c->opts[i].name, c->opts[i].help);
	return 0;
}

const char *karat_version(void)
{
	return KARAT_VERSION;
}

int cmd_help(const struct args *a)
{
	if (a->npos == 1) {
		int rc = help_topic(a->pos[0]); /* formats, man: generated reference */
		if (rc >= 0)
			return rc;
		const struct command *c = command_find(a->pos[0]);
		if (!c)
			return unknown_command(command_find("help"), a->pos[0]);
		return command_help(c);
	}
	printf("karat: roofline and design-space explorer for LLM decode\n\n"
	       "usage: karat COMMAND [OPTIONS]\n\ncommands:\n");
	for (const struct command *c = commands; c->name; c++)
		printf("  %-10s %s\n", c->name, c->summary);
	printf("\n'karat help COMMAND' shows a command's options; 'karat help formats' every\n"
	       "file key and CSV column; 'karat help man' the manual page.  Exit status: 0 ok\n"
	       "(a design point that does not fit is an answer: feasible=false), 1 failure\n"
	       "(bad input file or value, a refused algorithm), 2 usage error.\n");
	return 0;
}

/* An installed karat (PREFIX/bin/karat) finds its data in
 * PREFIX/share/karat; a binary in the build folder uses the source tree
 * it was built from.  KARAT_HOME overrides both (zoo_home). */
static void find_home(void)
{
	char exe[PATH_MAX], dir[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(dir, sizeof dir, "%s/../share/karat", exe);
	char models[PATH_MAX + 48];
	snprintf(models, sizeof models, "%s/models", dir);
	struct stat st;
	if (stat(models, &st) == 0 && S_ISDIR(st.st_mode))
		zoo_set_home(dir);
}

int main(int argc, char **argv)
{
	find_home();
	if (argc < 2) {
		usage_error(NULL, "no command given (try 'karat help')");
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
		name = "help";
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("karat %s\ndata: %s\n", KARAT_VERSION, zoo_home());
		return fflush(stdout) == 0 ? 0 : 1;
	}
	gslerr_install();
#ifndef KARAT_NO_SIGNALS /* the fuzz build: libFuzzer keeps its own handlers */
	out_install_signals();
#endif
	const struct command *c = command_find(name);
	if (!c)
		return unknown_command(NULL, name);
	for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return command_help(c) != 0 || fflush(stdout) != 0;
	struct args a;
	if (args_parse(c, argc - 2, argv + 2, &a) != 0)
		return EXIT_USAGE;
	int rc = c->run(&a);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		die_msg("write error on standard output");
		return 1;
	}
	return rc;
}
