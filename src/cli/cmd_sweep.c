/* cmd_sweep.c: `karat sweep FILE.ini`: every key of [sweep] and [set] may
 * hold a comma-separated list; the Cartesian product of the lists is
 * evaluated (the last key varies fastest) and written as one CSV row per
 * point, in that order, whatever the number of worker threads.  With
 * --shard K/N it evaluates the points i with i % N == K - 1 alone and
 * writes them with their index first (column `point`), for `karat merge`
 * to join into exactly the unsharded output. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "cli/load.h"
#include "cli/pool.h"
#include "cli/sweep_file.h"

/* A point's [vary] index (0: the base, k: label k - 1) and the index of
 * its [sweep] x [set] combination: the vary index varies fastest. */
static int vary_of(const struct sweep *sw, long idx, long *cart)
{
	*cart = idx / (1 + sw->nvary);
	return (int)(idx % (1 + sw->nvary));
}

/* The index in the whole sweep of a shard's local point. */
static long global_point(const struct sweep *sw, long local)
{
	return sw->shard + local * sw->nshards;
}

/* The spec of point idx (mixed radix, last key fastest); strings point into
 * sw and into sets[] (caller storage). */
static void point_spec_of(const void *ctx, long local, struct point_spec *ps,
			  char sets[][POOL_SET_LEN])
{
	const struct sweep *sw = ctx;
	long idx;
	int vi = vary_of(sw, global_point(sw, local), &idx);
	memset(ps, 0, sizeof *ps);
	long rest = idx;
	int pick[MAX_DIMS];
	for (int i = sw->ndim - 1; i >= 0; i--) {
		pick[i] = (int)(rest % sw->dim[i].n);
		rest /= sw->dim[i].n;
	}
	for (int i = 0; i < sw->ndim; i++) {
		const struct dim *d = &sw->dim[i];
		const char *v = d->val[pick[i]];
		if (strcmp(d->section, "set") == 0) {
			snprintf(sets[ps->nsets], POOL_SET_LEN, "%s=%s", d->key, v);
			ps->sets[ps->nsets] = sets[ps->nsets];
			ps->nsets++;
			continue;
		}
		const char *force = NULL;
		const char **slot[] = {&ps->model, &ps->algo, &ps->system, &ps->workload,
				       &ps->context, &ps->batch, &ps->mb, &ps->schedule,
				       &ps->mtp, &ps->accept, &ps->slo_ms, &ps->samples,
				       &ps->seed, &force};
		for (int k = 0; sweep_keys[k]; k++)
			if (strcmp(sweep_keys[k], d->key) == 0)
				*slot[k] = v;
		if (force)
			ps->force = strcmp(force, "true") == 0;
	}
	/* then the [vary] label's, over [set]; the command line's last: it
	 * takes precedence over the file */
	for (int k = 0; vi > 0 && k < sw->vary[vi - 1].n; k++)
		ps->sets[ps->nsets++] = sw->vary[vi - 1].set[k];
	for (int i = 0; i < sw->nfixed; i++)
		ps->sets[ps->nsets++] = sw->fixed_sets[i];
}

/* Which command-line override sets key (section.key as the file's [set]
 * names it; the last one wins), or -1. */
static int fixed_index(const struct sweep *sw, const char *key)
{
	size_t n = strlen(key);
	int found = -1;
	for (int i = 0; i < sw->nfixed; i++)
		if (strncmp(sw->fixed_sets[i], key, n) == 0 && sw->fixed_sets[i][n] == '=')
			found = i;
	return found;
}

/* The CSV header: the point columns, then one column per [set] key
 * (set.KEY), with the point index first for a shard. */
static int write_head(FILE *fp, const struct sweep *sw, int shard)
{
	const char *head[OUT_MAX_COLS + MAX_DIMS + 1];
	static char names[MAX_DIMS][80];
	int n = 0;
	if (shard)
		head[n++] = "point";
	for (int k = 0; k < point_ncols; k++)
		head[n++] = point_head[k];
	for (int i = 0; i < sw->ndim; i++)
		if (strcmp(sw->dim[i].section, "set") == 0) {
			snprintf(names[i], sizeof names[i], "set.%s", sw->dim[i].key);
			head[n++] = names[i];
		}
	if (sw->nvary)
		head[n++] = "vary";
	return csv_write_row(fp, n, head);
}

