/* cmd_merge.c: `karat merge SHARD.csv...`: joins the CSVs of `karat sweep
 * --shard K/N` into exactly the output of the unsharded sweep.  A shard
 * file starts with the record of its sweep (shard.h): the merge refuses a
 * shard of another sweep or of an edited one, a shard given twice, and a
 * set with shards missing (naming them) or incomplete.  Its first column,
 * `point`, is each row's index in the whole sweep;
 * the merge checks that every file has the same header, that each file's
 * points rise, and that together they cover 0 .. n-1 once each, then
 * writes the rows in point order without that column, quoted as the sweep
 * quotes them, and a row equal to an earlier one once (as the unsharded
 * sweep does).
 *
 * It streams: the files are read in chunks through libcsv and merged by
 * their next point (a heap), twice: once to check everything, once to
 * write, so nothing is written unless the whole set is right, and memory
 * holds a few rows per file whatever their size.  As the trace reader
 * does, a UTF-8 byte order mark at a file's start is skipped and a NUL
 * byte is refused; errors name the file and the line. */
#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/shard.h"
#include "karat.h"

struct mrow {
	char **f;
	int n;
	long line; /* the file's line the record starts on */
};

struct reader {
	const char *path;
	int fd;
	struct csv_parser p;
	int started, eof;
	long line;             /* physical lines seen so far, + 1 */
	long rec_line;         /* where the record being parsed starts */
	struct mrow cur;       /* the record being parsed */
	struct mrow head;      /* this file's header */
	struct mrow q[64];     /* parsed records not yet taken */
	int qh, qn;
	long last;             /* the last point taken, or -1 */
	long rows;             /* points taken */
	struct shard_info info; /* its first line */
	int has_info;
	int failed;
	char msg[KERR_MSG];
	long fail_line;
};

static void free_row(struct mrow *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->f[i]);
	free(r->f);
	r->f = NULL, r->n = 0;
}

static void fail(struct reader *rd, long line, const char *msg)
{
	if (!rd->failed) {
		rd->failed = 1, rd->fail_line = line;
		snprintf(rd->msg, sizeof rd->msg, "%s", msg);
	}
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
		fail(rd, rd->rec_line, "out of memory");
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
	rd->cur.line = rd->rec_line;
	if (rd->failed || rd->qn == (int)(sizeof rd->q / sizeof *rd->q)) {
		if (!rd->failed)
			fail(rd, rd->rec_line, "too many records in one read");
		free_row(&rd->cur);
		return;
	}
	if (!rd->head.f)
		rd->head = rd->cur;
	else
		rd->q[(rd->qh + rd->qn++) % 64] = rd->cur;
	rd->cur = (struct mrow){0};
	rd->rec_line = rd->line + 1; /* the record ended on this line's newline */
}

/* Parses the next chunk of the file: 0, or -1 (rd->failed says why). */
static int feed(struct reader *rd)
{
	char buf[16384];
	ssize_t r;
	while ((r = read(rd->fd, buf, sizeof buf)) < 0 && errno == EINTR)
		;
	if (r < 0) {
		fail(rd, rd->line, strerror(errno));
		return -1;
	}
	if (r == 0) {
		rd->eof = 1;
		if (csv_fini(&rd->p, on_field, on_row, rd) != 0)
			fail(rd, rd->rec_line, csv_strerror(csv_error(&rd->p)));
		return rd->failed ? -1 : 0;
	}
	size_t off = 0, n = (size_t)r;
	if (!rd->started) {
		rd->started = 1;
		if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
			off = 3; /* a UTF-8 byte order mark: skipped, as in a trace */
		/* the record of the sweep the shard belongs to */
		const char *nl = memchr(buf + off, '\n', n - off);
		if (nl && (size_t)(nl - (buf + off)) < 512 && buf[off] == '#') {
			char line[512];
			snprintf(line, sizeof line, "%.*s", (int)(nl - (buf + off)), buf + off);
			size_t l = strlen(line);
			if (l && line[l - 1] == '\r')
				line[l - 1] = '\0';
			rd->has_info = shard_parse_info(line, &rd->info) == 0;
			if (rd->has_info) {
				off = (size_t)(nl - buf) + 1;
				rd->line++, rd->rec_line++;
			}
		}
	}
	const char *nul = memchr(buf + off, '\0', n - off);
	size_t upto = nul ? (size_t)(nul - buf) : n;
	/* parse line by line, so that each record knows its first line */
	while (off < upto && !rd->failed) {
		const char *nl = memchr(buf + off, '\n', upto - off);
		size_t end = nl ? (size_t)(nl - buf) + 1 : upto;
		if (csv_parse(&rd->p, buf + off, end - off, on_field, on_row, rd) != end - off)
			fail(rd, rd->rec_line, csv_strerror(csv_error(&rd->p)));
		rd->line += nl != NULL;
		off = end;
	}
	if (nul && !rd->failed)
		fail(rd, rd->line, "a NUL byte: binary data, not a shard CSV");
	return rd->failed ? -1 : 0;
}

