/* system.c: the system schema and its cross-field checks. */
#include "hw/system.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "hw/device.h"

#define OFF(f) offsetof(struct ksystem, f)
#define STR(key, fld, req, help) \
	{"system", key, FK_STR, U_INT, OFF(fld), SYS_NAME, req, 0, 0, 0, 0, help}
#define NUM(key, fld, req, lo, pos, help) \
	{"system", key, FK_NUM, U_INT, OFF(fld), 0, req, lo, 1e6, pos, 0, help}

static const struct field system_fields[] = {
	STR("name", name, 1, "display name"),
	STR("gpu", gpu, 1, "GPU device (hw/NAME.ini): weights, projections, MoE"),
	NUM("gpus", gpus, 1, 1, 1, "GPUs in the system"),
	NUM("gpus_per_node", gpus_per_node, 1, 1, 1, "GPUs per scale-up domain"),
	STR("scaleup_link", scaleup_link, 0, "link inside a node (hw/links/NAME.ini); default: "
	    "the GPU's own (its device.link)"),
	STR("scaleout_link", scaleout_link, 1, "link across nodes (hw/links/NAME.ini)"),
	STR("memdev", memdev, 1, "cache device (hw/NAME.ini), or none"),
	NUM("memdevs", memdevs, 0, 0, 0, "memory devices in the system"),
	STR("memdev_link", memdev_link, 0, "link from a GPU to a memory device"),
	STR("gpu_port", gpu_port, 0, "the GPU's one port to its memory devices, shared by them: "
	    "a link, scaleup (the scale-up link), or none; default: the GPU's own (its "
	    "device.port)"),
	{"system", "admission", FK_ENUM, U_INT, OFF(admission), 0, 0, 0, 0, 0, admission_names,
	 "placement of requests: memory-aware (default) or round-robin"},
	{"system", "placement", FK_ENUM, U_INT, OFF(placement), 0, 0, 0, 0, 0, placement_names,
	 "the order memory-aware admission places requests in: online (default: by arrival, "
	 "each onto the unit with the most room, as a serving engine does) or offline-lpt "
	 "(longest first, an offline packer)"},
	{"system", "kv_shard", FK_ENUM, U_INT, OFF(kv_shard), 0, 0, 0, 0, 0, kv_shard_names,
	 "split a request no one device holds over its node's devices: on (default) or off"},
	{"system", "memdev_role", FK_ENUM, U_INT, OFF(memdev_role), 0, 0, 0, 0, 0, memdev_role_names,
	 "what the memory devices run: all (every cache-side stage they support, the default) or "
	 "gather (the caches and the gather of the selected rows; the GPU scores, selects and "
	 "attends)"},
	{"system", "hot_in_hbm", FK_ENUM, U_INT, OFF(hot_in_hbm), 0, 0, 0, 0, 0, hot_in_hbm_names,
	 "with memdev_role = gather: off (default: every cache in the memory devices) or on "
	 "(a hybrid host tier: after every request's index keys, the requests whose whole cache "
	 "fits in their GPU's HBM keep it there, shortest first, and attend over no link; the "
	 "rest gather over it)"},
	{"system", "layers", FK_ENUM, U_INT, OFF(layers), 0, 0, 0, 0, 0, layer_pricing_names,
	 "how layers are priced: per-kind (default: each kind of layer as it is) or average "
	 "(every layer at the average of the kinds, as a simpler model would)"},
	{"system", "electricity_usd_per_kwh", FK_NUM, U_REAL, OFF(usd_per_kwh), 0, 0, 0, 100, 1, 0,
	 "price of electricity, USD per kWh, facility overheads (PUE) included: for "
	 "usd_per_mtok"},
	{"system", "amortisation_years", FK_NUM, U_REAL, OFF(amortise_years), 0, 0, 0, 100, 1, 0,
	 "years the hardware's price is spread over: for usd_per_mtok"},
	{"system", "prefill_energy", FK_ENUM, U_INT, OFF(prefill_energy), 0, 0, 0, 0, 0,
	 prefill_energy_names, "off (default): the per-watt views and the cost count decode "
	 "alone; on: each output token also carries its request's prefill (its new tokens "
	 "after prefix reuse, on GPUs of the system's kind; prefill_j_per_tok)"},
	{"system", "scaleout_via_port", FK_ENUM, U_INT, OFF(scaleout_via_port), 0, 0, 0, 0, 0,
	 via_port_names, "yes (default): each GPU reaches the scale-out link through its NIC "
	 "behind the GPU's port to its memory devices (gpu_port; GPUDirect RDMA through a "
	 "PCIe switch), so the all-to-all's bytes to other nodes share that port; no: the "
	 "NIC has a path of its own"},
	{"system", "host_cache", FK_NUM, U_BYTES, OFF(host_cache), 0, 0, 0, 1e18, 0, 0,
	 "host DRAM per node that keeps idle sessions' caches (HiCache/LMCache style; systems "
	 "without memory devices), reached over each GPU's own port (device.port); default 0: "
	 "idle caches stay only in what HBM the batch leaves"},
	{"system", "host_ssd", FK_NUM, U_BYTES, OFF(host_ssd), 0, 0, 0, 1e18, 0, 0,
	 "NVMe per node that keeps idle sessions' caches past the host DRAM (a third tier, "
	 "as LMCache's local disk; with host_cache), read at host_ssd_read; default 0: none"},
	{"system", "host_ssd_read", FK_NUM, U_BW, OFF(host_ssd_read), 0, 0, 0, 1e15, 0, 0,
	 "the node's NVMe read bandwidth, all drives together (required with host_ssd)"},
	{"system", "a2a_route", FK_ENUM, U_INT, OFF(a2a_route), 0, 0, 0, 0, 0, a2a_route_names,
	 "how the expert all-to-all crosses nodes: flat (default: each routed copy straight to "
	 "its GPU, as DeepEP's low-latency decode kernels over RDMA) or hierarchical (a token "
	 "crosses once to each node it needs, to its same-rank GPU, which forwards the copies "
	 "over the scale-up link, as DeepEP's normal internode kernels)"},
	{"system", "attention_tp", FK_NUM, U_INT, OFF(attention_tp), 0, 0, 1, 64, 0, 0,
	 "GPUs of a node that share each attention layer, split by KV heads (tensor-parallel "
	 "attention, GQA models on GPU-only systems; its all-reduce runs on the scale-up link); "
	 "default 1: data-parallel attention, each GPU holds its requests whole"},
	{"system", "eplb", FK_ENUM, U_INT, OFF(eplb), 0, 0, 0, 0, 0, eplb_names,
	 "expert-parallel load balancing: on (default: a balancer places and copies hot experts; "
	 "the busiest GPU gets 1.109 x the mean routed tokens) or off (experts placed as they "
	 "come: 2.564 x)"},
	{"system", "moe_redundant_per_gpu", FK_NUM, U_REAL, OFF(moe_redundant), 0, 0, 0, 64, 0, 0,
	 "redundant expert copies each GPU holds beyond its share, whose weights take HBM "
	 "(default 0: not charged; eplb's published figure was measured with 1)"},
	{"system", "moe_imbalance", FK_NUM, U_REAL, OFF(moe_imbalance), 0, 0, 1, 100, 0, 0,
	 "the busiest GPU's routed token copies over the mean, which its expert GEMMs and "
	 "all-to-all carry (default: eplb's published figure)"},
	{"system", "memdev_in_hbm", FK_ENUM, U_INT, OFF(memdev_in_hbm), 0, 0, 0, 0, 0, in_hbm_names,
	 "the memory devices are the GPUs' own HBM (one per GPU, sharing its capacity and TDP): "
	 "no (default) or yes"},
};

