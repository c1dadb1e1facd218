/* cmd_bench_stub.c: the fuzz build's CLI has no CPU kernels (they are built
 * for this machine's vector units, not for the sanitizers): bench and
 * calibrate are refused there. */
#include "cli/cli.h"

int cmd_bench(const struct args *a)
{
	(void)a;
	return 1;
}

int cmd_calibrate(const struct args *a)
{
	(void)a;
	return 1;
}
