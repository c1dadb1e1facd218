/* fits.c: the shipped validation tables, and which of them the shipped
 * values are fitted on (valid.h).  A table is fitted on where some device
 * or link file in the zoo names it in a value's fit clause (io/calib.h);
 * every other shipped table checks the model out of sample. */
#include "valid/valid.h"

#include <stdio.h>
#include <string.h>

#include "base/limits.h"
#include "io/calib.h"
#include "zoo/zoo.h"

static int has(const struct vfits *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->name[i], name))
			return 1;
	return 0;
}

/* Adds the tables the values of doc are fitted on; -1 with err when there
 * are more than VALID_MAX_FITS. */
static int add_doc(struct vfits *f, const struct ini_doc *doc, struct kerr *err)
{
	for (int i = 0; i < doc->n; i++) {
		char t[8][CAL_TABLE_NAME];
		int k = cal_fit_tables(doc->e[i].source, t, 8);
		for (int j = 0; j < k; j++) {
			if (has(f, t[j]))
				continue;
			if (f->n == VALID_MAX_FITS)
				return kerr_set(err, doc->path, doc->e[i].line, "more than %d fitted tables "
						"in the zoo", VALID_MAX_FITS);
			snprintf(f->name[f->n++], sizeof f->name[0], "%s", t[j]);
		}
	}
	return 0;
}

int valid_fits_load(struct vfits *f, struct kerr *err)
{
	static const enum zoo_kind kinds[] = {ZOO_DEVICE, ZOO_LINK};
	f->n = 0;
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		char names[VALID_MAX_FILES][64];
		int n = zoo_list(kinds[k], names, VALID_MAX_FILES, err);
		if (n < 0)
			return -1;
		for (int i = 0; i < n; i++) {
			char path[1024];
			if (zoo_resolve(kinds[k], names[i], path, sizeof path, err) != 0)
				return -1;
			struct ini_doc *doc = ini_doc_load(path, err);
			if (!doc)
				return -1;
			int rc = add_doc(f, doc, err);
			ini_doc_free(doc);
			if (rc != 0)
				return -1;
		}
	}
	return 0;
}

int valid_fits_has(const struct vfits *f, const char *shown)
{
	static const char dir[] = "validation/";
	return !strncmp(shown, dir, sizeof dir - 1) && !strchr(shown + sizeof dir - 1, '/') &&
	       has(f, shown + sizeof dir - 1);
}

int valid_shipped(glob_t *g, struct kerr *err)
{
	char pattern[1100];
	snprintf(pattern, sizeof pattern, "%s/validation/*.csv", zoo_home());
	int rc = glob(pattern, 0, NULL, g);
	if (rc == 0 || rc == GLOB_NOMATCH) /* none: no table shipped */
		return 0;
	return kerr_set(err, pattern, 0, "cannot list the validation tables");
}

const char *valid_shown(const char *path)
{
	size_t n = strlen(zoo_home());
	return strncmp(path, zoo_home(), n) == 0 && path[n] == '/' ? path + n + 1 : path;
}
