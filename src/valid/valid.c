/* valid.c: validation tables (strict CSV through libcsv) and the model's
 * time of each row, priced as `karat ops` prices the operator: GEMMs as
 * one GEMM operator of the row's shape, attention kernels as the
 * operators of one decoder layer of the row's model with the row's batch,
 * context, heads, query length and top-k. */
#include "valid/valid.h"

#include <csv.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/roofline.h"
#include "cost/step.h"
#include "io/file.h"
#include "solve/solve.h"
#include "zoo/design.h"
#include "zoo/zoo.h"

const char *const vkernel_names[VK_N + 1] = {"gemm", "grouped_gemm", "mla_decode",
					     "sparse_mla_decode", "indexer", "topk",
					     "serving", "dispatch", "combine",
					     "dispatch_combine", 0};
const char *const valid_columns[VALID_COLUMNS_MAX] = {
	"kernel", "model", "device", "dtype", "batch", "context", "heads", "q_len", "topk",
	"m", "n", "k", "groups", "gpus", "measured", "unit", "source", "scaleout_link",
	"a2a_route", "a2a_sends"};

/* Which conditions each kernel needs (bit i: valid_columns[4 + i]). */
enum { C_BATCH = 1, C_CTX = 2, C_HEADS = 4, C_Q = 8, C_TOPK = 16, C_M = 32, C_N = 64,
       C_K = 128, C_G = 256, C_GPUS = 512 };
static const unsigned needs[VK_N] = {
	[VK_GEMM] = C_M | C_N | C_K,
	[VK_GROUPED] = C_M | C_N | C_K | C_G,
	[VK_MLA] = C_BATCH | C_CTX | C_HEADS | C_Q,
	[VK_SPARSE_MLA] = C_BATCH | C_CTX | C_HEADS | C_Q | C_TOPK,
	[VK_INDEXER] = C_BATCH | C_CTX | C_Q,
	[VK_TOPK] = C_BATCH | C_CTX | C_TOPK,
	[VK_SERVING] = C_BATCH | C_CTX | C_Q | C_GPUS,
	[VK_DISPATCH] = C_BATCH | C_GPUS,
	[VK_COMBINE] = C_BATCH | C_GPUS,
	[VK_A2A_PAIR] = C_BATCH | C_GPUS,
};

int valid_is_a2a(enum vkernel k)
{
	return k == VK_DISPATCH || k == VK_COMBINE || k == VK_A2A_PAIR;
}

const char *valid_unit(enum vkernel k)
{
	return k == VK_SERVING ? "tok_s_per_gpu" : "us";
}

struct reader {
	struct vtable *t;
	struct vrow row;
	int field, line, failed, cap;
	int ncols; /* the header's: VALID_COLUMNS or VALID_COLUMNS_MAX */
	char msg[300];
};

static void rd_fail(struct reader *r, const char *fmt, ...)
{
	if (r->failed)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
	r->failed = 1;
}

static void copy(char *dst, size_t n, const char *s, size_t len, struct reader *r,
		 const char *col)
{
	if (len >= n)
		rd_fail(r, "%s is longer than %zu characters", col, n - 1);
	else
		memcpy(dst, s, len), dst[len] = 0;
}

/* The index of the name txt[0..len) in a NULL-terminated table; the
 * index of its NULL when absent. */
static int name_index(const char *const *names, const char *txt, size_t len)
{
	int k = 0;
	while (names[k] && (strlen(names[k]) != len || memcmp(names[k], txt, len) != 0))
		k++;
	return k;
}

