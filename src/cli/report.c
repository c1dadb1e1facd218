/* report.c: formatting the operators of one decode step. */
#include "cli/report.h"
#include "karat.h"

#include <math.h>
#include <string.h>

static const char *const csv_head[] = {
	"op", "device", "count", "flops", "bytes", "intensity_flop_per_byte",
	"time_s", "bound"};
static const char *const txt_head[] = {
	"op", "device", "count", "GFLOP", "MB", "FLOP/B", "time_us", "share", "bound", "kernels"};
static const int txt_right[] = {0, 0, 1, 1, 1, 1, 1, 1, 0, 0};

/* Kernels one instance launches on d: a count, "in OP" when fused into
 * another operator's kernel (a GPU), "" for the all-to-all and the total. */
static void kernels(char *buf, enum op_kind k, const struct kdevice *d, int is_total)
{
	if (is_total || op_table[k].side == SIDE_LINK)
		buf[0] = 0;
	else if (d->kind == DEV_GPU && op_table[k].fused_into)
		snprintf(buf, OUT_CELL, "in %s", op_table[k].fused_into);
	else
		snprintf(buf, OUT_CELL, "%d", d->kind == DEV_GPU ? op_gpu_kernels(k) : 1);
}

static void num(char *buf, double v, int csv)
{
	if (isinf(v))
		snprintf(buf, OUT_CELL, "inf");
	else
		snprintf(buf, OUT_CELL, csv ? "%.15g" : "%.4g", v);
}

static void add_row(struct table *t, enum op_kind k, const char *op, const char *dev,
		    const struct kdevice *d, const struct op_row *r, double total_time, int csv,
		    int is_total)
{
	char c[10][OUT_CELL];
	snprintf(c[0], OUT_CELL, "%s", op);
	snprintf(c[1], OUT_CELL, "%s", dev);
	snprintf(c[2], OUT_CELL, "%.15g", r->count);
	num(c[3], csv ? r->flops : r->flops / 1e9, csv);
	num(c[4], csv ? r->bytes : r->bytes / 1e6, csv);
	num(c[5], r->bytes > 0 ? r->flops / r->bytes : 0, csv);
	num(c[6], csv ? r->time : r->time * 1e6, csv);
	snprintf(c[7], OUT_CELL, "%.1f%%",
		 total_time > 0 && isfinite(total_time) ? 100 * r->time / total_time : 0);
	const char *bound = is_total ? "" : bound_names[r->bound];
	kernels(c[9], k, d, is_total);
	const char *cells[10] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6],
				 csv ? bound : c[7], bound, c[9]}; /* CSV: the first 8 */
	table_add(t, cells);
}

int ops_table(const struct ops_setup *o, struct step *s, struct table *t,
	      int csv)
{
	struct kerr err;
	if (step_build(o->m, &o->b, s, &err) != 0) {
		die_msg("%s", err.msg);
		return 1;
	}
	step_time(s, o->d, o->l);
	struct op_row rows[OP_N], total;
	step_rows(s, rows, &total);
	table_init(t, csv ? 8 : 10, csv ? csv_head : txt_head, csv ? NULL : txt_right);
	for (int k = 0; k < OP_N; k++)
		if (rows[k].present)
			add_row(t, (enum op_kind)k, op_table[k].name,
				op_table[k].side == SIDE_LINK ? o->link_label : o->dev_label, o->d,
				&rows[k], total.time, csv, 0);
	add_row(t, OP_N, "total", "", o->d, &total, total.time, csv, 1);
	return 0;
}

void ops_heading(const struct ops_setup *o, const struct step *s, FILE *fp)
{
	fprintf(fp, "%s on %s: batch %g (%g per device), context %g, %g GPU%s, "
		"algo %s, MTP %g draft token%s (q = %g)\n",
		o->m->name, o->d->name, o->b.requests, s->local, o->b.context,
		o->b.gpus, o->b.gpus == 1 ? "" : "s", algo_table[o->b.sp->algo].name,
		o->b.mtp, o->b.mtp == 1 ? "" : "s", s->q);
}