/* A row: the point's cells (its CSV line), then its [set] values: the
 * file's, the command line's marked "(--set)" where it overrode it, or
 * empty where the point's system cannot apply it (bit j of applied: the
 * j-th [set] key reached the point). */
static int write_row(FILE *fp, const struct sweep *sw, long idx, const char *row,
		     unsigned long long applied)
{
	size_t len = strlen(row);
	if (len && row[len - 1] == '\n')
		len--;
	if (fwrite(row, 1, len, fp) != len)
		return -1;
	int vi = vary_of(sw, idx, &idx);
	long rest = idx;
	int pick[MAX_DIMS];
	for (int i = sw->ndim - 1; i >= 0; i--) {
		pick[i] = (int)(rest % sw->dim[i].n);
		rest /= sw->dim[i].n;
	}
	const char *cells[MAX_DIMS + 1];
	static char marked[MAX_DIMS][INI_VALUE + 16];
	int n = 0, nset = sw->nset;
	for (int i = 0; i < sw->ndim; i++) {
		if (strcmp(sw->dim[i].section, "set") != 0)
			continue;
		int f = fixed_index(sw, sw->dim[i].key);
		/* the point's overrides: [set], its [vary] label's, then --set */
		int bit = f >= 0 ? nset + (vi > 0 ? sw->vary[vi - 1].n : 0) + f : n;
		if (!((applied >> bit) & 1)) {
			cells[n++] = "";
		} else if (f >= 0) {
			snprintf(marked[i], sizeof marked[i], "%s (--set)",
				 strchr(sw->fixed_sets[f], '=') + 1);
			cells[n++] = marked[i];
		} else {
			cells[n++] = sw->dim[i].val[pick[i]];
		}
	}
	if (sw->nvary)
		cells[n++] = vi > 0 ? sw->vary[vi - 1].label : "base";
	if (n == 0)
		return fputc('\n', fp) == EOF ? -1 : 0;
	if (fputc(',', fp) == EOF)
		return -1;
	return csv_write_row(fp, n, cells);
}

/* Where the rows go: the output, in point order. */
struct sink {
	const struct sweep *sw;
	struct outfile *o;
	int shard;
	long dropped;
	int failed;          /* errno of a write that failed */
	struct rowset seen;  /* the rows written (not in a shard) */
};

static int sink_row(void *ctx, long local, const char *row, unsigned long long applied)
{
	struct sink *sk = ctx;
	const struct sweep *sw = sk->sw;
	long idx = global_point(sw, local);
	int rc;
	errno = 0;
	if (sk->shard) { /* every point, for the merge (which drops the same rows) */
		rc = fprintf(sk->o->fp, "%ld,", idx) < 0 ||
		     write_row(sk->o->fp, sw, idx, row, applied) != 0;
	} else {
		struct rowbuf rb;
		FILE *f1 = rowbuf_open(&rb);
		int put = rowbuf_emit(&rb, f1 && write_row(f1, sw, idx, row, applied) == 0,
				      &sk->seen, sk->o->fp);
		rc = put < 0;
		sk->dropped += put == 0;
	}
	if (rc)
		sk->failed = errno ? errno : EIO;
	return rc ? -1 : 0;
}

/* Creates the output's folder when it is missing and its parent exists
 * (results/ beside a sweep file, say). */
static int make_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return 0;
	char dir[1200];
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST && errno != ENOENT) {
		die_msg("%s: cannot create folder %s: %s", path, dir, strerror(errno));
		return -1;
	}
	return 0; /* ENOENT: a deeper folder is missing; out_check says so */
}

/* The line of the key whose value the message names (the likely
 * culprit of a failing point), else the first key's. */
