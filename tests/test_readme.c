/* test_readme.c: the README's tour runs as printed.  Each indented line
 * "$ karat ARGS" is run (no shell: ARGS split at spaces) in a fresh folder
 * that holds what the project folder would for it (sweeps/ linked, an
 * empty results/), so the tour writes nothing into the project; the
 * indented lines after it are what it prints (stdout
 * and stderr together, the project folder's path left out): every shown
 * line must appear, in order, as a whole line, with "..." for lines left
 * out; without a leading or trailing "...", the first or last line must
 * be the first or last printed.  So a number in the tour that the binary
 * no longer prints fails here. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define MAX_LINES 4096

/* The folder commands run in (the project folder when NULL). */
static const char *run_dir;

/* Runs argv in run_dir; its output (both streams) into out.  The timing
 * line a command adds to stderr once it has run past 2 s (progress.c) is
 * kept out: the README shows what the command prints, and how long it
 * took depends on the machine (under a sanitizer or a loaded CI runner a
 * solve passes 2 s). */
static int run_here(char *const argv[], char *out, size_t n)
{
	char path[] = "/tmp/karat-readme-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (chdir(run_dir ? run_dir : KARAT_DATADIR) != 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		setenv("KARAT_PROGRESS_AFTER", "1e9", 1);
		execv(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	close(fd);
	read_text(path, out, n);
	unlink(path);
	/* the project folder's own path, as the README leaves it out */
	char root[1100];
	snprintf(root, sizeof root, "%s/", KARAT_DATADIR);
	for (char *at; (at = strstr(out, root));)
		memmove(at, at + strlen(root), strlen(at + strlen(root)) + 1);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void rstrip(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

/* Splits text into lines (in place), right-stripped; returns the count. */
static int lines_of(char *text, char **line, int max)
{
	int n = 0;
	for (char *p = text; *p && n < max;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		rstrip(p);
		line[n++] = p;
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

/* Whether the shown lines (want, "..." for a gap) match got. */
static int matches(char **want, int nw, char **got, int ng, char *why, size_t nwhy)
{
	int g = 0, gap = 0;
	for (int w = 0; w < nw; w++) {
		if (strcmp(want[w], "...") == 0) {
			gap = 1;
			continue;
		}
		int found = -1;
		for (int k = g; k < ng && found < 0; k++)
			if (strcmp(got[k], want[w]) == 0)
				found = k;
			else if (!gap)
				break; /* the next printed line must be this one */
		if (found < 0) {
			snprintf(why, nwhy, "shown line not printed (in order): '%s'", want[w]);
			return 0;
		}
		g = found + 1, gap = 0;
	}
	if (!gap && g < ng) {
		snprintf(why, nwhy, "printed more after the last shown line: '%s'", got[g]);
		return 0;
	}
	return 1;
}

Test(readme, the_tour_runs_as_printed)
{
	static char readme[1 << 20], out[1 << 20];
	read_text(KARAT_DATADIR "/README.md", readme, sizeof readme);
	static char *line[MAX_LINES];
	int n = lines_of(readme, line, MAX_LINES), commands = 0;
	const char *bin = getenv("KARAT_BIN");
	if (!bin)
		bin = KARAT_DATADIR "/build/karat";
	static char dir[] = "/tmp/karat-tour-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char sub[200];
	snprintf(sub, sizeof sub, "%s/results", dir);
	cr_assert_eq(mkdir(sub, 0777), 0);
	snprintf(sub, sizeof sub, "%s/sweeps", dir);
	cr_assert_eq(symlink(KARAT_DATADIR "/sweeps", sub), 0);
	run_dir = dir;
	for (int i = 0; i < n; i++) {
		if (strncmp(line[i], "    $ karat ", 12) != 0)
			continue;
		static char args[4096];
		snprintf(args, sizeof args, "%s", line[i] + 12);
		char *argv[64] = {(char *)bin};
		int na = 1;
		for (char *save = NULL, *t = strtok_r(args, " ", &save); t && na < 63;
		     t = strtok_r(NULL, " ", &save))
			argv[na++] = t;
		argv[na] = NULL;
		char *want[256];
		int nw = 0;
		for (int k = i + 1; k < n && nw < 256 && strncmp(line[k], "    ", 4) == 0 &&
				    strncmp(line[k], "    $ ", 6) != 0;
		     k++)
			want[nw++] = line[k] + 4;
		int rc = run_here(argv, out, sizeof out);
		commands++;
		cr_expect_eq(rc, 0, "README line %d: karat %s exited %d:\n%s", i + 1, line[i] + 12, rc,
			     out);
		static char *got[MAX_LINES];
		int ng = lines_of(out, got, MAX_LINES);
		char why[600];
		cr_expect(matches(want, nw, got, ng, why, sizeof why), "README line %d: karat %s: %s",
			  i + 1, line[i] + 12, why);
	}
	cr_expect_geq(commands, 8, "the tour has %d commands", commands);
	run_dir = NULL;
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

/* The reference the binary generates is committed as it generates it:
 * docs/formats.md (karat help formats) and karat.1 (karat help man).
 * `make docs` rewrites both. */
Test(readme, generated_reference_is_current)
{
	static char want[1 << 20], got[1 << 20];
	const char *bin = getenv("KARAT_BIN");
	if (!bin)
		bin = KARAT_DATADIR "/build/karat";
	static const char *const topic[] = {"formats", "man"};
	static const char *const file[] = {KARAT_DATADIR "/docs/formats.md", KARAT_DATADIR "/karat.1"};
	for (int i = 0; i < 2; i++) {
		char *argv[] = {(char *)bin, "help", (char *)topic[i], NULL};
		cr_assert_eq(run_here(argv, got, sizeof got), 0);
		read_text(file[i], want, sizeof want);
		cr_expect_str_eq(got, want, "%s differs from karat help %s: run make docs", file[i],
				 topic[i]);
	}
}

/* The README's figures (docs/img/) were drawn from the data results/
 * holds now: docs/img/SOURCES gives each figure's CSVs and their POSIX
 * checksums at `make docs`.  Skipped where make run has not written them. */
Test(readme, figures_are_not_older_than_their_data)
{
	FILE *f = fopen(KARAT_DATADIR "/docs/img/SOURCES", "r");
	cr_assert_not_null(f, "no docs/img/SOURCES: run make run, then make docs");
	char png[128], csv[128];
	unsigned long sum, size;
	int checked = 0, absent = 0;
	while (fscanf(f, "%127s %127s %lu %lu", png, csv, &sum, &size) == 4) {
		char path[1200], cmd[1400], line[128] = "";
		snprintf(path, sizeof path, "%s/results/%s", KARAT_DATADIR, csv);
		if (access(path, R_OK) != 0) {
			absent++;
			continue;
		}
		snprintf(cmd, sizeof cmd, "cksum < '%s'", path);
		FILE *p = popen(cmd, "r");
		cr_assert_not_null(p);
		cr_assert_not_null(fgets(line, sizeof line, p));
		pclose(p);
		unsigned long s2 = 0, n2 = 0;
		cr_assert_eq(sscanf(line, "%lu %lu", &s2, &n2), 2);
		cr_expect(s2 == sum && n2 == size,
			  "docs/img/%s is older than results/%s (drawn from other data): run make docs",
			  png, csv);
		checked++;
	}
	fclose(f);
	if (absent)
		fprintf(stderr, "readme::figures_are_not_older_than_their_data: skipped %d of %d "
			"CSVs: results/ does not hold them (run make run)\n", absent, absent + checked);
	cr_expect_gt(checked + absent, 10);
}

/* A number as docs/workloads.md writes it ("2.2K", "85K", "1M") and half
 * a unit of its last digit. */
static double doc_number(const char *s, double *half)
{
	char *end;
	double v = strtod(s, &end);
	const char *dot = strchr(s, '.');
	double unit = 1;
	if (dot && dot < end)
		for (const char *c = dot + 1; c < end; c++)
			unit /= 10;
	double scale = *end == 'K' ? 1e3 : *end == 'M' ? 1e6 : 1;
	*half = unit * scale / 2;
	return v * scale;
}

/* The decode-context figures of docs/workloads.md's table are what `karat
 * show` draws for each workload, to the digits the table gives. */
Test(readme, workload_table_is_what_show_draws)
{
	static char doc[1 << 16], out[1 << 16];
	read_text(KARAT_DATADIR "/docs/workloads.md", doc, sizeof doc);
	const char *bin = getenv("KARAT_BIN");
	if (!bin)
		bin = KARAT_DATADIR "/build/karat";
	int rows = 0;
	for (char *line = strstr(doc, "\n| `"); line; line = strstr(line + 1, "\n| `")) {
		char name[64];
		if (sscanf(line, "\n| `%63[^`]`", name) != 1)
			continue;
		char *end = strchr(line + 1, '\n');
		char *last = NULL;
		for (char *c = line + 1; c < (end ? end : line + strlen(line)); c++)
			if (*c == '|' && c[1] == ' ' && c[2] != '\n')
				last = c + 2; /* the last cell */
		cr_assert_not_null(last);
		char *argv[] = {(char *)bin, "show", name, NULL};
		cr_assert_eq(run_here(argv, out, sizeof out), 0, "%s", out);
		static const char *const key[] = {"mean ", "p50 ", "p99 ", "max "};
		static const char *const shown[] = {"mean ", "p50 ", "p99 ", "max "};
		for (int k = 0; k < 4; k++) {
			char *d = strstr(last, key[k]);
			if (!d || (end && d > end))
				continue;
			char *s = strstr(out, "decode contexts over");
			cr_assert_not_null(s, "karat show %s prints no decode contexts", name);
			s = strstr(s, shown[k]);
			cr_assert_not_null(s);
			double half, want = doc_number(d + strlen(key[k]), &half);
			double got = strtod(s + strlen(shown[k]), NULL);
			cr_expect(fabs(got - want) <= half * 1.0001,
				  "docs/workloads.md: %s %s%.6g, karat show draws %.0f", name, key[k],
				  want, got);
		}
		rows++;
	}
	cr_expect_geq(rows, 7, "%d workload rows", rows);
}

/* The README's figures for each family, from `at` on ("Hopper 7.1% over
 * 71 ..."), are those of validate's block `by` ("  hopper  7.1%  (71 rows"). */
static void families_match(const char *at, const char *by, const char *what)
{
	static const char *const fam[][2] = {{"Hopper", "hopper"}, {"Blackwell", "blackwell"},
					     {"CDNA3", "cdna3"}, {"CDNA4", "cdna4"}};
	for (size_t i = 0; i < sizeof fam / sizeof *fam; i++) {
		char key[32];
		snprintf(key, sizeof key, "%s ", fam[i][0]);
		const char *d = strstr(at, key), *o = d ? strstr(d, "over ") : NULL;
		cr_assert(d && o, "README.md: no %s figure for %s", what, fam[i][0]);
		double want = strtod(d + strlen(key), NULL);
		int want_n = atoi(o + 5);
		snprintf(key, sizeof key, "\n  %s ", fam[i][1]);
		const char *g = strstr(by, key);
		cr_assert_not_null(g, "karat validate prints no %s figure for %s", what, fam[i][1]);
		double got;
		int got_n;
		cr_assert_eq(sscanf(g + strlen(key), " %lf%% (%d rows", &got, &got_n), 2);
		cr_expect(fabs(got - want) < 0.05 && got_n == want_n,
			  "README.md: %s %s %.1f%% over %d rows; karat validate: %.1f%% over %d", what,
			  fam[i][0], want, want_n, got, got_n);
	}
}

/* The README's per-family validation figures ("Hopper 7.1% mean error
 * over 71 rows, ..."): every row, in sample and out of sample, are what
 * `karat validate` prints. */
Test(readme, family_errors_are_what_validate_prints)
{
	static char doc[1 << 17], out[1 << 16];
	read_text(KARAT_DATADIR "/README.md", doc, sizeof doc);
	size_t w = 0; /* the README's words, one space apart */
	for (size_t r = 0; doc[r]; r++) {
		char c = doc[r] == '\n' ? ' ' : doc[r];
		if (c != ' ' || (w > 0 && doc[w - 1] != ' '))
			doc[w++] = c;
	}
	doc[w] = '\0';
	const char *at = strstr(doc, "shipped tables per family");
	cr_assert_not_null(at, "README.md: no per-family validation figures");
	const char *ins = strstr(at, "In sample");
	cr_assert_not_null(ins, "README.md: no figures in sample");
	const char *oos = strstr(ins, "Out of sample");
	cr_assert_not_null(oos, "README.md: no figures out of sample");
	char dir[] = "/tmp/karat-readme-valid-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	const char *bin = getenv("KARAT_BIN");
	char *argv[] = {(char *)(bin ? bin : KARAT_DATADIR "/build/karat"), "validate", "--out", dir,
			"--quiet", NULL};
	cr_assert_eq(run_here(argv, out, sizeof out), 0, "%s", out);
	const char *by = strstr(out, "mean absolute error by family");
	const char *by_in = strstr(out, "mean absolute error in sample");
	const char *by_oos = strstr(out, "mean absolute error out of sample");
	cr_assert(by && by_in && by_oos, "%s", out);
	families_match(at, by, "in-sample-and-out");
	families_match(ins, by_in, "in-sample");
	families_match(oos, by_oos, "out-of-sample");
	/* and the whole out of sample: "the error is 10.9% over 94 rows" */
	const char *all = strstr(oos, "error is "), *g = strstr(by_oos, "\n  all ");
	cr_assert(all && g, "README.md: no overall figure out of sample");
	double want = strtod(all + 9, NULL), got;
	const char *ov = strstr(all, "over ");
	int want_n = ov ? atoi(ov + 5) : -1, got_n;
	cr_assert_eq(sscanf(g + 7, " %lf%% (%d rows", &got, &got_n), 2);
	cr_expect(fabs(got - want) < 0.05 && got_n == want_n,
		  "README.md: out of sample %.1f%% over %d rows; karat validate: %.1f%% over %d",
		  want, want_n, got, got_n);
	char path[1100];
	snprintf(path, sizeof path, "%s/validation.csv", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/validation.png", dir);
	unlink(path);
	rmdir(dir);
}