void ops_footer(const struct ops_setup *o, const struct step *s, FILE *fp)
{
	double side[3] = {0}, total = 0;
	for (int i = 0; i < s->n; i++) {
		double t = s->op[i].count * s->op[i].time;
		side[s->op[i].side] += t;
		total += t;
	}
	if (!isfinite(total)) {
		fprintf(fp, "step time: infinite: %s cannot run every operator "
			"(see 'unsupported' rows)\n", o->d->name);
	} else {
		fprintf(fp, "step time %.3f ms: weights side %.1f%%, cache side %.1f%%, "
			"all-to-all %.1f%%\n", total * 1e3, 100 * side[SIDE_GPU] / total,
			100 * side[SIDE_CACHE] / total, 100 * side[SIDE_LINK] / total);
	}
	double w = model_weight_bytes(o->m, o->b.gpus);
	double kv, idx;
	attn_storage(o->m, o->b.sp, o->b.context, o->b.mtp > 0 ? o->m->mtp_layers : 0, &kv, &idx);
	double cache = (kv + idx) * s->local;
	double need = w + cache;
	double usable = device_cache_capacity(o->d);
	char reserve[64] = "";
	if (usable < o->d->mem_capacity)
		snprintf(reserve, sizeof reserve, " (%.1f GB less its %.1f GB reserve)",
			 o->d->mem_capacity / 1e9, (o->d->mem_capacity - usable) / 1e9);
	fprintf(fp, "memory: weights %.1f GB + KV %.1f GB + index %.1f GB "
		"(%.3g GB per request) = %.1f GB of %.1f GB%s: %s\n",
		w / 1e9, kv * s->local / 1e9, idx * s->local / 1e9, (kv + idx) / 1e9, need / 1e9,
		usable / 1e9, reserve,
		need <= usable ? "fits" : "does NOT fit (times above assume it did)");
}

/* The step's time by part: one layer of each kind, then the tail. */
static int part_time(const struct ops_setup *o, struct kbatch b, struct step *s, double side[3])
{
	struct kerr err;
	if (step_build(o->m, &b, s, &err) != 0) {
		die_msg("%s", err.msg);
		return 1;
	}
	step_time(s, o->d, o->l);
	side[0] = side[1] = side[2] = 0;
	for (int i = 0; i < s->n; i++)
		side[s->op[i].side] += s->op[i].count * s->op[i].time;
	return 0;
}

int ops_kinds(const struct ops_setup *o, FILE *fp)
{
	static unsigned char seq[PIPE_MAX_LAYERS];
	static struct step s;
	struct layer_kind kinds[PIPE_MAX_CLASSES];
	double counts[PIPE_MAX_CLASSES], side[3], step = 0;
	int nk = step_layer_kinds(o->m, o->b.sp, seq, kinds, counts);
	static const char *const head[] = {"layers of kind", "layers", "weights_us", "cache_us",
					   "all_to_all_us", "per_layer_us", "share"};
	static const int right[] = {0, 1, 1, 1, 1, 1, 1};
	char c[PIPE_MAX_CLASSES + 1][7][OUT_CELL];
	double t[PIPE_MAX_CLASSES + 1];
	for (int k = 0; k <= nk; k++) {
		struct kbatch b = o->b;
		b.part = k < nk ? STEP_LAYER : STEP_TAIL;
		if (k < nk)
			b.kind = kinds[k];
		if (part_time(o, b, &s, side) != 0)
			return 1;
		t[k] = side[0] + side[1] + side[2];
		step += (k < nk ? counts[k] : 1) * t[k];
		static const char *const how[LC_N] = {[LC_SPARSE] = "", [LC_DENSE] = "",
						      [LC_SHARE] = " reusing a selection",
						      [LC_REINDEX] = " re-scoring candidates"};
		const char *algo = kinds[k].cls == LC_DENSE ? "dense" : algo_names[o->b.sp->algo];
		if (k < nk)
			snprintf(c[k][0], OUT_CELL, "%s%s, %s FFN", algo, how[kinds[k].cls],
				 kinds[k].moe ? "MoE" : "dense");
		else
			snprintf(c[k][0], OUT_CELL, "tail (LM head, sampling, MTP)");
		snprintf(c[k][1], OUT_CELL, "%g", k < nk ? counts[k] : 1);
		for (int x = 0; x < 3; x++) /* SIDE_GPU, SIDE_CACHE, SIDE_LINK */
			snprintf(c[k][2 + x], OUT_CELL, "%.4g", side[x] * 1e6);
		snprintf(c[k][5], OUT_CELL, "%.4g", t[k] * 1e6);
	}
	struct table tb;
	table_init(&tb, 7, head, right);
	for (int k = 0; k <= nk; k++) {
		double n = k < nk ? counts[k] : 1;
		snprintf(c[k][6], OUT_CELL, "%.1f%%", step > 0 && isfinite(step) ?
			 100 * n * t[k] / step : 0);
		const char *cells[7] = {c[k][0], c[k][1], c[k][2], c[k][3], c[k][4], c[k][5], c[k][6]};
		table_add(&tb, cells);
	}
	fprintf(fp, "\nby kind of layer (each layer of a kind costs the same; the pipeline "
		"runs them in the model's order):\n");
	int rc = table_write(&tb, fp, 0) != 0;
	table_free(&tb);
	return rc;
}

