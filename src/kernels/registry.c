/* registry.c: the kernel table, in report order. */
#include <string.h>

#include "kernels/kernel.h"

extern const struct kernel_def kernel_indexer, kernel_topk, kernel_topk_simd, kernel_gather, kernel_mla,
	kernel_gqa, kernel_quest, kernel_msa;

const struct kernel_def *const kernel_table[] = {
	&kernel_indexer, &kernel_topk, &kernel_topk_simd, &kernel_gather, &kernel_mla,
	&kernel_gqa, &kernel_quest, &kernel_msa};
const int kernel_count = sizeof kernel_table / sizeof kernel_table[0];

const struct kernel_def *kernel_find(const char *name)
{
	for (int i = 0; i < kernel_count; i++)
		if (strcmp(kernel_table[i]->name, name) == 0)
			return kernel_table[i];
	return NULL;
}
