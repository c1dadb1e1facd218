/* cmd_plot.c: `karat plot [FIGURE...] [--from DIR] [--format png|svg|pdf]`:
 * re-renders figures from their CSVs alone.  The figures are data
 * (plots/figures.ini: name, CSVs, gnuplot script in plots/, the columns
 * it reads, panel titles made from the CSVs' own columns).  A missing
 * CSV, or one without a column the script or a title reads, is an error
 * that names the file and the column; so is any warning gnuplot prints. */
#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/suggest.h"
#include "io/list.h"
#include "karat.h"

#define FIG_MAX 32   /* figures in plots/figures.ini (10 today) */
#define FIG_COLS 16  /* columns one script reads */

struct figure {
	char name[INI_NAME], what[INI_VALUE];
	char csv[INI_VALUE], csv2[INI_VALUE]; /* in --from DIR; csv2: a second panel */
	char script[INI_VALUE];               /* in plots/ */
	char vars[INI_VALUE];                 /* more -e variables, or "" */
	char title[2][INI_VALUE];             /* each panel's, {column} templates */
	char cols[FIG_COLS][INI_VALUE];       /* the columns the script reads */
	int ncols;
	char made_by[INI_VALUE];              /* what writes the CSV */
	int line;                             /* its section's line in figures.ini */
};

static struct figure figures[FIG_MAX];
static int nfig;
static char fig_path[1100];

/* Reads plots/figures.ini: every key known, every figure whole.  0, or 1
 * after a message. */
static int load_figures(void)
{
	snprintf(fig_path, sizeof fig_path, "%s/plots/figures.ini", zoo_home());
	struct kerr err;
	struct ini_doc *doc = ini_doc_load(fig_path, &err);
	if (!doc)
		return die_msg("%s", err.msg), 1;
	int rc = 0;
	nfig = 0;
	for (int s = 0; s < doc->nsec && !rc; s++) {
		if (nfig == FIG_MAX) {
			rc = (die_msg("%s:%d: more than %d figures", doc->path, doc->sec[s].line, FIG_MAX), 1);
			break;
		}
		struct figure *f = &figures[nfig++];
		memset(f, 0, sizeof *f);
		snprintf(f->name, sizeof f->name, "%s", doc->sec[s].name);
		f->line = doc->sec[s].line;
	}
	for (int i = 0; i < doc->n && !rc; i++) {
		const struct ini_entry *e = &doc->e[i];
		struct figure *f = figures;
		while (strcmp(f->name, e->section))
			f++;
		struct {
			const char *key;
			char *dst;
		} keys[] = {{"what", f->what}, {"csv", f->csv}, {"csv2", f->csv2},
			    {"script", f->script}, {"vars", f->vars}, {"title1", f->title[0]},
			    {"title2", f->title[1]}, {"made_by", f->made_by}};
		size_t k = 0, nk = sizeof keys / sizeof *keys;
		while (k < nk && strcmp(keys[k].key, e->key))
			k++;
		char why[200];
		if (k < nk)
			snprintf(keys[k].dst, INI_VALUE, "%s", e->value);
		else if (strcmp(e->key, "columns"))
			rc = (die_msg("%s:%d: unknown key %s.%s (what, csv, csv2, script, columns, "
				      "title1, title2, vars, made_by)", doc->path, e->line, e->section,
				      e->key), 1);
		else if (list_split(e->value, 0, f->cols, FIG_COLS, &f->ncols, why, sizeof why))
			rc = (die_msg("%s:%d: %s.columns: %s", doc->path, e->line, e->section, why), 1);
	}
	for (int i = 0; i < nfig && !rc; i++)
		if (!figures[i].what[0] || !figures[i].csv[0] || !figures[i].script[0] ||
		    !figures[i].ncols || !figures[i].made_by[0])
			rc = (die_msg("%s:%d: [%s] needs what, csv, script, columns and made_by",
				      doc->path, figures[i].line, figures[i].name), 1);
	ini_doc_free(doc);
	return rc;
}

