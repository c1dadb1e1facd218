/* load.c: turning --model/--hw arguments into loaded descriptions, with
 * the exit status convention: unknown zoo name = usage (2), bad file = 1. */
#include "cli/load.h"

#include <stdio.h>
#include <string.h>

void load_hint(enum zoo_kind k, const char *name, struct kerr *err)
{
	static const char *const list[ZOO_NKIND] = {
		[ZOO_MODEL] = "models", [ZOO_DEVICE] = "hw", [ZOO_LINK] = "hw",
		[ZOO_SYSTEM] = "systems", [ZOO_WORKLOAD] = "workloads", [ZOO_STUDY] = "studies"};
	size_t n = strlen(err->msg);
	if (strncmp(err->msg, "unknown ", 8) == 0)
		snprintf(err->msg + n, sizeof err->msg - n, " (see karat list %s)", list[k]);
	else if (k == ZOO_WORKLOAD && strstr(err->msg, "a trace is not a workload file"))
		snprintf(err->msg + n, sizeof err->msg - n, "; karat quantiles %.200s prints "
			 "one with length tables", name);
}

/* The exit status of a zoo load: 2 (usage) for a name that names no file,
 * with load_hint's words; 1 for a bad file. */
static int load_status(enum zoo_kind k, const char *name, int rc, struct kerr *err)
{
	if (rc == 0)
		return 0;
	if (rc != ZOO_BAD_NAME)
		return 1;
	load_hint(k, name, err);
	return EXIT_USAGE;
}

int load_model(const char *name, struct kmodel *m, struct kerr *err)
{
	return load_status(ZOO_MODEL, name, zoo_load_model(name, m, NULL, err), err);
}

int load_device(const char *name, struct kdevice *d, struct kerr *err)
{
	return load_status(ZOO_DEVICE, name, zoo_load_device(name, d, NULL, err), err);
}

int load_system(const char *name, struct ksystem *s, struct kerr *err)
{
	return load_status(ZOO_SYSTEM, name, zoo_load_system(name, s, NULL, err), err);
}

int load_workload(const char *name, struct kworkload *w, struct kerr *err)
{
	return load_status(ZOO_WORKLOAD, name, zoo_load_workload(name, w, err), err);
}

void arg_label(const char *arg, char *out, size_t n)
{
	const char *b = strrchr(arg, '/');
	b = b ? b + 1 : arg;
	size_t len = strlen(b);
	if (len > 4 && strcmp(b + len - 4, ".ini") == 0)
		len -= 4;
	if (len >= n)
		len = n - 1;
	memcpy(out, b, len);
	out[len] = '\0';
}

int load_model_arg(const char *name, struct kmodel *m)
{
	struct kerr err;
	int rc = load_model(name, m, &err);
	if (rc)
		die_msg("%s", err.msg);
	return rc;
}

int load_device_arg(const char *name, struct kdevice *d, struct klink *l)
{
	struct kerr err;
	int rc = load_device(name, d, &err);
	if (rc) {
		die_msg("%s", err.msg);
		return rc;
	}
	if (zoo_load_link(d->link, l, NULL, &err) != 0) {
		die_msg("%s: link '%s': %s", name, d->link, err.msg);
		return 1;
	}
	return 0;
}

int load_setup_args(const char *model, const char *hw, struct kmodel *m,
		    struct kdevice *d, struct klink *l)
{
	int rc = load_model_arg(model, m);
	return rc ? rc : load_device_arg(hw, d, l);
}
