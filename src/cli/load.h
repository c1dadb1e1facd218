/* load.h: loading the descriptions named on the command line. */
#ifndef KARAT_CLI_LOAD_H
#define KARAT_CLI_LOAD_H

#include <stddef.h>

#include "cli/cli.h"
#include "karat.h"

/* Each returns 0, 1 (bad file) or 2 (unknown name), with err; they print
 * nothing (the worker threads of sweep and run call them). */
int load_model(const char *name, struct kmodel *m, struct kerr *err);
int load_device(const char *name, struct kdevice *d, struct kerr *err);
int load_system(const char *name, struct ksystem *s, struct kerr *err);
int load_workload(const char *name, struct kworkload *w, struct kerr *err);

/* As above for one command's arguments, printing the message. */
int load_model_arg(const char *name, struct kmodel *m);
int load_device_arg(const char *name, struct kdevice *d, struct klink *l);

/* Both of the above: the model, the device and the device's link. */
int load_setup_args(const char *model, const char *hw, struct kmodel *m,
		    struct kdevice *d, struct klink *l);

/* Words a message about a name that names no file of kind k for the
 * command line: where the names are listed, or how to make a workload of
 * a trace. */
void load_hint(enum zoo_kind k, const char *name, struct kerr *err);

/* "h200" for "h200" or "some/dir/h200.ini". */
void arg_label(const char *arg, char *out, size_t n);

#endif
