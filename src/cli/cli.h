/* cli.h: shared pieces of the command-line layer: option parsing, the
 * output writer (aligned tables or CSV quoted by libcsv) and the command
 * table.  Only this layer prints or exits. */
#ifndef KARAT_CLI_CLI_H
#define KARAT_CLI_CLI_H

#include <stdio.h>
#include <sys/types.h>

#include "base/limits.h"
#include "karat.h"

#define EXIT_USAGE 2

/* An option a command accepts; has_arg 0 for flags. */
struct optdef {
	const char *name; /* without the leading "--" */
	int has_arg;
	const char *help;
	int repeat;       /* may be given many times (values in args.many) */
	char short_name;  /* "-x VALUE" alias, or 0 */
};

#define MAX_OPTS 24

struct args {
	const char *val[MAX_OPTS]; /* by index into the command's optdefs */
	int set[MAX_OPTS];
	const char *pos[ARGS_MAX_POS];
	int npos;
	const char *many[ARGS_MAX_MANY]; /* values of the repeatable option */
	int nmany;
};

struct command {
	const char *name;
	int (*run)(const struct args *a);
	const char *usage;   /* after "karat NAME" */
	const char *summary;
	const struct optdef *opts; /* NULL-name terminated */
	int min_pos, max_pos;
};

extern const struct command commands[];

/* The table entry named name, or NULL. */
const struct command *command_find(const char *name);

/* Parses argv (after the command name) against c's options; prints a usage
 * error and returns -1 on failure. */
int args_parse(const struct command *c, int argc, char **argv, struct args *a);

/* Value of option name, or NULL when absent. */
const char *arg_get(const struct command *c, const struct args *a,
		    const char *name);

/* Wraps a library message in the command line's words: pre before it,
 * post after it (the library never names an option). */
void cli_prefix(struct kerr *e, const char *pre, const char *post);

/* Words an override's error for the command line: "--set " in front, and
 * where to look up the keys when no near one was suggested. */
void cli_set_error(struct kerr *e);

