/* override.h: one router for "PART.KEY=VALUE" overrides of a loaded design,
 * with the key names `karat show` prints.  A model's keys keep their file
 * section (attention.heads, sparse.topk), as do a system's (system.gpus)
 * and a workload's (workload.prefix_reuse, input.median).  A device or link
 * is named by its role, then its key as its file has it, section and all
 * (gpu.memory.bandwidth, memdev_link.link.bandwidth), or with the key alone
 * where it is unique in that kind of file (gpu.bandwidth).  A device or
 * link role may name the file it is for, ROLE[NAME] (memdev[karat].
 * memory.bandwidth): the override then applies only where that role is
 * NAME (a what-if on KARAT leaves the baselines' devices alone).  Each
 * value is
 * parsed and checked through its schema exactly as the file's would be.
 * Messages name the item, not an option: callers add their own words. */
#ifndef KARAT_ZOO_OVERRIDE_H
#define KARAT_ZOO_OVERRIDE_H

#include "base/err.h"
#include "hw/device.h"
#include "hw/link.h"
#include "model/model.h"
#include "hw/system.h"
#include "workload/workload.h"

enum ov_part {
	OV_MODEL,        /* model, attention, ffn, moe, dtypes, decode */
	OV_SPARSE,       /* the attention algorithm's parameters */
	OV_SYSTEM,
	OV_GPU, OV_MEMDEV,                /* the system's devices */
	OV_SCALEUP, OV_SCALEOUT, OV_MEMDEV_LINK, OV_GPU_PORT, /* its links */
	OV_HW, OV_LINK,  /* one device alone and its link (karat ops) */
	OV_WORKLOAD,     /* workload, input, output */
	OV_N
};

extern const char *const ov_part_names[OV_N];

struct override {
	enum ov_part part;
	char section[64];  /* in the part's file; "" for a device or link key
			      given alone */
	char key[64];
	char only[64];     /* ROLE[NAME]: NAME, the file the role must be; "" */
	char what[160];    /* the item up to '=', for messages */
	const char *value; /* points into the item */
};

/* Splits and routes one item.  Returns 0, or -1 with err (not PART.KEY=VALUE,
 * a name too long, an unknown part). */
int override_parse(const char *item, struct override *o, struct kerr *err);

/* Whether o sets something only a system with memory devices has
 * (memdev.*, memdev_link.*, system.memdevs, system.memdev_link). */
int override_is_memdev(const struct override *o);

/* Sets o on obj, the description of o's part (struct kmodel, sparse_cfg,
 * ksystem, kdevice, klink or kworkload).  Returns 0, -1 (a bad value) or
 * -2 (no such key, or one an override cannot change), with err. */
int override_apply(const struct override *o, void *obj, struct kerr *err);

/* Checks obj, the model or device named name, again as its file is
 * checked (its cross-field rules), now that the overrides ov[which[0..n)]
 * of its part are applied: each counts as a key of the file.  Returns 0,
 * or -1 with err naming the override the check blames ("moe.experts=1:
 * active (8) exceeds experts (1)"), its index in *blamed (the last when
 * no one override is to blame). */
#include "zoo/zoo.h"
int override_recheck(enum zoo_kind kind, const char *name, void *obj,
		     const struct override *ov, const int *which, int n, int *blamed,
		     struct kerr *err);

/* The workload checked as a whole once its overrides ov[which[0..n)] are
 * all applied (override_apply sets each alone): each key must be one its
 * distribution's final kind reads, then the distributions are checked and
 * a changed trace read.  Returns 0, or -1 with err and the override to
 * blame in *blamed. */
int override_settle(struct kworkload *w, const struct override *ov, const int *which, int n,
		    int *blamed, struct kerr *err);

#endif