static void on_field(void *s, size_t len, void *data)
{
	struct reader *r = data;
	const char *txt = s;
	int f = r->field++;
	if (r->failed)
		return;
	if (r->line == 1) { /* the header */
		if (f >= VALID_COLUMNS_MAX || strlen(valid_columns[f]) != len ||
		    memcmp(valid_columns[f], txt, len) != 0)
			rd_fail(r, "column %d must be '%s' (header: kernel,model,device,dtype,batch,"
				"context,heads,q_len,topk,m,n,k,groups,gpus,measured,unit,source, "
				"then optionally scaleout_link,a2a_route and a2a_sends)",
				f + 1, f < VALID_COLUMNS_MAX ? valid_columns[f] : "(none)");
		return;
	}
	struct vrow *w = &r->row;
	if (f >= r->ncols) {
		rd_fail(r, "more than %d fields", r->ncols);
	} else if (f == 17) {
		copy(w->scaleout, sizeof w->scaleout, txt, len, r, "scaleout_link");
	} else if (f == 18) {
		int k = name_index(a2a_route_names, txt, len);
		if (len && !a2a_route_names[k])
			rd_fail(r, "a2a_route '%.*s' is not flat or hierarchical", (int)len, txt);
		w->hier = k == A2A_HIER, w->route_said = len > 0;
	} else if (f == 19) {
		int k = name_index(a2a_sends_names, txt, len);
		if (len && !a2a_sends_names[k])
			rd_fail(r, "a2a_sends '%.*s' is not expert or gpu", (int)len, txt);
		w->sends = len ? k : -1;
	} else if (f == 0) {
		int k = name_index(vkernel_names, txt, len);
		if (!vkernel_names[k])
			rd_fail(r, "unknown kernel '%.*s' (gemm, grouped_gemm, mla_decode, "
				"sparse_mla_decode, indexer, topk, serving, dispatch, combine, "
				"dispatch_combine)",
				(int)len, txt);
		w->kernel = (enum vkernel)k;
	} else if (f == 1) {
		copy(w->model, sizeof w->model, txt, len, r, "model");
	} else if (f == 2) {
		copy(w->device, sizeof w->device, txt, len, r, "device");
	} else if (f == 3) {
		copy(w->dtype, sizeof w->dtype, txt, len, r, "dtype");
	} else if (f == 15) {
		copy(w->unit, sizeof w->unit, txt, len, r, "unit");
	} else if (f == 16) {
		copy(w->source, sizeof w->source, txt, len, r, "source");
	} else {
		double *v[] = {&w->batch, &w->context, &w->heads, &w->q_len, &w->topk,
			       &w->m, &w->n, &w->k, &w->groups, &w->gpus, &w->measured};
		double *dst = v[f - 4];
		if (len == 0) {
			*dst = NAN;
			return;
		}
		char buf[64], *end;
		copy(buf, sizeof buf, txt, len, r, valid_columns[f]);
		if (r->failed)
			return;
		*dst = strtod(buf, &end);
		if (*end || !isfinite(*dst) || !(*dst > 0))
			rd_fail(r, "%s: '%s' is not a number > 0", valid_columns[f], buf);
	}
}

/* The dtype a row names (DT_N: none). */
static enum dtype row_dtype(const char *name)
{
	int dt = 0;
	while (dtype_names[dt] && strcmp(dtype_names[dt], name) != 0)
		dt++;
	return (enum dtype)dt;
}

static int check_row(struct reader *r)
{
	struct vrow *w = &r->row;
	if (r->field != r->ncols)
		return rd_fail(r, "%d fields, expected %d", r->field, r->ncols), -1;
	if (!w->device[0] || !w->source[0] || isnan(w->measured))
		return rd_fail(r, "device, measured and source are required"), -1;
	if (strcmp(w->unit, valid_unit(w->kernel)) != 0)
		return rd_fail(r, "unit of %s must be %s (got '%s')", vkernel_names[w->kernel],
			       valid_unit(w->kernel), w->unit), -1;
	const double *v[] = {&w->batch, &w->context, &w->heads, &w->q_len, &w->topk,
			     &w->m, &w->n, &w->k, &w->groups, &w->gpus};
	for (int i = 0; i < 10; i++) {
		int want = (needs[w->kernel] >> i) & 1;
		if (want == !!isnan(*v[i]))
			return rd_fail(r, "%s %s %s", vkernel_names[w->kernel],
				       want ? "needs" : "does not take", valid_columns[4 + i]),
			       -1;
	}
	if (!valid_is_a2a(w->kernel) && (w->scaleout[0] || w->route_said || w->sends >= 0))
		return rd_fail(r, "%s does not take scaleout_link, a2a_route or a2a_sends",
			       vkernel_names[w->kernel]), -1;
	int model_kernel = (w->kernel >= VK_MLA && w->kernel <= VK_INDEXER) ||
			   w->kernel >= VK_SERVING;
	if (model_kernel != !!w->model[0])
		return rd_fail(r, "%s %s a model", vkernel_names[w->kernel],
			       model_kernel ? "needs" : "does not take"), -1;
	/* a GEMM's dtype, what an all-to-all sends, and the cache an MLA
	 * kernel reads, where they say (empty: the model's); the others' is
	 * their kernel's, for the reader */
	int said = valid_is_a2a(w->kernel) || w->kernel == VK_MLA || w->kernel == VK_SPARSE_MLA;
	if ((w->kernel <= VK_GROUPED || (said && w->dtype[0])) && row_dtype(w->dtype) == DT_N)
		return rd_fail(r, "dtype '%s' is not fp4, fp8, bf16 or fp32", w->dtype), -1;
	return 0;
}