int ops_roofline(const struct ops_setup *o, const struct step *s, const char *path)
{
	static const char *const head[] = {"op", "side", "class", "dtype", "flops", "bytes",
					   "intensity_flop_per_byte", "time_s",
					   "achieved_flops_per_s", "peak_flops_per_s",
					   "bandwidth_bytes_per_s", "point"};
	/* the step it comes from, in words (karat plot's titles read it) */
	char point[OUT_CELL], ctx[32];
	if (o->b.context >= 1024 && fmod(o->b.context, 1024) == 0)
		snprintf(ctx, sizeof ctx, "%.0fK", o->b.context / 1024);
	else
		snprintf(ctx, sizeof ctx, "%.0f", o->b.context);
	snprintf(point, sizeof point, "%s: %s, %.0f requests at %s on %.0f GPU%s", o->dev_label,
		 o->m->name, o->b.requests, ctx, o->b.gpus, o->b.gpus == 1 ? "" : "s");
	struct op_row rows[OP_N], total;
	step_rows(s, rows, &total);
	int dt[OP_N]; /* each kind's data type: its first instance's */
	for (int i = s->n - 1; i >= 0; i--)
		dt[s->op[i].kind] = s->op[i].dt;
	struct table tab;
	table_init(&tab, 12, head, NULL);
	for (int k = 0; k < OP_N; k++) {
		double f = rows[k].flops, b = rows[k].bytes, t = rows[k].time;
		if (!rows[k].present || !(f > 0) || !(b > 0) || !(t > 0) || !isfinite(t) ||
		    op_table[k].side == SIDE_LINK)
			continue; /* a point needs FLOPs and bytes; links have no roofline */
		static const char *const sides[] = {"gpu", "cache", "link"};
		char c[7][OUT_CELL];
		snprintf(c[0], OUT_CELL, "%.15g", f);
		snprintf(c[1], OUT_CELL, "%.15g", b);
		snprintf(c[2], OUT_CELL, "%.15g", f / b);
		snprintf(c[3], OUT_CELL, "%.15g", t);
		snprintf(c[4], OUT_CELL, "%.15g", f / t);
		snprintf(c[5], OUT_CELL, "%.15g", device_peak(o->d, (enum dtype)dt[k], NULL));
		snprintf(c[6], OUT_CELL, "%.15g", o->d->mem_bw);
		const char *row[12] = {op_table[k].name, sides[op_table[k].side],
				       op_class_names[op_table[k].cls], dtype_names[dt[k]],
				       c[0], c[1], c[2], c[3], c[4], c[5], c[6], point};
		table_add(&tab, row);
	}
	int rc = write_atomic(path, &tab, 1) != 0;
	table_free(&tab);
	return rc;
}