const char *const in_hbm_names[IN_HBM_N + 1] = {"no", "yes", 0};

const char *const memdev_role_names[ROLE_N + 1] = {"all", "gather", 0};

const char *const kv_shard_names[SHARD_N + 1] = {"on", "off", 0};
const char *const hot_in_hbm_names[HOT_N + 1] = {"off", "on", 0};
const char *const via_port_names[VIA_PORT_N + 1] = {"yes", "no", 0};
const char *const eplb_names[EPLB_N + 1] = {"on", "off", 0};

/* TensorRT-LLM tech blog 4 ("Scaling Expert Parallelism in TensorRT-LLM,
 * part 1"), Table 1: DeepSeek-R1 on 32 GB200s (EP32), local batch 256, a
 * machine-translation dataset; the hottest rank's routed tokens over the
 * mean, less one, averaged over layers and iterations: 1.564 without a
 * balancer, 0.109 with EPLB and 9 expert slots per rank (one redundant
 * copy per GPU; 0.115 with 8 slots on EP36).  The figure grows with the
 * EP size and shrinks with the tokens per GPU; one figure for every EP
 * size favours the wider (GPU-only's 256 GPUs against EP32).  The copies'
 * HBM is charged only where moe_redundant_per_gpu says so: not by
 * default, in the favour of GPU-only, whose batch HBM bounds. */
