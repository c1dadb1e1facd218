/* out.c: aligned text tables and CSV (quoting by libcsv, only where a field
 * needs it, so headers stay plain), and atomic file output. */
#include "cli/cli.h"
#include "karat.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void table_init(struct table *t, int ncols, const char *const *head,
		const int *right)
{
	memset(t, 0, sizeof *t);
	t->ncols = ncols;
	for (int i = 0; i < ncols; i++) {
		t->head[i] = head[i];
		t->right[i] = right ? right[i] : 0;
	}
}

int table_add(struct table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		int cap = t->cap ? 2 * t->cap : 32;
		void *p = realloc(t->cell, (size_t)cap * sizeof *t->cell);
		if (!p)
			return -1;
		t->cell = p;
		t->cap = cap;
	}
	for (int i = 0; i < t->ncols; i++) {
		t->cell[t->nrows][i] = strdup(cells[i] ? cells[i] : "");
		if (!t->cell[t->nrows][i]) {
			while (i-- > 0)
				free(t->cell[t->nrows][i]);
			return -1;
		}
	}
	t->nrows++;
	return 0;
}

void table_free(struct table *t)
{
	for (int r = 0; r < t->nrows; r++)
		for (int i = 0; i < t->ncols; i++)
			free(t->cell[r][i]);
	free(t->cell);
	t->cell = NULL;
	t->nrows = t->cap = 0;
}

static int needs_quotes(const char *s)
{
	return strpbrk(s, ",\"\r\n") != NULL || (*s && (s[0] == ' ' ||
						       s[strlen(s) - 1] == ' '));
}

static int csv_field(FILE *fp, const char *s)
{
	if (!needs_quotes(s))
		return fputs(s, fp) < 0 ? -1 : 0;
	return csv_fwrite(fp, s, strlen(s)) == 0 ? 0 : -1;
}

int csv_write_row(FILE *fp, int n, const char *const *cells)
{
	for (int i = 0; i < n; i++) {
		if (i && fputc(',', fp) == EOF)
			return -1;
		if (csv_field(fp, cells[i]) != 0)
			return -1;
	}
	return fputc('\n', fp) == EOF ? -1 : 0;
}

int table_write(const struct table *t, FILE *fp, int csv)
{
	if (csv) {
		if (csv_write_row(fp, t->ncols, t->head) != 0)
			return -1;
		for (int r = 0; r < t->nrows; r++) {
			const char *cells[OUT_MAX_COLS];
			for (int i = 0; i < t->ncols; i++)
				cells[i] = t->cell[r][i];
			if (csv_write_row(fp, t->ncols, cells) != 0)
				return -1;
		}
		return ferror(fp) ? -1 : 0;
	}
	int w[OUT_MAX_COLS];
	for (int i = 0; i < t->ncols; i++) {
		w[i] = (int)strlen(t->head[i]);
		for (int r = 0; r < t->nrows; r++) {
			int l = (int)strlen(t->cell[r][i]);
			w[i] = l > w[i] ? l : w[i];
		}
	}
	for (int r = -1; r < t->nrows; r++) {
		for (int i = 0; i < t->ncols; i++) {
			const char *s = r < 0 ? t->head[i] : t->cell[r][i];
			int last = i == t->ncols - 1;
			if (t->right[i])
				fprintf(fp, "%*s%s", w[i], s, last ? "" : "  ");
			else if (last)
				fprintf(fp, "%s", s);
			else
				fprintf(fp, "%-*s  ", w[i], s);
		}
		fputc('\n', fp);
	}
	return ferror(fp) ? -1 : 0;
}

/* ---- safe output files ----
 * A result is written to a fresh temporary file beside its target, opened
 * with O_CREAT|O_EXCL|O_NOFOLLOW (never an existing file, never through a
 * planted link), flushed to disk, then renamed over the target.  A target
 * that exists must be a regular file or a FIFO (written in place: it cannot
 * be renamed over); a symbolic link, a device or a folder is refused, so
 * `--output /dev/null` as root cannot replace the real one.  "-" is
 * standard output.  Temporaries still open when SIGINT or SIGTERM arrives
 * are removed before the process dies. */

