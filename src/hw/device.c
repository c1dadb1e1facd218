/* device.c: the device schema (every key of a device INI) and validation. */
#include "hw/device.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "io/calib.h"

const char *const dev_kind_names[DEV_NKIND + 1] = {"gpu", "cpu", "pim", "pnm", 0};
const char *const op_class_names[OC_N + 1] = {"gemm", "attention", "scan",
					      "gather", "elementwise", 0};

#define OFF(f) offsetof(struct kdevice, f)
#define NUM(sec, key, fld, unit, req, lo, hi, pos, help) \
	{sec, key, FK_NUM, unit, OFF(fld), 0, req, lo, hi, pos, 0, help}
/* An efficiency is a share of a roof in [0.001, 1] (assumed: a kernel that
 * reaches under 0.1% of its roof is no measurement to model with, and the
 * floor keeps every time it divides finite). */
#define EFF(key, fld, req, help) NUM("efficiency", key, fld, U_REAL, req, 1e-3, 1, 1, help)

static const struct field device_fields[] = {
	{"device", "name", FK_STR, U_INT, OFF(name), sizeof(((struct kdevice *)0)->name),
	 1, 0, 0, 0, 0, "display name"},
	{"device", "kind", FK_ENUM, U_INT, OFF(kind), 0, 1, 0, 0, 0, dev_kind_names,
	 "gpu, cpu, pim or pnm"},
	{"device", "family", FK_STR, U_INT, OFF(family), sizeof(((struct kdevice *)0)->family),
	 0, 0, 0, 0, 0, "the architecture its kernels share with its siblings (hopper, blackwell, "
	 "cdna3, ...), for karat validate's errors by family; default: none"},
	{"device", "link", FK_STR, U_INT, OFF(link), sizeof(((struct kdevice *)0)->link),
	 1, 0, 0, 0, 0, "its interconnect: a link in hw/ (GPU: scale-up)"},
	{"device", "port", FK_STR, U_INT, OFF(port), sizeof(((struct kdevice *)0)->port),
	 0, 0, 0, 0, 0, "a GPU's I/O port, a link in hw/links/ (PCIe): where its memory "
	 "devices attach unless the system names another"},
	NUM("device", "tdp", tdp, U_POWER, 1, 0, 1e6, 1, "thermal design power"),
	NUM("compute", "fp4", peak[DT_FP4], U_FLOPS, 0, 0, 1e18, 0, "dense FP4 peak"),
	NUM("compute", "fp8", peak[DT_FP8], U_FLOPS, 0, 0, 1e18, 0, "dense FP8 peak"),
	NUM("compute", "bf16", peak[DT_BF16], U_FLOPS, 1, 0, 1e18, 1, "dense BF16 peak"),
	NUM("compute", "fp32", peak[DT_FP32], U_FLOPS, 0, 0, 1e18, 0, "FP32 (vector) peak"),
	NUM("memory", "capacity", mem_capacity, U_BYTES, 1, 0, 1e16, 1, "memory capacity"),
	NUM("memory", "bandwidth", mem_bw, U_BW, 1, 0, 1e16, 1, "memory bandwidth"),
	{"memory", "memory_reserve", FK_SHARE, U_BYTES, OFF(mem_reserve), 0, 0, 0, 1e16, 0, 0,
	 "kept back from caches for activations, buffers and graphs: bytes or N%"},
	EFF("gemm_compute", eff_c[OC_GEMM], 1, "fraction of peak FLOP/s a GEMM reaches"),
	EFF("gemm_memory", eff_m[OC_GEMM], 1, "fraction of bandwidth a GEMM reaches"),
	EFF("gemm_compute_fp4", eff_gemm_fp4, 0,
	    "fraction of the FP4 peak a GEMM in FP4 reaches (default: gemm_compute)"),
	EFF("gemm_compute_fp8", eff_gemm_fp8, 0,
	    "fraction of the FP8 peak a GEMM in FP8 reaches (default: gemm_compute)"),
	EFF("attention_compute", eff_c[OC_ATTENTION], 1, "attention kernels, compute"),
	EFF("attention_memory", eff_m[OC_ATTENTION], 1, "attention kernels, memory"),
	EFF("scan_compute", eff_c[OC_SCAN], 1, "index scan and top-k, compute"),
	EFF("scan_memory", eff_m[OC_SCAN], 1, "index scan and top-k, memory"),
	EFF("gather_memory", eff_m[OC_GATHER], 1, "row gathers, memory"),
	EFF("elementwise_memory", eff_m[OC_ELEMENTWISE], 1, "norms, RoPE, sampling, memory"),
	EFF("gather_compute", eff_c[OC_GATHER], 0, "row gathers, compute (default 1)"),
	EFF("elementwise_compute", eff_c[OC_ELEMENTWISE], 0, "elementwise, compute (default 1)"),
	NUM("efficiency", "overhead", overhead, U_TIME, 1, 0, 1, 0, "fixed time per operator launch"),
	NUM("kernel", "gemm_fixed", fixed[OC_GEMM], U_TIME, 0, 0, 1, 0,
	    "least time of one GEMM kernel (default: efficiency.overhead)"),
	NUM("kernel", "gemm_fixed_fp4", gemm_fixed_fp4, U_TIME, 0, 0, 1, 0,
	    "least time of one GEMM kernel at FP4 (default: kernel.gemm_fixed)"),
	NUM("kernel", "attention_fixed", fixed[OC_ATTENTION], U_TIME, 0, 0, 1, 0,
	    "least time of one attention kernel (default: efficiency.overhead)"),
	NUM("kernel", "scan_fixed", fixed[OC_SCAN], U_TIME, 0, 0, 1, 0,
	    "least time of one index-scan kernel (default: efficiency.overhead)"),
	NUM("kernel", "gather_fixed", fixed[OC_GATHER], U_TIME, 0, 0, 1, 0,
	    "least time of one gather kernel (default: efficiency.overhead)"),
	NUM("kernel", "elementwise_fixed", fixed[OC_ELEMENTWISE], U_TIME, 0, 0, 1, 0,
	    "least time of one elementwise kernel (default: efficiency.overhead)"),
	NUM("kernel", "attention_floor", floor[OC_ATTENTION], U_TIME, 0, 0, 1, 0,
	    "least time of an attention operator whatever its size (max, not added)"),
	NUM("kernel", "gemm_floor", floor[OC_GEMM], U_TIME, 0, 0, 1, 0,
	    "least time of a GEMM operator whatever its size (max, not added)"),
	NUM("kernel", "scan_floor", floor[OC_SCAN], U_TIME, 0, 0, 1, 0,
	    "least time of an index-scan operator whatever its size (max, not added)"),
	NUM("kernel", "overlap", overlap, U_REAL, 0, 1, 64, 0,
	    "p of the p-norm joining compute and memory time (absent: their max)"),
	NUM("kernel", "sms", sms, U_INT, 0, 1, 100000, 1, "streaming multiprocessors a GEMM's tiles spread over"),
	NUM("kernel", "gemm_tile_m", tile_m, U_INT, 0, 1, 4096, 1, "GEMM tile rows"),
	NUM("kernel", "gemm_tile_m_small", tile_m_small, U_INT, 0, 1, 4096, 1,
	    "GEMM tile rows when the GEMM has no more rows than this"),
	NUM("kernel", "gemm_tile_n_max", tile_n_max, U_INT, 0, 1, 4096, 1, "widest GEMM tile"),
	NUM("kernel", "gemm_tile_n_step", tile_n_step, U_INT, 0, 1, 4096, 1,
	    "GEMM tile widths are multiples of this"),
	NUM("kernel", "gemm_tile_k0", tile_k0, U_INT, 0, 0, 1e6, 0,
	    "extra depth each GEMM tile pays (prologue and epilogue), in columns of K"),
	NUM("kernel", "sparse_fixed_topk", fixed_topk, U_INT, 0, 0, 1, 0,
	    "1: sparse attention attends to all top-k slots even when the context is shorter"),
	NUM("select", "fixed", select_fixed, U_TIME, 0, 0, 1, 0,
	    "least time of one selection (top-k) kernel (default: its class's)"),
	NUM("select", "cores", select_cores, U_INT, 0, 1, 1e6, 1,
	    "general-purpose cores that run top-k selection (with select.core_rate)"),
	NUM("select", "core_rate", select_core_rate, U_REAL, 0, 1, 1e15, 1,
	    "scores one core selects from per second"),
	NUM("select", "unit_rate", select_unit_rate, U_REAL, 0, 1, 1e18, 1,
	    "scores a hardware selection unit takes per second (instead of cores)"),
	NUM("select", "row_rate", select_row_rate, U_REAL, 0, 0, 1e18, 0,
	    "scores one row's pass takes per second (rows run side by side): a top-k over rows "
	    "of n scores takes at least n / row_rate (default: no such floor)"),
	NUM("select", "overlap", select_overlap, U_REAL, 0, 1, 64, 0,
	    "p of the p-norm joining a selection's row pass and its throughput time "
	    "(1: their sum; absent: their max)"),
	NUM("select", "split", select_split, U_INT, 0, 2, 1024, 0,
	    "SMs (cooperating CTAs) one row spreads over in the device's split top-k kernel, "
	    "for few long rows (with select.split_fixed; default: no such kernel)"),
	NUM("select", "split_fixed", select_split_fixed, U_TIME, 0, 0, 1, 0,
	    "least time of one split top-k kernel: a selection takes the faster of the split "
	    "kernel and the one-row-per-SM kernel"),
	NUM("select", "passes", select_passes, U_REAL, 0, 1, 64, 0,
	    "full passes its own top-k kernel makes over the scores (default 1): a selection "
	    "seeded by the previous step (an algorithm's select_prev = P) takes P / passes of "
	    "its time per score where P is fewer"),
	NUM("select", "pipelined", select_pipelined, U_INT, 0, 0, 1, 0,
	    "1: selection runs on other units than the index scan, so one request's top-k "
	    "overlaps the next one's scan"),
	NUM("energy", "fp4", e_flop[DT_FP4], U_EFLOP, 0, 0, 1e-9, 0, "energy per FP4 FLOP"),
	NUM("energy", "fp8", e_flop[DT_FP8], U_EFLOP, 0, 0, 1e-9, 0, "energy per FP8 FLOP"),
	NUM("energy", "bf16", e_flop[DT_BF16], U_EFLOP, 0, 0, 1e-9, 0, "energy per BF16 FLOP"),
	NUM("energy", "fp32", e_flop[DT_FP32], U_EFLOP, 0, 0, 1e-9, 0, "energy per FP32 FLOP"),
	NUM("energy", "memory", e_bit, U_EBIT, 0, 0, 1e-9, 1, "energy per bit read or written in memory"),
	NUM("energy", "static", e_static, U_POWER, 0, 0, 1e5, 1, "power drawn whatever the activity"),
	NUM("node", "price_usd", price, U_REAL, 0, 0, 1e9, 0, "the device's own price, USD"),
	NUM("node", "share_power", node_power, U_POWER, 0, 0, 1e6, 0,
	    "its share of what its node or enclosure draws beyond the devices (hosts, NICs, "
	    "switches, fans, power losses), W"),
	NUM("node", "share_price_usd", node_price, U_REAL, 0, 0, 1e9, 0,
	    "its share of the node's or enclosure's price beyond the devices, USD"),
	{"pim", "ops", FK_STR, U_INT, OFF(ops), sizeof(((struct kdevice *)0)->ops), 0,
	 0, 0, 0, 0, "operator classes a fixed-function PIM runs"},
};