#define EPLB_ON_IMBALANCE 1.109
#define EPLB_OFF_IMBALANCE 2.564

double system_moe_imbalance(const struct ksystem *s)
{
	if (s->moe_imbalance >= 1)
		return s->moe_imbalance;
	return s->eplb == EPLB_OFF ? EPLB_OFF_IMBALANCE : EPLB_ON_IMBALANCE;
}

double system_moe_redundant(const struct ksystem *s)
{
	return s->moe_redundant;
}
const char *const a2a_route_names[A2A_N + 1] = {"flat", "hierarchical", 0};

const char *const layer_pricing_names[LAYERS_N + 1] = {"per-kind", "average", 0};

const char *const prefill_energy_names[PREFILL_N + 1] = {"off", "on", 0};

const char *const admission_names[ADMIT_N + 1] = {"memory-aware", "round-robin", 0};

const char *const placement_names[PLACE_N + 1] = {"online", "offline-lpt", 0};

const struct schema system_schema = {"system", system_fields,
				     sizeof system_fields / sizeof system_fields[0], 0, 0};

int system_has_memdev(const struct ksystem *s)
{
	return strcmp(s->memdev, "none") != 0;
}

int system_has_port(const struct ksystem *s)
{
	return system_has_memdev(s) && s->gpu_port[0] && strcmp(s->gpu_port, "none") != 0;
}

int system_inherit(struct ksystem *s, const struct kdevice *gpu, struct kerr *err)
{
	if (!s->scaleup_link[0])
		snprintf(s->scaleup_link, sizeof s->scaleup_link, "%s", gpu->link);
	if (system_has_memdev(s) && !s->gpu_port[0])
		snprintf(s->gpu_port, sizeof s->gpu_port, "%s", gpu->port[0] ? gpu->port : "none");
	if (strcmp(s->gpu_port, "scaleup") == 0)
		snprintf(s->gpu_port, sizeof s->gpu_port, "%s", s->scaleup_link);
	if (!s->scaleup_link[0])
		return kerr_set(err, 0, 0, "system.scaleup_link: neither the system nor its GPU "
				"(%s: device.link) names one", s->gpu);
	return 0;
}

static int line_of(const struct ini_doc *doc, const char *key)
{
	const struct ini_entry *e = doc ? ini_doc_find(doc, "system", key) : NULL;
	return e ? e->line : 0;
}

static int whole(double x)
{
	return x == floor(x);
}