/* A CSV's header and first data row, as libcsv reads them. */
struct header {
	char names[64][64];
	char first[64][INI_VALUE];
	int n, nfirst, rows;
};

static void on_field(void *s, size_t len, void *data)
{
	struct header *h = data;
	if (h->rows == 0 && h->n < 64)
		snprintf(h->names[h->n++], 64, "%.*s", (int)len, (const char *)s);
	else if (h->rows == 1 && h->nfirst < 64)
		snprintf(h->first[h->nfirst++], INI_VALUE, "%.*s", (int)len, (const char *)s);
}

static void on_row(int c, void *data)
{
	(void)c;
	((struct header *)data)->rows++;
}

static int column_of(const struct header *h, const char *name)
{
	for (int k = 0; k < h->n; k++)
		if (strcmp(h->names[k], name) == 0)
			return k;
	return -1;
}

/* The CSV exists, is a regular file, and its header (its first line: karat
 * reads it and the first data row, gnuplot the rest) has every column f
 * reads; into h. */
static int check_csv(const struct figure *f, const char *path, struct header *h)
{
	struct kerr err;
	struct stat st;
	int fd = file_open_regular(path, "figure data", " (a figure reads a CSV file)", &st, &err);
	if (fd < 0) {
		die_msg("%s (figure %s: %s writes it)", err.msg, f->name, f->made_by);
		return 1;
	}
	static char buf[65536];
	size_t len = 0, lines = 0;
	ssize_t r = 0;
	while (len < sizeof buf && lines < 2 &&
	       ((r = read(fd, buf + len, sizeof buf - len)) > 0 || (r < 0 && errno == EINTR))) {
		for (size_t i = len; r > 0 && i < len + (size_t)r; i++)
			lines += buf[i] == '\n';
		len += r > 0 ? (size_t)r : 0;
	}
	close(fd);
	const char *nl = memchr(buf, '\n', len);
	if (!nl && len == sizeof buf) {
		die_msg("%s:1: a header longer than %zu bytes", path, sizeof buf);
		return 1;
	}
	/* the header and, when whole, the first data row */
	size_t end = nl ? (size_t)(nl - buf) + 1 : len;
	const char *nl2 = nl ? memchr(nl + 1, '\n', len - end) : NULL;
	if (nl2)
		end = (size_t)(nl2 - buf) + 1;
	memset(h, 0, sizeof *h);
	struct csv_parser p;
	int rc = 0;
	if (csv_init(&p, 0) != 0)
		rc = (die_msg("%s: cannot start the CSV parser", path), 1);
	if (!rc) {
		csv_parse(&p, buf, end, on_field, on_row, h);
		csv_fini(&p, on_field, on_row, h);
		csv_free(&p);
	}
	for (int i = 0; !rc && i < f->ncols; i++)
		if (column_of(h, f->cols[i]) < 0)
			rc = (die_msg("%s:1: no column '%s' (figure %s reads it; %s writes the file)",
				      path, f->cols[i], f->name, f->made_by), 1);
	return rc;
}

/* Panel p's title: f's template with each {column} replaced by its value
 * in the CSV's first data row (empty without one), as a gnuplot string
 * (quotes doubled, control characters as spaces) into out.  0, or 1 after
 * a message (a column the CSV lacks, an unclosed brace). */
