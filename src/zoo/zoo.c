/* zoo.c: name resolution and the load -> bind -> validate sequence for
 * every kind of description file. */
#include "zoo/zoo.h"

#include "io/range.h"

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/suggest.h"
#include "io/calib.h"

static const struct {
	const char *dir, *what;
} kinds[ZOO_NKIND] = {
	[ZOO_MODEL] = {"models", "model"},
	[ZOO_DEVICE] = {"hw", "device"},
	[ZOO_LINK] = {"hw/links", "link"},
	[ZOO_SYSTEM] = {"hw/systems", "system"},
	[ZOO_WORKLOAD] = {"workloads", "workload"},
	[ZOO_STUDY] = {"studies", "study"},
};

static char home_dir[1024];

void zoo_set_home(const char *dir)
{
	snprintf(home_dir, sizeof home_dir, "%s", dir ? dir : "");
}

const char *zoo_home(void)
{
	const char *h = getenv("KARAT_HOME");
	if (h && *h)
		return h;
	return home_dir[0] ? home_dir : KARAT_DATADIR;
}

/* "unknown model 'x' (did you mean 'y'?)"; returns ZOO_BAD_NAME */
static int unknown(enum zoo_kind k, const char *name, struct kerr *err);

int zoo_is_path(const char *name)
{
	size_t n = strlen(name);
	return strchr(name, '/') || (n > 4 && strcmp(name + n - 4, ".ini") == 0);
}

int zoo_resolve(enum zoo_kind k, const char *name, char *path, size_t n,
		struct kerr *err)
{
	if (!*name)
		return (void)kerr_set(err, 0, 0, "empty %s name", kinds[k].what), ZOO_BAD_NAME;
	size_t len = strlen(name);
	if (k == ZOO_WORKLOAD && len > 4 && strcmp(name + len - 4, ".csv") == 0)
		return (void)kerr_set(err, name, 0, "a trace is not a workload file: write a "
				"workload INI that names it ([workload] name = ..., origin = "
				"trace, trace = %s, input_column = ..., output_column = ...)",
				name), ZOO_BAD_NAME;
	if (zoo_is_path(name)) {
		if ((size_t)snprintf(path, n, "%s", name) >= n)
			return (void)kerr_set(err, 0, 0, "path too long: %.80s", name), ZOO_BAD_NAME;
		return 0;
	}
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '-' || *c == '_' || *c == '.'))
			return unknown(k, name, err);
	if ((size_t)snprintf(path, n, "%s/%s/%s.ini", zoo_home(), kinds[k].dir,
			     name) >= n)
		return (void)kerr_set(err, 0, 0, "path too long for %.64s", name), ZOO_BAD_NAME;
	struct stat st;
	if (stat(path, &st) != 0)
		return unknown(k, name, err);
	return 0;
}

/* Loads the document of name and binds it with schema s into obj; then
 * validate (NULL: none) checks it.  Keeps the document in *keep when
 * asked.  Returns 0, -1, or ZOO_BAD_NAME. */
static int load_bound(enum zoo_kind k, const char *name, const struct schema *s,
		      void *obj, size_t size,
		      int (*validate)(void *obj, const struct ini_doc *doc, struct kerr *err),
		      struct ini_doc **keep, struct kerr *err)
{
	char path[1024];
	memset(obj, 0, size);
	int rc = zoo_resolve(k, name, path, sizeof path, err);
	if (rc != 0)
		return rc;
	struct ini_doc *doc = ini_doc_load(path, err);
	if (!doc)
		return -1;
	rc = schema_bind(s, doc, obj, err) != 0 ? -1
	     : validate && validate(obj, doc, err) != 0 ? -1 : 0;
	if (keep && rc == 0)
		*keep = doc;
	else
		ini_doc_free(doc);
	return rc;
}

static int check_model(void *m, const struct ini_doc *d, struct kerr *err)
{
	return model_validate(m, d, err);
}

static int check_device(void *dv, const struct ini_doc *d, struct kerr *err)
{
	if (device_validate(dv, d, err) != 0)
		return -1;
	return range_read(d, &device_schema, NULL, 0, err) < 0 ? -1 : 0;
}

static int check_link(void *l, const struct ini_doc *d, struct kerr *err)
{
	static const char *const keys[] = {"link.efficiency", "link.a2a_floor",
					   "link.a2a_floor_dispatch", 0};
	((struct klink *)l)->fitted = cal_fitted(d, keys);
	return range_read(d, &link_schema, NULL, 0, err) < 0 ? -1 : 0;
}

