/* link.h: an interconnect (NVLink, PCIe, CXL, InfiniBand): bandwidth per
 * direction, latency, achievable fraction, energy per bit. */
#ifndef KARAT_HW_LINK_H
#define KARAT_HW_LINK_H

#include "io/schema.h"

struct klink {
	char name[64];
	double bw;          /* B/s per direction, per device port */
	double latency;     /* s per transfer */
	double efficiency;  /* fraction of bw a collective or copy reaches */
	double energy_bit;  /* J/bit */
	double a2a_floor;   /* s: the least time of an expert dispatch or
			       combine over this link, measured at one token
			       per GPU (0: none measured) */
	double a2a_floor_dispatch; /* s: the dispatch's own floor (0: a2a_floor) */
	double a2a_floor_per_node; /* s: added to either floor for each node past
				      the first that an all-to-all across nodes
				      spans (0: none) */
	double a2a_overlap; /* 0..1: the share of the shorter of the floor and
			       the transfer that overlaps the longer (0: they
			       add, the default; 1: the longer alone) */
	double a2a_latency; /* s: the transfer's own fixed time (0: none): an
			       all-to-all takes at least its transfer plus
			       this, whatever the floor's overlap */
	int a2a_sends;      /* enum a2a_sends: what the all-to-all kernels over
			       this link send of a token */
	double allreduce_floor; /* s: the least time of one all-reduce inside a
				   node over this link, at a few bytes (0: none
				   measured; tensor-parallel attention needs it) */
	int fitted;         /* 1: its efficiency and all-to-all floor are fitted on
			       its own measurements (io/calib.h; zoo_load_link) */
};

extern const struct schema link_schema;

/* What an expert all-to-all sends of a token (link.a2a_sends): one copy
 * per routed expert, or one per GPU that holds any of its experts (which
 * applies each of them there). */
enum a2a_sends { A2A_PER_EXPERT, A2A_PER_GPU, A2A_SENDS_N };
extern const char *const a2a_sends_names[A2A_SENDS_N + 1];

#endif
