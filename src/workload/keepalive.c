/* keepalive.c: a workload's [keepalive] table, what keeping idle sessions'
 * caches for a time buys in prefix reuse, and the reuse a given idle
 * capacity allows (workload.h). */
#include "workload/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

const char *const wl_keep_names[WK_N + 1] = {"capacity", "forever", 0};

int wl_keepalive_row(struct wl_keepalive *k, const char *key, const char *value,
		     const char *path, int line, struct kerr *err)
{
	char why[160], a[64], *comma = strchr(value, ',');
	double t, reuse, idle;
	if (unit_parse(key, U_TIME, &t, why, sizeof why) != 0)
		return kerr_set(err, path, line, "keepalive.%s: the key is a keep-alive time: %s",
				key, why);
	if (!(t >= 0))
		return kerr_set(err, path, line, "keepalive.%s: a negative time", key);
	if (!comma || (size_t)(comma - value) >= sizeof a || strchr(comma + 1, ','))
		return kerr_set(err, path, line, "keepalive.%s: '%s' is not 'REUSE, IDLE' (the "
				"share reused, then the mean idle time per finished call, e.g. "
				"'0.45, 7.9 s')", key, value);
	memcpy(a, value, (size_t)(comma - value));
	a[comma - value] = 0;
	if (unit_parse(a, U_REAL, &reuse, why, sizeof why) != 0)
		return kerr_set(err, path, line, "keepalive.%s: reuse: %s", key, why);
	if (unit_parse(comma + 1, U_TIME, &idle, why, sizeof why) != 0)
		return kerr_set(err, path, line, "keepalive.%s: idle time: %s", key, why);
	if (!(reuse >= 0 && reuse <= 1))
		return kerr_set(err, path, line, "keepalive.%s: reuse %g is not a share in [0, 1]",
				key, reuse);
	if (!(idle >= 0 && idle <= t))
		return kerr_set(err, path, line, "keepalive.%s: a cache kept %g s cannot stay idle "
				"%g s on average", key, t, idle);
	if (k->n == WL_MAX_KEEPALIVE)
		return kerr_set(err, path, line, "[keepalive]: more than %d rows", WL_MAX_KEEPALIVE);
	int i = k->n++;
	for (; i > 0 && k->t[i - 1] > t; i--) /* keep t ascending */
		k->t[i] = k->t[i - 1], k->reuse[i] = k->reuse[i - 1], k->idle[i] = k->idle[i - 1],
		k->line[i] = k->line[i - 1];
	k->t[i] = t, k->reuse[i] = reuse, k->idle[i] = idle, k->line[i] = line;
	return 0;
}

int wl_keepalive_check(const struct kworkload *w, const char *path, struct kerr *err)
{
	const struct wl_keepalive *k = &w->ka;
	for (int i = 0; i < k->n; i++) {
		if (i > 0 && k->t[i] == k->t[i - 1])
			return kerr_set(err, path, k->line[i], "[keepalive]: %g s is given twice",
					k->t[i]);
		if (i > 0 && (k->reuse[i] < k->reuse[i - 1] || k->idle[i] < k->idle[i - 1]))
			return kerr_set(err, path, k->line[i], "[keepalive]: keeping caches longer "
					"(%g s) cannot reuse less or leave them idle for less than at "
					"%g s", k->t[i], k->t[i - 1]);
	}
	return 0;
}

double workload_reuse_within(const struct kworkload *w, double idle_s, double *keep_s)
{
	const struct wl_keepalive *k = &w->ka;
	if (!k->n || w->keepalive == WK_FOREVER) {
		*keep_s = INFINITY;
		return w->prefix_reuse;
	}
	if (!(idle_s > 0)) { /* no room for an idle cache */
		*keep_s = 0;
		return k->t[0] == 0 ? fmin(k->reuse[0], w->prefix_reuse) : 0;
	}
	double t0 = 0, r0 = 0, i0 = 0; /* the segment's start: the origin first */
	for (int i = 0; i < k->n; i++) {
		if (idle_s <= k->idle[i]) {
			double f = k->idle[i] > i0 ? (idle_s - i0) / (k->idle[i] - i0) : 1;
			*keep_s = t0 + f * (k->t[i] - t0);
			return fmin(r0 + f * (k->reuse[i] - r0), w->prefix_reuse);
		}
		t0 = k->t[i], r0 = k->reuse[i], i0 = k->idle[i];
	}
	*keep_s = t0; /* past the table: its last row */
	return fmin(r0, w->prefix_reuse);
}
