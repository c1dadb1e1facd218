/* list.c: comma-separated lists in INI values (io/list.h). */
#include "io/list.h"

#include <stdio.h>
#include <string.h>

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	size_t i = 0;
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	memmove(s, s + i, n - i + 1);
}

int list_split(const char *text, int algo, char (*vals)[INI_VALUE], int max, int *n,
	       char *why, size_t nwhy)
{
	char buf[INI_VALUE];
	snprintf(buf, sizeof buf, "%s", text);
	*n = 0;
	for (char *next = buf, *tok; (tok = next) != NULL;) {
		char *comma = strchr(tok, ',');
		next = comma ? comma + 1 : NULL;
		if (comma)
			*comma = '\0';
		trim(tok);
		if (algo && *n > 0 && strchr(tok, '=') && !strchr(tok, ':')) {
			size_t l = strlen(vals[*n - 1]);
			snprintf(vals[*n - 1] + l, INI_VALUE - l, ",%s", tok);
			continue;
		}
		if (!*tok)
			return snprintf(why, nwhy, "empty item in the list"), -1;
		if (*n == max)
			return snprintf(why, nwhy, "more than %d values", max), -1;
		snprintf(vals[(*n)++], INI_VALUE, "%s", tok);
	}
	if (*n == 0)
		return snprintf(why, nwhy, "no values"), -1;
	return 0;
}

int list_split_sets(const char *text, char *out, size_t stride, size_t len, int max, int *n,
		    char *why, size_t nwhy)
{
	char buf[INI_VALUE];
	snprintf(buf, sizeof buf, "%s", text);
	*n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, "&", &save); tok;
	     tok = strtok_r(NULL, "&", &save)) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		size_t k = strlen(tok);
		while (k && (tok[k - 1] == ' ' || tok[k - 1] == '\t'))
			tok[--k] = '\0';
		char *eq = strchr(tok, '=');
		if (!eq || !memchr(tok, '.', (size_t)(eq - tok))) {
			snprintf(why, nwhy, "'%s' is not section.key=value (several are joined by '&')",
				 tok);
			return -1;
		}
		if (*n == max || k >= len) {
			snprintf(why, nwhy, "more than %d overrides, or one of %zu characters or more",
				 max, len);
			return -1;
		}
		snprintf(out + (size_t)(*n)++ * stride, len, "%s", tok);
	}
	return 0;
}
