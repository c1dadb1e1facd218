/* cmd_sweep.c: `karat sweep FILE.ini`: every key of [sweep] and [set] may
 * hold a comma-separated list; the Cartesian product of the lists is
 * evaluated (the last key varies fastest) and written as one CSV row per
 * point, in that order, whatever the number of worker threads.  With
 * --shard K/N it evaluates the points dealt to shard K of N alone (shard.h)
 * and writes them with their index first (column `point`), after a record
 * of the sweep, for `karat merge` to join into exactly the unsharded
 * output. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "cli/load.h"
#include "cli/pool.h"
#include "cli/shard.h"
#include "cli/sweep_file.h"

/* The index in the whole sweep of a shard's local point. */
static long global_point(const struct sweep *sw, long local)
{
	return sw->points ? sw->points[local] : local;
}

/* The pool's maker: a shard's local point to its spec. */
static void point_spec_of(const void *ctx, long local, struct point_spec *ps,
			  char sets[][POOL_SET_LEN])
{
	const struct sweep *sw = ctx;
	sweep_spec(sw, global_point(sw, local), ps, sets);
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
	const char *head[OUT_MAX_COLS + SWEEP_MAX_DIMS + 1];
	static char names[SWEEP_MAX_DIMS][80];
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
	int vi = sweep_vary_of(sw, idx, &idx);
	long rest = idx;
	int pick[SWEEP_MAX_DIMS];
	for (int i = sw->ndim - 1; i >= 0; i--) {
		pick[i] = (int)(rest % sw->dim[i].n);
		rest /= sw->dim[i].n;
	}
	const char *cells[SWEEP_MAX_DIMS + 1];
	static char marked[SWEEP_MAX_DIMS][INI_VALUE + 16];
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

/* Where the rows go: the output, in point order (a shard's flushed row
 * by row), and a line per finished point to the log. */
struct sink {
	const struct sweep *sw;
	FILE *fp;
	int shard;
	long dropped;
	int failed;          /* errno of a write that failed */
	struct rowset seen;  /* the rows written (not in a shard) */
	FILE *log;           /* --log, or NULL */
};

static int sink_row(void *ctx, long local, const char *row, unsigned long long applied,
		    double secs, int feasible)
{
	struct sink *sk = ctx;
	const struct sweep *sw = sk->sw;
	long idx = global_point(sw, local);
	int rc;
	errno = 0;
	if (sk->shard) { /* every point, for the merge (which drops the same rows) */
		rc = fprintf(sk->fp, "%ld,", idx) < 0 || write_row(sk->fp, sw, idx, row, applied) != 0 ||
		     fflush(sk->fp) != 0;
	} else {
		struct rowbuf rb;
		FILE *f1 = rowbuf_open(&rb);
		int put = rowbuf_emit(&rb, f1 && write_row(f1, sw, idx, row, applied) == 0,
				      &sk->seen, sk->fp);
		rc = put < 0;
		sk->dropped += put == 0;
	}
	if (rc)
		sk->failed = errno ? errno : EIO;
	if (!rc && sk->log) {
		fprintf(sk->log, "point=%ld seconds=%.3f feasible=%s\n", idx, secs,
			feasible ? "true" : "false");
		fflush(sk->log);
	}
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

/* Whether the command line's --set options set key (section.key). */
static int set_on_line(const struct sweep *sw, const char *key, size_t n)
{
	for (int i = 0; i < sw->nfixed; i++)
		if (strncmp(sw->fixed_sets[i], key, n) == 0 && sw->fixed_sets[i][n] == '=')
			return 1;
	return 0;
}

/* msg names "--set KEY" (the library's words for any override): where
 * the override is the file's, it says where in the file instead. */
static void reword(char *msg, size_t n, const char *key, size_t klen, const char *where)
{
	char pat[POOL_SET_LEN + 8];
	snprintf(pat, sizeof pat, "--set %.*s", (int)klen, key);
	char *at = strstr(msg, pat);
	if (!at)
		return;
	char rest[KERR_MSG];
	snprintf(rest, sizeof rest, "%s", at + 6); /* from KEY on */
	snprintf(at, n - (size_t)(at - msg), "%s %s", where, rest);
}

/* The line of the sweep file that a failing point's message blames, with
 * the message reworded to name it: the [set] key or [vary] label whose
 * override it names, else the key whose value it names (the likely
 * culprit), else the first key's; 0 when it names a command-line --set. */
static int blame_line(const struct sweep *sw, long idx, char *msg, size_t n)
{
	for (int i = 0; i < sw->nfixed; i++) { /* the command line's: no line */
		const char *eq = strchr(sw->fixed_sets[i], '=');
		char pat[POOL_SET_LEN + 8];
		snprintf(pat, sizeof pat, "--set %.*s:", (int)(eq ? eq - sw->fixed_sets[i] : 0),
			 sw->fixed_sets[i]);
		char val[POOL_SET_LEN + 2];
		snprintf(val, sizeof val, "'%s'", eq ? eq + 1 : "");
		if (eq && (strstr(msg, pat) || (eq[1] && strstr(msg, val))))
			return 0;
	}
	int vi = sweep_vary_of(sw, idx, &idx);
	if (vi > 0)
		for (int k = 0; k < sw->vary[vi - 1].n; k++) {
			const char *s = sw->vary[vi - 1].set[k], *eq = strchr(s, '=');
			char key[POOL_SET_LEN], where[POOL_SET_LEN + 16];
			size_t kl = eq ? (size_t)(eq - s) : 0;
			snprintf(key, sizeof key, "%.*s", (int)kl, s);
			if (key[0] && strstr(msg, key) && !set_on_line(sw, key, kl)) {
				snprintf(where, sizeof where, "[vary] %s:", sw->vary[vi - 1].label);
				reword(msg, n, key, kl, where);
				return sw->vary[vi - 1].line;
			}
		}
	/* a [set] key the message names, the longest that matches */
	int best = -1;
	size_t bestlen = 0;
	for (int i = 0; i < sw->ndim; i++) {
		const struct dim *d = &sw->dim[i];
		size_t kl = strlen(d->key);
		char pat[POOL_SET_LEN + 8];
		snprintf(pat, sizeof pat, "--set %s", d->key);
		const char *at = strcmp(d->section, "set") == 0 ? strstr(msg, pat) : NULL;
		if (at && !isalnum((unsigned char)at[6 + kl]) && at[6 + kl] != '_' &&
		    at[6 + kl] != '.' && kl > bestlen && !set_on_line(sw, d->key, kl))
			best = i, bestlen = kl;
	}
	if (best >= 0) {
		reword(msg, n, sw->dim[best].key, bestlen, "[set]");
		return sw->dim[best].line;
	}
	long rest = idx;
	int pick[SWEEP_MAX_DIMS];
	best = 0;
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
	static char sets[ARGS_MAX_MANY][POOL_SET_LEN];
	struct point_spec ps;
	sweep_spec(sw, idx, &ps, sets); /* idx: a point of the whole sweep */
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
		int line = blame_line(sw, idx, msg, sizeof msg);
		kerr_set(err, line ? sw->path : NULL, line, "point %ld: %s", idx + 1, msg);
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

/* karat sweep FILE --shards N --dry-run: how the points fall to N shards,
 * the expected imbalance, and the lines to run and merge them. */
static int shard_plan(const struct sweep *sw, long n, const char *given)
{
	int *owner = malloc(sizeof *owner * (size_t)(sw->total ? sw->total : 1));
	double *est = malloc(sizeof *est * (size_t)(sw->total ? sw->total : 1));
	double *load = calloc((size_t)n, sizeof *load);
	long *count = calloc((size_t)n, sizeof *count);
	if (!owner || !est || !load || !count || shard_deal(sw, n, owner, est) != 0) {
		free(owner), free(est), free(load), free(count);
		die_msg("out of memory for %ld points", sw->total);
		return 1;
	}
	double sum = 0, most = 0;
	for (long i = 0; i < sw->total; i++)
		load[owner[i]] += est[i], count[owner[i]]++, sum += est[i];
	long lo = sw->total, hi = 0;
	for (long k = 0; k < n; k++) {
		most = fmax(most, load[k]);
		lo = count[k] < lo ? count[k] : lo;
		hi = count[k] > hi ? count[k] : hi;
	}
	char name[256], dir[1100];
	arg_label(sw->path, name, sizeof name);
	const char *slash = given ? strrchr(given, '/') : NULL;
	if (slash) /* --output's folder, else a folder of their own */
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - given), given);
	else
		snprintf(dir, sizeof dir, given ? "." : "results/%s-shards", name);
	char each[64];
	if (lo == hi)
		snprintf(each, sizeof each, "%ld", lo);
	else
		snprintf(each, sizeof each, "%ld-%ld", lo, hi);
	printf("%ld shards: %s points each; the busiest holds %.0f%% of the mean expected "
	       "work (an estimate from each point's samples, micro-batches, solve or query "
	       "and devices)\n", n, each, sum > 0 ? 100 * most / (sum / n) : 100);
	for (long k = 0; k < n && k < 64; k++)
		printf("  shard %ld/%ld: %ld points, %.0f%% of the mean work\n", k + 1, n, count[k],
		       sum > 0 ? 100 * load[k] / (sum / n) : 0);
	if (n > 64)
		printf("  (%ld more shards)\n", n - 64);
	if (n > sw->total)
		printf("warning: %ld shards for %ld points: %ld shards would have nothing to do\n", n,
		       sw->total, n - sw->total);
	printf("run:   sbatch --array=1-%ld --cpus-per-task=1 scripts/sweep-slurm.sh --shards %ld "
	       "%s %s\n", n < sw->total ? n : sw->total, n, sw->path, dir);
	printf("merge: karat merge %s/%s.shard-*-of-%ld.csv --output results/%s.csv\n", dir, name,
	       n, name);
	free(owner), free(est), free(load), free(count);
	return 0;
}

/* The CSV header of the output, as text (for a shard's resume check). */
static char *head_text(const struct sweep *sw, int shard)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	if (!fp)
		return NULL;
	int bad = write_head(fp, sw, shard) != 0;
	if (fclose(fp) != 0 || bad) {
		free(text);
		return NULL;
	}
	return text;
}

