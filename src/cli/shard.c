/* shard.c (cli): dealing a sweep's points to shards, the record that
 * ties a shard file to its sweep, and a shard's output (shard.h). */
#define _DEFAULT_SOURCE /* flock, ftruncate */
#include "cli/shard.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

void shard_identity(const struct sweep *sw, char id[33])
{
	/* the resolved sweep as text: units separated by \x1f, records by \x1e */
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	if (fp) {
		fprintf(fp, "karat %s\x1e", karat_version());
		for (int i = 0; i < sw->ndim; i++) {
			fprintf(fp, "%s.%s", sw->dim[i].section, sw->dim[i].key);
			for (int v = 0; v < sw->dim[i].n; v++)
				fprintf(fp, "\x1f%s", sw->dim[i].val[v]);
			fputc('\x1e', fp);
		}
		for (int k = 0; k < sw->nvary; k++) {
			fprintf(fp, "vary.%s", sw->vary[k].label);
			for (int v = 0; v < sw->vary[k].n; v++)
				fprintf(fp, "\x1f%s", sw->vary[k].set[v]);
			fputc('\x1e', fp);
		}
		for (int i = 0; i < sw->nfixed; i++)
			fprintf(fp, "--set\x1f%s\x1e", sw->fixed_sets[i]);
		if (sw->probe) /* its rows carry more: never merged with rows without */
			fprintf(fp, "--probe\x1e");
		fclose(fp);
	}
	unsigned long long h[2] = {0, 0};
	if (text)
		out_fingerprint(text, len, h);
	snprintf(id, 33, "%016llx%016llx", h[0], h[1]);
	free(text);
}

/* A number a spec gives, or def. */
static double given(const char *v, double def)
{
	char *end;
	double x = v ? strtod(v, &end) : def;
	return v && (end == v || *end) ? def : x;
}

double shard_estimate(const struct sweep *sw, long point)
{
	static _Thread_local char sets[ARGS_MAX_MANY][POOL_SET_LEN];
	struct point_spec ps;
	sweep_spec(sw, point, &ps, sets);
	double samples = given(ps.samples, DESIGN_DEFAULT_SAMPLES);
	double devices = 8;
	for (int i = 0; i < ps.nsets; i++) {
		const char *s = ps.sets[i];
		if (strncmp(s, "system.gpus=", 12) == 0)
			devices += given(s + 12, 8) - 8;
		else if (strncmp(s, "system.memdevs=", 15) == 0)
			devices += given(s + 15, 0);
	}
	/* the work model of an evaluation (solve/plan.h plan_work): samples x
	 * (requests placed + devices + layers x micro-batches), about 60
	 * layers; auto runs every count 1..16.  A query evaluates its batch
	 * once; a solve probes about two dozen batches, of a size unknown
	 * here (taken as 1,000 requests) */
	double batch = ps.batch ? given(ps.batch, 1000) : 1000, probes = ps.batch ? 1 : 24;
	int m1 = 1, m2 = PIPE_MAX_MB;
	if (ps.mb && strcmp(ps.mb, "auto") != 0)
		m1 = m2 = (int)given(ps.mb, 1);
	double work = 0;
	for (int m = m1; m <= m2; m++)
		work += batch + devices + 60.0 * m;
	return samples * probes * work;
}

struct ranked {
	long point;
	double est;
	long tie; /* a fixed pseudo-random rank */
};

static int heavier(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->est != y->est)
		return x->est > y->est ? -1 : 1;
	return (x->tie > y->tie) - (x->tie < y->tie);
}

int shard_deal(const struct sweep *sw, long n, int *owner, double *est)
{
	long T = sw->total;
	struct ranked *r = malloc(sizeof *r * (size_t)(T ? T : 1));
	long *perm = malloc(sizeof *perm * (size_t)(T ? T : 1));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!r || !perm || !rng) {
		free(r), free(perm);
		if (rng)
			gsl_rng_free(rng);
		return -1;
	}
	gsl_rng_set(rng, 1); /* fixed: every task deals alike */
	for (long i = 0; i < T; i++)
		perm[i] = i;
	gsl_ran_shuffle(rng, perm, (size_t)T, sizeof *perm);
	for (long i = 0; i < T; i++) {
		r[i].point = i;
		r[i].est = shard_estimate(sw, i);
		r[perm[i]].tie = i;
		if (est)
			est[i] = r[i].est;
	}
	qsort(r, (size_t)T, sizeof *r, heavier);
	for (long j = 0; j < T; j++) { /* back and forth: 0..n-1, n-1..0, ... */
		long round = j / n, pos = j % n;
		owner[r[j].point] = (int)(round % 2 ? n - 1 - pos : pos);
	}
	free(r), free(perm);
	gsl_rng_free(rng);
	return 0;
}

int shard_points(const struct sweep *sw, long k, long n, long **pts, long *npts)
{
	*pts = NULL, *npts = 0;
	int *owner = malloc(sizeof *owner * (size_t)(sw->total ? sw->total : 1));
	if (!owner || shard_deal(sw, n, owner, NULL) != 0) {
		free(owner);
		return -1;
	}
	long m = 0;
	for (long i = 0; i < sw->total; i++)
		m += owner[i] == k;
	long *p = malloc(sizeof *p * (size_t)(m ? m : 1));
	if (!p) {
		free(owner);
		return -1;
	}
	m = 0;
	for (long i = 0; i < sw->total; i++)
		if (owner[i] == k)
			p[m++] = i;
	free(owner);
	*pts = p, *npts = m;
	return 0;
}