/* Prints "karat: msg" to stderr. */
void die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports a usage problem for command c; returns EXIT_USAGE. */
int usage_error(const struct command *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parses a whole number option with units class tokens etc. */
int parse_count(const char *opt, const char *text, int tokens, double lo,
		double hi, double *out);

/* Above this share of requests cut to a model's context window, query,
 * solve and run say so in words (ctx_clipped_share holds it always). */
#define CLIP_NOTE 0.05

/* Output (cli/table.c): a table of rows of cells printed aligned, or CSV.  OUT_CELL is
 * the size of the scratch buffers callers format numbers into. */
#define OUT_MAX_COLS 128 /* the point columns and a sweep's [set] keys */
#define OUT_CELL 320
struct table {
	int ncols, nrows, cap;
	const char *head[OUT_MAX_COLS];
	int right[OUT_MAX_COLS];  /* right-align (numbers) */
	char *(*cell)[OUT_MAX_COLS]; /* malloc'd copies: no cell is ever cut */
};
void table_init(struct table *t, int ncols, const char *const *head,
		const int *right);
/* Adds a row; fmt-free: cells are strings. Returns -1 on out of memory. */
int table_add(struct table *t, const char *const *cells);
void table_free(struct table *t);
/* Writes t aligned (csv = 0) or as CSV to fp; returns -1 on write error. */
int table_write(const struct table *t, FILE *fp, int csv);
/* The same as a Markdown table (numbers right-aligned). */
int table_write_md(const struct table *t, FILE *fp);
/* path (written atomically): head, the table as Markdown, then tail (NULL:
 * none) and a newline.  0, or 1 said. */
int write_md_table(const char *path, const char *head, const struct table *t, const char *tail);

/* Safe output files (cli/outfile.c): a temporary file in the target's
 * folder (exclusive creation, never through a link), flushed to disk, given
 * the mode of the file it replaces, then renamed over the target; a FIFO
 * is written in place, "-" is standard output; a symbolic link, a special
 * file or one of the command's own inputs is refused.  Each prints the
 * error (naming path) and returns -1, or returns 0. */
#define OUT_PATH_MAX 1024
struct outfile {
	FILE *fp;
	int slot;          /* registered temporary, or -1 */
	int in_place;      /* FIFO or stdout: no rename */
	const char *path;  /* the user's name */
	char tmp[OUT_PATH_MAX + 64];
};
int out_open(struct outfile *o, const char *path);
/* Flushes, syncs and renames into place; bad: the content failed, so the
 * temporary is removed and the target kept. */
int out_close(struct outfile *o, int bad);
/* Drops the temporary without a message (the caller says why). */
void out_abort(struct outfile *o);
int write_atomic(const char *path, const struct table *t, int csv);
int write_text_atomic(const char *path, const char *text);
int write_bytes_atomic(const char *path, const void *data, size_t n);
/* Whether path can be written as above (checked before long work);
 * prints why not and returns -1. */
int out_check(const char *path);
/* Removes open temporaries, and stops a program karat waits on, on every
 * catchable signal that ends the process (call once). */
void out_install_signals(void);
/* The program a signal should stop as well (0: none). */
void out_set_child(pid_t pid);

/* Figures (cli/gnuplot.c).  gp_quote writes path into dst as a gnuplot
 * single-quoted string that gnuplot reads as a plain file name (never a
 * pipe, a command or a macro); -1 with the reason in why when it cannot. */
int gp_quote(const char *path, char *dst, size_t n, char *why, size_t nwhy);
/* Whether gnuplot is on PATH (no shell asked). */
int gnuplot_found(void);
/* Runs plots/SCRIPT with gnuplot (started directly, with an argument
 * vector) and `-e "outfile=...; VARS"`, the figure read back through a
 * pipe; the figure must be whole (the format's header and trailer) and
 * gnuplot silent on stderr (a warning is a failure).  Only then is it
 * written to out atomically; otherwise out is untouched.  Prints "wrote
 * OUT", or the error; 0 or -1. */
int gnuplot_render(const char *vars, const char *script, const char *out);
/* A command's own figure: plots/SCRIPT on one CSV (datafile) and, unless
 * csv2 is NULL, a second (datafile2) into out, or "gnuplot not found:
 * skipped" where it is not installed.  0, or 1 when the figure failed
 * (said why). */
int gnuplot_figure(const char *script, const char *csv, const char *csv2, const char *out);

/* One CSV row (libcsv quoting where needed); 0 or -1 on a write error. */
int csv_write_row(FILE *fp, int n, const char *const *cells);

/* A 128-bit fingerprint of n bytes (two 64-bit hashes of different
 * families): rows, a sweep's identity. */
void out_fingerprint(const char *s, size_t n, unsigned long long h[2]);

/* karat's version, as --version prints it. */
const char *karat_version(void);

/* The rows written so far (sweep, merge; cli/rowset.c): a row a system cannot tell from
 * an earlier one (the same cells: an override it cannot apply leaves its
 * column empty) is written once.  It keeps each row's 128-bit fingerprint,
 * 32 bytes a row at most, not the row. */
struct rowset {
	unsigned long long (*slot)[2];
	size_t cap, n;
};
void rowset_free(struct rowset *rs);
/* One row rendered into memory, then written once (rowset). */
struct rowbuf {
	char *s;
	size_t n;
	FILE *fp;
};
/* The stream to render the row into (NULL: out of memory). */
FILE *rowbuf_open(struct rowbuf *b);
/* Closes the row (ok: it rendered) and writes it to fp unless rs holds it
 * already: 1 written, 0 dropped, -1 an error. */
int rowbuf_emit(struct rowbuf *b, int ok, struct rowset *rs, FILE *fp);

/* `karat help formats` and `karat help man` (cmd_docs.c): 0 after printing,
 * -1 when topic is neither. */
int help_topic(const char *topic);

/* The command functions. */
int cmd_help(const struct args *a);
int cmd_list(const struct args *a);
int cmd_show(const struct args *a);
int cmd_ops(const struct args *a);
int cmd_run(const struct args *a);
int cmd_bench(const struct args *a);
int cmd_calibrate(const struct args *a);
int cmd_query(const struct args *a);
int cmd_solve(const struct args *a);
int cmd_sweep(const struct args *a);
int cmd_merge(const struct args *a);
int cmd_quantiles(const struct args *a);
int cmd_validate(const struct args *a);
int cmd_plot(const struct args *a);

#endif
