/* load.c: turning --model/--hw arguments into loaded descriptions, with
 * the exit status convention: unknown zoo name = usage (2), bad file = 1. */
#include "cli/load.h"

#include <string.h>

static int resolve_status(enum zoo_kind k, const char *name)
{
	char path[1024];
	struct kerr err;
	if (zoo_resolve(k, name, path, sizeof path, &err) != 0) {
		die_msg("%s", err.msg);
		return EXIT_USAGE;
	}
	return 0;
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
	int rc = resolve_status(ZOO_MODEL, name);
	if (rc)
		return rc;
	struct kerr err;
	if (zoo_load_model(name, m, NULL, &err) != 0) {
		die_msg("%s", err.msg);
		return 1;
	}
	return 0;
}

int load_device_arg(const char *name, struct kdevice *d, struct klink *l)
{
	int rc = resolve_status(ZOO_DEVICE, name);
	if (rc)
		return rc;
	struct kerr err;
	if (zoo_load_device(name, d, NULL, &err) != 0) {
		die_msg("%s", err.msg);
		return 1;
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
