/* valid.h: the model against published kernel measurements.  A table is
 * a CSV file (validation/NAME.csv) whose rows each name a kernel, the
 * conditions it ran under, the measured time and its source; valid_model
 * prices a row with the same code `karat ops` uses. */
#ifndef KARAT_VALID_H
#define KARAT_VALID_H

#include <glob.h>

#include "base/err.h"
#include "base/limits.h"

/* The kernels a row may name. */
enum vkernel {
	VK_GEMM,        /* FP8 GEMM [m x k] x [k x n], BF16 out (DeepGEMM) */
	VK_GROUPED,     /* `groups` such GEMMs in one kernel (MoE experts) */
	VK_MLA,         /* dense MLA decode (FlashMLA): the model's attention */
	VK_SPARSE_MLA,  /* sparse MLA decode over top-k rows (gather inside) */
	VK_INDEXER,     /* the DSA indexer's scoring (index_scan) */
	VK_TOPK,        /* top-k of `context` FP32 scores per row, `batch` rows */
	VK_SERVING,     /* a whole deployment: `batch` requests per GPU at
			   `context` on `gpus` GPUs of `device` (GPU only,
			   two micro-batches, OFMS), output tokens/s per GPU */
	VK_DISPATCH,    /* the expert dispatch of `batch` tokens per GPU over
			   `gpus` GPUs (the model's experts and dtypes; the
			   GPU's scale-up link inside a node; across nodes
			   the row's scale-out link and route, by default
			   GPU-only's link, flat) */
	VK_COMBINE,     /* the same for the combine */
	VK_A2A_PAIR,    /* a dispatch (the row's dtype) and its combine (the
			   model's activations), one after the other */
	VK_N
};
extern const char *const vkernel_names[VK_N + 1];

/* Column names of a validation CSV, in this order: the first
 * VALID_COLUMNS always, then where a table needs them an all-to-all's
 * scale-out link and route across nodes (VALID_COLUMNS_A2A), and what its
 * kernels send of a token (VALID_COLUMNS_MAX). */
#define VALID_COLUMNS 17
#define VALID_COLUMNS_A2A 19
#define VALID_COLUMNS_MAX 20
extern const char *const valid_columns[VALID_COLUMNS_MAX];

struct vrow {
	enum vkernel kernel;
	char model[48], device[48], dtype[8], unit[16];
	/* conditions; NAN where a kernel does not use them */
	double batch, context, heads, q_len, topk, m, n, k, groups, gpus;
	double measured;    /* in `unit`: us, or tok_s_per_gpu for serving */
	char source[400];
	char scaleout[48];  /* an all-to-all's link across nodes (empty: the
			       GPU-only system's) */
	int hier;           /* 1: it crosses nodes hierarchically (a2a_route) */
	int route_said;     /* 1: its a2a_route is not empty */
	int sends;          /* enum a2a_sends its kernels send by (a2a_sends),
			       or -1: the links' own */
	int line;           /* in its file */
};

struct vtable {
	char path[512];
	int n;
	struct vrow *rows;
};

/* Reads a validation CSV (libcsv, strict): the header must be exactly
 * valid_columns; every row's kernel and conditions are checked.  0, or -1
 * with err = FILE:LINE: what is wrong.  vtable_free releases it. */
int vtable_read(const char *path, struct vtable *t, struct kerr *err);
/* The same from a buffer, `path` naming it in messages. */
int vtable_parse(const char *path, const char *buf, size_t len, struct vtable *t,
		 struct kerr *err);
void vtable_free(struct vtable *t);

/* Whether a kernel is an expert all-to-all (dispatch, combine or both). */
int valid_is_a2a(enum vkernel k);

/* The unit of a kernel's measurement: "us", or "tok_s_per_gpu". */
const char *valid_unit(enum vkernel k);

/* The bytes a dispatch or combine row's all-to-all moves out of each
 * GPU (one MoE layer of its model at its tokens per GPU and EP size), a
 * token sent once per routed expert or with per_gpu once per GPU holding
 * any of its experts (link.a2a_sends), in the row's dtype where it gives
 * one (else the model's dispatch dtype, or activations for the combine);
 * 0, or -1 with err. */
int valid_a2a_bytes(const struct vrow *r, int per_gpu, double *bytes, struct kerr *err);

/* A gemm or grouped_gemm row's operator as validate prices it: weights and
 * activations in the row's dtype, BF16 out (roofline_op times it). */
struct op_cost;
void valid_gemm_op(const struct vrow *r, struct op_cost *o);

/* The model's value of row r in its unit; 0, or -1 with err. */
int valid_model(const struct vrow *r, double *value, struct kerr *err);

/* The shipped tables (validation/NAME.csv in the data folder), sorted,
 * into g, which the caller globfrees: 0 (none shipped: g->gl_pathc is
 * 0), or -1 with err (fits.c). */
int valid_shipped(glob_t *g, struct kerr *err);
/* A table's path from the data folder (validation/NAME.csv) where it lies
 * under it, so that reports are the same in every checkout; any other
 * path as given. */
const char *valid_shown(const char *path);

/* The shipped tables some value of a device or link file in the zoo is
 * fitted on (its source comment's fit clause, io/calib.h), by file name:
 * the rest check the model out of sample (fits.c). */
struct vfits {
	int n;
	char name[VALID_MAX_FITS][64];
};
/* Reads every device and link file of the zoo; 0, or -1 with err. */
int valid_fits_load(struct vfits *f, struct kerr *err);
/* Whether the table at shown (its path from the data folder,
 * validation/NAME.csv; any other path is not a shipped table) is one of
 * f's: 1 fitted on, 0 out of sample. */
int valid_fits_has(const struct vfits *f, const char *shown);

/* Relative errors, model over measured less one: how many, the sum of
 * their absolute values, and the worst with its table and line. */
struct verr {
	int n, worst_line;
	double sum, worst;
	char worst_table[256];
};
void verr_add(struct verr *v, double e, const char *table, int line);

/* The rows of the shipped tables (validation/NAME.csv) that measure a
 * device (their `device` column is its zoo name), priced by the model:
 * their errors in the tables a shipped value is fitted on (fit) and in
 * the rest (check, out of sample), and how many tables have any
 * (summary.c).  0, or -1 with err. */
struct vsummary {
	struct verr fit, check;
	int tables;
};
int valid_device_summary(const char *device, struct vsummary *s, struct kerr *err);

#endif