static int blame_line(const struct sweep *sw, long idx, const char *msg)
{
	int vi = vary_of(sw, idx, &idx);
	if (vi > 0)
		for (int k = 0; k < sw->vary[vi - 1].n; k++) {
			const char *s = sw->vary[vi - 1].set[k], *eq = strchr(s, '=');
			char key[POOL_SET_LEN];
			snprintf(key, sizeof key, "%.*s", (int)(eq ? eq - s : 0), s);
			if (key[0] && strstr(msg, key))
				return sw->vary[vi - 1].line;
		}
	long rest = idx;
	int pick[MAX_DIMS], best = 0;
	size_t bestlen = 0;
	for (int i = sw->ndim - 1; i >= 0; i--) {
		pick[i] = (int)(rest % sw->dim[i].n);
		rest /= sw->dim[i].n;
	}
	for (int i = 0; i < sw->ndim; i++) {
		const char *v = sw->dim[i].val[pick[i]];
		if (strlen(v) > bestlen && strstr(msg, v))
			best = i, bestlen = strlen(v);
	}
	return sw->ndim ? sw->dim[best].line : 1;
}

/* Loads and checks point idx without evaluating it: 0, 1 or 2. */
static int check_point(const struct sweep *sw, long idx, struct kerr *err)
{
	static struct loaded ld;
	static char sets[MAX_MANY][POOL_SET_LEN];
	struct point_spec ps;
	point_spec_of(sw, idx, &ps, sets);
	ps.skip_memdev_sets = 1;
	int rc = point_load(&ps, &ld, err);
	if (rc == 0) { /* what evaluation would refuse: the plan, the work limit */
		struct plan *p = plan_new(&ld.p.d, err);
		rc = !p || (ld.batch > 0 && plan_check_work(p, ld.batch, ld.mb, err) != 0);
		plan_free(p);
	}
	point_free(&ld);
	if (rc) {
		char msg[KERR_MSG];
		snprintf(msg, sizeof msg, "%s", err->msg);
		kerr_set(err, sw->path, blame_line(sw, idx, msg), "point %ld: %s", idx + 1, msg);
	}
	return rc;
}

/* Index of the point with value v of dim k and the first value elsewhere. */
static long point_with(const struct sweep *sw, int k, int v)
{
	long idx = 0;
	for (int i = 0; i < sw->ndim; i++)
		idx = idx * sw->dim[i].n + (i == k ? v : 0);
	return idx * (1 + sw->nvary);
}

/* Every point is loaded and checked before the first is evaluated, so a
 * typo fails at once with its line.  Above SWEEP_CHECK_ALL points, every
 * value of every key is checked once (with the first value of the
 * others); *all says which. */
#define SWEEP_CHECK_ALL 20000
static int check_all(const struct sweep *sw, int *all, struct kerr *err)
{
	*all = sw->total <= SWEEP_CHECK_ALL;
	int rc = 0;
	if (*all) {
		for (long i = 0; i < sw->total && rc == 0; i++)
			rc = check_point(sw, i, err);
		return rc;
	}
	for (int k = 0; k < sw->ndim && rc == 0; k++)
		for (int v = 0; v < sw->dim[k].n && rc == 0; v++)
			rc = check_point(sw, point_with(sw, k, v), err);
	for (int k = 1; k <= sw->nvary && rc == 0; k++) /* each label, the rest first */
		rc = check_point(sw, k, err);
	return rc;
}

