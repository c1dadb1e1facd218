/* limits.h: every limit karat puts on its inputs, in one place, each with
 * its reason.  Beyond one, an input is refused with the limit named; never
 * cut silently.  Header only: any layer may include it.  Sizes that bound
 * no input (message buffers, a path's length, the repetitions of a kernel
 * timing) stay in the file that uses them. */
#ifndef KARAT_BASE_LIMITS_H
#define KARAT_BASE_LIMITS_H

/* INI files (io/ini_doc): entries, sections and bytes per file; far above
 * the largest shipped file (51 entries, hw/h200.ini with its [range],
 * measured). */
#define INI_MAX_ENTRIES 512
#define INI_MAX_SECTIONS 64
#define INI_MAX_BYTES (4 << 20)

/* Workloads: quantile points per length table, and the longest length any
 * workload may give (tokens). */
#define WL_MAX_Q 48
#define WL_MAX_TOKENS 1e9

/* Rows of a workload's [keepalive] table (the shipped tables have 11). */
#define WL_MAX_KEEPALIVE 32

/* Trace CSVs: size, rows and header columns (the shared traces are under
 * 4 MB and 50,000 rows, measured; the limits leave room for whole-day
 * production traces). */
#define TRACE_MAX_BYTES (1LL << 30)
#define TRACE_MAX_ROWS 50000000L
#define TRACE_MAX_COLS 1024

/* Parameters one attention algorithm takes. */
#define ALGO_MAX_PARAMS 12

/* Operators in one decode step (the most any shipped model emits with any
 * algorithm and MTP is 69, measured). */
#define STEP_MAX_OPS 160

/* Micro-batches of the pipeline schedule. */
#define PIPE_MAX_MB 16

/* Decoder layers of a model (the model schema's range) and kinds of layer
 * the pipeline prices apart (attention class x dense FFN or MoE: at most
 * 4 x 2). */
#define PIPE_MAX_LAYERS 4096
#define PIPE_MAX_CLASSES 8

/* Overrides per design (--set and a sweep's [set] keys together). */
#define DESIGN_MAX_SETS 64

/* Largest batch the solver tries (all GPUs together). */
#define PLAN_MAX_BATCH 1048576.0

/* Threads one solve or query evaluates its samples on (each holds a
 * workspace: about a megabyte at 256 samples and 4,096 requests). */
#define PLAN_MAX_THREADS 64

/* Bytes one plan may keep of its samples' online placements, over all
 * its workspaces (solve/place.c: about 9 bytes a request, so 256 samples
 * of 200,000 requests each on one thread); past a sample's share, it is
 * placed afresh. */
#define PLAN_KEEP_BYTES (512.0 * 1024 * 1024)

/* Slices one request may be split into over a node's memory devices. */
#define PLAN_MAX_SHARDS 8

/* The most work one evaluation may take: samples x (requests placed +
 * GPUs and memory devices + layers x micro-batches), solve/plan.h's
 * plan_work (2^26: about 1 s per evaluation on the 2-core development
 * machine, measured on DeepSeek-V3.2 with KARAT at 130,000 requests and
 * 256 samples: 0.49 s).  Beyond it an evaluation is refused with this limit
 * named, rather than running for minutes. */
#define PLAN_MAX_WORK 67108864.0

/* Sweep files (cli/sweep_file): dimensions of [sweep], values per
 * dimension, [vary] labels and the overrides of one label; several times
 * the shipped sweeps' largest (5 dimensions, 9 values, 14 labels of at
 * most 2 overrides). */
#define SWEEP_MAX_DIMS 32
#define SWEEP_MAX_VALS 64
#define SWEEP_MAX_VARY 64
#define SWEEP_MAX_VARY_SETS 8

/* Study files (cli/study): items in one list (several times the
 * longest list of the shipped studies, 8 systems). */
#define STUDY_MAX_LIST 16
/* A study's [steps]: at most 16 (a waterfall wider is unreadable), each at
 * most 12 overrides of at most 159 characters (a key and a number fit in
 * well under it); all of them with run's own three stay within a point's
 * ARGS_MAX_MANY overrides. */
#define STUDY_MAX_STEPS 16
#define STUDY_STEP_SETS 12
#define STUDY_SET_LEN 160

/* A file's [range] section (io/range.h): ranges in one file (a device
 * file has about 60 keys, each can have one). */
#define RANGE_MAX 64

/* The uncertainty study (study/uncert.c): Latin-hypercube draws (a P10
 * and P90 want a few dozen; a thousand is a long run's), and figures with
 * a [range] in the study's device and link files (GPU-only with KARAT
 * have 37; all eight headline systems about 130).  A point carries only
 * its own system's, within ARGS_MAX_MANY. */
#define STUDY_MAX_DRAWS 1024
#define STUDY_MAX_FIGS 192

/* karat validate (valid/fits.c): the shipped device and link files read
 * for the tables their values are fitted on (the zoo has about 30), and
 * the distinct tables named (it fits on 16). */
#define VALID_MAX_FILES 256
#define VALID_MAX_FITS 128

/* Command lines: values of one repeatable option (--set, --model, ...),
 * and positional arguments (merge takes a shard per file). */
#define ARGS_MAX_MANY 64
#define ARGS_MAX_POS 4096

#endif