static int title_of(const struct figure *f, int p, const char *path, const struct header *h,
		    char *out, size_t n)
{
	const char *t = f->title[p];
	char text[2 * INI_VALUE] = "";
	size_t len = 0;
	for (const char *c = t; *c && len + 1 < sizeof text;) {
		const char *v = NULL;
		char one[2] = {*c, 0};
		if (*c == '{') {
			const char *close = strchr(c, '}');
			char col[64];
			if (!close || (size_t)(close - c - 1) >= sizeof col)
				return die_msg("%s: [%s] title%d: '%s' has an unclosed {", fig_path,
					       f->name, p + 1, t), 1;
			snprintf(col, sizeof col, "%.*s", (int)(close - c - 1), c + 1);
			int k = column_of(h, col);
			if (k < 0)
				return die_msg("%s:1: no column '%s' (figure %s's title%d reads it; %s "
					       "writes the file)", path, col, f->name, p + 1,
					       f->made_by), 1;
			v = k < h->nfirst ? h->first[k] : "";
			c = close + 1;
		} else {
			v = one;
			c++;
		}
		for (; *v && len + 2 < sizeof text; v++) {
			char ch = (unsigned char)*v < 0x20 ? ' ' : *v;
			text[len++] = ch;
			if (ch == '\'')
				text[len++] = '\'';
		}
	}
	text[len] = 0;
	snprintf(out, n, "'%s'", text);
	return 0;
}

/* Runs the figure's script on its CSVs (cli/gnuplot.c gnuplot_render: a
 * warning is a failure, the old figure is kept). */
static int render(const struct figure *f, const char *dir, const char *fmt)
{
	char csv[1200], csv2[1200] = "", out[1200], vars[8000];
	static struct header h[2];
	int two = f->csv2[0] != 0;
	snprintf(csv, sizeof csv, "%s/%s", dir, f->csv);
	if (check_csv(f, csv, &h[0]) != 0)
		return 1;
	if (two) {
		snprintf(csv2, sizeof csv2, "%s/%s", dir, f->csv2);
		if (check_csv(f, csv2, &h[1]) != 0)
			return 1;
	}
	char titles[600] = "";
	for (int p = 0; p < 2; p++) {
		char t[2 * INI_VALUE + 4];
		size_t l = strlen(titles);
		if (!f->title[p][0])
			continue;
		if (title_of(f, p, p && two ? csv2 : csv, &h[p && two], t, sizeof t) != 0)
			return 1;
		snprintf(titles + l, sizeof titles - l, " title%d=%s;", p + 1, t);
	}
	snprintf(out, sizeof out, "%s/%s.%s", dir, f->name, fmt);
	if (!gnuplot_found()) { /* after the data's checks: they say more */
		die_msg("gnuplot not found (apt-get install gnuplot-nox)");
		return 1;
	}
	char q1[2500], q2[2500] = "", why[300];
	if (gp_quote(csv, q1, sizeof q1, why, sizeof why) != 0 ||
	    (two && gp_quote(csv2, q2, sizeof q2, why, sizeof why) != 0)) {
		die_msg("%s", why);
		return 1;
	}
	snprintf(vars, sizeof vars, "datafile=%s; %s%s%s format='%s';%s %s", q1,
		 two ? "datafile2=" : "", q2, two ? ";" : "", fmt, titles, f->vars);
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
	if (load_figures() != 0)
		return 1;
	const char *from = arg_get(c, a, "from");
	char dir[1100];
	if (from)
		snprintf(dir, sizeof dir, "%s", from);
	else
		snprintf(dir, sizeof dir, "results"); /* in the current folder */
	int want[FIG_MAX] = {0};
	for (int i = 0; i < a->npos; i++) {
		int k = 0;
		while (k < nfig && strcmp(figures[k].name, a->pos[i]) != 0)
			k++;
		if (k == nfig) {
			const char *names[FIG_MAX];
			char list[FIG_MAX * (INI_NAME + 2)] = "";
			for (int j = 0; j < nfig; j++) {
				names[j] = figures[j].name;
				size_t l = strlen(list);
				snprintf(list + l, sizeof list - l, "%s%s", j ? ", " : "", names[j]);
			}
			char hint[128];
			suggest_hint(a->pos[i], names, nfig, hint, sizeof hint);
			return usage_error(c, "unknown figure '%s'%s (%s)", a->pos[i], hint, list);
		}
		want[k] = 1;
	}
	int rc = 0;
	for (int k = 0; k < nfig && rc == 0; k++)
		if (a->npos == 0 || want[k])
			rc = render(&figures[k], dir, fmt);
	return rc;
}
