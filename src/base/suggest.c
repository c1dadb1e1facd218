/* suggest.c: nearest name by edit distance on normalised names. */
#include "base/suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define SUGGEST_MAX 64

/* Lower case, separators dropped; returns the length. */
static size_t normalise(const char *s, char *out)
{
	size_t n = 0;
	for (; *s && n + 1 < SUGGEST_MAX; s++)
		if (*s != '-' && *s != '_' && *s != '.' && *s != ' ')
			out[n++] = (char)tolower((unsigned char)*s);
	out[n] = '\0';
	return n;
}

/* Edit distance with adjacent transpositions counted as one edit (the
 * optimal string alignment distance): "qurey" is one edit from "query". */
static size_t distance(const char *a, size_t na, const char *b, size_t nb)
{
	size_t prev2[SUGGEST_MAX], prev[SUGGEST_MAX], row[SUGGEST_MAX];
	for (size_t j = 0; j <= nb; j++)
		prev[j] = j, prev2[j] = j;
	for (size_t i = 1; i <= na; i++) {
		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = row[j - 1] + 1;
			size_t d = sub < del ? sub : del;
			d = ins < d ? ins : d;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			row[j] = d;
		}
		memcpy(prev2, prev, (nb + 1) * sizeof *prev);
		memcpy(prev, row, (nb + 1) * sizeof *row);
	}
	return prev[nb];
}

const char *suggest_name(const char *typed, const char *const *cands, int n)
{
	char t[SUGGEST_MAX], c[SUGGEST_MAX];
	size_t nt = normalise(typed, t);
	if (nt == 0)
		return NULL;
	const char *best = NULL;
	size_t bestd = (size_t)-1;
	for (int i = 0; i < n; i++) {
		size_t nc = normalise(cands[i], c);
		size_t d = distance(t, nt, c, nc);
		size_t limit = (nc > nt ? nc : nt) / 3;
		if (d <= limit && d < bestd)
			best = cands[i], bestd = d;
	}
	return best;
}

void suggest_hint(const char *typed, const char *const *cands, int n, char *buf,
		  size_t size)
{
	const char *s = suggest_name(typed, cands, n);
	if (s)
		snprintf(buf, size, " (did you mean '%s'?)", s);
	else if (size)
		buf[0] = '\0';
}
