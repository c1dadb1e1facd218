/* list.h: a comma-separated list in an INI value, as sweep and study
 * files write them ("deepseek-v3.2, glm-5.2"). */
#ifndef KARAT_IO_LIST_H
#define KARAT_IO_LIST_H

#include <stddef.h>

#include "io/ini_doc.h"

/* Splits a comma-separated list into vals (at most max items of
 * INI_VALUE); with algo, "dsa:topk=1024,index_heads=32" is one item (a
 * piece with '=' and no ':' continues the previous one).  0, or -1 with a
 * reason in why (n bytes): an empty item, no item, more than max. */
int list_split(const char *text, int algo, char (*vals)[INI_VALUE], int max, int *n,
	       char *why, size_t nwhy);

/* Splits overrides joined by '&' ("memdev.memory.bandwidth=600GB/s &
 * memdev.tdp=130W"), each trimmed, into out: at most max items of len
 * bytes each, stride bytes apart.  0, or -1 with why: an item that is not
 * section.key=value, more than max, or one of len bytes or more. */
int list_split_sets(const char *text, char *out, size_t stride, size_t len, int max, int *n,
		    char *why, size_t nwhy);

#endif
