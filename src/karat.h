/* karat.h: the library's public interface, in one include for its users
 * (cli/, bench/, tests/).  What is here is the contract; headers not named
 * here (cost/emit.h, solve/plan.h, sparse/stage.h, kernels/common.h and
 * tile.h) are internal to their folders.  The library never prints, never
 * exits and never reads argv: a failing call returns a negative status and
 * fills a struct kerr with "FILE:LINE: reason" (base/err.h).  Every loader
 * and solver call is safe on any thread as long as threads do not share a
 * plan or a description being written; inih's global settings are set once
 * (io/ini_doc.c), so documents may be loaded on any thread. */
#ifndef KARAT_H
#define KARAT_H

#include "base/clock.h"     /* the one monotonic clock */
#include "base/dtype.h"     /* data types and their sizes */
#include "base/err.h"       /* struct kerr */
#include "base/gslerr.h"    /* GSL errors as statuses */
#include "base/limits.h"    /* every limit on inputs */
#include "base/units.h"     /* numbers with units */
#include "cost/attn.h"      /* cache-side storage and slots */
#include "cost/ops.h"       /* the operator table */
#include "cost/prefill.h"   /* one request's prefill on its GPUs */
#include "cost/roofline.h"  /* FLOPs and bytes to time */
#include "cost/step.h"      /* one decode step, operator by operator */
#include "hw/device.h"
#include "hw/link.h"
#include "io/file.h"
#include "io/ini_doc.h"
#include "io/range.h"      /* a file's [range]: each assumed figure's low and high */
#include "io/calib.h"      /* how well kernel-level values are calibrated */
#include "io/schema.h"
#include "kernels/harness.h" /* the CPU validation kernels */
#include "model/model.h"
#include "sched/pipeline.h" /* the micro-batch pipeline */
#include "solve/solve.h"    /* design points and the solver */
#include "sparse/algo.h"    /* the attention-algorithm table */
#include "hw/system.h"
#include "workload/workload.h"
#include "zoo/design.h"     /* a whole design, assembled */
#include "zoo/override.h"   /* PART.KEY=VALUE overrides */
#include "zoo/zoo.h"        /* shipped files by name */
#include "valid/valid.h"    /* the model against published kernel timings */
#include "study/study.h"    /* studies: the grid, each system's best, the views */

#endif
