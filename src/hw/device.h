/* device.h: a compute device (GPU, CPU, PIM, PNM) as the roofline sees it:
 * peak FLOP/s per data type, one memory tier, TDP, per-class efficiency,
 * fixed per-operator overhead and, for fixed-function PIM, the operator
 * classes it can run at all. */
#ifndef KARAT_HW_DEVICE_H
#define KARAT_HW_DEVICE_H

#include "base/dtype.h"
#include "base/err.h"
#include "io/ini_doc.h"
#include "io/schema.h"

enum dev_kind { DEV_GPU, DEV_CPU, DEV_PIM, DEV_PNM, DEV_NKIND };

/* Operator classes: each has its own achievable fraction of peak. */
enum op_class { OC_GEMM, OC_ATTENTION, OC_SCAN, OC_GATHER, OC_ELEMENTWISE, OC_N };

extern const char *const dev_kind_names[DEV_NKIND + 1];
extern const char *const op_class_names[OC_N + 1];

struct kdevice {
	char name[64];
	char family[32];        /* architecture (karat validate groups by it), or "" */
	int kind;               /* enum dev_kind */
	char link[32];          /* zoo name of its interconnect */
	char port[32];          /* a GPU's I/O port (zoo link name), or "" */
	double tdp;             /* W */
	double peak[DT_N];      /* FLOP/s; 0 = no native support */
	double mem_capacity;    /* B */
	struct share_bytes mem_reserve; /* kept back from caches (activations,
					   buffers, graphs): bytes or a share */
	double mem_bw;          /* B/s */
	double eff_c[OC_N], eff_m[OC_N];
	double gemm_fixed_fp4;  /* s: a GEMM kernel's least time at FP4 where the
				   file gives one (0: kernel.gemm_fixed's) */
	double eff_gemm_fp4;    /* a GEMM's compute efficiency at FP4 where the
				   file gives one (0: gemm_compute's) */
	double eff_gemm_fp8;    /* the same at FP8 */
	double overhead;        /* s, fixed cost per operator launch */
	/* Kernel-level detail ([kernel], optional; what a GPU's published
	 * kernel timings show).  fixed[c]: the least time one kernel of class
	 * c takes (launch, pipeline fill and drain), 0 = overhead.  overlap:
	 * p of the p-norm joining compute and memory time, t = (tc^p +
	 * tm^p)^(1/p) (0 = their max, perfect overlap).  A GEMM of M rows runs
	 * in tiles of tile_m (tile_m_small when M <= tile_m_small) by a
	 * width up to tile_n_max in steps of tile_n_step, ceil(tiles / sms)
	 * waves, each tile paying tile_k0 extra columns of depth (prologue
	 * and epilogue); sms 0 = no tile model. */
	double fixed[OC_N];
	/* floor[c]: the least time of one operator of class c, its kernels
	 * together, whatever its size (0: none): a persistent kernel whose
	 * one wave of work takes that long at the smallest sizes and then
	 * pipelines, time = max(floor, join + fixed) */
	double floor[OC_N];
	double overlap;
	double sms, tile_m, tile_m_small, tile_n_max, tile_n_step, tile_k0;
	/* 1: its sparse attention kernel attends to all top-k slots of a
	 * request whatever its context (a fixed-size index list) */
	double fixed_topk;
	double select_fixed;    /* s, least time of one selection kernel */
	/* Selection (top-k) as a throughput: cores x core_rate, or a hardware
	 * unit's rate; select_rate 0: none declared, top-k runs at its
	 * operator class's roofline */
	double select_cores, select_core_rate, select_unit_rate; /* scores/s */
	/* scores/s of one row's own pass (0: none): rows run side by side, so
	 * a selection takes at least its mean row's length at this rate */
	double select_row_rate;
	/* p of the p-norm joining the row pass and the throughput time
	 * (roofline_select_join; 0: their max) */
	double select_overlap;
	/* its split kernel (0: none): each row spread over select_split SMs
	 * (cooperating CTAs), at select_split_fixed s per kernel; a selection
	 * takes the faster of the two kernels (roofline_select_time) */
	double select_split, select_split_fixed;
	/* full passes its own top-k kernel makes over the scores (0: one) */
	double select_passes;
	/* 1: those cores or that unit are not the units that scan the index:
	 * a bucket's top-ks pipeline against its scans (solve/price.c) */
	double select_pipelined;
	/* Activity-based energy ([energy]; all 0 when the file gives none):
	 * J per FLOP by data type, J per bit of memory traffic, static W */
	double e_flop[DT_N], e_bit, e_static;
	/* What a node costs ([node]; has_node 0 when the file gives none):
	 * the device's price, and its share of its node's (a GPU) or
	 * enclosure's (a memory device) draw and price beyond the devices */
	int has_node;
	double price, node_power, node_price; /* USD, W, USD */
	/* 1: every kernel-level value that prices an operator of class c (its
	 * efficiencies, fixed time, floor, overlap, tile depth) is fitted on
	 * this device's own measurements (io/calib.h); fit_select: its
	 * selection rate and fixed time too (device_validate) */
	unsigned char fit[OC_N], fit_select;
	char ops[128];          /* PIM: comma-separated classes it runs */
	unsigned supports;      /* bit per op_class, derived from ops */
};

extern const struct schema device_schema;

/* Cross-field checks and derivation of supports; 0 or -1 with err. */
int device_validate(struct kdevice *d, const struct ini_doc *doc,
		    struct kerr *err);

/* Scores per second the device's selection runs at: its unit's rate, or
 * its cores x their rate; 0 when it declares neither. */
double device_select_rate(const struct kdevice *d);

/* The share of its per-score time a selection that makes `passes` full
 * passes (0: the device's own count) takes: passes / select.passes where
 * that is fewer, else 1. */
double device_select_scale(const struct kdevice *d, double passes);

/* Whether the device gives its activity energy ([energy] section). */
int device_has_energy(const struct kdevice *d);

/* J per FLOP of type t: its own figure, else the next wider type's (work
 * runs there, as device_peak), else the next narrower's; 0 without any. */
double device_energy_flop(const struct kdevice *d, enum dtype t);

/* Bytes of memory the caches may use: capacity less the reserve. */
double device_cache_capacity(const struct kdevice *d);

/* Least seconds one kernel of class c takes on d: [kernel] CLASS_fixed,
 * for a selection select.fixed, else efficiency.overhead. */
double device_fixed(const struct kdevice *d, enum op_class c, int selects);

/* Whether an operator of class c (a selection with selects) is priced on
 * d by values fitted on d's own measurements alone. */
int device_op_fitted(const struct kdevice *d, enum op_class c, int selects);

/* Peak for data type t: the native one, else the next wider type the
 * device has (fp4 -> fp8 -> bf16 -> fp32), else the next narrower one
 * (fp32 work without an fp32 figure runs at the bf16 rate); *used gets the
 * type taken.  Returns 0 only when the device lists no peak at all. */
double device_peak(const struct kdevice *d, enum dtype t, enum dtype *used);

#endif
