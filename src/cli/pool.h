/* pool.h (cli): evaluating many design points on worker threads, for
 * sweep and run.  Points are made on demand by a callback from their index;
 * results and CSV rows land at that index, so the output does not depend
 * on the number of threads. */
#ifndef KARAT_CLI_POOL_H
#define KARAT_CLI_POOL_H

#include <pthread.h>

#include "cli/point.h"
#include "cli/progress.h"

#define POOL_SET_LEN POINT_SET_LEN
#define POOL_BOUND_LEN 32

/* Fills ps (and the storage its sets point into) for point idx. */
typedef void (*pool_make_fn)(const void *ctx, long idx, struct point_spec *ps,
			     char sets[][POOL_SET_LEN]);

struct pool {
	pool_make_fn make;
	const void *ctx;
	long total;
	int quiet;             /* no progress on stderr (cli/progress.h) */
	const char *what;      /* name in messages */
	const long *order;     /* evaluation order (heaviest first balances the
				  threads), or NULL; results stay by index */
	int probe;             /* a solved point says what to grow first
				  (point_probe: one more evaluation per
				  resource) */
	int keep_going;        /* a failing point gets a row (feasible false,
				  its error as the reason) and the others go on */
	/* With a sink, each point's row is handed to it in index order as soon
	 * as every earlier one is done, then freed (rows and res are not
	 * kept); called under the pool's lock.  0, or -1 to stop (an output
	 * error, said by the sink). */
	int (*sink)(void *sctx, long idx, const char *row, unsigned long long applied,
		    double secs, int feasible);
	void *sctx;
	long nfailed;          /* points that failed (keep_going) */
	/* Points solved before (a saturating study's earlier round): point i
	 * with from_idx[i] >= 0 takes from's result, row and bound at that
	 * index instead of being solved again (NULL: solve every point). */
	const struct pool *from;
	const long *from_idx;
	/* filled by pool_run */
	char **rows;           /* CSV row per point (malloc'd), or NULL */
	struct result *res;    /* result per point */
	unsigned long long *applied; /* per point: bit i, override i reached it */
	char (*bound)[POOL_BOUND_LEN]; /* per point (without a sink): what bounds
					  it, the bound_by column */
	long err_idx;          /* lowest failing point, or -1 */
	int err_rc;            /* 1 or 2 (usage) */
	struct kerr err;
	/* internal */
	pthread_mutex_t lock;
	long next, done, next_sink;
	char *ready;           /* per point, with a sink: evaluated */
	double *secs;          /* per point, with a sink: seconds it took */
	char *feasible;        /* per point, with a sink: its answer fits */
	int sink_failed;
	struct progress pg;    /* points done, elapsed, estimate */
};

/* Evaluates every point: with a batch given, at that batch (auto
 * micro-batches: the lowest mean step time), else the SLO solver.
 * Returns 0, or the failing point's status (message in p->err). */
int pool_run(struct pool *p, int threads);
/* After pool_run (without a sink): probes solved point idx again from its
 * spec (point_probe) and rewrites its result and row.  0, or 1 with err. */
int pool_probe(struct pool *p, long idx, struct kerr *err);
/* pool_probe for each of the n points idx, on up to threads threads (each
 * point's own result and row: the same for any count).  0, or 1 with the
 * first failing point's err. */
int pool_probe_all(struct pool *p, const long *idx, long n, int threads, struct kerr *err);
void pool_free(struct pool *p);

#endif