int shard_write_info(FILE *fp, const struct shard_info *si)
{
	return fprintf(fp, SHARD_TAG " k=%ld n=%ld points=%ld shard_points=%ld sweep=%s "
		       "version=%s\n", si->k, si->n, si->points, si->shard_points, si->id,
		       si->version) < 0 ? -1 : 0;
}

int shard_parse_info(const char *line, struct shard_info *si)
{
	memset(si, 0, sizeof *si);
	int used = 0;
	if (sscanf(line, SHARD_TAG " k=%ld n=%ld points=%ld shard_points=%ld sweep=%32[0-9a-f] "
		   "version=%n", &si->k, &si->n, &si->points, &si->shard_points, si->id, &used) != 5 ||
	    used == 0 || strlen(si->id) != 32)
		return -1;
	snprintf(si->version, sizeof si->version, "%s", line + used);
	if (si->n < 1 || si->k < 1 || si->k > si->n || si->points < 0 || si->shard_points < 0 ||
	    si->shard_points > si->points)
		return -1;
	return 0;
}

/* The rows of a partial file that continue points[] from its start: the
 * byte length they take from off, their count into *done. */
static size_t rows_kept(const char *buf, size_t len, size_t off, const long *points, long n,
			long *done)
{
	*done = 0;
	while (off < len && *done < n) {
		const char *nl = memchr(buf + off, '\n', len - off);
		if (!nl)
			break; /* a row cut short by a kill: written again */
		char want[32];
		int w = snprintf(want, sizeof want, "%ld,", points[*done]);
		if ((size_t)(nl - (buf + off)) < (size_t)w || memcmp(buf + off, want, (size_t)w) != 0)
			break;
		off = (size_t)(nl - buf) + 1;
		(*done)++;
	}
	return off;
}

int shard_out_open(struct shard_out *so, const char *path, const struct shard_info *si,
		   const char *head, const long *points, long n)
{
	memset(so, 0, sizeof so[0]);
	so->path = path;
	if ((size_t)snprintf(so->partial, sizeof so->partial, "%s.partial", path) >= sizeof so->partial) {
		die_msg("%s: path too long", path);
		return -1;
	}
	int fresh = 0;
	int fd = open(so->partial, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		fd = open(so->partial, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		fresh = 1;
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		die_msg("%s: cannot write: %s", so->partial,
			fd < 0 ? (errno == ELOOP ? "a symbolic link" : strerror(errno))
			       : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		die_msg("%s: another karat is writing this shard", so->partial);
		close(fd);
		return -1;
	}
	size_t keep = 0;
	if (!fresh) { /* resume: the same shard of the same sweep, or nothing */
		char *buf = malloc((size_t)st.st_size + 1);
		ssize_t got = buf ? pread(fd, buf, (size_t)st.st_size, 0) : -1;
		struct shard_info was;
		const char *nl = got > 0 ? memchr(buf, '\n', (size_t)got) : NULL;
		int ok = 0;
		if (nl) {
			char line[512];
			snprintf(line, sizeof line, "%.*s", (int)(nl - buf), buf);
			size_t hl = strlen(head), off = (size_t)(nl - buf) + 1;
			ok = shard_parse_info(line, &was) == 0 && was.k == si->k && was.n == si->n &&
			     was.points == si->points && strcmp(was.id, si->id) == 0 &&
			     (size_t)got >= off + hl && memcmp(buf + off, head, hl) == 0;
			if (ok)
				keep = rows_kept(buf, (size_t)got, off + hl, points, n, &so->done);
		} else if (got == 0) {
			fresh = 1; /* empty: made and killed at once */
		}
		free(buf);
		if (!ok && !fresh) {
			die_msg("%s: a partial shard of another sweep, of another shard, or of this "
				"sweep before it was edited: remove it to start this shard over",
				so->partial);
			close(fd);
			return -1;
		}
	}
	if (!fresh && (ftruncate(fd, (off_t)keep) != 0 || lseek(fd, (off_t)keep, SEEK_SET) < 0)) {
		die_msg("%s: cannot write: %s", so->partial, strerror(errno));
		close(fd);
		return -1;
	}
	so->fp = fdopen(fd, "w");
	if (!so->fp) {
		die_msg("%s: cannot write: %s", so->partial, strerror(errno));
		close(fd);
		return -1;
	}
	if (fresh && (shard_write_info(so->fp, si) != 0 || fputs(head, so->fp) < 0 ||
		      fflush(so->fp) != 0)) {
		die_msg("%s: write failed: %s", so->partial, strerror(errno));
		fclose(so->fp);
		return -1;
	}
	return 0;
}

int shard_out_close(struct shard_out *so, int bad)
{
	int err = 0;
	if (fflush(so->fp) != 0 || ferror(so->fp) || fsync(fileno(so->fp)) != 0)
		err = errno ? errno : EIO;
	if (fclose(so->fp) != 0 && !err)
		err = errno ? errno : EIO;
	so->fp = NULL;
	if (err) {
		die_msg("%s: write failed: %s (the rows written so far stay; run the shard again "
			"to go on)", so->partial, strerror(err));
		return -1;
	}
	if (bad)
		return 0;
	if (out_check(so->path) != 0 || rename(so->partial, so->path) != 0) {
		die_msg("%s: cannot rename %s into place: %s", so->path, so->partial, strerror(errno));
		return -1;
	}
	return 0;
}