/* The reader's next record (NULL at the end or on failure). */
static struct mrow *peek(struct reader *rd)
{
	while (rd->qn == 0 && !rd->eof && !rd->failed)
		feed(rd);
	return rd->qn && !rd->failed ? &rd->q[rd->qh] : NULL;
}

static void take(struct reader *rd)
{
	free_row(&rd->q[rd->qh]);
	rd->qh = (rd->qh + 1) % 64, rd->qn--;
}

static void reader_close(struct reader *rd)
{
	if (rd->fd >= 0) {
		csv_free(&rd->p);
		close(rd->fd);
	}
	rd->fd = -1;
	free_row(&rd->cur);
	while (rd->qn)
		take(rd);
	free_row(&rd->head);
}

/* Opens the file and reads its header: 0, or -1 (printed). */
static int reader_open(struct reader *rd)
{
	struct kerr err;
	struct stat st;
	rd->fd = file_open_regular(rd->path, "shard file", " (a shard is a CSV file)", &st, &err);
	rd->started = 0, rd->eof = 0, rd->line = rd->rec_line = 1, rd->last = -1;
	rd->rows = 0, rd->has_info = 0;
	if (rd->fd < 0)
		return die_msg("%s", err.msg), -1;
	if (csv_init(&rd->p, CSV_APPEND_NULL | CSV_STRICT | CSV_STRICT_FINI) != 0) {
		close(rd->fd);
		rd->fd = -1;
		return die_msg("out of memory for the CSV parser"), -1;
	}
	while (!rd->head.f && !rd->eof && !rd->failed)
		feed(rd);
	if (rd->failed)
		return die_msg("%s:%ld: %s", rd->path, rd->fail_line, rd->msg), -1;
	if (!rd->has_info)
		return die_msg("%s:1: not a shard of a sweep: its first line is not the %s record "
			       "(write shards with karat sweep --shard K/N)", rd->path, SHARD_TAG), -1;
	if (!rd->head.f || rd->head.n < 2 || strcmp(rd->head.f[0], "point") != 0)
		return die_msg("%s:2: not a shard file: its first column is not 'point' (write "
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

/* The heap of readers by their next point. */
struct heap {
	int *r;
	long *key;
	int n;
};

static void heap_push(struct heap *h, int r, long key)
{
	int i = h->n++;
	while (i > 0 && h->key[(i - 1) / 2] > key) {
		h->r[i] = h->r[(i - 1) / 2], h->key[i] = h->key[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->r[i] = r, h->key[i] = key;
}

static void heap_pop(struct heap *h)
{
	int r = h->r[--h->n];
	long key = h->key[h->n];
	int i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->key[c + 1] < h->key[c])
			c++;
		if (h->key[c] >= key)
			break;
		h->r[i] = h->r[c], h->key[i] = h->key[c];
		i = c;
	}
	h->r[i] = r, h->key[i] = key;
}

/* The reader's next point into the heap: 0, or -1 (printed). */
static int next_point(struct reader *rd, int i, struct heap *h, int ncols)
{
	struct mrow *row = peek(rd);
	if (!row) {
		if (rd->failed)
			return die_msg("%s:%ld: %s", rd->path, rd->fail_line, rd->msg), -1;
		return 0;
	}
	long idx = row->n == ncols ? point_index(row->f[0]) : -1;
	if (idx < 0)
		return die_msg("%s:%ld: not a shard row (its point is not a whole number, or a "
			       "column is missing)", rd->path, row->line), -1;
	if (idx <= rd->last)
		return die_msg("%s:%ld: point %ld after point %ld: a shard's points rise",
			       rd->path, row->line, idx, rd->last), -1;
	rd->last = idx;
	rd->rows++;
	heap_push(h, i, idx);
	return 0;
}

/* The files are shards of one sweep (the same record but for K), each
 * shard once, and every shard there; else it says which are not. */
static int one_sweep(struct reader *rd, int n)
{
	const struct shard_info *a = &rd[0].info;
	for (int i = 1; i < n; i++) {
		const struct shard_info *b = &rd[i].info;
		if (strcmp(a->id, b->id) != 0 || a->n != b->n || a->points != b->points)
			return die_msg("%s:1: a shard of another sweep, or of this sweep after its "
				       "file was edited (sweep %.12s..., %ld shards, %ld points; %s has "
				       "sweep %.12s..., %ld shards, %ld points)", rd[i].path, b->id, b->n,
				       b->points, rd[0].path, a->id, a->n, a->points), -1;
		for (int j = 0; j < i; j++)
			if (rd[j].info.k == b->k)
				return die_msg("%s:1: shard %ld/%ld again (%s is shard %ld/%ld too)",
					       rd[i].path, b->k, b->n, rd[j].path, b->k, b->n), -1;
	}
	char missing[1024] = "";
	size_t u = 0;
	long nmiss = 0, shown = 0;
	for (long k = 1; k <= a->n; k++) {
		int have = 0;
		for (int i = 0; i < n && !have; i++)
			have = rd[i].info.k == k;
		if (have)
			continue;
		nmiss++;
		if (shown < 16 && u < sizeof missing - 32)
			u += (size_t)snprintf(missing + u, sizeof missing - u, "%s%ld/%ld",
					      shown ? ", " : "", k, a->n), shown++;
	}
	if (nmiss)
		return die_msg("missing %ld of %ld shards: %s%s (run them, then merge again)", nmiss,
			       a->n, missing, nmiss > shown ? ", ..." : ""), -1;
	return 0;
}

/* One pass over the files: checks them, and writes the merge to fp when
 * fp is not NULL.  *total: the points.  0, or 1 (printed). */
static int merge_pass(struct reader *rd, int n, FILE *fp, long *total)
{
	struct heap h = {malloc(sizeof *h.r * (size_t)n), malloc(sizeof *h.key * (size_t)n), 0};
	int rc = !h.r || !h.key ? (die_msg("out of memory"), 1) : 0;
	for (int i = 0; i < n && !rc; i++) {
		rc = reader_open(&rd[i]) != 0;
		if (!rc && i && !same_header(&rd[i].head, &rd[0].head))
			rc = (die_msg("%s:1: its header differs from %s's (shards of one sweep share "
				      "it)", rd[i].path, rd[0].path), 1);
	}
	if (!rc)
		rc = one_sweep(rd, n) != 0;
	int ncols = rc ? 0 : rd[0].head.n;
	for (int i = 0; i < n && !rc; i++)
		rc = next_point(&rd[i], i, &h, ncols) != 0;
	if (!rc && fp)
		rc = csv_write_row(fp, ncols - 1, (const char *const *)rd[0].head.f + 1) != 0;
	static struct rowset seen; /* the rows the unsharded sweep drops */
	long want = 0;
	char gap[KERR_MSG + 64] = "";
	while (!rc && h.n > 0) {
		int i = h.r[0];
		long idx = h.key[0];
		struct mrow *row = &rd[i].q[rd[i].qh];
		if (idx != want && !gap[0]) { /* said after the shards' counts, which say more */
			if (idx < want)
				snprintf(gap, sizeof gap, "%s:%ld: point %ld is in two shards", rd[i].path,
					 row->line, idx);
			else
				snprintf(gap, sizeof gap, "%s:%ld: point %ld comes before point %ld in no "
					 "file: a shard is missing", rd[i].path, row->line, want, idx);
		}
		if (gap[0]) { /* read on, to count each shard's rows */
			want = idx + 1;
			heap_pop(&h);
			take(&rd[i]);
			rc = next_point(&rd[i], i, &h, ncols) != 0;
			continue;
		}
		if (fp) {
			struct rowbuf rb;
			FILE *f1 = rowbuf_open(&rb);
			rc = rowbuf_emit(&rb, f1 && csv_write_row(f1, row->n - 1,
								  (const char *const *)row->f + 1) == 0,
					 &seen, fp) < 0;
			if (rc)
				die_msg("write error or out of memory writing the merge");
		}
		want++;
		heap_pop(&h);
		take(&rd[i]);
		if (!rc)
			rc = next_point(&rd[i], i, &h, ncols) != 0;
	}
	for (int i = 0; i < n && !rc; i++) /* every shard whole */
		if (rd[i].rows != rd[i].info.shard_points)
			rc = (die_msg("%s: shard %ld/%ld is incomplete: %ld of its %ld points (run it "
				      "again: it goes on from where it stopped)", rd[i].path, rd[i].info.k,
				      rd[i].info.n, rd[i].rows, rd[i].info.shard_points), 1);
	if (!rc && gap[0])
		rc = (die_msg("%s", gap), 1);
	if (!rc && want != rd[0].info.points)
		rc = (die_msg("the shards hold %ld of the sweep's %ld points", want,
			      rd[0].info.points), 1);
	rowset_free(&seen);
	for (int i = 0; i < n; i++)
		reader_close(&rd[i]);
	free(h.r), free(h.key);
	*total = want;
	return rc;
}

int cmd_merge(const struct args *a)
{
	const struct command *c = command_find("merge");
	const char *output = arg_get(c, a, "output");
	if (output && strcmp(output, "-") == 0)
		output = NULL;
	int n = a->npos;
	struct reader *rd = calloc((size_t)n, sizeof *rd);
	if (!rd)
		return die_msg("out of memory"), 1;
	for (int i = 0; i < n; i++)
		rd[i].path = a->pos[i], rd[i].fd = -1;
	long total = 0;
	/* check every file first (they are then the command's inputs), then write */
	int rc = merge_pass(rd, n, NULL, &total);
	if (!rc && output && out_check(output) != 0)
		rc = 1;
	struct outfile o;
	if (!rc && (output ? out_open(&o, output) : out_open(&o, "-")) != 0)
		rc = 1;
	if (!rc) {
		rc = merge_pass(rd, n, o.fp, &total);
		if (rc)
			out_abort(&o);
		else
			rc = out_close(&o, 0) != 0;
	}
	if (!rc && output)
		fprintf(stderr, "karat merge: %ld points from %d shard%s -> %s\n", total, n,
			n == 1 ? "" : "s", output);
	free(rd);
	return rc ? 1 : 0;
}
