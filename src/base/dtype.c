/* dtype.c: the data-type table. */
#include "base/dtype.h"

const char *const dtype_names[DT_N + 1] = {"fp4", "fp8", "bf16", "fp32", 0};

double dtype_bytes(enum dtype t)
{
	static const double size[DT_N] = {0.5, 1, 2, 4};
	return t < DT_N ? size[t] : 0;
}