/* [range]: the low and high of each assumed figure (io/range.h) */
const struct schema device_schema = {"device", device_fields,
				     sizeof device_fields / sizeof device_fields[0], "range", 0};

static int class_mask(const char *list, unsigned *mask, char *bad, size_t n)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", list);
	*mask = 0;
	for (char *save = 0, *tok = strtok_r(buf, ", ", &save); tok;
	     tok = strtok_r(0, ", ", &save)) {
		int k = 0;
		while (op_class_names[k] && strcmp(op_class_names[k], tok) != 0)
			k++;
		if (!op_class_names[k]) {
			snprintf(bad, n, "%s", tok);
			return -1;
		}
		*mask |= 1u << k;
	}
	return *mask ? 0 : (snprintf(bad, n, "(empty)"), -1);
}

/* The kernel-level values that price each class (io/calib.h): a class is
 * fitted when every one of them the file gives is. */
static void read_fits(struct kdevice *d, const struct ini_doc *doc)
{
	static const char *const keys[OC_N][9] = {
		[OC_GEMM] = {"efficiency.gemm_compute", "efficiency.gemm_compute_fp4",
			     "efficiency.gemm_compute_fp8", "efficiency.gemm_memory",
			     "kernel.gemm_fixed", "kernel.gemm_fixed_fp4", "kernel.overlap",
			     "kernel.gemm_tile_k0", 0},
		[OC_ATTENTION] = {"efficiency.attention_compute", "efficiency.attention_memory",
				  "kernel.attention_fixed", "kernel.attention_floor", "kernel.overlap", 0},
		[OC_SCAN] = {"efficiency.scan_compute", "efficiency.scan_memory", "efficiency.overhead",
			     "kernel.overlap", 0},
		[OC_GATHER] = {"efficiency.gather_memory", "efficiency.overhead", 0},
		[OC_ELEMENTWISE] = {"efficiency.elementwise_memory", "efficiency.overhead", 0},
	};
	static const char *const sel[] = {"select.unit_rate", "select.core_rate", "select.fixed",
					  "select.row_rate", "select.overlap", "select.split_fixed", 0};
	static const char *const ovh[] = {"efficiency.overhead", 0};
	for (int c = 0; c < OC_N; c++)
		d->fit[c] = (unsigned char)cal_fitted(doc, keys[c]);
	/* a class without its own fixed time pays the overhead */
	if (!ini_doc_find(doc, "kernel", "gemm_fixed"))
		d->fit[OC_GEMM] &= (unsigned char)cal_fitted(doc, ovh);
	if (!ini_doc_find(doc, "kernel", "attention_fixed"))
		d->fit[OC_ATTENTION] &= (unsigned char)cal_fitted(doc, ovh);
	d->fit_select = (unsigned char)cal_fitted(doc, sel);
}

