/* outfile.c: safe output files.  A result is written to a fresh temporary
 * file beside its target (exclusive creation, never through a planted
 * link, locked while it is written), flushed to disk, given the mode of
 * the file it replaces, then renamed over the target.  A target that
 * exists must be a regular file or a FIFO (written in place: it cannot be
 * renamed over); a symbolic link, a device or a folder is refused, and so
 * is a file this command has read (its input).  "-" is standard output.
 * Temporaries still open when a catchable signal arrives are removed
 * before the process dies; those a killed karat left behind are removed on
 * the next write to the same target. */
#define _DEFAULT_SOURCE /* flock, mkstemp, dirfd */
#include "cli/cli.h"
#include "karat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TMP 8
static char tmp_names[MAX_TMP][OUT_PATH_MAX + 64];
static volatile sig_atomic_t tmp_used[MAX_TMP];
static volatile pid_t child_pid; /* a program karat waits on (gnuplot) */

static void on_signal(int sig)
{
	for (int i = 0; i < MAX_TMP; i++)
		if (tmp_used[i])
			unlink(tmp_names[i]); /* async-signal-safe */
	if (child_pid > 0)
		kill(child_pid, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

void out_install_signals(void)
{
	/* every signal whose default ends the process and that can be caught */
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM,
				   SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM, SIGPROF};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &sa, NULL);
	/* a file size limit makes the write fail (EFBIG), handled as any
	 * write error, instead of killing the process mid-file */
	signal(SIGXFSZ, SIG_IGN);
}

void out_set_child(pid_t pid)
{
	child_pid = pid;
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
 * atomically), 1 a FIFO (write in place), -1 refused (message printed).
 * An existing regular file's mode goes to *mode. */
static int target_kind(const char *path, mode_t *mode)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		die_msg("%s: cannot write: %s", path, strerror(errno));
		return -1;
	}
	if ((S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) && file_was_read(st.st_dev, st.st_ino)) {
		die_msg("%s: cannot write: it is one of this command's inputs; choose another "
			"output", path);
		return -1;
	}
	if (S_ISREG(st.st_mode)) {
		*mode = st.st_mode & 07777;
		return 0;
	}
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

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* target_kind, and for a file to create, its folder writable: 0, 1 or -1
 * (message printed). */
static int check_target(const char *path, mode_t *mode)
{
	if (strlen(path) >= OUT_PATH_MAX) {
		die_msg("%.80s...: path too long (at most %d bytes)", path, OUT_PATH_MAX - 1);
		return -1;
	}
	if (!*base_of(path)) {
		die_msg("%s: cannot write: a folder, not a file", path);
		return -1;
	}
	int kind = target_kind(path, mode);
	if (kind != 0)
		return kind;
	char dir[OUT_PATH_MAX];
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
	mode_t mode;
	return strcmp(path, "-") == 0 || check_target(path, &mode) >= 0 ? 0 : -1;
}

/* Removes the temporaries of base in dir that a karat no longer running
 * left behind (".BASE.tmp.PID.XXXXXX", its process gone, the file ours and
 * not locked by a writer). */
static void remove_stale(const char *dir, const char *base)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	char prefix[OUT_PATH_MAX];
	size_t np = (size_t)snprintf(prefix, sizeof prefix, ".%s.tmp.", base);
	for (struct dirent *e; np < sizeof prefix && (e = readdir(d));) {
		if (strncmp(e->d_name, prefix, np) != 0)
			continue;
		char *end;
		long pid = strtol(e->d_name + np, &end, 10);
		if (end == e->d_name + np || *end != '.' || strlen(end + 1) != 6 || pid <= 0 ||
		    pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* its writer may still run */
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dirfd(d), e->d_name, 0);
		close(fd);
	}
	closedir(d);
}

/* The mode a new file gets: 0666 less the umask. */
static mode_t new_mode(void)
{
	static mode_t mode = 01;
	if (mode == 01) {
		mode_t mask = umask(022);
		umask(mask);
		mode = 0666 & ~mask;
	}
	return mode;
}

int out_open(struct outfile *o, const char *path)
{
	memset(o, 0, sizeof *o);
	o->slot = -1;
	o->path = path;
	if (strcmp(path, "-") == 0) {
		o->fp = stdout, o->in_place = 1;
		return 0;
	}
	mode_t mode = new_mode();
	int kind = check_target(path, &mode);
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
	char dir[OUT_PATH_MAX];
	dir_of(path, dir, sizeof dir);
	remove_stale(dir, base_of(path));
	snprintf(o->tmp, sizeof o->tmp, "%s/.%s.tmp.%ld.XXXXXX", dir, base_of(path),
		 (long)getpid());
	int fd = mkstemp(o->tmp); /* O_CREAT|O_EXCL: never an existing file or link */
	if (fd < 0) {
		die_msg("%s: cannot write: %s", path, strerror(errno));
		return -1;
	}
	o->slot = tmp_register(o->tmp);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	flock(fd, LOCK_EX | LOCK_NB); /* ours while we write: not stale */
	if (fchmod(fd, mode) != 0 || !(o->fp = fdopen(fd, "w"))) {
		die_msg("%s: cannot write: %s", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		tmp_release(o->slot);
		return -1;
	}
	return 0;
}

void out_abort(struct outfile *o)
{
	if (o->fp && o->fp != stdout)
		fclose(o->fp);
	if (o->fp && !o->in_place)
		unlink(o->tmp);
	tmp_release(o->slot);
	o->fp = NULL;
}

int out_close(struct outfile *o, int bad)
{
	int err = 0;
	bad |= fflush(o->fp) != 0 || ferror(o->fp);
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
	o->fp = NULL;
	if (!bad && !o->in_place && rename(o->tmp, o->path) != 0)
		bad = 1, err = errno;
	if (!o->in_place && bad)
		unlink(o->tmp);
	tmp_release(o->slot);
	if (bad) {
		die_msg("%s: write failed: %s%s", o->path, err ? strerror(err) : "I/O error",
			o->in_place ? "" : "; the previous file, if any, is unchanged");
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

int write_bytes_atomic(const char *path, const void *data, size_t n)
{
	struct outfile o;
	if (out_open(&o, path) != 0)
		return -1;
	return out_close(&o, fwrite(data, 1, n, o.fp) != n);
}
