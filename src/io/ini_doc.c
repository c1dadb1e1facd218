/* ini_doc.c: feeds inih one line at a time from a buffer we own, so that
 * line numbers are exact and comments (the source of every value) are kept.
 * Comments are stripped here, before inih sees the line. */
#include "io/ini_doc.h"

#include "io/file.h"

#include <ctype.h>
#include <stdarg.h>
#include <pthread.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* inih (Debian build) reads lines into a 200-byte stack buffer. */
#define INIH_LINE_ROOM 190

struct feed {
	const char *buf;
	size_t len, pos;
	int line;             /* number of the line last handed to inih */
	char comment[INI_SOURCE];
	struct ini_doc *doc;
	struct kerr *err;
	int failed;           /* our own error already written to err */
};

/* Letters, digits, _ - . and at most one [NAME] group after the first
 * word (a sweep's [set] may name a role's file: memdev[karat].tdp). */
static int valid_name(const char *s)
{
	if (!*s || *s == '[')
		return 0;
	int open = 0, groups = 0;
	for (; *s; s++) {
		if (*s == '[') {
			if (open || groups++ || s[1] == ']')
				return 0;
			open = 1;
		} else if (*s == ']') {
			if (!open || (s[1] && s[1] != '.'))
				return 0;
			open = 0;
		} else if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-' || *s == '.')) {
			return 0;
		}
	}
	return !open;
}

/* Position of an inline comment (';' or '#' after a blank), or -1. */
static long comment_start(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && (s[i] == ';' || s[i] == '#'))
		return (long)i;
	for (; i < n; i++)
		if ((s[i] == ';' || s[i] == '#') && i > 0 &&
		    (s[i - 1] == ' ' || s[i - 1] == '\t'))
			return (long)i;
	return -1;
}

/* Records an error at the current line and tells inih to stop (returns 0). */
static int reject(struct feed *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int reject(struct feed *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kerr_vset(f->err, f->doc->path, f->line, fmt, ap);
	va_end(ap);
	f->failed = 1;
	return 0;
}

static void record_section(struct feed *f, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	if (i >= n || s[i] != '[')
		return;
	const char *close = memchr(s + i, ']', n - i);
	if (!close)
		return; /* inih reports the syntax error */
	size_t a = i + 1, b = (size_t)(close - s);
	while (a < b && isspace((unsigned char)s[a]))
		a++;
	while (b > a && isspace((unsigned char)s[b - 1]))
		b--;
	struct ini_doc *d = f->doc;
	char name[INI_NAME];
	if (b - a >= sizeof name) {
		reject(f, "section name longer than %d characters", INI_NAME - 1);
		return;
	}
	memcpy(name, s + a, b - a);
	name[b - a] = '\0';
	if (!valid_name(name)) {
		reject(f, "bad section name '[%s]' (letters, digits, _ - . only)", name);
		return;
	}
	for (int k = 0; k < d->nsec; k++)
		if (strcmp(d->sec[k].name, name) == 0) {
			reject(f, "section [%s] repeated (first at line %d)", name,
			       d->sec[k].line);
			return;
		}
	if (d->nsec == INI_MAX_SECTIONS) {
		reject(f, "more than %d sections", INI_MAX_SECTIONS);
		return;
	}
	snprintf(d->sec[d->nsec].name, INI_NAME, "%s", name);
	d->sec[d->nsec++].line = f->line;
}

/* fgets-like reader handed to inih: one source line per call, comment
 * removed and remembered. */
static char *feed_line(char *str, int num, void *stream)
{
	struct feed *f = stream;
	if (f->failed || f->pos >= f->len)
		return NULL;
	const char *s = f->buf + f->pos;
	const char *nl = memchr(s, '\n', f->len - f->pos);
	size_t n = nl ? (size_t)(nl - s) : f->len - f->pos;
	f->pos += n + (nl ? 1 : 0);
	f->line++;
	if (n && s[n - 1] == '\r')
		n--;
	long c = comment_start(s, n);
	f->comment[0] = '\0';
	size_t body = n;
	if (c >= 0) {
		size_t a = (size_t)c + 1;
		while (a < n && (s[a] == ' ' || s[a] == '\t'))
			a++;
		size_t clen = n - a;
		if (clen >= sizeof f->comment)
			clen = sizeof f->comment - 1;
		memcpy(f->comment, s + a, clen);
		f->comment[clen] = '\0';
		body = (size_t)c;
	}
	while (body && (s[body - 1] == ' ' || s[body - 1] == '\t'))
		body--;
	if (body > INIH_LINE_ROOM || (int)body + 2 > num) {
		reject(f, "line too long (%zu characters before any comment, at most %d)",
		       body, INIH_LINE_ROOM);
		return NULL;
	}
	record_section(f, s, body);
	if (f->failed)
		return NULL;
	memcpy(str, s, body);
	str[body] = '\n';
	str[body + 1] = '\0';
	return str;
}

static int on_pair(void *user, const char *section, const char *key,
		   const char *value)
{
	struct feed *f = user;
	struct ini_doc *d = f->doc;
	if (!*section)
		return reject(f, "key '%s' appears before any [section]", key);
	if (!valid_name(key) || strlen(key) >= INI_NAME)
		return reject(f, "bad key name '%.64s' (letters, digits, _ - . only, and one ROLE[NAME])", key);
	if (!*value)
		return reject(f, "key '%s' has no value", key);
	const struct ini_entry *old = ini_doc_find(d, section, key);
	if (old)
		return reject(f, "duplicate key '%s' in [%s] (first at line %d)", key,
			      section, old->line);
	if (d->n == INI_MAX_ENTRIES)
		return reject(f, "more than %d keys", INI_MAX_ENTRIES);
	struct ini_entry *e = &d->e[d->n++];
	snprintf(e->section, sizeof e->section, "%s", section);
	snprintf(e->key, sizeof e->key, "%s", key);
	snprintf(e->value, sizeof e->value, "%s", value);
	snprintf(e->source, sizeof e->source, "%s", f->comment);
	e->line = f->line;
	return 1;
}

/* inih's switches are process-wide globals: set once, before the first
 * parse, and never written again, so parses may run on many threads. */
static pthread_once_t inih_once = PTHREAD_ONCE_INIT;

static void inih_configure(void)
{
	ini_allow_multiline = 0;
	ini_allow_inline_comments = 0;
	ini_stop_on_first_error = 1;
	ini_allow_no_value = 0;
}

struct ini_doc *ini_doc_parse(const char *name, const char *text, size_t len,
			      struct kerr *err)
{
	/* not calloc: the entries past d->n are never read, and clearing
	 * 400 KB per file was a tenth of a query's time */
	struct ini_doc *d = malloc(sizeof *d);
	if (!d) {
		kerr_set(err, name, 0, "out of memory");
		return NULL;
	}
	d->n = d->nsec = d->nlines = 0;
	snprintf(d->path, sizeof d->path, "%s", name);
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		int line = 1;
		for (const char *p = text; p < nul; p++)
			line += *p == '\n';
		kerr_set(err, name, line, "binary data (NUL byte); not an INI file");
		goto fail;
	}
	pthread_once(&inih_once, inih_configure);
	struct feed f = {.buf = text, .len = len, .doc = d, .err = err};
	int rc = ini_parse_stream(feed_line, &f, on_pair, &f);
	if (!f.failed && rc > 0)
		kerr_set(err, name, rc,
			 "syntax error (expected '[section]' or 'key = value')");
	if (!f.failed && rc < 0)
		kerr_set(err, name, 0, "cannot parse (inih error %d)", rc);
	if (f.failed || rc != 0)
		goto fail;
	d->nlines = f.line;
	return d;
fail:
	free(d);
	return NULL;
}

