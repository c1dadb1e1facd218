/* zoo.h: finding and loading the shipped models (models/), devices (hw/)
 * links (hw/links/), systems
 * (hw/systems/) and workloads (workloads/) by name, or any INI file by path. */
#ifndef KARAT_ZOO_ZOO_H
#define KARAT_ZOO_ZOO_H

#include <stddef.h>

#include "base/err.h"
#include "hw/device.h"
#include "hw/link.h"
#include "io/ini_doc.h"
#include "model/model.h"
#include "hw/system.h"
#include "workload/workload.h"

enum zoo_kind { ZOO_MODEL, ZOO_DEVICE, ZOO_LINK, ZOO_SYSTEM, ZOO_WORKLOAD, ZOO_STUDY, ZOO_NKIND };

/* Folder holding models/ and hw/: $KARAT_HOME, else the source tree. */
const char *zoo_home(void);
/* Sets the data folder used when KARAT_HOME is unset (the CLI finds the
 * installed one beside its binary); NULL or "" restores the built-in. */
void zoo_set_home(const char *dir);

/* What zoo_resolve and the loaders return when the name names no file:
 * neither a path nor in the zoo (the message, "unknown KIND 'x'", suggests
 * a near name), empty, too long, or a trace given as a workload.  Other
 * failures (the file itself) return -1. */
#define ZOO_BAD_NAME -2

/* Whether name is a path (it has a '/' or ends in .ini), not a zoo name. */
int zoo_is_path(const char *name);

/* Turns a zoo name or a path (anything with '/' or ending in .ini) into a
 * file path.  Returns 0 or ZOO_BAD_NAME. */
int zoo_resolve(enum zoo_kind k, const char *name, char *path, size_t n,
		struct kerr *err);

/* Loads, binds and validates.  When doc is not NULL the document is kept
 * for the caller (free with ini_doc_free).  Returns 0, -1, or ZOO_BAD_NAME. */
int zoo_load_model(const char *name, struct kmodel *m, struct ini_doc **doc,
		   struct kerr *err);
int zoo_load_device(const char *name, struct kdevice *d, struct ini_doc **doc,
		    struct kerr *err);
int zoo_load_link(const char *name, struct klink *l, struct ini_doc **doc,
		  struct kerr *err);

int zoo_load_system(const char *name, struct ksystem *s, struct ini_doc **doc,
		    struct kerr *err);
/* Workloads (workloads/NAME.ini); free with workload_free. */
int zoo_load_workload(const char *name, struct kworkload *w, struct kerr *err);

/* Zoo names of kind k, sorted; returns how many (at most max), -1 on error. */
int zoo_list(enum zoo_kind k, char names[][64], int max, struct kerr *err);

#endif
