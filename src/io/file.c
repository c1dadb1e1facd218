/* file.c: reading a whole input file (file.h). */
#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int file_read_all(const char *path, long long max, const char *what,
		  const char *not_regular, char **buf, size_t *len, struct kerr *err)
{
	*buf = NULL, *len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kerr_set(err, path, 0, "cannot open %s: %s", what, strerror(errno));
	struct stat st;
	int rc = -1;
	char *b = NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		kerr_set(err, path, 0, "not a regular file%s", not_regular);
		goto done;
	}
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
