/* units.c: strict number+unit parsing (strtod with end checks, finite only)
 * and human formatting.  The suffix tables are the single list of units. */
#include "base/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct suffix {
	const char *text;
	double scale;
};

static const struct suffix bytes_sfx[] = {
	{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
	{"TiB", 1099511627776.0}, {NULL, 0}};
static const struct suffix bw_sfx[] = {
	{"B/s", 1}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9},
	{"TB/s", 1e12}, {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0},
	{NULL, 0}};
static const struct suffix flops_sfx[] = {
	{"FLOPS", 1}, {"GFLOPS", 1e9}, {"TFLOPS", 1e12}, {"PFLOPS", 1e15},
	{NULL, 0}};
static const struct suffix power_sfx[] = {{"W", 1}, {"kW", 1e3}, {NULL, 0}};
static const struct suffix time_sfx[] = {
	{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {NULL, 0}};
static const struct suffix ebit_sfx[] = {
	{"pJ/bit", 1e-12}, {"fJ/bit", 1e-15}, {NULL, 0}};
static const struct suffix eflop_sfx[] = {
	{"pJ/FLOP", 1e-12}, {"fJ/FLOP", 1e-15}, {NULL, 0}};
static const struct suffix tokens_sfx[] = {
	{"K", 1024.0}, {"M", 1048576.0}, {NULL, 0}};

struct uclass {
	const struct suffix *sfx; /* NULL: no unit allowed */
	int bare_ok;              /* a bare number is accepted (base unit) */
	int whole;                /* value must be an integer */
	const char *accepted;
};

static const struct uclass classes[U_NCLASS] = {
	[U_INT] = {NULL, 1, 1, "a whole number"},
	[U_REAL] = {NULL, 1, 0, "a plain number"},
	[U_TOKENS] = {tokens_sfx, 1, 1, "a token count (suffix K=1024, M=1048576)"},
	[U_BYTES] = {bytes_sfx, 1, 0, "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB"},
	[U_BW] = {bw_sfx, 0, 0, "B/s, KB/s, MB/s, GB/s, TB/s, GiB/s, TiB/s"},
	[U_FLOPS] = {flops_sfx, 0, 0, "FLOPS, GFLOPS, TFLOPS, PFLOPS"},
	[U_POWER] = {power_sfx, 0, 0, "W, kW"},
	[U_TIME] = {time_sfx, 0, 0, "s, ms, us, ns"},
	[U_EBIT] = {ebit_sfx, 0, 0, "pJ/bit, fJ/bit"},
	[U_EFLOP] = {eflop_sfx, 0, 0, "pJ/FLOP, fJ/FLOP"},
};

static int fail(char *why, size_t n, const char *fmt, const char *arg)
{
	if (why && n)
		snprintf(why, n, fmt, arg);
	return -1;
}

/* True when s starts (case-insensitively) with a spelling of NaN or infinity,
 * which strtod would otherwise accept. */
static int looks_nonfinite(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	return strncasecmp(s, "nan", 3) == 0 || strncasecmp(s, "inf", 3) == 0;
}

int unit_parse(const char *text, enum unit_class c, double *out, char *why,
	       size_t n)
{
	if (c >= U_NCLASS)
		return fail(why, n, "internal: bad unit class%s", "");
	const struct uclass *uc = &classes[c];
	const char *s = text;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return fail(why, n, "empty value, expected %s", uc->accepted);
	if (looks_nonfinite(s))
		return fail(why, n, "'%s' is not a finite number", text);
	if (!(isdigit((unsigned char)*s) || *s == '.' || *s == '-' || *s == '+'))
		return fail(why, n, "'%s' is not a number", text);
	const char *digits = (*s == '+' || *s == '-') ? s + 1 : s;
	if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
		/* strtod would take hexadecimal */
		return fail(why, n, "'%s' is not a decimal number", text);
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (end == s)
		return fail(why, n, "'%s' is not a number", text);
	if (errno == ERANGE || !isfinite(v))
		return fail(why, n, "'%s' is out of the representable range", text);
	while (*end == ' ' || *end == '\t')
		end++;
	/* Trim trailing blanks of the suffix. */
	size_t len = strlen(end);
	while (len && isspace((unsigned char)end[len - 1]))
		len--;
	double scale = 1;
	if (len == 0) {
		if (!uc->bare_ok)
			return fail(why, n, "missing unit, expected one of %s",
				    uc->accepted);
	} else {
		const struct suffix *f = uc->sfx;
		while (f && f->text &&
		       !(strlen(f->text) == len && strncmp(f->text, end, len) == 0))
			f++;
		if (!f || !f->text) {
			char buf[96];
			snprintf(buf, sizeof buf, "%.*s", (int)(len > 40 ? 40 : len),
				 end);
			const struct suffix *g = uc->sfx; /* the same letters in another case */
			while (g && g->text &&
			       !(strlen(g->text) == len && strncasecmp(g->text, end, len) == 0))
				g++;
			if (why && n && g && g->text)
				snprintf(why, n, "unknown unit '%s' (units are case-sensitive: "
					 "did you mean '%s'?), expected %s", buf, g->text,
					 uc->accepted);
			else if (why && n)
				snprintf(why, n, "unknown unit '%s', expected %s", buf,
					 uc->accepted);
			return -1;
		}
		scale = f->scale;
	}
	v *= scale;
	if (!isfinite(v))
		return fail(why, n, "'%s' is out of the representable range", text);
	if (uc->whole && (v != floor(v) || fabs(v) > 9007199254740992.0))
		return fail(why, n, "'%s' is not a whole number", text);
	*out = v == 0 ? 0 : v; /* "-0" is zero, never a negative zero */
	return 0;
}

static const struct suffix *format_table(enum unit_class c)
{
	switch (c) {
	case U_BYTES: return bytes_sfx;
	case U_BW: return bw_sfx;
	case U_FLOPS: return flops_sfx;
	case U_POWER: return power_sfx;
	case U_TIME: return time_sfx;
	case U_EBIT: return ebit_sfx;
	case U_EFLOP: return eflop_sfx;
	default: return NULL;
	}
}

void unit_format(double v, enum unit_class c, char *buf, size_t n)
{
	const struct suffix *t = format_table(c);
	if (!t || v == 0 || !isfinite(v)) {
		if (c == U_INT || c == U_TOKENS)
			snprintf(buf, n, "%.0f", v);
		else if (t)
			snprintf(buf, n, "%g %s", v, t[0].text);
		else
			snprintf(buf, n, "%g", v);
		return;
	}
	/* Pick the largest decimal (non-binary) unit not above |v|. */
	const struct suffix *best = NULL;
	for (const struct suffix *f = t; f->text; f++) {
		if (strstr(f->text, "iB")) /* KiB, GiB/s: binary */
			continue;
		if (fabs(v) >= f->scale * 0.9999 && (!best || f->scale > best->scale))
			best = f;
	}
	if (!best) { /* smaller than every unit: take the smallest */
		best = t;
		for (const struct suffix *f = t; f->text; f++)
			if (f->scale < best->scale)
				best = f;
	}
	snprintf(buf, n, "%.4g %s", v / best->scale, best->text);
}

void unit_format_exact(double v, enum unit_class c, char *buf, size_t n)
{
	const struct suffix *t = format_table(c);
	if (c == U_INT || c == U_TOKENS)
		snprintf(buf, n, "%.0f", v);
	else if (t)
		snprintf(buf, n, "%.9g %s", v / t[0].scale, t[0].text);
	else
		snprintf(buf, n, "%.9g", v);
}
