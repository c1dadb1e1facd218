/* ini_doc.h: strict loading of one INI file into an in-memory document.
 * inih does the parsing; this layer adds what a trustworthy tool needs:
 * exact line numbers, the source comment of every value, and errors for
 * duplicates, keys outside sections, binary data and over-long lines. */
#ifndef KARAT_IO_INI_DOC_H
#define KARAT_IO_INI_DOC_H

#include "base/limits.h"

#include "base/err.h"

#define INI_NAME 64       /* section and key names, with NUL */
#define INI_VALUE 192     /* value text, with NUL (inih's line limit) */
#define INI_SOURCE 512    /* source comment, with NUL */

struct ini_entry {
	char section[INI_NAME];
	char key[INI_NAME];
	char value[INI_VALUE];
	char source[INI_SOURCE]; /* comment on the same line, "" if none */
	int line;
};

struct ini_section {
	char name[INI_NAME];
	int line;
};

struct ini_doc {
	char path[512];
	int n, nsec, nlines;
	struct ini_entry e[INI_MAX_ENTRIES];
	struct ini_section sec[INI_MAX_SECTIONS];
};

/* Loads path into a newly allocated document.  Returns NULL and fills err
 * ("path:line: reason") on any I/O, syntax or structural problem. */
struct ini_doc *ini_doc_load(const char *path, struct kerr *err);

/* Parses text held in memory; name is used in messages. */
struct ini_doc *ini_doc_parse(const char *name, const char *text, size_t len,
			      struct kerr *err);

void ini_doc_free(struct ini_doc *d);

/* Sets section.key to value as if the file said so on line (an override
 * checked as the file would be): the entry's value and line are replaced
 * and its source comment dropped (it was for the file's value), or the
 * entry (and its section) added.  0, or -1 when the document is
 * full. */
int ini_doc_put(struct ini_doc *d, const char *section, const char *key, const char *value,
		int line);

/* The entry for section.key, or NULL. */
const struct ini_entry *ini_doc_find(const struct ini_doc *d,
				     const char *section, const char *key);

/* The line of section's header, or 0 when the section is absent. */
int ini_doc_section_line(const struct ini_doc *d, const char *section);

#endif