static void on_row(int c, void *data)
{
	(void)c;
	struct reader *r = data;
	if (!r->failed && r->line > 1 && check_row(r) == 0) {
		struct vtable *t = r->t;
		if (t->n == r->cap) {
			int cap = r->cap ? 2 * r->cap : 64;
			struct vrow *g = realloc(t->rows, sizeof *g * (size_t)cap);
			if (!g) {
				rd_fail(r, "out of memory");
				return;
			}
			t->rows = g, r->cap = cap;
		}
		r->row.line = r->line;
		t->rows[t->n++] = r->row;
	} else if (!r->failed && r->line == 1 && r->field != VALID_COLUMNS &&
		   r->field != VALID_COLUMNS_A2A && r->field != VALID_COLUMNS_MAX) {
		rd_fail(r, "the header has %d columns, expected %d (or %d with scaleout_link and "
			"a2a_route, %d with a2a_sends too)", r->field, VALID_COLUMNS,
			VALID_COLUMNS_A2A, VALID_COLUMNS_MAX);
	} else if (r->line == 1) {
		r->ncols = r->field;
	}
	if (!r->failed)
		r->line++;
	r->field = 0;
	memset(&r->row, 0, sizeof r->row);
	r->row.sends = -1;
}

int vtable_read(const char *path, struct vtable *t, struct kerr *err)
{
	char *buf;
	size_t len;
	memset(t, 0, sizeof *t);
	if (file_read_all(path, 64LL << 20, "validation table", " (a table is a CSV file)", &buf,
			  &len, err) != 0)
		return -1;
	int rc = vtable_parse(path, buf, len, t, err);
	free(buf);
	return rc;
}

int vtable_parse(const char *path, const char *buf, size_t len, struct vtable *t,
		 struct kerr *err)
{
	memset(t, 0, sizeof *t);
	snprintf(t->path, sizeof t->path, "%s", path);
	struct reader r = {.t = t, .line = 1};
	struct csv_parser p;
	int rc = -1;
	if (csv_init(&p, CSV_APPEND_NULL | CSV_STRICT | CSV_STRICT_FINI) != 0)
		return kerr_set(err, path, 0, "cannot start the CSV parser");
	if (csv_parse(&p, buf, len, on_field, on_row, &r) != len && !r.failed)
		rd_fail(&r, "%s", csv_strerror(csv_error(&p)));
	if (!r.failed && csv_fini(&p, on_field, on_row, &r) != 0)
		rd_fail(&r, "%s", csv_strerror(csv_error(&p)));
	csv_free(&p);
	if (r.failed)
		kerr_set(err, path, r.line, "%s", r.msg);
	else if (t->n == 0)
		kerr_set(err, path, 1, "no rows after the header");
	else
		rc = 0;
	if (rc != 0)
		vtable_free(t);
	return rc;
}

void vtable_free(struct vtable *t)
{
	free(t->rows);
	t->rows = NULL, t->n = 0;
}

static double instance_time(const struct step *s, enum op_kind k)
{
	for (int i = 0; i < s->n; i++)
		if (s->op[i].kind == k)
			return s->op[i].time;
	return 0;
}

/* The attention kernels: the operators of one decoder layer of the row's
 * model on one GPU, as `karat ops` builds them. */
static int layer_kernel(const struct vrow *r, const struct kdevice *d, const struct klink *l,
			double *t, struct kerr *err)
{
	static _Thread_local struct step s;
	struct kmodel m;
	if (zoo_load_model(r->model, &m, NULL, err) != 0)
		return -1;
	if (!isnan(r->heads))
		m.heads = r->heads;
	if (!isnan(r->topk))
		m.sp.p[SP_TOPK] = r->topk;
	if (r->dtype[0] && r->kernel != VK_INDEXER) { /* the cache it reads: one dtype, */
		m.kv_dt = m.kv_rope_dt = row_dtype(r->dtype); /* a per-tensor scale */
		m.kv_scale_bytes = 0;
	}
	unsigned char seq[PIPE_MAX_LAYERS];
	struct layer_kind kinds[PIPE_MAX_CLASSES];
	double counts[PIPE_MAX_CLASSES];
	step_layer_kinds(&m, &m.sp, seq, kinds, counts);
	struct kbatch b = {.requests = r->batch, .gpus = 1, .context = r->context,
			   .mtp = r->q_len - 1, .part = STEP_LAYER, .kind = kinds[seq[0]],
			   .pad_topk = d->kind == DEV_GPU && d->fixed_topk > 0};
	if (b.mtp > 0 && m.mtp_layers == 0)
		m.mtp_layers = 1; /* a query of several tokens, not a draft module */
	if (step_build(&m, &b, &s, err) != 0)
		return -1;
	step_time(&s, d, l);
	if (r->kernel == VK_INDEXER)
		*t = instance_time(&s, OP_INDEX_SCAN);
	else /* the gather is inside the sparse kernel */
		*t = instance_time(&s, OP_ATTENTION) + instance_time(&s, OP_GATHER);
	if (!(*t > 0))
		return kerr_set(err, 0, 0, "model %s has no %s operator", r->model,
				r->kernel == VK_INDEXER ? "index_scan" : "attention");
	return 0;
}

