/* suggest.h: "did you mean" for names: the candidate closest to what was
 * typed, compared without case and ignoring '-', '_', '.' and ' ' (so
 * "DeepSeek-V3.2", "deepseek-v32" and "deepseekv3.2" all find
 * "deepseek-v3.2"), within an edit distance of a third of its length (a
 * swap of two neighbours is one edit). */
#ifndef KARAT_BASE_SUGGEST_H
#define KARAT_BASE_SUGGEST_H

#include <stddef.h>

/* The best of n candidates for typed, or NULL when none is close. */
const char *suggest_name(const char *typed, const char *const *cands, int n);

/* Writes " (did you mean 'X'?)" into buf for the suggestion, or "". */
void suggest_hint(const char *typed, const char *const *cands, int n, char *buf,
		  size_t size);

#endif
