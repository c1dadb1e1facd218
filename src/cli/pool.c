/* pool.c (cli): the worker pool behind sweep and run. */
#include "cli/pool.h"

#include <stdlib.h>
#include <string.h>

#include "karat.h"

/* Point idx's CSV row (malloc'd into *row) and what bounds it; 0, or -1
 * out of memory. */
static int render(struct pool *pl, long idx, const struct loaded *ld, const struct result *r,
		  char **row)
{
	char cells[OUT_MAX_COLS][OUT_CELL];
	const char *c[OUT_MAX_COLS];
	point_cells(ld, r, cells, c);
	for (int k = 0; pl->bound && k < point_ncols; k++)
		if (strcmp(point_head[k], "bound_by") == 0)
			snprintf(pl->bound[idx], POOL_BOUND_LEN, "%s", c[k]);
	size_t len = 0;
	*row = NULL;
	FILE *fp = open_memstream(row, &len);
	if (!fp || csv_write_row(fp, point_ncols, c) != 0 || fclose(fp) != 0) {
		free(*row);
		*row = NULL;
		return -1;
	}
	return 0;
}

int pool_probe(struct pool *pl, long idx, struct kerr *err)
{
	struct point_spec ps;
	static _Thread_local char sets[ARGS_MAX_MANY][POOL_SET_LEN];
	pl->make(pl->ctx, idx, &ps, sets);
	ps.skip_memdev_sets = 1;
	struct loaded *ld = malloc(sizeof *ld);
	if (!ld) {
		kerr_set(err, 0, 0, "out of memory");
		return 1;
	}
	int rc = point_load(&ps, ld, err);
	char *row = NULL;
	if (!rc) {
		point_probe(ld, NULL, &pl->res[idx]);
		if (render(pl, idx, ld, &pl->res[idx], &row) != 0) {
			kerr_set(err, 0, 0, "out of memory");
			rc = 1;
		}
	}
	if (!rc)
		free(pl->rows[idx]), pl->rows[idx] = row;
	point_free(ld);
	free(ld);
	return rc;
}

struct probe_job {
	struct pool *pl;
	const long *idx;
	long n, next, fail;
	pthread_mutex_t lock;
	struct kerr err;
};

static void *probe_worker(void *arg)
{
	struct probe_job *j = arg;
	for (;;) {
		pthread_mutex_lock(&j->lock);
		long k = j->next < j->n && j->fail < 0 ? j->next++ : -1;
		pthread_mutex_unlock(&j->lock);
		if (k < 0)
			return NULL;
		struct kerr err;
		if (pool_probe(j->pl, j->idx[k], &err) != 0) {
			pthread_mutex_lock(&j->lock);
			if (j->fail < 0 || k < j->fail)
				j->fail = k, j->err = err;
			pthread_mutex_unlock(&j->lock);
		}
	}
}

int pool_probe_all(struct pool *pl, const long *idx, long n, int threads, struct kerr *err)
{
	struct probe_job j = {.pl = pl, .idx = idx, .n = n, .fail = -1};
	pthread_mutex_init(&j.lock, NULL);
	pthread_t th[256];
	int started = 0;
	for (int i = 1; i < threads && i < 256 && i < n; i++)
		if (pthread_create(&th[started], NULL, probe_worker, &j) == 0)
			started++;
	probe_worker(&j);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&j.lock);
	if (j.fail >= 0)
		*err = j.err;
	return j.fail >= 0;
}

/* Evaluates one point into a CSV row (malloc'd). */
static int eval_point(struct pool *pl, long idx, char **row, struct result *out,
		      unsigned long long *applied, struct kerr *err)
{
	struct point_spec ps;
	static _Thread_local char sets[ARGS_MAX_MANY][POOL_SET_LEN];
	pl->make(pl->ctx, idx, &ps, sets);
	ps.skip_memdev_sets = 1; /* a sweep may mix systems with and without */
	struct loaded *ld = malloc(sizeof *ld);
	if (!ld) {
		kerr_set(err, 0, 0, "out of memory");
		return 1;
	}
	int rc = point_load(&ps, ld, err); /* loaders are thread-safe (ini_doc.c) */
	struct plan *p = rc ? NULL : plan_new(&ld->p.d, err);
	if (!rc && !p)
		rc = 1;
	struct result r;
	if (!rc)
		rc = (ld->batch > 0 ? plan_eval(p, ld->batch, ld->mb, &r, err)
				    : plan_solve(p, ld->mb, &r, err)) != 0;
	if (!rc && ld->batch <= 0 && pl->probe)
		point_probe(ld, p, &r);
	if (!rc)
		*out = r, *applied = ld->p.applied;
	if (!rc && render(pl, idx, ld, &r, row) != 0) {
		kerr_set(err, 0, 0, "out of memory");
		rc = 1;
	}
	if (rc && pl->keep_going) { /* a row that says why */
		char cells[OUT_MAX_COLS][OUT_CELL];
		const char *c[OUT_MAX_COLS];
		point_fail_cells(&ps, err->msg, cells, c);
		size_t len = 0;
		FILE *fp = open_memstream(row, &len);
		if (!fp || csv_write_row(fp, point_ncols, c) != 0 || fclose(fp) != 0) {
			free(*row);
			*row = NULL;
		}
	}
	if (rc) {
		char msg[KERR_MSG];
		snprintf(msg, sizeof msg, "%s", err->msg);
		kerr_set(err, 0, 0, "%s: point %ld: %s", pl->what, idx + 1, msg);
	}
	plan_free(p);
	point_free(ld);
	free(ld);
	return rc;
}

