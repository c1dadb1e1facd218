/* summary.c: a device's rows in the shipped tables, and their error by
 * role (valid.h): what `karat show DEVICE` says of how well the model
 * knows that device. */
#include "valid/valid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void verr_add(struct verr *v, double e, const char *table, int line)
{
	v->n++, v->sum += fabs(e);
	if (v->n == 1 || fabs(e) > fabs(v->worst)) {
		v->worst = e, v->worst_line = line;
		snprintf(v->worst_table, sizeof v->worst_table, "%s", table);
	}
}

int valid_device_summary(const char *device, struct vsummary *s, struct kerr *err)
{
	memset(s, 0, sizeof *s);
	glob_t g = {0};
	struct vfits *fits = malloc(sizeof *fits); /* 8 KB, off the stack */
	int rc = !fits ? kerr_set(err, 0, 0, "out of memory") : valid_fits_load(fits, err);
	if (rc == 0)
		rc = valid_shipped(&g, err);
	for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++) {
		struct vtable t;
		if (vtable_read(g.gl_pathv[i], &t, err) != 0) {
			rc = -1;
			break;
		}
		const char *shown = valid_shown(g.gl_pathv[i]); /* validation/NAME.csv */
		struct verr *v = valid_fits_has(fits, shown) ? &s->fit : &s->check;
		int any = 0;
		for (int j = 0; j < t.n && rc == 0; j++) {
			const struct vrow *r = &t.rows[j];
			double model;
			if (strcmp(r->device, device) != 0)
				continue;
			if (valid_model(r, &model, err) != 0) {
				rc = -1;
				break;
			}
			verr_add(v, (model - r->measured) / r->measured, shown, r->line);
			any = 1;
		}
		s->tables += any;
		vtable_free(&t);
	}
	globfree(&g);
	free(fits);
	return rc;
}
