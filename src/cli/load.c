/* load.c: turning --model/--hw arguments into loaded descriptions, with
 * the exit status convention: unknown zoo name = usage (2), bad file = 1. */
#include "cli/load.h"

#include <string.h>

/* 2 when name is neither a zoo name nor a path, else 0; the message
 * says which `karat list` shows the names. */
static int resolve_status(enum zoo_kind k, const char *name, struct kerr *err)
{
	static const char *const list[ZOO_NKIND] = {
		[ZOO_MODEL] = "models", [ZOO_DEVICE] = "hw", [ZOO_LINK] = "hw",
		[ZOO_SYSTEM] = "systems", [ZOO_WORKLOAD] = "workloads"};
	char path[1024];
	if (zoo_resolve(k, name, path, sizeof path, err) == 0)
		return 0;
	if (strncmp(err->msg, "unknown ", 8) == 0) {
		size_t n = strlen(err->msg);
		snprintf(err->msg + n, sizeof err->msg - n, " (see karat list %s)", list[k]);
	}
	return EXIT_USAGE;
}

int load_model(const char *name, struct kmodel *m, struct kerr *err)
{
	int rc = resolve_status(ZOO_MODEL, name, err);
	return rc ? rc : zoo_load_model(name, m, NULL, err) != 0;
}

int load_device(const char *name, struct kdevice *d, struct kerr *err)
{
	int rc = resolve_status(ZOO_DEVICE, name, err);
	return rc ? rc : zoo_load_device(name, d, NULL, err) != 0;
}

int load_link(const char *name, struct klink *l, struct kerr *err)
{
	int rc = resolve_status(ZOO_LINK, name, err);
	return rc ? rc : zoo_load_link(name, l, NULL, err) != 0;
}

int load_system(const char *name, struct ksystem *s, struct kerr *err)
{
	int rc = resolve_status(ZOO_SYSTEM, name, err);
	return rc ? rc : zoo_load_system(name, s, NULL, err) != 0;
}

int load_workload(const char *name, struct kworkload *w, struct kerr *err)
{
	int rc = resolve_status(ZOO_WORKLOAD, name, err);
	return rc ? rc : zoo_load_workload(name, w, err) != 0;
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
