/* table.c: aligned text tables and CSV rows (quoting by libcsv, only where
 * a field needs it, so headers stay plain). */
#include "cli/cli.h"
#include "karat.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, int ncols, const char *const *head,
		const int *right)
{
	memset(t, 0, sizeof *t);
	t->ncols = ncols;
	for (int i = 0; i < ncols; i++) {
		t->head[i] = head[i];
		t->right[i] = right ? right[i] : 0;
	}
}

int table_add(struct table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		int cap = t->cap ? 2 * t->cap : 32;
		void *p = realloc(t->cell, (size_t)cap * sizeof *t->cell);
		if (!p)
			return -1;
		t->cell = p;
		t->cap = cap;
	}
	for (int i = 0; i < t->ncols; i++) {
		t->cell[t->nrows][i] = strdup(cells[i] ? cells[i] : "");
		if (!t->cell[t->nrows][i]) {
			while (i-- > 0)
				free(t->cell[t->nrows][i]);
			return -1;
		}
	}
	t->nrows++;
	return 0;
}

void table_free(struct table *t)
{
	for (int r = 0; r < t->nrows; r++)
		for (int i = 0; i < t->ncols; i++)
			free(t->cell[r][i]);
	free(t->cell);
	t->cell = NULL;
	t->nrows = t->cap = 0;
}

static int needs_quotes(const char *s)
{
	return strpbrk(s, ",\"\r\n") != NULL || (*s && (s[0] == ' ' ||
						       s[strlen(s) - 1] == ' '));
}

static int csv_field(FILE *fp, const char *s)
{
	if (!needs_quotes(s))
		return fputs(s, fp) < 0 ? -1 : 0;
	return csv_fwrite(fp, s, strlen(s)) == 0 ? 0 : -1;
}

int csv_write_row(FILE *fp, int n, const char *const *cells)
{
	for (int i = 0; i < n; i++) {
		if (i && fputc(',', fp) == EOF)
			return -1;
		if (csv_field(fp, cells[i]) != 0)
			return -1;
	}
	return fputc('\n', fp) == EOF ? -1 : 0;
}

int table_write(const struct table *t, FILE *fp, int csv)
{
	if (csv) {
		if (csv_write_row(fp, t->ncols, t->head) != 0)
			return -1;
		for (int r = 0; r < t->nrows; r++) {
			const char *cells[OUT_MAX_COLS];
			for (int i = 0; i < t->ncols; i++)
				cells[i] = t->cell[r][i];
			if (csv_write_row(fp, t->ncols, cells) != 0)
				return -1;
		}
		return ferror(fp) ? -1 : 0;
	}
	int w[OUT_MAX_COLS];
	for (int i = 0; i < t->ncols; i++) {
		w[i] = (int)strlen(t->head[i]);
		for (int r = 0; r < t->nrows; r++) {
			int l = (int)strlen(t->cell[r][i]);
			w[i] = l > w[i] ? l : w[i];
		}
	}
	for (int r = -1; r < t->nrows; r++) {
		for (int i = 0; i < t->ncols; i++) {
			const char *s = r < 0 ? t->head[i] : t->cell[r][i];
			int last = i == t->ncols - 1;
			if (t->right[i])
				fprintf(fp, "%*s%s", w[i], s, last ? "" : "  ");
			else if (last)
				fprintf(fp, "%s", s);
			else
				fprintf(fp, "%-*s  ", w[i], s);
		}
		fputc('\n', fp);
	}
	return ferror(fp) ? -1 : 0;
}

int table_write_md(const struct table *t, FILE *fp)
{
	for (int r = -2; r < t->nrows; r++) {
		for (int i = 0; i < t->ncols; i++) {
			const char *s = r == -2 ? t->head[i] : r == -1 ? (t->right[i] ? "---:" : "---")
									: t->cell[r][i];
			fputs(i ? " | " : "| ", fp);
			for (; *s; s++) /* a '|' would end the cell */
				fputs(*s == '|' ? "\\|" : (char[2]){*s, 0}, fp);
		}
		fputs(" |\n", fp);
	}
	return ferror(fp) ? -1 : 0;
}

int write_md_table(const char *path, const char *head, const struct table *t, const char *tail)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	if (!fp)
		return die_msg("out of memory"), 1;
	fputs(head, fp);
	int rc = table_write_md(t, fp) != 0;
	if (tail)
		fprintf(fp, "\n%s\n", tail);
	if (fclose(fp) != 0 || rc || !text)
		rc = (die_msg("out of memory writing %s", path), 1);
	else
		rc = write_text_atomic(path, text) != 0;
	free(text);
	return rc;
}

