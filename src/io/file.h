/* file.h: reading a whole input file into memory, the one way every reader
 * (INI documents, trace CSVs, sweep shards) does it: a regular file of at
 * most a given size, read through to its end.  Each file read is recorded,
 * so that a command can refuse to write its output over one of its inputs. */
#ifndef KARAT_IO_FILE_H
#define KARAT_IO_FILE_H

#include <stddef.h>
#include <sys/stat.h>

#include "base/err.h"

/* Reads path into *buf (malloc'd, NUL-terminated; free it) and its length
 * into *len.  `what` names the file in messages ("trace": "cannot open
 * trace: ...", "trace too large ..."); `not_regular` follows "not a regular
 * file" (e.g. " (a trace is a CSV file)", or "").  A FIFO, a device or a
 * folder is refused without waiting on it.  Returns 0, or -1 with
 * "PATH: reason" in err. */
int file_read_all(const char *path, long long max, const char *what,
		  const char *not_regular, char **buf, size_t *len, struct kerr *err);

/* Opens path for reading as file_read_all does (a regular file only, never
 * blocking on a FIFO) and records it as read; its status in *st.  Returns
 * the descriptor, or -1 with the reason in err. */
int file_open_regular(const char *path, const char *what, const char *not_regular,
		      struct stat *st, struct kerr *err);

/* Whether this process has read the file (device, inode). */
int file_was_read(dev_t dev, ino_t ino);

#endif
