/* load.h: loading the descriptions named on the command line. */
#ifndef KARAT_CLI_LOAD_H
#define KARAT_CLI_LOAD_H

#include <stddef.h>

#include "cli/cli.h"
#include "zoo/zoo.h"

/* Each returns 0, 1 (bad file, message printed) or 2 (unknown name). */
int load_model_arg(const char *name, struct kmodel *m);
int load_device_arg(const char *name, struct kdevice *d, struct klink *l);

/* Both of the above: the model, the device and the device's link. */
int load_setup_args(const char *model, const char *hw, struct kmodel *m,
		    struct kdevice *d, struct klink *l);

/* "h200" for "h200" or "some/dir/h200.ini". */
void arg_label(const char *arg, char *out, size_t n);

#endif
