/* sweep_file.h (cli): a sweep file (sweeps/NAME.ini) as `karat sweep` reads
 * it: [sweep] keys and [set] overrides, each a list, and [vary] labels. */
#ifndef KARAT_CLI_SWEEP_FILE_H
#define KARAT_CLI_SWEEP_FILE_H

#include "base/limits.h"
#include "cli/pool.h"
#include "karat.h"

/* The [sweep] section's keys ([set] and [vary] are open). */
extern const struct schema sweep_schema;

struct dim {
	char section[16], key[64];
	int n;
	char val[SWEEP_MAX_VALS][INI_VALUE]; /* an item is never longer than its value */
	int line;
};

/* [vary]: one point per label (the others at the base), its overrides. */
struct vary {
	char label[64];
	char set[SWEEP_MAX_VARY_SETS][POOL_SET_LEN];
	int n, line;
};

struct sweep {
	const char *path;
	struct dim dim[SWEEP_MAX_DIMS];
	int ndim;
	struct vary vary[SWEEP_MAX_VARY];
	int nvary;
	int nset;                          /* of the dims, the [set] keys */
	long total;
	const char *fixed_sets[ARGS_MAX_MANY]; /* --set on the command line */
	int nfixed;
	long shard, nshards;              /* this shard (0-based) of nshards; 1 shard: all */
	int probe;                        /* --probe: solved points say what to grow */
	long *points;                     /* with shards: this shard's points, rising */
};


/* The [sweep] keys, in the order point_spec_of fills them (NULL-ended). */
extern const char *const sweep_keys[];

/* Reads sw->path into sw (sw->fixed_sets and nfixed already set: they count
 * toward the override limit).  A relative `output` is resolved against the
 * file's folder into outbuf (outn bytes) and *output set to it; one that
 * is absolute or leaves the folder is refused.  0, or 1 with err
 * ("FILE:LINE: reason"). */
int sweep_load(struct sweep *sw, const char **output, char *outbuf, size_t outn,
	       struct kerr *err);

/* A point's [vary] index (0: the base, k: label k - 1) and into *cart
 * the index of its [sweep] x [set] combination. */
int sweep_vary_of(const struct sweep *sw, long point, long *cart);

/* The spec of a point of the whole sweep (mixed radix, the last key
 * fastest, then its [vary] label's overrides, then --set); strings point
 * into sw and into sets (caller storage). */
void sweep_spec(const struct sweep *sw, long point, struct point_spec *ps,
		char sets[][POOL_SET_LEN]);

#endif