int device_op_fitted(const struct kdevice *d, enum op_class c, int selects)
{
	return d->fit[c] && (!selects || d->fit_select);
}

int device_validate(struct kdevice *d, const struct ini_doc *doc,
		    struct kerr *err)
{
	read_fits(d, doc);
	if (!ini_doc_find(doc, "efficiency", "gather_compute"))
		d->eff_c[OC_GATHER] = 1;
	if (!ini_doc_find(doc, "efficiency", "elementwise_compute"))
		d->eff_c[OC_ELEMENTWISE] = 1;
	const struct ini_entry *port = ini_doc_find(doc, "device", "port");
	if (port && d->kind != DEV_GPU)
		return kerr_set(err, doc->path, port->line, "device.port is only for kind = gpu "
				"(the port a system's memory devices attach to)");
	const struct ini_entry *ops = ini_doc_find(doc, "pim", "ops");
	if (d->kind == DEV_PIM) {
		if (!ops)
			return kerr_set(err, doc->path, ini_doc_section_line(doc, "device"),
					"a pim device needs [pim] ops = the operator classes it runs");
		char bad[64];
		if (class_mask(d->ops, &d->supports, bad, sizeof bad) != 0)
			return kerr_set(err, doc->path, ops->line,
					"pim.ops: unknown operator class '%s' (gemm, attention, scan, gather, elementwise)",
					bad);
	} else {
		if (ops)
			return kerr_set(err, doc->path, ops->line,
					"[pim] ops is only for kind = pim (%s devices run every operator)",
					dev_kind_names[d->kind]);
		d->supports = (1u << OC_N) - 1;
	}
	const struct ini_entry *cores = ini_doc_find(doc, "select", "cores");
	const struct ini_entry *rate = ini_doc_find(doc, "select", "core_rate");
	const struct ini_entry *unit = ini_doc_find(doc, "select", "unit_rate");
	if (!cores != !rate)
		return kerr_set(err, doc->path, (cores ? cores : rate)->line,
				"select.cores and select.core_rate go together");
	if (unit && cores)
		return kerr_set(err, doc->path, unit->line,
				"give select.unit_rate or select.cores with select.core_rate, "
				"not both");
	const struct ini_entry *sov = ini_doc_find(doc, "select", "overlap");
	if (sov && !(d->select_row_rate > 0))
		return kerr_set(err, doc->path, sov->line,
				"select.overlap joins a row's pass to the throughput: it needs "
				"select.row_rate");
	const struct ini_entry *split = ini_doc_find(doc, "select", "split");
	const struct ini_entry *split_fixed = ini_doc_find(doc, "select", "split_fixed");
	if (!split != !split_fixed)
		return kerr_set(err, doc->path, (split ? split : split_fixed)->line,
				"select.split and select.split_fixed go together");
	if (split && !(d->select_row_rate > 0))
		return kerr_set(err, doc->path, split->line,
				"select.split spreads a row's pass over SMs: it needs select.row_rate");
	const struct ini_entry *piped = ini_doc_find(doc, "select", "pipelined");
	if (piped && d->select_pipelined && (d->kind == DEV_GPU || !(device_select_rate(d) > 0)))
		return kerr_set(err, doc->path, piped->line,
				"select.pipelined needs a device other than a GPU (whose scan and "
				"top-k share its SMs) that declares select.cores or select.unit_rate");
	static const char *const tile_keys[] = {"sms", "gemm_tile_m", "gemm_tile_m_small",
						 "gemm_tile_n_max", "gemm_tile_n_step"};
	int ntile = 0;
	for (size_t i = 0; i < sizeof tile_keys / sizeof tile_keys[0]; i++)
		ntile += ini_doc_find(doc, "kernel", tile_keys[i]) != NULL;
	if (ntile != 0 && ntile != 5)
		return kerr_set(err, doc->path, ini_doc_section_line(doc, "kernel"),
				"the GEMM tile model needs all of kernel.sms, gemm_tile_m, "
				"gemm_tile_m_small, gemm_tile_n_max and gemm_tile_n_step");
	if (ntile && (d->tile_m_small > d->tile_m || d->tile_n_step > d->tile_n_max))
		return kerr_set(err, doc->path, ini_doc_section_line(doc, "kernel"),
				"kernel.gemm_tile_m_small must be <= gemm_tile_m and "
				"gemm_tile_n_step <= gemm_tile_n_max");
	int sec = ini_doc_section_line(doc, "energy");
	if (sec > 0 && (!ini_doc_find(doc, "energy", "memory") || !ini_doc_find(doc, "energy", "static") ||
			!(device_energy_flop(d, DT_BF16) > 0)))
		return kerr_set(err, doc->path, sec, "[energy] needs memory, static and at least one "
				"per-FLOP figure (fp4, fp8, bf16, fp32)");
	int node = ini_doc_section_line(doc, "node");
	d->has_node = node > 0;
	if (node > 0 && (!ini_doc_find(doc, "node", "price_usd") ||
			 !ini_doc_find(doc, "node", "share_power") ||
			 !ini_doc_find(doc, "node", "share_price_usd")))
		return kerr_set(err, doc->path, node, "[node] needs price_usd, share_power and "
				"share_price_usd");
	if (!(device_cache_capacity(d) > 0)) {
		const struct ini_entry *e = ini_doc_find(doc, "memory", "memory_reserve");
		return kerr_set(err, doc->path, e ? e->line : 0,
				"memory.memory_reserve leaves no memory for caches");
	}
	return 0;
}