/* A device or link a system file names by a relative path is relative to
 * that file's folder, as a workload's trace is: rewritten to a path from
 * here, and checked to exist now, so that the error names the system
 * file's line. */
static int parts_relative(struct ksystem *sy, const struct ini_doc *d, struct kerr *err)
{
	static const struct {
		const char *key;
		size_t off;
	} part[] = {{"gpu", offsetof(struct ksystem, gpu)},
		    {"scaleup_link", offsetof(struct ksystem, scaleup_link)},
		    {"scaleout_link", offsetof(struct ksystem, scaleout_link)},
		    {"memdev", offsetof(struct ksystem, memdev)},
		    {"memdev_link", offsetof(struct ksystem, memdev_link)},
		    {"gpu_port", offsetof(struct ksystem, gpu_port)}};
	const char *slash = strrchr(d->path, '/');
	for (size_t i = 0; i < sizeof part / sizeof *part; i++) {
		char *v = (char *)sy + part[i].off;
		const struct ini_entry *e = ini_doc_find(d, "system", part[i].key);
		if (!e || !zoo_is_path(v))
			continue;
		char path[SYS_NAME];
		if (v[0] != '/' && slash &&
		    (size_t)snprintf(path, sizeof path, "%.*s%s", (int)(slash - d->path + 1), d->path,
				     v) >= sizeof path)
			return kerr_set(err, d->path, e->line, "system.%s: path too long", part[i].key);
		if (v[0] != '/' && slash)
			snprintf(v, SYS_NAME, "%s", path);
		struct stat st;
		if (stat(v, &st) != 0 || !S_ISREG(st.st_mode))
			return kerr_set(err, d->path, e->line, "system.%s: no file %s%s", part[i].key, v,
					e->value[0] == '/' ? "" : " (a path is relative to this file's folder)");
	}
	return 0;
}

static int check_system(void *sy, const struct ini_doc *d, struct kerr *err)
{
	return parts_relative(sy, d, err) != 0 ? -1 : system_validate(sy, d, err);
}

int zoo_load_model(const char *name, struct kmodel *m, struct ini_doc **doc,
		   struct kerr *err)
{
	return load_bound(ZOO_MODEL, name, &model_schema, m, sizeof *m, check_model, doc, err);
}

int zoo_load_device(const char *name, struct kdevice *dv, struct ini_doc **doc,
		    struct kerr *err)
{
	return load_bound(ZOO_DEVICE, name, &device_schema, dv, sizeof *dv, check_device, doc,
			  err);
}

int zoo_load_link(const char *name, struct klink *l, struct ini_doc **doc,
		  struct kerr *err)
{
	return load_bound(ZOO_LINK, name, &link_schema, l, sizeof *l, check_link, doc, err);
}

int zoo_load_system(const char *name, struct ksystem *sy, struct ini_doc **doc,
		    struct kerr *err)
{
	return load_bound(ZOO_SYSTEM, name, &system_schema, sy, sizeof *sy, check_system, doc,
			  err);
}

int zoo_load_workload(const char *name, struct kworkload *w, struct kerr *err)
{
	char path[1024];
	int rc = zoo_resolve(ZOO_WORKLOAD, name, path, sizeof path, err);
	return rc != 0 ? rc : workload_load(path, w, err);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

int zoo_list(enum zoo_kind k, char names[][64], int max, struct kerr *err)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/%s", zoo_home(), kinds[k].dir);
	DIR *dp = opendir(dir);
	if (!dp)
		return kerr_set(err, dir, 0, "cannot open the %s folder", kinds[k].what);
	int n = 0;
	for (struct dirent *de; (de = readdir(dp)) && n < max;) {
		size_t len = strlen(de->d_name);
		if (len < 5 || len - 4 >= 64 || strcmp(de->d_name + len - 4, ".ini"))
			continue;
		memcpy(names[n], de->d_name, len - 4);
		names[n++][len - 4] = '\0';
	}
	closedir(dp);
	qsort(names, (size_t)n, sizeof names[0], cmp_name);
	return n;
}

static int unknown(enum zoo_kind k, const char *name, struct kerr *err)
{
	char names[256][64];
	const char *cands[256];
	struct kerr ignore;
	int n = zoo_list(k, names, 256, &ignore);
	for (int i = 0; i < n; i++)
		cands[i] = names[i];
	char hint[128];
	suggest_hint(name, cands, n > 0 ? n : 0, hint, sizeof hint);
	kerr_set(err, 0, 0, "unknown %s '%.64s'%s", kinds[k].what, name, hint);
	return ZOO_BAD_NAME;
}
