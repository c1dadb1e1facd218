/* system.h: a serving system as composed in hw/systems/NAME.ini: the GPUs
 * that hold the weights, their scale-up (inside a node) and scale-out
 * (across nodes) links, and the memory devices that hold the KV and index
 * caches, with the link between a GPU and a memory device.  Names only:
 * the zoo loads the devices and links they point to. */
#ifndef KARAT_HW_SYSTEM_H
#define KARAT_HW_SYSTEM_H

#include "base/err.h"
#include "io/ini_doc.h"
#include "io/schema.h"

#define SYS_NAME 512 /* a zoo name, or a path (made relative to here) */

struct ksystem {
	char name[SYS_NAME];          /* display name */
	char gpu[SYS_NAME];           /* device holding weights */
	double gpus;                  /* GPUs in the system */
	double gpus_per_node;         /* GPUs sharing the scale-up link domain */
	char scaleup_link[SYS_NAME];  /* expert all-to-all inside a node */
	char scaleout_link[SYS_NAME]; /* ... and across nodes */
	char memdev[SYS_NAME];        /* cache device, or "none" (caches in HBM) */
	double memdevs;               /* memory devices in the system */
	char memdev_link[SYS_NAME];   /* one GPU <-> one memory device */
	char gpu_port[SYS_NAME];      /* the one port a GPU reaches its memory
					 devices through, shared by them; "" or
					 "none": each device link is private */
	int admission;                /* enum admission: how requests are placed */
	int placement;                /* enum placement: in which order
					 (memory-aware admission) */
	int kv_shard;                 /* enum kv_shard: split a request no one
					 device can hold over its node's devices */
	int memdev_role;              /* enum memdev_role */
	int hot_in_hbm;               /* enum hot_in_hbm: in the gather role,
					 requests whose whole cache fits in
					 their GPU's HBM keep it there */
	int memdev_in_hbm;            /* enum in_hbm: the memory devices are
					 the GPUs' own HBM stacks (one per
					 GPU): they hold the caches in what the
					 weights leave, and their power is
					 within the GPU's TDP */
	int layers;                   /* enum layer_pricing */
	double usd_per_kwh;           /* electricity, USD/kWh (0: not given) */
	double amortise_years;        /* years the price is spread over (0: not given) */
	int prefill_energy;           /* enum prefill_energy: the per-watt
					 views count each request's prefill */
	int a2a_route;                /* enum a2a_route */
	double host_cache;            /* bytes of host DRAM per node for idle
					 sessions' caches (0: none) */
	double host_ssd, host_ssd_read; /* NVMe per node for them, and its read
					   bandwidth, B/s (0: none) */
	double attention_tp;          /* GPUs of one node that shard each
					 attention layer by KV heads (tensor
					 parallel); 0 or 1: data-parallel
					 attention, each GPU whole */
	int eplb;                     /* enum eplb: the experts are balanced
					 by a load balancer with redundant
					 copies (on) or placed as they come */
	double moe_imbalance;         /* the busiest GPU's routed token copies
					 over the mean (0: eplb's published
					 figure, system_moe_imbalance) */
	double moe_redundant;         /* redundant expert copies each GPU
					 holds, whose weights take HBM (0:
					 none) */
	int scaleout_via_port;        /* enum via_port: the GPU's NIC sits
					 behind its port (GPUDirect RDMA), so
					 the cross-node all-to-all shares the
					 port with the memory devices */
};

/* What the memory devices run: every cache-side stage they support (the
 * GPU runs the rest), or only the caches and the gather of the selected
 * rows, the GPU scoring, selecting and attending (InfiniGen/ShadowKV-style
 * offload: the index keys in HBM, the selected rows over the link). */
enum memdev_role { ROLE_ALL, ROLE_GATHER, ROLE_N };
extern const char *const memdev_role_names[ROLE_N + 1];

/* In the gather role, whether the requests whose whole cache fits in
 * their GPU's HBM (after every request's index keys) keep it there, the
 * rest gathering over the link: a hybrid host tier. */
