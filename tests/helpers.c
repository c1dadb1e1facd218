/* helpers.c: test utilities (see helpers.h). */
#define _GNU_SOURCE
#include "helpers.h"

#include <gsl/gsl_multifit.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *tmp_ini(int slot, const char *text, size_t len)
{
	static char paths[8][64];
	char *p = paths[slot & 7];
	snprintf(p, 64, "/tmp/karat-test-XXXXXX.ini");
	int fd = mkstemps(p, 4);
	if (fd < 0)
		return NULL;
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fd);
	return p;
}

const char *tmp_ini_str(int slot, const char *text)
{
	return tmp_ini(slot, text, strlen(text));
}

int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int rc = fputs(text, f) < 0;
	return fclose(f) != 0 || rc ? -1 : 0;
}

void read_text(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	size_t got = f ? fread(buf, 1, n - 1, f) : 0;
	buf[got] = '\0';
	if (f)
		fclose(f);
}

static void slurp(const char *path, char *buf, size_t n)
{
	read_text(path, buf, n);
	unlink(path);
}

int run_karat(const char *args, char *out, size_t nout, char *err, size_t nerr)
{
	const char *bin = getenv("KARAT_BIN");
	if (!bin)
		bin = KARAT_DATADIR "/build/karat";
	char o[64], e[64];
	snprintf(o, sizeof o, "/tmp/karat-out-XXXXXX");
	snprintf(e, sizeof e, "/tmp/karat-err-XXXXXX");
	int fo = mkstemp(o), fe = mkstemp(e);
	close(fo);
	close(fe);
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s </dev/null", bin, args, o, e);
	int st = system(cmd);
	char dummy[2];
	slurp(o, out ? out : dummy, out ? nout : sizeof dummy);
	slurp(e, err ? err : dummy, err ? nerr : sizeof dummy);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int run_karat_fmt(char *out, size_t nout, char *err, size_t nerr, const char *fmt, ...)
{
	char args[4000];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	return run_karat(args, out, nout, err, nerr);
}

const char *zoo_path(const char *rel)
{
	static char p[1024];
	snprintf(p, sizeof p, "%s/%s", KARAT_DATADIR, rel);
	return p;
}

int traces_absent(const char *name, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f) {
		fclose(f);
		return 0;
	}
	fprintf(stderr, "%s: skipped: %s is absent (../shared/traces is not here)\n", name,
		path);
	return 1;
}

int fit_relative(size_t n, size_t p, const double *x, const double *t, double *c)
{
	gsl_matrix *m = gsl_matrix_alloc(n, p), *cov = gsl_matrix_alloc(p, p);
	gsl_vector *y = gsl_vector_alloc(n), *w = gsl_vector_alloc(n), *cv = gsl_vector_alloc(p);
	gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, p);
	int rc = -1;
	if (m && cov && y && w && cv && ws) {
		for (size_t i = 0; i < n; i++) {
			for (size_t j = 0; j < p; j++)
				gsl_matrix_set(m, i, j, x[i * p + j]);
			gsl_vector_set(y, i, t[i]);
			gsl_vector_set(w, i, 1 / (t[i] * t[i]));
		}
		double chisq;
		rc = gsl_multifit_wlinear(m, w, y, cv, cov, &chisq, ws) == 0 ? 0 : -1;
		for (size_t j = 0; rc == 0 && j < p; j++)
			c[j] = gsl_vector_get(cv, j);
	}
	if (ws)
		gsl_multifit_linear_free(ws);
	gsl_vector_free(cv), gsl_vector_free(w), gsl_vector_free(y);
	gsl_matrix_free(cov), gsl_matrix_free(m);
	return rc;
}

int csv_cell(const char *csv, const char *name, char *val, size_t n)
{
	const char *nl = strchr(csv, '\n');
	if (!nl)
		return -1;
	int idx = 0;
	for (const char *h = csv;; idx++) {
		size_t len = strcspn(h, ",\n");
		if (len == strlen(name) && strncmp(h, name, len) == 0)
			break;
		h += len + 1;
		if (h > nl)
			return -1;
	}
	const char *v = nl + 1;
	for (int k = 0; k < idx; k++) {
		if (*v == '"' && !(v = strchr(v + 1, '"'))) /* a quoted cell */
			return -1;
		if (!(v = strchr(v, ',')))
			return -1;
		v++;
	}
	snprintf(val, n, "%.*s", (int)strcspn(v, ",\n"), v);
	return 0;
}