int system_validate(const struct ksystem *s, const struct ini_doc *doc,
		    struct kerr *err)
{
	const char *path = doc ? doc->path : NULL;
	if (!whole(s->gpus))
		return kerr_set(err, path, line_of(doc, "gpus"),
				"system.gpus must be a whole number (got %g)", s->gpus);
	if (!whole(s->gpus_per_node))
		return kerr_set(err, path, line_of(doc, "gpus_per_node"),
				"system.gpus_per_node must be a whole number (got %g)",
				s->gpus_per_node);
	if (s->gpus > s->gpus_per_node && fmod(s->gpus, s->gpus_per_node) != 0)
		return kerr_set(err, path, line_of(doc, "gpus"),
				"system.gpus (%g) must fill whole nodes of %g GPUs",
				s->gpus, s->gpus_per_node);
	double tp = s->attention_tp > 0 ? s->attention_tp : 1;
	if (!whole(tp))
		return kerr_set(err, path, line_of(doc, "attention_tp"),
				"system.attention_tp must be a whole number (got %g)", tp);
	if (tp > 1 && (fmod(s->gpus, tp) != 0 ||
		       (s->gpus >= s->gpus_per_node && fmod(s->gpus_per_node, tp) != 0)))
		return kerr_set(err, path, line_of(doc, "attention_tp"),
				"system.attention_tp (%g) must divide the %g GPUs of %s: a "
				"tensor-parallel group stays inside a node", tp,
				s->gpus < s->gpus_per_node ? s->gpus : s->gpus_per_node,
				s->gpus < s->gpus_per_node ? "system.gpus" : "a node");
	if (tp > 1 && system_has_memdev(s))
		return kerr_set(err, path, line_of(doc, "attention_tp"),
				"system.attention_tp is %g but system.memdev is %s: tensor-parallel "
				"attention is for GPU-only systems (there the caches and their "
				"attention are on the memory devices)", tp, s->memdev);
	if (!system_has_memdev(s)) {
		if (s->memdev_in_hbm == IN_HBM_YES)
			return kerr_set(err, path, line_of(doc, "memdev_in_hbm"),
					"system.memdev_in_hbm is yes but system.memdev is none");
		if (s->memdev_role != ROLE_ALL)
			return kerr_set(err, path, line_of(doc, "memdev_role"),
					"system.memdev_role is %s but system.memdev is none",
					memdev_role_names[s->memdev_role]);
		if (s->hot_in_hbm == HOT_ON)
			return kerr_set(err, path, line_of(doc, "hot_in_hbm"),
					"system.hot_in_hbm is on but system.memdev is none (every "
					"cache is in HBM already)");
		if (s->memdevs != 0)
			return kerr_set(err, path, line_of(doc, "memdevs"),
					"system.memdevs is %g but system.memdev is none",
					s->memdevs);
		if (s->host_ssd > 0 && !(s->host_cache > 0))
			return kerr_set(err, path, line_of(doc, "host_ssd"),
					"system.host_ssd needs system.host_cache: idle caches reach the "
					"disk through the host DRAM tier");
		if (s->host_ssd > 0 && !(s->host_ssd_read > 0))
			return kerr_set(err, path, line_of(doc, "host_ssd"),
					"system.host_ssd needs system.host_ssd_read, the node's NVMe "
					"read bandwidth");
		return 0;
	}
	if (s->hot_in_hbm == HOT_ON && s->memdev_role != ROLE_GATHER)
		return kerr_set(err, path, line_of(doc, "hot_in_hbm"),
				"system.hot_in_hbm is on but system.memdev_role is %s: only the "
				"gather role (the GPU attends) keeps whole caches in HBM",
				memdev_role_names[s->memdev_role]);
	if (s->host_cache > 0 || s->host_ssd > 0)
		return kerr_set(err, path, line_of(doc, s->host_cache > 0 ? "host_cache" : "host_ssd"),
				"system.host_cache and host_ssd are for systems without memory devices (%s "
				"keeps idle caches in its own capacity)", s->memdev);
	if (!(s->memdevs >= 1) || !whole(s->memdevs))
		return kerr_set(err, path, line_of(doc, "memdevs"),
				"system.memdevs must be a whole number >= 1 when "
				"system.memdev is %s (got %g)", s->memdev, s->memdevs);
	if (fmod(s->memdevs, s->gpus) != 0 && fmod(s->gpus, s->memdevs) != 0)
		return kerr_set(err, path, line_of(doc, "memdevs"),
				"system.memdevs (%g) must be a multiple or a divisor of "
				"system.gpus (%g): each GPU owns whole devices, or a "
				"device serves whole GPUs", s->memdevs, s->gpus);
	if (!s->memdev_link[0] || strcmp(s->memdev_link, "none") == 0)
		return kerr_set(err, path, line_of(doc, "memdev"),
				"system.memdev_link is required when system.memdev is %s",
				s->memdev);
	if (s->memdev_in_hbm == IN_HBM_YES && s->memdevs != s->gpus)
		return kerr_set(err, path, line_of(doc, "memdevs"),
				"system.memdevs (%g) must equal system.gpus (%g) when "
				"system.memdev_in_hbm is yes: each GPU's own HBM is one device",
				s->memdevs, s->gpus);
	if (s->memdev_in_hbm == IN_HBM_YES && system_has_port(s))
		return kerr_set(err, path, line_of(doc, "gpu_port"),
				"system.gpu_port must be none when system.memdev_in_hbm is yes "
				"(the device is the GPU's own memory)");
	return 0;
}