double device_peak(const struct kdevice *d, enum dtype t, enum dtype *used)
{
	for (int k = t; k < DT_N; k++)
		if (d->peak[k] > 0) {
			if (used)
				*used = (enum dtype)k;
			return d->peak[k];
		}
	for (int k = (int)t - 1; k >= 0; k--) /* e.g. fp32 work on matrix units */
		if (d->peak[k] > 0) {
			if (used)
				*used = (enum dtype)k;
			return d->peak[k];
		}
	return 0;
}

double device_cache_capacity(const struct kdevice *d)
{
	return d->mem_capacity - share_bytes_of(&d->mem_reserve, d->mem_capacity);
}

double device_select_rate(const struct kdevice *d)
{
	return d->select_unit_rate > 0 ? d->select_unit_rate : d->select_cores * d->select_core_rate;
}

double device_select_scale(const struct kdevice *d, double passes)
{
	return passes > 0 && d->select_passes > passes ? passes / d->select_passes : 1;
}

int device_has_energy(const struct kdevice *d)
{
	return d->e_bit > 0 && d->e_static > 0 && device_energy_flop(d, DT_BF16) > 0;
}

double device_energy_flop(const struct kdevice *d, enum dtype t)
{
	for (int k = t; k < DT_N; k++)
		if (d->e_flop[k] > 0)
			return d->e_flop[k];
	for (int k = (int)t - 1; k >= 0; k--)
		if (d->e_flop[k] > 0)
			return d->e_flop[k];
	return 0;
}

double device_fixed(const struct kdevice *d, enum op_class c, int selects)
{
	if (selects && d->select_fixed > 0)
		return d->select_fixed;
	return d->fixed[c] > 0 ? d->fixed[c] : d->overhead;
}
