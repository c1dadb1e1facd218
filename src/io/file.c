/* file.c: reading a whole input file (file.h), and the record of which
 * files this process has read. */
#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every (device, inode) read so far, so that an output can refuse to
 * replace one of its own inputs.  A process reads a few hundred files at
 * most; past FILE_SEEN_MAX the oldest are forgotten (an input read that
 * long ago is not one a command writes back). */
#define FILE_SEEN_MAX 4096
static struct {
	dev_t dev;
	ino_t ino;
} seen[FILE_SEEN_MAX];
static int nseen;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void remember(const struct stat *st)
{
	pthread_mutex_lock(&seen_lock);
	int n = nseen < FILE_SEEN_MAX ? nseen : FILE_SEEN_MAX, k = 0;
	while (k < n && !(seen[k].dev == st->st_dev && seen[k].ino == st->st_ino))
		k++;
	if (k == n) {
		seen[nseen % FILE_SEEN_MAX].dev = st->st_dev;
		seen[nseen % FILE_SEEN_MAX].ino = st->st_ino;
		nseen++;
	}
	pthread_mutex_unlock(&seen_lock);
}

int file_was_read(dev_t dev, ino_t ino)
{
	pthread_mutex_lock(&seen_lock);
	int n = nseen < FILE_SEEN_MAX ? nseen : FILE_SEEN_MAX, hit = 0;
	for (int k = 0; k < n && !hit; k++)
		hit = seen[k].dev == dev && seen[k].ino == ino;
	pthread_mutex_unlock(&seen_lock);
	return hit;
}

int file_open_regular(const char *path, const char *what, const char *not_regular,
		      struct stat *st, struct kerr *err)
{
	/* O_NONBLOCK: opening a FIFO with no writer would wait forever */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return kerr_set(err, path, 0, "cannot open %s: %s", what, strerror(errno));
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return kerr_set(err, path, 0, "not a regular file%s", not_regular);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	remember(st);
	return fd;
}

int file_read_all(const char *path, long long max, const char *what,
		  const char *not_regular, char **buf, size_t *len, struct kerr *err)
{
	*buf = NULL, *len = 0;
	struct stat st;
	int fd = file_open_regular(path, what, not_regular, &st, err);
	if (fd < 0)
		return -1;
	int rc = -1;
	char *b = NULL;
	if (st.st_size > max) {
		kerr_set(err, path, 0, "%s too large (%lld bytes, at most %lld)", what,
			 (long long)st.st_size, max);
		goto done;
	}
	size_t size = (size_t)st.st_size, got = 0;
	if (!(b = malloc(size + 1))) {
		kerr_set(err, path, 0, "out of memory for %zu bytes", size);
		goto done;
	}
	while (got < size) {
		ssize_t r = read(fd, b + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got != size) {
		kerr_set(err, path, 0, "read error");
		goto done;
	}
	b[size] = '\0';
	*buf = b, *len = size, b = NULL;
	rc = 0;
done:
	close(fd);
	free(b);
	return rc;
}
