/* cmd_quantiles.c: `karat quantiles TRACE.csv`: the percentile tables of a
 * trace's input and output lengths (GSL quantiles with linear
 * interpolation), printed as workload INI sections.  The shipped
 * workloads/ tables were made with it. */
#include <gsl/gsl_sort.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "karat.h"

static const double pct[] = {0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95,
			     99, 99.9, 100};

static void section(const char *name, const char *path, const char *col,
		    const char *where, double *v, long n)
{
	gsl_sort(v, 1, (size_t)n);
	printf("[%s]\ndist = quantiles ; derived: karat quantiles %s, column %s (%ld rows%s)\n",
	       name, path, col, n, where);
	for (size_t i = 0; i < sizeof pct / sizeof *pct; i++) {
		char key[16];
		snprintf(key, sizeof key, "p%g", pct[i]);
		printf("%-6s = %.0f ; derived: %s percentile of %s\n", key,
		       workload_quantile(v, n, pct[i] / 100), key + 1, col);
	}
}

int cmd_quantiles(const struct args *a)
{
	const struct command *c = command_find("quantiles");
	const char *in = arg_get(c, a, "input-column"), *out = arg_get(c, a, "output-column");
	if (!in || !out)
		return usage_error(c, "--input-column and --output-column are required");
	const char *fcol = arg_get(c, a, "filter-column"), *fpre = arg_get(c, a, "filter-prefix");
	if (!fcol != !fpre)
		return usage_error(c, "--filter-column and --filter-prefix go together");
	/* every name is printed into the INI: one with a line break or another
	 * control character would add lines to it */
	const char *names[] = {a->pos[0], in, out, fcol, fpre};
	const char *what[] = {"the trace's path", "--input-column", "--output-column",
			      "--filter-column", "--filter-prefix"};
	for (int i = 0; i < 5; i++)
		for (const unsigned char *p = (const unsigned char *)names[i]; p && *p; p++)
			if (*p < 0x20 || *p == 0x7f) {
				die_msg("%s holds a control character (byte 0x%02x), which an INI "
					"file cannot carry: rename it", what[i], *p);
				return 1;
			}
	struct trace_filter keep = {fcol, fpre};
	char where[256] = "", opts[256] = "";
	if (fcol) {
		snprintf(where, sizeof where, " whose %.60s starts with %.120s", fcol, fpre);
		snprintf(opts, sizeof opts, " --filter-column %.60s --filter-prefix %.120s", fcol, fpre);
	}
	double *vi, *vo;
	long n;
	struct kerr err;
	if (workload_read_trace(a->pos[0], in, out, fcol ? &keep : NULL, &vi, &vo, &n, &err) != 0) {
		die_msg("%s", err.msg);
		return 1;
	}
	/* a whole workload file: save it as workloads/NAME.ini or beside a study */
	const char *path = a->pos[0], *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t bl = strlen(base);
	if (bl > 4 && strcmp(base + bl - 4, ".csv") == 0)
		bl -= 4;
	printf("; Made by: karat quantiles %s --input-column %s --output-column %s%s\n"
	       "; Percentile tables only; the trace itself is not copied.  Add the\n"
	       "; trace's source and licence here.  To draw rows from the trace itself\n"
	       "; instead, replace [input] and [output] by workload.trace = %s,\n"
	       "; input_column = %s, output_column = %s.\n\n"
	       "[workload]\nname   = %.*s ; assumed: the trace's file name\n"
	       "origin = trace ; src: quantiles of the trace named above\n\n",
	       path, in, out, opts, path, in, out, (int)bl, base);
	section("input", a->pos[0], in, where, vi, n);
	printf("\n");
	section("output", a->pos[0], out, where, vo, n);
	free(vi);
	free(vo);
	return 0;
}