enum hot_in_hbm { HOT_OFF, HOT_ON, HOT_N };
extern const char *const hot_in_hbm_names[HOT_N + 1];

enum in_hbm { IN_HBM_NO, IN_HBM_YES, IN_HBM_N };
extern const char *const in_hbm_names[IN_HBM_N + 1];

enum via_port { VIA_PORT_YES, VIA_PORT_NO, VIA_PORT_N };

/* Expert-parallel load balancing (system.eplb): on, the default, as a
 * serving engine at scale runs it (DeepSeek's EPLB: hot experts placed,
 * and copied, to even the GPUs' loads), or off. */
enum eplb { EPLB_ON, EPLB_OFF, EPLB_N };
extern const char *const eplb_names[EPLB_N + 1];

/* The busiest GPU's routed token copies over the mean: moe_imbalance
 * where given, else the published figure for s's eplb. */
double system_moe_imbalance(const struct ksystem *s);
/* Redundant expert copies each GPU holds (system.moe_redundant_per_gpu). */
double system_moe_redundant(const struct ksystem *s);
extern const char *const via_port_names[VIA_PORT_N + 1];

/* How the expert all-to-all crosses nodes (system.a2a_route). */
enum a2a_route { A2A_FLAT, A2A_HIER, A2A_N };
extern const char *const a2a_route_names[A2A_N + 1];

enum kv_shard { SHARD_ON, SHARD_OFF, SHARD_N };
extern const char *const kv_shard_names[SHARD_N + 1];

/* How the layers are priced: each kind of layer as it is (per-kind, the
 * default), or every layer at the count-weighted average of the kinds
 * (average: the smoothing a simpler model makes; for comparisons). */
enum layer_pricing { LAYERS_PER_KIND, LAYERS_AVERAGE, LAYERS_N };
extern const char *const layer_pricing_names[LAYERS_N + 1];

/* Whether the drawn-power and node views (and the cost's electricity and
 * GPU time) count each request's prefill on GPUs of the same kind, beside
 * its decode: off (default: decode alone, the paper's metric) or on. */
enum prefill_energy { PREFILL_OFF, PREFILL_ON, PREFILL_N };
extern const char *const prefill_energy_names[PREFILL_N + 1];

/* How a sampled batch's requests are placed on GPUs and memory devices:
 * memory-aware (longest first onto the unit with the most free room, ties
 * to the lowest summed context, as a token-aware data-parallel router
 * does) or round-robin (by arrival; kept for comparison). */
enum admission { ADMIT_MEMORY, ADMIT_ROUND_ROBIN, ADMIT_N };
extern const char *const admission_names[ADMIT_N + 1];

/* The order memory-aware admission places a sampled batch in: online (by
 * arrival, each request onto the unit with the most room as it comes, as
 * a serving engine's router does) or offline-lpt (longest first, an
 * offline packer no engine has: it balances and fits better). */
enum placement { PLACE_ONLINE, PLACE_OFFLINE_LPT, PLACE_N };
extern const char *const placement_names[PLACE_N + 1];

extern const struct schema system_schema;

/* Whether the system has memory devices (memdev is not "none"). */
int system_has_memdev(const struct ksystem *s);

/* Fills what the system leaves to its GPU: the scale-up link (the GPU's
 * device.link) and, with memory devices, the GPU port (its device.port,
 * else none); gpu_port = scaleup names the scale-up link.  0, or -1 with
 * err when no scale-up link is named at all. */
struct kdevice;
int system_inherit(struct ksystem *s, const struct kdevice *gpu, struct kerr *err);

/* Whether its memory devices share a GPU port (gpu_port names a link). */
int system_has_port(const struct ksystem *s);

/* Cross-field checks: whole counts, memdevs a multiple or a divisor of
 * gpus, a link named when there are memory devices.  doc (may be NULL)
 * gives line numbers.  Returns 0 or -1 with err. */
int system_validate(const struct ksystem *s, const struct ini_doc *doc,
		    struct kerr *err);

#endif