struct ini_doc *ini_doc_load(const char *path, struct kerr *err)
{
	char *buf;
	size_t len;
	if (file_read_all(path, INI_MAX_BYTES, "file", "", &buf, &len, err) != 0)
		return NULL;
	struct ini_doc *d = ini_doc_parse(path, buf, len, err);
	free(buf);
	return d;
}

void ini_doc_free(struct ini_doc *d)
{
	free(d);
}

const struct ini_entry *ini_doc_find(const struct ini_doc *d,
				     const char *section, const char *key)
{
	for (int i = 0; i < d->n; i++)
		if (strcmp(d->e[i].section, section) == 0 &&
		    strcmp(d->e[i].key, key) == 0)
			return &d->e[i];
	return NULL;
}

int ini_doc_section_line(const struct ini_doc *d, const char *section)
{
	for (int i = 0; i < d->nsec; i++)
		if (strcmp(d->sec[i].name, section) == 0)
			return d->sec[i].line;
	return 0;
}

int ini_doc_put(struct ini_doc *d, const char *section, const char *key, const char *value,
		int line)
{
	struct ini_entry *e = NULL;
	for (int i = 0; i < d->n && !e; i++)
		if (strcmp(d->e[i].section, section) == 0 && strcmp(d->e[i].key, key) == 0)
			e = &d->e[i];
	if (!e) {
		if (d->n == INI_MAX_ENTRIES)
			return -1;
		e = &d->e[d->n++];
		snprintf(e->section, sizeof e->section, "%s", section);
		snprintf(e->key, sizeof e->key, "%s", key);
	}
	e->source[0] = '\0'; /* the file's source was for its own value */
	snprintf(e->value, sizeof e->value, "%s", value);
	e->line = line;
	if (ini_doc_section_line(d, section) == 0) {
		if (d->nsec == INI_MAX_SECTIONS)
			return -1;
		snprintf(d->sec[d->nsec].name, INI_NAME, "%s", section);
		d->sec[d->nsec++].line = line;
	}
	return 0;
}