/* Hands the finished rows at the front to the sink, in index order
 * (called locked). */
static void drain(struct pool *pl)
{
	while (pl->next_sink < pl->total && pl->ready[pl->next_sink] && !pl->sink_failed) {
		long i = pl->next_sink++;
		if (!pl->rows[i] || pl->sink(pl->sctx, i, pl->rows[i], pl->applied[i], pl->secs[i],
					     pl->feasible[i]) != 0) {
			if (!pl->rows[i]) /* out of memory for a failed point's row */
				kerr_set(&pl->err, 0, 0, "%s: point %ld: out of memory", pl->what, i + 1);
			pl->sink_failed = 1;
		}
		free(pl->rows[i]);
		pl->rows[i] = NULL;
	}
}

static void *worker(void *arg)
{
	struct pool *pl = arg;
	for (;;) {
		pthread_mutex_lock(&pl->lock);
		long k = (pl->err_idx >= 0 && !pl->keep_going) || pl->sink_failed ? pl->total
										    : pl->next++;
		pthread_mutex_unlock(&pl->lock);
		if (k >= pl->total)
			return NULL;
		long idx = pl->order ? pl->order[k] : k;
		struct kerr err;
		char *row = NULL;
		struct result r;
		unsigned long long applied = 0;
		memset(&r, 0, sizeof r);
		double t0 = clock_now();
		long was = pl->from && pl->from_idx ? pl->from_idx[idx] : -1;
		int rc = 0;
		if (was >= 0) { /* solved in an earlier round: the same point */
			r = pl->from->res[was], applied = pl->from->applied[was];
			row = pl->from->rows[was] ? strdup(pl->from->rows[was]) : NULL;
			memcpy(pl->bound[idx], pl->from->bound[was], POOL_BOUND_LEN);
			if (!row)
				rc = 1, kerr_set(&err, 0, 0, "out of memory");
		} else
			rc = eval_point(pl, idx, &row, &r, &applied, &err);
		double dt = clock_now() - t0;
		pthread_mutex_lock(&pl->lock);
		pl->rows[idx] = row;
		if (pl->res)
			pl->res[idx] = r;
		pl->applied[idx] = applied;
		if (rc && (pl->err_idx < 0 || idx < pl->err_idx))
			pl->err_idx = idx, pl->err_rc = rc, pl->err = err;
		pl->nfailed += rc != 0;
		pl->done++;
		if (pl->sink) {
			pl->secs[idx] = dt, pl->feasible[idx] = !rc && r.feasible;
			pl->ready[idx] = 1;
			drain(pl);
		}
		progress_update(&pl->pg, pl->done, NULL);
		pthread_mutex_unlock(&pl->lock);
	}
}

int pool_run(struct pool *p, int threads)
{
	size_t n = (size_t)(p->total ? p->total : 1);
	p->rows = calloc(n, sizeof *p->rows);
	p->res = p->sink ? NULL : calloc(n, sizeof *p->res);
	p->ready = p->sink ? calloc(n, 1) : NULL;
	p->secs = p->sink ? calloc(n, sizeof *p->secs) : NULL;
	p->feasible = p->sink ? calloc(n, 1) : NULL;
	p->applied = calloc(n, sizeof *p->applied);
	p->bound = p->sink ? NULL : calloc(n, sizeof *p->bound);
	p->err_idx = -1;
	p->next = p->done = p->next_sink = p->nfailed = 0;
	p->sink_failed = 0;
	char what[96];
	snprintf(what, sizeof what, "karat %s", p->what ? p->what : "");
	progress_begin(&p->pg, what, "points", p->total, p->quiet);
	if (!p->rows || (!p->sink && (!p->res || !p->bound)) || (p->sink && (!p->ready || !p->secs || !p->feasible)) ||
	    !p->applied) {
		kerr_set(&p->err, 0, 0, "out of memory for %ld points", p->total);
		return 1;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_t th[256];
	int started = 0;
	for (int i = 1; i < threads && i < 256; i++)
		if (pthread_create(&th[started], NULL, worker, p) == 0)
			started++;
	worker(p);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	char done[64];
	snprintf(done, sizeof done, "%ld points", p->total);
	progress_end(&p->pg, done);
	pthread_mutex_destroy(&p->lock);
	if (p->sink_failed)
		return -1;
	return p->err_idx >= 0 ? p->err_rc : 0;
}

void pool_free(struct pool *p)
{
	for (long i = 0; p->rows && i < p->total; i++)
		free(p->rows[i]);
	free(p->rows);
	free(p->res);
	free(p->applied);
	free(p->bound);
	p->bound = NULL;
	free(p->ready), free(p->secs), free(p->feasible);
	p->ready = NULL, p->secs = NULL, p->feasible = NULL;
	p->rows = NULL;
	p->res = NULL;
	p->applied = NULL;
}
