/* shard.h (cli): a sweep split into shards for a cluster.  Points are
 * dealt to shards so that each gets a like share of the expected work,
 * whatever the count; a shard file starts with a record of the sweep it
 * belongs to, so that `karat merge` can refuse a foreign, edited,
 * duplicated or incomplete one and name the missing. */
#ifndef KARAT_CLI_SHARD_H
#define KARAT_CLI_SHARD_H

#include <stdio.h>

#include "cli/sweep_file.h"

/* The first line of a shard file:
 *   #karat-shard k=K n=N points=TOTAL shard_points=M sweep=ID version=V
 * ID: a 128-bit fingerprint (32 hex digits) of the resolved sweep (every
 * key's values, the [vary] labels, the --set overrides, karat's version). */
#define SHARD_TAG "#karat-shard"
struct shard_info {
	long k, n;          /* shard k (1-based) of n */
	long points;        /* points in the whole sweep */
	long shard_points;  /* points in this shard */
	char id[33];
	char version[96];
};

/* The sweep's identity, as above. */
void shard_identity(const struct sweep *sw, char id[33]);

/* Each point's expected work, a rough unit (samples x evaluations x
 * pipeline and placement work), from its spec alone: used to deal the
 * points, never to price them. */
double shard_estimate(const struct sweep *sw, long point);

/* Deals the sweep's points to n shards: heaviest expected work first,
 * ties in a fixed pseudo-random order, dealt back and forth (1..n, n..1)
 * so that every shard gets a like share and counts within one.  owner
 * (sw->total entries) gets each point's shard, 0-based; est, when not
 * NULL, its estimate.  0, or -1 when out of memory. */
int shard_deal(const struct sweep *sw, long n, int *owner, double *est);

/* Shard k (0-based) of n's points, rising, into *pts (malloc'd; free it),
 * their count into *npts.  0, or -1 when out of memory. */
int shard_points(const struct sweep *sw, long k, long n, long **pts, long *npts);

/* Writes the first line; 0 or -1. */
int shard_write_info(FILE *fp, const struct shard_info *si);

/* Parses a first line (without its newline); 0, or -1 when it is not one. */
int shard_parse_info(const char *line, struct shard_info *si);

/* A shard's output: the rows go to PATH.partial as each point finishes
 * (flushed), and PATH.partial becomes PATH when the last is written.  A
 * task killed on the way leaves PATH.partial; run again, it keeps the
 * rows there of the same shard of the same sweep and goes on from the
 * first point missing.  The partial file is never followed through a
 * link, and is locked while written (a second task on the same shard is
 * refused). */
struct shard_out {
	FILE *fp;
	const char *path;
	char partial[1100];
	long done; /* points already in the file when it was opened */
};

/* Opens (or resumes) the partial file of path for shard si whose CSV
 * header line is head (with its newline) and whose points, rising, are
 * points[0..n).  Prints the error; 0 or -1. */
int shard_out_open(struct shard_out *so, const char *path, const struct shard_info *si,
		   const char *head, const long *points, long n);

/* Flushes and syncs; then, unless bad, renames the partial file to the
 * shard's path.  Prints the error; 0 or -1. */
int shard_out_close(struct shard_out *so, int bad);

#endif
