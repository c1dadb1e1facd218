/* args.c: option parsing for every command ("--name value", "--name=value",
 * flags), driven by each command's option table. */
#include "cli/cli.h"

#include <stdarg.h>
#include <string.h>

#include "base/suggest.h"
#include "karat.h"

static void vmessage(const char *fmt, va_list ap)
{
	fflush(stdout); /* what was printed first appears first, not cut mid-line */
	fputs("karat: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_prefix(struct kerr *e, const char *pre, const char *post)
{
	char msg[KERR_MSG];
	snprintf(msg, sizeof msg, "%s", e->msg);
	snprintf(e->msg, sizeof e->msg, "%s%s%s", pre, msg, post);
}

void cli_set_error(struct kerr *e)
{
	int lookup = strstr(e->msg, ": no such key") && !strstr(e->msg, "did you mean");
	cli_prefix(e, "--set ", lookup ? " (see karat show)" : "");
}

void die_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

int usage_error(const struct command *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	if (c)
		fprintf(stderr, "usage: karat %s %s\n", c->name, c->usage);
	return EXIT_USAGE;
}

static int find_opt(const struct command *c, const char *name, size_t len)
{
	for (int i = 0; c->opts && c->opts[i].name; i++)
		if (strlen(c->opts[i].name) == len &&
		    strncmp(c->opts[i].name, name, len) == 0)
			return i;
	return -1;
}

/* "unknown option '--x'", with the nearest of c's options. */
static int unknown_opt(const struct command *c, const char *name, size_t len)
{
	const char *names[MAX_OPTS];
	int n = 0;
	for (int i = 0; c->opts && c->opts[i].name && n < MAX_OPTS; i++)
		names[n++] = c->opts[i].name;
	char given[64], hint[128] = "";
	snprintf(given, sizeof given, "%.*s", (int)(len < 60 ? len : 60), name);
	const char *near = suggest_name(given, names, n);
	int begins = 0; /* else the one option it begins, if only one */
	for (int i = 0; i < n; i++)
		if (strncmp(names[i], given, strlen(given)) == 0)
			begins++;
	for (int i = 0; !near && begins == 1 && i < n; i++)
		if (strncmp(names[i], given, strlen(given)) == 0)
			near = names[i];
	if (near)
		snprintf(hint, sizeof hint, " (did you mean '--%s'?)", near);
	return usage_error(c, "unknown option '--%s'%s", given, hint);
}

int args_parse(const struct command *c, int argc, char **argv, struct args *a)
{
	memset(a, 0, sizeof *a);
	char alias[64];
	int only_pos = 0; /* after "--": every word is an argument */
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];
		if (!only_pos && strcmp(s, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (only_pos) {
			if (a->npos == ARGS_MAX_POS || a->npos >= c->max_pos)
				return usage_error(c, "unexpected argument '%.80s'", s), -1;
			a->pos[a->npos++] = s;
			continue;
		}
		if (s[0] == '-' && s[1] && s[1] != '-') { /* -x VALUE or -xVALUE */
			int k = -1;
			for (int j = 0; c->opts && c->opts[j].name; j++)
				if (c->opts[j].short_name == s[1])
					k = j;
			if (k < 0)
				return usage_error(c, "unknown option '%.20s'", s), -1;
			if (s[2])
				snprintf(alias, sizeof alias, "--%s=%.40s", c->opts[k].name, s + 2);
			else
				snprintf(alias, sizeof alias, "--%s", c->opts[k].name);
			s = alias;
		}
		if (strncmp(s, "--", 2) != 0 || s[2] == '\0') {
			if (a->npos == ARGS_MAX_POS || a->npos >= c->max_pos)
				return usage_error(c, "unexpected argument '%.80s'", s), -1;
			a->pos[a->npos++] = s;
			continue;
		}
		const char *name = s + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		int k = find_opt(c, name, len);
		if (k < 0)
			return unknown_opt(c, name, len), -1;
		if (a->set[k] && !c->opts[k].repeat)
			return usage_error(c, "option --%s given twice", c->opts[k].name), -1;
		a->set[k] = 1;
		if (!c->opts[k].has_arg) {
			if (eq)
				return usage_error(c, "option --%s takes no value", c->opts[k].name), -1;
			continue;
		}
		if (eq) {
			a->val[k] = eq + 1;
		} else if (i + 1 < argc) {
			a->val[k] = argv[++i];
		} else {
			return usage_error(c, "option --%s needs a value", c->opts[k].name), -1;
		}
		if (!*a->val[k])
			return usage_error(c, "option --%s has an empty value", c->opts[k].name), -1;
		if (c->opts[k].repeat) {
			if (a->nmany == ARGS_MAX_MANY)
				return usage_error(c, "more than %d --%s options", ARGS_MAX_MANY,
						   c->opts[k].name), -1;
			a->many[a->nmany++] = a->val[k];
		}
	}
	if (a->npos < c->min_pos)
		return usage_error(c, "missing argument"), -1;
	return 0;
}

const char *arg_get(const struct command *c, const struct args *a,
		    const char *name)
{
	int k = find_opt(c, name, strlen(name));
	return k >= 0 && a->set[k] ? (a->val[k] ? a->val[k] : "") : NULL;
}

int parse_count(const char *opt, const char *text, int tokens, double lo,
		double hi, double *out)
{
	char why[160];
	if (unit_parse(text, tokens ? U_TOKENS : U_INT, out, why, sizeof why) != 0) {
		die_msg("--%s: %s", opt, why);
		return -1;
	}
	if (*out < lo || *out > hi) {
		die_msg("--%s: %s is out of range [%g, %g]", opt, text, lo, hi);
		return -1;
	}
	return 0;
}