int cmd_sweep(const struct args *a)
{
	const struct command *c = command_find("sweep");
	static struct sweep sw;
	memset(&sw, 0, sizeof sw);
	sw.path = a->pos[0];
	double jobs = 1;
	const char *j = arg_get(c, a, "jobs");
	if (j && parse_count("jobs", j, 0, 1, 256, &jobs))
		return EXIT_USAGE;
	for (int i = 0; i < a->nmany; i++)
		sw.fixed_sets[sw.nfixed++] = a->many[i];
	sw.shard = 0, sw.nshards = 1;
	const char *shard = arg_get(c, a, "shard");
	if (shard) {
		char tail;
		long k, n;
		if (sscanf(shard, "%ld/%ld%c", &k, &n, &tail) != 2 || n < 1 || k < 1 || k > n ||
		    n > 1000000)
			return usage_error(c, "--shard: '%.40s' is not K/N with 1 <= K <= N <= 1000000",
					   shard);
		sw.shard = k - 1, sw.nshards = n;
	}
	const char *output = arg_get(c, a, "output");
	static char outbuf[2 * INI_VALUE + 1100];
	const char *file_output = NULL;
	struct kerr err;
	if (sweep_load(&sw, &file_output, outbuf, sizeof outbuf, &err) != 0) {
		die_msg("%s", err.msg);
		return 1;
	}
	if (!output)
		output = file_output;
	char defpath[1024];
	if (!output) { /* results/NAME.csv beside the current folder's results */
		char name[256];
		arg_label(sw.path, name, sizeof name);
		if (shard)
			snprintf(defpath, sizeof defpath, "results/%s.shard-%ld-of-%ld.csv", name,
				 sw.shard + 1, sw.nshards);
		else
			snprintf(defpath, sizeof defpath, "results/%s.csv", name);
		output = defpath;
	}
	if (strcmp(output, "-") == 0)
		output = NULL; /* stdout */
	if (output && make_parent(output) != 0)
		return 1;
	if (output && out_check(output) != 0)
		return 1; /* before the long work, not after it */
	int all;
	if (check_all(&sw, &all, &err) != 0) {
		die_msg("%s", err.msg);
		return 1;
	}
	long mine = sw.total > sw.shard ? (sw.total - sw.shard + sw.nshards - 1) / sw.nshards : 0;
	if (arg_get(c, a, "dry-run")) {
		printf("karat sweep: %s: %ld points, %s loaded and checked", sw.path, sw.total,
		       all ? "every one" : "every value of every key");
		if (shard)
			printf("; shard %ld of %ld evaluates %ld of them", sw.shard + 1, sw.nshards, mine);
		printf("; output %s\n", output ? output : "standard output");
		return 0;
	}
	struct outfile o;
	if (out_open(&o, output ? output : "-") != 0)
		return 1;
	struct sink sk = {&sw, &o, shard != NULL, 0, 0, {0}};
	if (write_head(o.fp, &sw, shard != NULL) != 0) {
		out_abort(&o);
		die_msg("%s: write error", output ? output : "standard output");
		return 1;
	}
	/* every row goes to the output as soon as the points before it are
	 * done; a point that fails gets a row that says why, and the rest go
	 * on */
	static struct pool pl;
	pl = (struct pool){.make = point_spec_of, .ctx = &sw, .total = mine,
			   .progress = isatty(2), .what = sw.path, .keep_going = 1,
			   .sink = sink_row, .sctx = &sk};
	int rc = pool_run(&pl, (int)jobs);
	rowset_free(&sk.seen);
	if (rc < 0) {
		out_abort(&o);
		if (!sk.failed)
			die_msg("%s", pl.err.msg);
		else
			die_msg("%s: write failed: %s", output ? output : "standard output",
				strerror(sk.failed));
		pool_free(&pl);
		return 1;
	}
	if (out_close(&o, 0) != 0) {
		pool_free(&pl);
		return 1;
	}
	if (output && sk.dropped)
		fprintf(stderr, "karat sweep: %ld points, %ld rows -> %s (%ld a system could not "
			"tell from an earlier one written once)\n", mine, mine - sk.dropped, output,
			sk.dropped);
	else if (output)
		fprintf(stderr, "karat sweep: %ld points -> %s\n", mine, output);
	if (pl.nfailed) {
		long first = global_point(&sw, pl.err_idx);
		char msg[KERR_MSG];
		const char *m = strstr(pl.err.msg, ": point ");
		m = m ? strchr(m + 8, ':') : NULL;
		snprintf(msg, sizeof msg, "%s", m ? m + 2 : pl.err.msg);
		die_msg("%s:%d: point %ld: %s (%ld of %ld points failed; each has a row with "
			"feasible false and its error as the reason)", sw.path,
			blame_line(&sw, first, msg), first + 1, msg, pl.nfailed, mine);
		rc = 1;
	}
	pool_free(&pl);
	return rc;
}
