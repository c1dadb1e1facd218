/* calib.c: the calibration status of kernel-level values (calib.h). */
#include "io/calib.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const char *const cal_status_names[CAL_N] = {"fitted", "sibling", "assumed"};

/* The kernel-level keys, by section ("*": every key of it). */
static const struct {
	const char *section, *key;
} kernel_values[] = {
	{"efficiency", "*"},
	{"kernel", "gemm_fixed"},
	{"kernel", "gemm_fixed_fp4"},
	{"kernel", "attention_fixed"},
	{"kernel", "attention_floor"},
	{"kernel", "overlap"},
	{"kernel", "gemm_tile_k0"},
	{"select", "unit_rate"},
	{"select", "fixed"},
	{"select", "core_rate"},
	{"select", "row_rate"},
	{"select", "overlap"},
	{"select", "passes"},
	{"select", "split"},
	{"select", "split_fixed"},
	{"link", "efficiency"},
	{"link", "a2a_floor"},
	{"link", "a2a_floor_dispatch"},
	{"link", "a2a_floor_per_node"},
	{"link", "a2a_overlap"},
	{"link", "a2a_latency"},
	{"link", "allreduce_floor"},
};

int cal_is_kernel_value(const char *section, const char *key)
{
	for (size_t i = 0; i < sizeof kernel_values / sizeof *kernel_values; i++)
		if (!strcmp(kernel_values[i].section, section) &&
		    (!strcmp(kernel_values[i].key, "*") || !strcmp(kernel_values[i].key, key)))
			return 1;
	return 0;
}

/* What a fitted value was fitted on: the table's path where the comment
 * names one first, else its words up to the first ';', ',' or " (". */
static void fitted_on(const char *p, char *name, size_t n)
{
	while (*p == ' ')
		p++;
	size_t k = strncmp(p, "validation/", 11) == 0 ? strcspn(p, " ;,(") : strcspn(p, ";,(");
	while (k > 0 && p[k - 1] == ' ')
		k--;
	snprintf(name, n, "%.*s", (int)k, p);
}

enum cal_status cal_status_of(const char *source, char *name, size_t n)
{
	if (n)
		name[0] = 0;
	if (!strncmp(source, "fitted:", 7)) {
		if (n)
			fitted_on(source + 7, name, n);
		return CAL_FITTED;
	}
	if (strncmp(source, "sibling:", 8) != 0)
		return CAL_ASSUMED;
	const char *p = source + 8;
	while (*p == ' ')
		p++;
	size_t k = 0;
	while (p[k] && (isalnum((unsigned char)p[k]) || p[k] == '-' || p[k] == '.' || p[k] == '_'))
		k++;
	if (n)
		snprintf(name, n, "%.*s", (int)k, p);
	return CAL_SIBLING;
}

int cal_fit_tables(const char *source, char names[][CAL_TABLE_NAME], int max)
{
	if (strncmp(source, "fitted:", 7) != 0)
		return 0;
	const char *p = source + 7, *end = p + strcspn(p, ";,(");
	int n = 0;
	while (p < end && n < max) {
		size_t k = strcspn(p, " ;,(");
		if (p + k > end)
			k = (size_t)(end - p);
		if (k > 4 && !strncmp(p + k - 4, ".csv", 4)) {
			const char *base = p;
			for (size_t i = 0; i < k; i++)
				if (p[i] == '/')
					base = p + i + 1;
			int len = (int)(p + k - base);
			if (len < CAL_TABLE_NAME)
				snprintf(names[n++], CAL_TABLE_NAME, "%.*s", len, base);
		}
		p += k;
		while (p < end && *p == ' ')
			p++;
	}
	return n;
}

int cal_count(const struct ini_doc *doc, int count[CAL_N])
{
	int total = 0;
	memset(count, 0, sizeof(int) * CAL_N);
	for (int i = 0; i < doc->n; i++)
		if (cal_is_kernel_value(doc->e[i].section, doc->e[i].key)) {
			count[cal_status_of(doc->e[i].source, NULL, 0)]++;
			total++;
		}
	return total;
}

int cal_fitted(const struct ini_doc *doc, const char *const *keys)
{
	int any = 0;
	for (; *keys; keys++) {
		char sec[INI_NAME];
		const char *dot = strchr(*keys, '.');
		snprintf(sec, sizeof sec, "%.*s", (int)(dot - *keys), *keys);
		const struct ini_entry *e = ini_doc_find(doc, sec, dot + 1);
		if (!e)
			continue;
		if (cal_status_of(e->source, NULL, 0) != CAL_FITTED)
			return 0;
		any = 1;
	}
	return any;
}