/* Opens --log FILE to append to (a regular file or a new one, never
 * through a link); NULL with the error printed. */
static FILE *open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		die_msg("%s: cannot write the log: %s", path,
			fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	FILE *fp = fdopen(fd, "a");
	if (!fp)
		close(fd);
	return fp;
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
	sw.probe = arg_get(c, a, "probe") != NULL;
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
	double plan_n = 0;
	const char *shards = arg_get(c, a, "shards");
	if (shards && parse_count("shards", shards, 0, 1, 1e6, &plan_n))
		return EXIT_USAGE;
	if (shards && (shard || !arg_get(c, a, "dry-run")))
		return usage_error(c, "--shards N goes with --dry-run (the plan for N shards); run "
				   "one shard with --shard K/N");
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
	if (shard && !output)
		return usage_error(c, "a shard is written to a file (its rows go there as they "
				   "finish), not to standard output");
	if (output && !shards && make_parent(output) != 0)
		return 1;
	if (output && !shards && out_check(output) != 0)
		return 1; /* before the long work, not after it */
	int all;
	if (check_all(&sw, &all, &err) != 0) {
		die_msg("%s", err.msg);
		return 1;
	}
	long *mine_pts = NULL, mine = sw.total;
	if (shard && shard_points(&sw, sw.shard, sw.nshards, &mine_pts, &mine) != 0) {
		die_msg("out of memory for %ld points", sw.total);
		return 1;
	}
	sw.points = mine_pts;
	if (arg_get(c, a, "dry-run")) {
		printf("karat sweep: %s: %ld points, %s loaded and checked", sw.path, sw.total,
		       all ? "every one" : "every value of every key");
		if (shard)
			printf("; shard %ld of %ld evaluates %ld of them", sw.shard + 1, sw.nshards, mine);
		printf("; output %s\n", shards ? "(see below)" : output ? output : "standard output");
		int rc = shards ? shard_plan(&sw, (long)plan_n, arg_get(c, a, "output")) : 0;
		free(mine_pts);
		return rc;
	}
	struct sink sk = {&sw, NULL, shard != NULL, 0, 0, {0}, NULL};
	const char *logp = arg_get(c, a, "log");
	if (logp && !(sk.log = open_log(logp))) {
		free(mine_pts);
		return 1;
	}
	struct outfile o;
	struct shard_out so;
	int rc = 0;
	if (shard) { /* row by row into PATH.partial, resumed where a killed run stopped */
		struct shard_info si = {sw.shard + 1, sw.nshards, sw.total, mine, "", ""};
		shard_identity(&sw, si.id);
		snprintf(si.version, sizeof si.version, "%s", karat_version());
		char *head = head_text(&sw, 1);
		rc = !head || shard_out_open(&so, output, &si, head, mine_pts, mine) != 0;
		free(head);
		sk.fp = rc ? NULL : so.fp;
	} else {
		rc = out_open(&o, output ? output : "-") != 0;
		sk.fp = rc ? NULL : o.fp;
		if (!rc && write_head(o.fp, &sw, 0) != 0) {
			out_abort(&o);
			die_msg("%s: write error", output ? output : "standard output");
			rc = 1;
		}
	}
	if (rc) {
		if (sk.log)
			fclose(sk.log);
		free(mine_pts);
		return 1;
	}
	long skip = shard ? so.done : 0; /* points a killed run of this shard wrote */
	sw.points = mine_pts ? mine_pts + skip : NULL;
	/* every row goes to the output as soon as the points before it are
	 * done; a point that fails gets a row that says why, and the rest go
	 * on */
	static struct pool pl;
	char what[1200];
	snprintf(what, sizeof what, "sweep %s", sw.path);
	pl = (struct pool){.make = point_spec_of, .ctx = &sw, .total = mine - skip,
			   .quiet = arg_get(c, a, "quiet") != NULL, .what = what, .keep_going = 1,
			   .probe = sw.probe, .sink = sink_row, .sctx = &sk};
	rc = pool_run(&pl, (int)jobs);
	rowset_free(&sk.seen);
	if (sk.log)
		fclose(sk.log);
	if (rc < 0) {
		if (shard)
			shard_out_close(&so, 1);
		else
			out_abort(&o);
		if (!sk.failed)
			die_msg("%s", pl.err.msg);
		else
			die_msg("%s: write failed: %s", output ? output : "standard output",
				strerror(sk.failed));
		pool_free(&pl);
		free(mine_pts);
		return 1;
	}
	if ((shard ? shard_out_close(&so, 0) : out_close(&o, 0)) != 0) {
		pool_free(&pl);
		free(mine_pts);
		return 1;
	}
	if (output && sk.dropped)
		fprintf(stderr, "karat sweep: %ld points, %ld rows -> %s (%ld a system could not "
			"tell from an earlier one written once)\n", mine, mine - sk.dropped, output,
			sk.dropped);
	else if (output && skip)
		fprintf(stderr, "karat sweep: shard %ld/%ld: %ld points (%ld kept from %s) -> %s\n",
			sw.shard + 1, sw.nshards, mine, skip, so.partial, output);
	else if (output)
		fprintf(stderr, "karat sweep: %ld points -> %s\n", mine, output);
	if (pl.nfailed) {
		long first = global_point(&sw, pl.err_idx);
		char msg[KERR_MSG];
		const char *m = strstr(pl.err.msg, ": point ");
		m = m ? strchr(m + 8, ':') : NULL;
		snprintf(msg, sizeof msg, "%s", m ? m + 2 : pl.err.msg);
		int line = blame_line(&sw, first, msg, sizeof msg);
		char at[1100] = "";
		if (line)
			snprintf(at, sizeof at, "%s:%d: ", sw.path, line);
		die_msg("%spoint %ld: %s (%ld of %ld points failed; each has a row with feasible "
			"false and its error as the reason)", at, first + 1, msg, pl.nfailed,
			mine - skip);
		rc = 1;
	}
	pool_free(&pl);
	free(mine_pts);
	return rc;
}
