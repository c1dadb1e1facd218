/* link.c: the link schema. */
#include "hw/link.h"

#include <stddef.h>

#define OFF(f) offsetof(struct klink, f)

static const struct field link_fields[] = {
	{"link", "name", FK_STR, U_INT, OFF(name), sizeof(((struct klink *)0)->name), 1,
	 0, 0, 0, 0, "display name"},
	{"link", "bandwidth", FK_NUM, U_BW, OFF(bw), 0, 1, 0, 1e15, 1, 0,
	 "bandwidth per direction per device"},
	{"link", "latency", FK_NUM, U_TIME, OFF(latency), 0, 1, 0, 1, 0, 0,
	 "latency of one transfer"},
	{"link", "efficiency", FK_NUM, U_REAL, OFF(efficiency), 0, 1, 0, 1, 1, 0,
	 "fraction of bandwidth reached"},
	{"link", "energy", FK_NUM, U_EBIT, OFF(energy_bit), 0, 1, 0, 1e-6, 0, 0,
	 "energy per bit moved"},
	{"link", "a2a_floor", FK_NUM, U_TIME, OFF(a2a_floor), 0, 0, 0, 1, 0, 0,
	 "least time of one expert all-to-all (dispatch or combine) over it"},
	{"link", "a2a_floor_dispatch", FK_NUM, U_TIME, OFF(a2a_floor_dispatch), 0, 0, 0, 1, 0, 0,
	 "least time of one expert dispatch over it, where it differs from the combine's "
	 "(default: a2a_floor)"},
	{"link", "a2a_floor_per_node", FK_NUM, U_TIME, OFF(a2a_floor_per_node), 0, 0, 0, 1, 0, 0,
	 "added to the all-to-all floors for each node past the first that an all-to-all "
	 "across nodes spans, as a scale-out link (default: 0)"},
	{"link", "a2a_overlap", FK_NUM, U_REAL, OFF(a2a_overlap), 0, 0, 0, 1, 0, 0,
	 "share of the shorter of the all-to-all's floor and its transfer that overlaps the "
	 "longer: 0 (default) adds them, 1 takes the longer alone"},
	{"link", "a2a_latency", FK_NUM, U_TIME, OFF(a2a_latency), 0, 0, 0, 1, 0, 0,
	 "the all-to-all transfer's own fixed time: an all-to-all takes at least its transfer "
	 "plus this, whatever a2a_overlap hides of the floor (default: 0)"},
	{"link", "a2a_sends", FK_ENUM, U_INT, OFF(a2a_sends), 0, 0, 0, 0, 0, a2a_sends_names,
	 "what the expert all-to-all kernels over it send of a token: expert (default: one "
	 "copy per routed expert, as DeepEP's and pplx's low-latency kernels) or gpu (one copy "
	 "per GPU holding any of its experts, as mori's intra-node and DeepEP's normal "
	 "kernels)"},
	{"link", "allreduce_floor", FK_NUM, U_TIME, OFF(allreduce_floor), 0, 0, 0, 1, 0, 0,
	 "least time of one all-reduce among a node's GPUs over it, at a few bytes (what "
	 "tensor-parallel attention pays per layer beside the bytes)"},
};

const char *const a2a_sends_names[A2A_SENDS_N + 1] = {"expert", "gpu", 0};

/* [range]: the low and high of each assumed figure (io/range.h) */
const struct schema link_schema = {"link", link_fields,
				   sizeof link_fields / sizeof link_fields[0], "range", 0};