/* A deployment as the solver sees it: the shipped GPU-only system with
 * the row's GPU, its own scale-up link and GPU count, two micro-batches
 * (as DeepSeek decodes: github.com/deepseek-ai/profile-data README) and
 * OFMS, at batch x gpus requests of `context` tokens. */
static int serving(const struct vrow *r, const struct kdevice *d, double *v, struct kerr *err)
{
	char gpu[80], gpus[48], up[80];
	snprintf(gpu, sizeof gpu, "system.gpu=%s", r->device);
	snprintf(gpus, sizeof gpus, "system.gpus=%.0f", r->gpus);
	snprintf(up, sizeof up, "system.scaleup_link=%s", d->link);
	const char *sets[] = {gpu, gpus, up};
	struct design_spec s = DESIGN_SPEC_INIT;
	s.model = r->model, s.system = "gpu-only", s.context = r->context;
	s.sets = sets, s.nsets = 3, s.sched = SCHED_OFMS, s.mtp = r->q_len - 1;
	struct design_parts *dp = calloc(1, sizeof *dp);
	if (!dp)
		return kerr_set(err, 0, 0, "out of memory");
	int rc = design_assemble(&s, dp, err) == 0 ? 0 : -1;
	struct plan *p = rc == 0 ? plan_new(&dp->d, err) : NULL;
	struct result res;
	if (rc == 0 && (!p || plan_eval(p, r->batch * r->gpus, 2, &res, err) != 0))
		rc = -1;
	if (rc == 0)
		*v = res.throughput / r->gpus;
	plan_free(p);
	design_free(dp);
	free(dp);
	return rc;
}

/* The bytes one all-to-all kernel of row r moves out of each GPU on
 * model m0 (valid_a2a_bytes): the dispatch or the combine, in `dtype`
 * where it names one, else the model's own. */
static int kernel_bytes(const struct vrow *r, const struct kmodel *m0, int dispatch,
			const char *dtype, int per_gpu, double *bytes, struct kerr *err)
{
	static _Thread_local struct step s;
	struct kmodel m = *m0;
	unsigned char seq[PIPE_MAX_LAYERS];
	struct layer_kind kinds[PIPE_MAX_CLASSES];
	double counts[PIPE_MAX_CLASSES];
	int nk = step_layer_kinds(&m, &m.sp, seq, kinds, counts), k = 0;
	while (k < nk && !kinds[k].moe)
		k++;
	if (k == nk)
		return kerr_set(err, 0, 0, "model %s has no MoE layer", r->model);
	if (dtype[0]) /* what the row's kernel sends (check_row: a dtype) */
		*(dispatch ? &m.dispatch_dt : &m.act_dt) = row_dtype(dtype);
	struct kbatch b = {.requests = r->batch * r->gpus, .gpus = r->gpus, .context = 1024,
			   .part = STEP_LAYER, .kind = kinds[k], .a2a_per_gpu = per_gpu};
	if (step_build(&m, &b, &s, err) != 0)
		return -1;
	enum op_kind want = dispatch ? OP_DISPATCH : OP_COMBINE;
	for (int i = 0; i < s.n; i++)
		if (s.op[i].kind == want) {
			*bytes = s.op[i].bytes;
			return 0;
		}
	return kerr_set(err, 0, 0, "model %s: no %s", r->model, op_table[want].name);
}

