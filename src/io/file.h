/* file.h: reading a whole input file into memory, the one way every reader
 * (INI documents, trace CSVs, sweep shards) does it: a regular file of at
 * most a given size, read through to its end. */
#ifndef KARAT_IO_FILE_H
#define KARAT_IO_FILE_H

#include <stddef.h>

#include "base/err.h"

/* Reads path into *buf (malloc'd, NUL-terminated; free it) and its length
 * into *len.  `what` names the file in messages ("trace": "cannot open
 * trace: ...", "trace too large ..."); `not_regular` follows "not a regular
 * file" (e.g. " (a trace is a CSV file)", or "").  Returns 0, or -1 with
 * "PATH: reason" in err. */
int file_read_all(const char *path, long long max, const char *what,
		  const char *not_regular, char **buf, size_t *len, struct kerr *err);

#endif
