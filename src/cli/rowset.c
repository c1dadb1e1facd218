/* rowset.c: the rows a sweep or merge has written (by fingerprint), so a
 * row it cannot tell from an earlier one is written once, and the rows'
 * and a sweep's 128-bit fingerprints. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A row's 128-bit fingerprint: FNV-1a and a multiply-xorshift hash, two
 * 64-bit hashes of different families over the same bytes.  Two distinct
 * rows share one with a chance near n^2 / 2^129: for the 10 million rows a
 * sweep may have, about 1e-25. */
void out_fingerprint(const char *s, size_t n, unsigned long long h[2])
{
	unsigned long long a = 1469598103934665603ULL, b = 0x9e3779b97f4a7c15ULL ^ n;
	for (size_t i = 0; i < n; i++) {
		a = (a ^ (unsigned char)s[i]) * 1099511628211ULL;
		b = (b + (unsigned char)s[i]) * 0xff51afd7ed558ccdULL;
		b ^= b >> 29;
	}
	h[0] = a, h[1] = b ^ (b >> 32);
}

/* 1: row (len bytes) is new and now kept; 0: written before; -1: out of
 * memory. */
static int rowset_add(struct rowset *rs, const char *row, size_t len)
{
	if (2 * (rs->n + 1) > rs->cap) { /* grow: open addressing, at most half full */
		size_t cap = rs->cap ? 2 * rs->cap : 1024;
		unsigned long long (*slot)[2] = calloc(cap, sizeof *slot);
		if (!slot)
			return -1;
		for (size_t i = 0; i < rs->cap; i++)
			if (rs->slot[i][0] | rs->slot[i][1]) {
				size_t j = rs->slot[i][0] & (cap - 1);
				while (slot[j][0] | slot[j][1])
					j = (j + 1) & (cap - 1);
				slot[j][0] = rs->slot[i][0], slot[j][1] = rs->slot[i][1];
			}
		free(rs->slot);
		rs->slot = slot, rs->cap = cap;
	}
	unsigned long long h[2];
	out_fingerprint(row, len, h);
	h[1] |= !(h[0] | h[1]); /* all zero marks an empty slot */
	size_t j = h[0] & (rs->cap - 1);
	for (; rs->slot[j][0] | rs->slot[j][1]; j = (j + 1) & (rs->cap - 1))
		if (rs->slot[j][0] == h[0] && rs->slot[j][1] == h[1])
			return 0;
	rs->slot[j][0] = h[0], rs->slot[j][1] = h[1];
	rs->n++;
	return 1;
}

FILE *rowbuf_open(struct rowbuf *b)
{
	b->s = NULL, b->n = 0;
	return b->fp = open_memstream(&b->s, &b->n);
}

int rowbuf_emit(struct rowbuf *b, int ok, struct rowset *rs, FILE *fp)
{
	if (b->fp && fclose(b->fp) != 0)
		ok = 0;
	int fresh = ok && b->fp ? rowset_add(rs, b->s, b->n) : -1;
	if (fresh > 0 && fwrite(b->s, 1, b->n, fp) != b->n)
		fresh = -1;
	free(b->s);
	b->s = NULL, b->fp = NULL;
	return fresh;
}

void rowset_free(struct rowset *rs)
{
	free(rs->slot);
	memset(rs, 0, sizeof *rs);
}
