/* cmd_merge.c: `karat merge SHARD.csv...`: joins the CSVs of `karat sweep
 * --shard K/N` into exactly the output of the unsharded sweep.  A shard
 * file's first column, `point`, is each row's index in the whole sweep;
 * the merge checks that every file has the same header and that the
 * indices cover 0 .. n-1 once each, then writes the rows in point order
 * without that column, quoted as the sweep quotes them, and a row equal
 * to an earlier one once (as the unsharded sweep does).  Files are parsed
 * with libcsv; errors name the file and the row. */
#include <csv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "karat.h"

#define MERGE_MAX_BYTES (1LL << 30) /* a shard file, as a trace */

struct mrow {
	char **f;
	int n;
};

struct reader {
	const char *path;
	long line;             /* the record being read, 1 = the header */
	struct mrow cur;
	struct mrow head;      /* this file's header */
	struct mrow *rows;     /* data rows of this file */
	long nrows, cap;
	int failed;
	char msg[KERR_MSG];
};

static void free_row(struct mrow *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->f[i]);
	free(r->f);
	r->f = NULL, r->n = 0;
}

static void on_field(void *s, size_t len, void *data)
{
	struct reader *rd = data;
	if (rd->failed)
		return;
	char **f = realloc(rd->cur.f, sizeof *f * (size_t)(rd->cur.n + 1));
	char *v = malloc(len + 1);
	if (!f || !v) {
		free(v);
		if (f)
			rd->cur.f = f;
		rd->failed = 1;
		snprintf(rd->msg, sizeof rd->msg, "out of memory");
		return;
	}
	memcpy(v, s, len);
	v[len] = '\0';
	rd->cur.f = f;
	rd->cur.f[rd->cur.n++] = v;
}

static void on_row(int c, void *data)
{
	struct reader *rd = data;
	(void)c;
	if (rd->failed) {
		free_row(&rd->cur);
		return;
	}
	if (rd->line == 1) {
		rd->head = rd->cur;
	} else {
		if (rd->nrows == rd->cap) {
			long cap = rd->cap ? 2 * rd->cap : 256;
			struct mrow *r = realloc(rd->rows, sizeof *r * (size_t)cap);
			if (!r) {
				free_row(&rd->cur);
				rd->failed = 1;
				snprintf(rd->msg, sizeof rd->msg, "out of memory");
				return;
			}
			rd->rows = r, rd->cap = cap;
		}
		rd->rows[rd->nrows++] = rd->cur;
	}
	rd->cur = (struct mrow){0};
	rd->line++;
}

/* Reads one shard file into rd; 0, or -1 with the reason printed. */
static int read_shard(struct reader *rd)
{
	char *buf;
	size_t len;
	struct kerr err;
	if (file_read_all(rd->path, MERGE_MAX_BYTES, "shard file", "", &buf, &len, &err) != 0)
		return die_msg("%s", err.msg), -1;
	struct csv_parser p;
	if (csv_init(&p, CSV_APPEND_NULL | CSV_STRICT | CSV_STRICT_FINI) != 0) {
		free(buf);
		return die_msg("out of memory for the CSV parser"), -1;
	}
	rd->line = 1;
	if (csv_parse(&p, buf, len, on_field, on_row, rd) != len && !rd->failed) {
		rd->failed = 1;
		snprintf(rd->msg, sizeof rd->msg, "%s", csv_strerror(csv_error(&p)));
	}
	if (!rd->failed && csv_fini(&p, on_field, on_row, rd) != 0) {
		rd->failed = 1;
		snprintf(rd->msg, sizeof rd->msg, "%s", csv_strerror(csv_error(&p)));
	}
	csv_free(&p);
	free(buf);
	free_row(&rd->cur);
	if (rd->failed)
		return die_msg("%s:%ld: %s", rd->path, rd->line, rd->msg), -1;
	if (rd->head.n < 2 || strcmp(rd->head.f[0], "point") != 0)
		return die_msg("%s:1: not a shard file: its first column is not 'point' (write "
			       "shards with karat sweep --shard K/N)", rd->path), -1;
	return 0;
}