#define MAX_TMP 8
static char tmp_names[MAX_TMP][1100];
static volatile sig_atomic_t tmp_used[MAX_TMP];

static void on_signal(int sig)
{
	for (int i = 0; i < MAX_TMP; i++)
		if (tmp_used[i])
			unlink(tmp_names[i]); /* async-signal-safe */
	signal(sig, SIG_DFL);
	raise(sig);
}

void out_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int tmp_register(const char *name)
{
	for (int i = 0; i < MAX_TMP; i++)
		if (!tmp_used[i]) {
			snprintf(tmp_names[i], sizeof tmp_names[i], "%s", name);
			tmp_used[i] = 1;
			return i;
		}
	return -1;
}

static void tmp_release(int slot)
{
	if (slot >= 0)
		tmp_used[slot] = 0;
}

/* What kind of target path is: 0 absent or a regular file (replace it
 * atomically), 1 a FIFO (write in place), -1 refused (message printed). */
static int target_kind(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		die_msg("%s: cannot write: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISFIFO(st.st_mode))
		return 1;
	die_msg("%s: not a regular file (%s); karat writes results only to regular "
		"files, FIFOs or - (standard output)", path,
		S_ISLNK(st.st_mode) ? "a symbolic link: give its target" :
		S_ISDIR(st.st_mode) ? "a folder" :
		S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a special file");
	return -1;
}

/* The folder of path ("." when it has none) into dir. */
static void dir_of(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, n, ".");
	else if (slash == path)
		snprintf(dir, n, "/");
	else
		snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* target_kind, and for a file to create, its folder writable: 0, 1 or -1
 * (message printed). */
static int check_target(const char *path)
{
	if (strlen(path) >= 1024) {
		die_msg("%.80s...: path too long", path);
		return -1;
	}
	int kind = target_kind(path);
	if (kind != 0)
		return kind;
	char dir[1100];
	dir_of(path, dir, sizeof dir);
	struct stat st;
	if (stat(dir, &st) != 0) {
		die_msg("%s: cannot write: folder %s %s", path, dir,
			errno == ENOENT ? "does not exist" : strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		die_msg("%s: cannot write: %s is not a folder", path, dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		die_msg("%s: cannot write: folder %s: %s", path, dir, strerror(errno));
		return -1;
	}
	return 0;
}

int out_check(const char *path)
{
	return strcmp(path, "-") == 0 || check_target(path) >= 0 ? 0 : -1;
}

struct outfile {
	FILE *fp;
	int slot;          /* registered temporary, or -1 */
	int in_place;      /* FIFO or stdout: no rename */
	const char *path;  /* the user's name */
	char tmp[1100];
};

static int out_open(struct outfile *o, const char *path)
{
	memset(o, 0, sizeof *o);
	o->slot = -1;
	o->path = path;
	if (strcmp(path, "-") == 0) {
		o->fp = stdout, o->in_place = 1;
		return 0;
	}
	int kind = check_target(path);
	if (kind < 0)
		return -1;
	if (kind == 1) {
		int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		o->fp = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!o->fp) {
			die_msg("%s: cannot write: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		o->in_place = 1;
		return 0;
	}
	char dir[1100];
	dir_of(path, dir, sizeof dir);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long x = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 20);
	for (int tries = 0; tries < 64; tries++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		snprintf(o->tmp, sizeof o->tmp, "%s/.%s.tmp.%06lx", dir, base, (x >> 40) & 0xffffff);
		int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0) {
			die_msg("%s: cannot write: %s", path, strerror(errno));
			return -1;
		}
		o->slot = tmp_register(o->tmp);
		o->fp = fdopen(fd, "w");
		if (!o->fp) {
			die_msg("%s: cannot write: %s", path, strerror(errno));
			close(fd);
			unlink(o->tmp);
			tmp_release(o->slot);
			return -1;
		}
		return 0;
	}
	die_msg("%s: cannot write: no free temporary name in %s", path, dir);
	return -1;
}

static int out_close(struct outfile *o, int bad)
{
	int err = 0;
	bad |= fflush(o->fp) != 0;
	if (bad)
		err = errno;
	if (o->fp == stdout) {
		if (bad)
			die_msg("write error on standard output");
		return bad ? -1 : 0;
	}
	if (!o->in_place && !bad && fsync(fileno(o->fp)) != 0)
		bad = 1, err = errno;
	if (fclose(o->fp) != 0 && !bad)
		bad = 1, err = errno;
	if (!bad && !o->in_place && rename(o->tmp, o->path) != 0)
		bad = 1, err = errno;
	if (!o->in_place && bad)
		unlink(o->tmp);
	tmp_release(o->slot);
	if (bad) {
		die_msg("%s: write failed: %s", o->path, err ? strerror(err) : "I/O error");
		return -1;
	}
	return 0;
}

int write_atomic(const char *path, const struct table *t, int csv)
{
	struct outfile o;
	if (out_open(&o, path) != 0)
		return -1;
	return out_close(&o, table_write(t, o.fp, csv) != 0);
}

int write_text_atomic(const char *path, const char *text)
{
	struct outfile o;
	if (out_open(&o, path) != 0)
		return -1;
	return out_close(&o, fputs(text, o.fp) < 0);
}

/* FNV-1a over a row's bytes. */
static unsigned long long row_hash(const char *s, size_t n)
{
	unsigned long long h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

int rowset_add(struct rowset *rs, const char *row, size_t len)
{
	if (2 * (rs->n + 1) > rs->cap) { /* grow: open addressing, at most half full */
		size_t cap = rs->cap ? 2 * rs->cap : 1024;
		char **slot = calloc(cap, sizeof *slot);
		size_t *lens = calloc(cap, sizeof *lens);
		if (!slot || !lens) {
			free(slot), free(lens);
			return -1;
		}
		for (size_t i = 0; i < rs->cap; i++)
			if (rs->slot[i]) {
				size_t j = row_hash(rs->slot[i], rs->len[i]) & (cap - 1);
				while (slot[j])
					j = (j + 1) & (cap - 1);
				slot[j] = rs->slot[i], lens[j] = rs->len[i];
			}
		free(rs->slot), free(rs->len);
		rs->slot = slot, rs->len = lens, rs->cap = cap;
	}
	size_t j = row_hash(row, len) & (rs->cap - 1);
	for (; rs->slot[j]; j = (j + 1) & (rs->cap - 1))
		if (rs->len[j] == len && memcmp(rs->slot[j], row, len) == 0)
			return 0;
	char *copy = malloc(len ? len : 1);
	if (!copy)
		return -1;
	memcpy(copy, row, len);
	rs->slot[j] = copy, rs->len[j] = len;
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
	for (size_t i = 0; i < rs->cap; i++)
		free(rs->slot[i]);
	free(rs->slot), free(rs->len);
	memset(rs, 0, sizeof *rs);
}

int gnuplot_render(const char *vars, const char *script, const char *out)
{
	char tmp[1300], cmd[6000], log[64];
	const char *slash = strrchr(out, '/');
	int dlen = slash ? (int)(slash - out + 1) : 0;
	snprintf(tmp, sizeof tmp, "%.*s.%s.tmp-%ld", dlen, out, slash ? slash + 1 : out,
		 (long)getpid());
	snprintf(log, sizeof log, "/tmp/karat-gnuplot-%ld.log", (long)getpid());
	snprintf(cmd, sizeof cmd, "gnuplot -e \"outfile='%s'; %s\" '%s/plots/%s' 2> %s", tmp, vars,
		 zoo_home(), script, log);
	int rc = system(cmd);
	char *msg = NULL;
	size_t n = 0;
	struct kerr err;
	file_read_all(log, 1 << 20, "gnuplot log", "", &msg, &n, &err);
	unlink(log);
	if (rc != 0 || n > 0 || rename(tmp, out) != 0) {
		int warned = rc == 0 && n > 0;
		unlink(tmp);
		die_msg("gnuplot %s drawing %s: %.400s", warned ? "warned" : "failed", out,
			msg && n ? msg : rc ? "(no message)" : strerror(errno));
		free(msg);
		return -1;
	}
	free(msg);
	printf("wrote %s\n", out);
	return 0;
}