int valid_a2a_bytes(const struct vrow *r, int per_gpu, double *bytes, struct kerr *err)
{
	struct kmodel m;
	if (r->kernel != VK_DISPATCH && r->kernel != VK_COMBINE)
		return kerr_set(err, 0, 0, "%s is not one all-to-all kernel",
				vkernel_names[r->kernel]);
	if (zoo_load_model(r->model, &m, NULL, err) != 0)
		return -1;
	return kernel_bytes(r, &m, r->kernel == VK_DISPATCH, r->dtype, per_gpu, bytes, err);
}

/* The expert all-to-all of a row as the solver prices it
 * (roofline_a2a_nodes), on the GPU's scale-up link inside a node and,
 * across nodes, the row's scale-out link and route (default: the shipped
 * GPU-only system's link, flat) at GPU-only's node size, with the kernels
 * of the link it crosses (the scale-up link's inside a node).  A
 * dispatch_combine row is its dispatch in the row's dtype plus the
 * combine of the model's activations. */
static int all_to_all(const struct vrow *r, const struct klink *up, double *t, struct kerr *err)
{
	struct ksystem sys;
	struct klink out;
	struct kmodel m;
	if (zoo_load_system("gpu-only", &sys, NULL, err) != 0 ||
	    zoo_load_link(r->scaleout[0] ? r->scaleout : sys.scaleout_link, &out, NULL, err) != 0 ||
	    zoo_load_model(r->model, &m, NULL, err) != 0)
		return -1;
	double G = r->gpus, gpn = sys.gpus_per_node;
	int per_gpu = r->sends >= 0 ? r->sends == A2A_PER_GPU : roofline_a2a_per_gpu(up, &out, G, gpn);
	double cross = roofline_a2a_cross(G, gpn, m.experts, m.active_experts, r->hier, per_gpu);
	*t = 0;
	for (int dispatch = 1; dispatch >= 0; dispatch--) {
		if (r->kernel == (dispatch ? VK_COMBINE : VK_DISPATCH))
			continue; /* not this row's kernel */
		double bytes;
		const char *dt = r->kernel == VK_A2A_PAIR && !dispatch ? "" : r->dtype;
		if (kernel_bytes(r, &m, dispatch, dt, per_gpu, &bytes, err) != 0)
			return -1;
		*t += roofline_a2a_nodes(up, &out, G, gpn, cross, bytes, dispatch);
	}
	return 0;
}

void valid_gemm_op(const struct vrow *r, struct op_cost *o)
{
	enum dtype dt = row_dtype(r->dtype);
	double g = r->kernel == VK_GROUPED ? r->groups : 1, e = dtype_bytes(dt);
	*o = (struct op_cost){.kind = OP_O_PROJ, .base = OP_O_PROJ, .cls = OC_GEMM,
			      .side = SIDE_GPU, .dt = dt, .count = 1,
			      .flops = 2 * g * r->m * r->n * r->k,
			      .bytes = g * ((r->n + r->m) * r->k * e + 2 * r->m * r->n),
			      .gm = r->m, .gn = r->n, .gk = r->k, .groups = g};
}

int valid_model(const struct vrow *r, double *us, struct kerr *err)
{
	struct kdevice d;
	struct klink l;
	if (zoo_load_device(r->device, &d, NULL, err) != 0 ||
	    zoo_load_link(d.link, &l, NULL, err) != 0)
		return -1;
	double t = 0;
	if (r->kernel == VK_GEMM || r->kernel == VK_GROUPED) {
		struct op_cost o;
		valid_gemm_op(r, &o);
		roofline_op(&o, &d, &l);
		t = o.time;
	} else if (r->kernel == VK_TOPK) {
		/* `batch` rows of `context` FP32 scores, each read once */
		struct op_cost o = {.kind = OP_TOPK, .base = OP_TOPK, .cls = OC_SCAN,
				    .side = SIDE_CACHE, .dt = DT_FP32, .count = 1,
				    .flops = r->batch * r->context,
				    .bytes = 4 * r->batch * r->context, .groups = 1,
				    .rows = r->batch};
		roofline_op(&o, &d, &l);
		t = o.time;
	} else if (r->kernel == VK_SERVING) {
		return serving(r, &d, us, err);
	} else if (valid_is_a2a(r->kernel)) {
		if (all_to_all(r, &l, &t, err) != 0)
			return -1;
	} else if (layer_kernel(r, &d, &l, &t, err) != 0) {
		return -1;
	}
	if (!isfinite(t))
		return kerr_set(err, 0, 0, "device %s cannot run %s", r->device,
				vkernel_names[r->kernel]);
	*us = t * 1e6;
	return 0;
}