static int same_header(const struct mrow *a, const struct mrow *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->f[i], b->f[i]) != 0)
			return 0;
	return 1;
}

/* The point index in the first field: a whole number, digits only. */
static long point_index(const char *s)
{
	if (!*s || strlen(s) > 12)
		return -1;
	long v = 0;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return -1;
		v = v * 10 + (*c - '0');
	}
	return v;
}

static void free_readers(struct reader *rd, int n)
{
	for (int i = 0; i < n; i++) {
		free_row(&rd[i].head);
		for (long r = 0; r < rd[i].nrows; r++)
			free_row(&rd[i].rows[r]);
		free(rd[i].rows);
	}
	free(rd);
}

int cmd_merge(const struct args *a)
{
	const struct command *c = command_find("merge");
	const char *output = arg_get(c, a, "output");
	if (output && strcmp(output, "-") == 0)
		output = NULL;
	if (output && out_check(output) != 0)
		return 1;
	int n = a->npos;
	struct reader *rd = calloc((size_t)n, sizeof *rd);
	if (!rd)
		return die_msg("out of memory"), 1;
	long total = 0;
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		rd[i].path = a->pos[i];
		rc = read_shard(&rd[i]) != 0;
		if (!rc && i && !same_header(&rd[i].head, &rd[0].head)) {
			die_msg("%s:1: its header differs from %s's (shards of one sweep share it)",
				rd[i].path, rd[0].path);
			rc = 1;
		}
		total += rc ? 0 : rd[i].nrows;
	}
	/* every point once: by index, then no gap */
	const struct mrow **by = rc ? NULL : calloc((size_t)(total ? total : 1), sizeof *by);
	if (!rc && !by) {
		die_msg("out of memory");
		rc = 1;
	}
	for (int i = 0; i < n && !rc; i++)
		for (long r = 0; r < rd[i].nrows && !rc; r++) {
			const struct mrow *row = &rd[i].rows[r];
			long idx = row->n == rd[0].head.n ? point_index(row->f[0]) : -1;
			if (idx < 0 || idx >= total) {
				die_msg("%s:%ld: %s", rd[i].path, r + 2, idx < 0 ?
					"not a shard row (its point is not a whole number, or a "
					"column is missing)" : "point beyond the points the files hold: "
					"a shard is missing");
				rc = 1;
			} else if (by[idx]) {
				die_msg("%s:%ld: point %ld is in two shards", rd[i].path, r + 2, idx);
				rc = 1;
			} else {
				by[idx] = row;
			}
		}
	char *text = NULL;
	size_t len = 0;
	FILE *fp = rc ? NULL : open_memstream(&text, &len);
	if (!rc && !fp) {
		die_msg("out of memory");
		rc = 1;
	}
	if (!rc) {
		rc = csv_write_row(fp, rd[0].head.n - 1, (const char *const *)rd[0].head.f + 1) != 0;
		static struct rowset seen; /* the rows the unsharded sweep drops */
		for (long i = 0; i < total && !rc; i++) {
			struct rowbuf rb;
			FILE *f1 = rowbuf_open(&rb);
			rc = rowbuf_emit(&rb, f1 && csv_write_row(f1, by[i]->n - 1,
								  (const char *const *)by[i]->f + 1) == 0,
					 &seen, fp) < 0;
		}
		rowset_free(&seen);
		if (fclose(fp) != 0 || rc) {
			die_msg("out of memory writing the merge");
			rc = 1;
		}
	}
	if (!rc)
		rc = output ? write_text_atomic(output, text) != 0 : fputs(text, stdout) < 0;
	if (!rc && output)
		fprintf(stderr, "karat merge: %ld points from %d shard%s -> %s\n", total, n,
			n == 1 ? "" : "s", output);
	free(text);
	free(by);
	free_readers(rd, n);
	return rc ? 1 : 0;
}
