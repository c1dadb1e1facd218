/* trace.c: the trace CSV reader (libcsv, line by line so every message
 * names its line), as strict as the INI reader. */
#include "workload/workload.h"

#include "io/file.h"

#include <csv.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS WL_MAX_TOKENS

struct trace_rd {
	const char *path, *in_col, *out_col;
	const struct trace_filter *keep;
	int col_in, col_out, col_keep, kept_row, field, header_done, failed;
	long row;          /* data rows seen */
	int line;          /* line being parsed (a row is named by its last) */
	double vin, vout;
	int got_in, got_out;
	double *in, *out;
	long n, cap;
	char **head;       /* header names, for duplicates */
	int nhead;
	struct kerr *err;
};

static int trace_fail(struct trace_rd *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int trace_fail(struct trace_rd *t, const char *fmt, ...)
{
	if (t->failed)
		return -1;
	t->failed = 1;
	va_list ap;
	va_start(ap, fmt);
	kerr_vset(t->err, t->path, t->line, fmt, ap);
	va_end(ap);
	return -1;
}

static void on_header(struct trace_rd *t, const char *s, size_t len, int f)
{
	if (t->nhead == TRACE_MAX_COLS) {
		trace_fail(t, "header has more than %d columns", TRACE_MAX_COLS);
		return;
	}
	for (int i = 0; i < t->nhead; i++)
		if (strlen(t->head[i]) == len && memcmp(t->head[i], s, len) == 0) {
			trace_fail(t, "header names column '%.*s' twice (columns %d and %d)",
				   (int)(len < 40 ? len : 40), s, i + 1, f + 1);
			return;
		}
	char *copy = malloc(len + 1);
	if (!copy) {
		trace_fail(t, "out of memory");
		return;
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	t->head[t->nhead++] = copy;
	if (len == strlen(t->in_col) && memcmp(s, t->in_col, len) == 0)
		t->col_in = f;
	if (len == strlen(t->out_col) && memcmp(s, t->out_col, len) == 0)
		t->col_out = f;
	if (t->keep && len == strlen(t->keep->column) && memcmp(s, t->keep->column, len) == 0)
		t->col_keep = f;
}

/* A whole token count: decimal digits only (no sign, exponent, hex,
 * blanks or fraction), at most MAX_TOKENS. */
static int token_count(const char *s, size_t len, double *v)
{
	if (len == 0 || len > 10)
		return -1;
	double x = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = 10 * x + (s[i] - '0');
	}
	if (x > MAX_TOKENS)
		return -1;
	*v = x;
	return 0;
}

static void on_field(void *s, size_t len, void *data)
{
	struct trace_rd *t = data;
	int f = t->field++;
	if (t->failed)
		return;
	if (!t->header_done) {
		on_header(t, s, len, f);
		return;
	}
	if (t->keep && f == t->col_keep) {
		size_t pl = strlen(t->keep->prefix);
		t->kept_row = len >= pl && memcmp(s, t->keep->prefix, pl) == 0;
	}
	if (f != t->col_in && f != t->col_out)
		return;
	double v;
	if (token_count(s, len, &v) != 0) {
		trace_fail(t, "column %s: '%.*s' is not a whole token count (decimal "
			   "digits, at most %g)", f == t->col_in ? t->in_col : t->out_col,
			   (int)(len < 40 ? len : 40), (const char *)s, MAX_TOKENS);
		return;
	}
	if (f == t->col_in)
		t->vin = v, t->got_in = 1;
	if (f == t->col_out)
		t->vout = v, t->got_out = 1;
}

static void on_row(int c, void *data)
{
	(void)c;
	struct trace_rd *t = data;
	int fields = t->field;
	t->field = 0;
	if (t->failed)
		return;
	if (!t->header_done) {
		t->header_done = 1;
		if (t->col_in < 0 || t->col_out < 0)
			trace_fail(t, "header has no column '%s'",
				   t->col_in < 0 ? t->in_col : t->out_col);
		else if (t->keep && t->col_keep < 0)
			trace_fail(t, "header has no column '%s' (the row filter's)", t->keep->column);
		return;
	}
	t->row++;
	if (!t->got_in || !t->got_out) {
		trace_fail(t, "%d fields, too few for columns %s and %s", fields, t->in_col,
			   t->out_col);
		return;
	}
	t->got_in = t->got_out = 0;
	if (t->vin < 1) {
		trace_fail(t, "input length must be >= 1");
		return;
	}
	int kept = !t->keep || t->kept_row;
	t->kept_row = 0;
	if (!kept)
		return; /* checked, not kept */
	if (t->n == TRACE_MAX_ROWS) {
		trace_fail(t, "more than %ld rows", (long)TRACE_MAX_ROWS);
		return;
	}
	if (t->n == t->cap) {
		long cap = t->cap ? 2 * t->cap : 4096;
		double *a = realloc(t->in, (size_t)cap * sizeof *a);
		double *b = a ? realloc(t->out, (size_t)cap * sizeof *b) : NULL;
		if (a)
			t->in = a;
		if (!a || !b) {
			trace_fail(t, "out of memory at row %ld", t->row);
			return;
		}
		t->out = b, t->cap = cap;
	}
	t->in[t->n] = t->vin, t->out[t->n] = t->vout, t->n++;
}

static const char *csv_why(struct csv_parser *p)
{
	if (csv_error(p) == CSV_EPARSE)
		return "bad quoting: a quote inside an unquoted field, text after a "
		       "closing quote, or a quoted field never closed";
	return csv_strerror(csv_error(p));
}

int workload_parse_trace(const char *name, const char *buf, size_t len,
			 const char *in_col, const char *out_col,
			 const struct trace_filter *keep, double **in,
			 double **out, long *n, struct kerr *err)
{
	struct trace_rd t = {.path = name, .in_col = in_col, .out_col = out_col, .keep = keep,
			     .col_in = -1, .col_out = -1, .col_keep = -1, .err = err, .line = 1};
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		buf += 3, len -= 3; /* a UTF-8 byte-order mark: not part of the header */
	const char *nul = memchr(buf, '\0', len);
	if (nul) {
		for (const char *c = buf; c < nul; c++)
			t.line += *c == '\n';
		return trace_fail(&t, "a NUL byte: binary data, not a CSV trace");
	}
	t.line = 0;
	t.head = malloc(TRACE_MAX_COLS * sizeof *t.head);
	struct csv_parser p;
	if (!t.head || csv_init(&p, CSV_APPEND_NULL | CSV_STRICT | CSV_STRICT_FINI) != 0) {
		free(t.head);
		return kerr_set(err, name, 0, "out of memory for the CSV parser");
	}
	/* line by line, so a message can name the line */
	for (size_t at = 0; at < len && !t.failed;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (buf + at)) + 1 : len - at;
		t.line++;
		if (csv_parse(&p, buf + at, l, on_field, on_row, &t) != l)
			trace_fail(&t, "%s", csv_why(&p));
		at += l;
	}
	if (!t.failed && csv_fini(&p, on_field, on_row, &t) != 0)
		trace_fail(&t, "%s", csv_why(&p));
	csv_free(&p);
	for (int i = 0; i < t.nhead; i++)
		free(t.head[i]);
	free(t.head);
	t.line = 0;
	if (!t.failed && !t.header_done)
		trace_fail(&t, "empty trace");
	if (!t.failed && t.n == 0 && t.row > 0 && keep)
		trace_fail(&t, "no row's %s starts with '%.60s' (the row filter)", keep->column,
			   keep->prefix);
	if (!t.failed && t.n == 0)
		trace_fail(&t, "trace has a header but no rows");
	if (t.failed) {
		free(t.in);
		free(t.out);
		return -1;
	}
	*in = t.in, *out = t.out, *n = t.n;
	return 0;
}

int workload_read_trace(const char *path, const char *in_col,
			const char *out_col, const struct trace_filter *keep,
			double **in, double **out, long *n, struct kerr *err)
{
	char *buf;
	size_t size;
	if (file_read_all(path, TRACE_MAX_BYTES, "trace", " (a trace is a CSV file)", &buf, &size,
			  err) != 0)
		return -1;
	int rc = workload_parse_trace(path, buf, size, in_col, out_col, keep, in, out, n, err);
	free(buf);
	return rc;
}

