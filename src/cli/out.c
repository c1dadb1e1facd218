/* out.c: aligned text tables and CSV (quoting by libcsv, only where a field
 * needs it, so headers stay plain), and the set of rows written so far. */
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

/* A row's 128-bit fingerprint: FNV-1a and a multiply-xorshift hash, two
 * 64-bit hashes of different families over the same bytes.  Two distinct
 * rows share one with a chance near n^2 / 2^129: for the 10 million rows a
 * sweep may have, about 1e-25. */
void out_fingerprint(const char *s, size_t n, unsigned long long h[2])
{
	unsigned long long a = 1469598103934665603ULL, b = 0x9e3779b97f4a7c15ULL ^ n;
	for (size_t i = 0; i < n; i++) {
		a = (a ^ (unsigned char)s[i]) * 1099511628211ULL;
		b = (b + (unsigned char)s[i]) * 0xff51afd7ed558ccdULL;
		b ^= b >> 29;
	}
	h[0] = a, h[1] = b ^ (b >> 32);
}

int rowset_add(struct rowset *rs, const char *row, size_t len)
{
	if (2 * (rs->n + 1) > rs->cap) { /* grow: open addressing, at most half full */
		size_t cap = rs->cap ? 2 * rs->cap : 1024;
		unsigned long long (*slot)[2] = calloc(cap, sizeof *slot);
		if (!slot)
			return -1;
		for (size_t i = 0; i < rs->cap; i++)
			if (rs->slot[i][0] | rs->slot[i][1]) {
				size_t j = rs->slot[i][0] & (cap - 1);
				while (slot[j][0] | slot[j][1])
					j = (j + 1) & (cap - 1);
				slot[j][0] = rs->slot[i][0], slot[j][1] = rs->slot[i][1];
			}
		free(rs->slot);
		rs->slot = slot, rs->cap = cap;
	}
	unsigned long long h[2];
	out_fingerprint(row, len, h);
	h[1] |= !(h[0] | h[1]); /* all zero marks an empty slot */
	size_t j = h[0] & (rs->cap - 1);
	for (; rs->slot[j][0] | rs->slot[j][1]; j = (j + 1) & (rs->cap - 1))
		if (rs->slot[j][0] == h[0] && rs->slot[j][1] == h[1])
			return 0;
	rs->slot[j][0] = h[0], rs->slot[j][1] = h[1];
	rs->n++;
	return 1;
}

FILE *rowbuf_open(struct rowbuf *b)
{
	b->s = NULL, b->n = 0;
	return b->fp = open_memstream(&b->s, &b->n);
}

int rowbuf_emit(struct rowbuf *b, int ok, struct rowset *rs, FILE *fp)
{
	if (b->fp && fclose(b->fp) != 0)
		ok = 0;
	int fresh = ok && b->fp ? rowset_add(rs, b->s, b->n) : -1;
	if (fresh > 0 && fwrite(b->s, 1, b->n, fp) != b->n)
		fresh = -1;
	free(b->s);
	b->s = NULL, b->fp = NULL;
	return fresh;
}

void rowset_free(struct rowset *rs)
{
	free(rs->slot);
	memset(rs, 0, sizeof *rs);
}
