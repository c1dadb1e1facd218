/* cmd_ops.c: `karat ops`, the per-operator table of one decode step. */
#include <string.h>

#include "cli/load.h"
#include "cli/report.h"
#include "karat.h"

/* --set for ops: a model's sections (m), sparse.* (sp), hw.* (the device
 * d) and link.* (its link l), through the library's router; each call
 * applies the kinds whose target is given, so model overrides land before
 * the algorithm is parsed.  Returns 0, 1 (bad value) or 2 (usage). */
static int apply_sets(const struct args *a, struct kmodel *m, struct sparse_cfg *sp,
		      struct kdevice *d, struct klink *l, const char *name, struct kerr *err)
{
	static struct override ov[ARGS_MAX_MANY];
	int which[ARGS_MAX_MANY], n = 0;
	for (int i = 0; i < a->nmany; i++) {
		struct override o;
		if (override_parse(a->many[i], &o, err) != 0)
			return cli_set_error(err), 2;
		void *obj = o.part == OV_MODEL ? (void *)m : o.part == OV_SPARSE ? (void *)sp
			    : o.part == OV_HW ? (void *)d : o.part == OV_LINK ? (void *)l : NULL;
		if (o.part != OV_MODEL && o.part != OV_SPARSE && o.part != OV_HW &&
		    o.part != OV_LINK) {
			kerr_set(err, 0, 0, "--set %s: unknown section '%s' for ops (a model's "
				 "sections, sparse, hw for its device, link for the device's link)",
				 o.what, o.part == OV_SYSTEM || o.part == OV_WORKLOAD ? o.section
				 : ov_part_names[o.part]);
			return 2;
		}
		if (!obj)
			continue; /* another call's kind */
		int rc = override_apply(&o, obj, err);
		if (rc)
			return cli_set_error(err), rc == -2 ? 2 : 1;
		if (o.part == OV_MODEL || o.part == OV_HW)
			ov[i] = o, which[n++] = i;
	}
	/* the model or device checked again as its file is, with the overrides */
	int blamed;
	if ((m || d) && override_recheck(m ? ZOO_MODEL : ZOO_DEVICE, name, m ? (void *)m : d, ov,
					 which, n, &blamed, err) != 0)
		return cli_set_error(err), 1;
	return 0;
}

int cmd_ops(const struct args *a)
{
	const struct command *c = command_find("ops");
	const char *model = arg_get(c, a, "model"), *hw = arg_get(c, a, "hw");
	const char *batch = arg_get(c, a, "batch"), *ctx = arg_get(c, a, "context");
	const char *fmt = arg_get(c, a, "format");
	if (!model || !hw || !batch || !ctx)
		return usage_error(c, "--model, --hw, --batch and --context are required");
	int csv = 0;
	if (fmt && strcmp(fmt, "csv") == 0)
		csv = 1;
	else if (fmt && strcmp(fmt, "table") != 0)
		return usage_error(c, "--format must be table or csv, not '%.20s'", fmt);

	struct ops_setup o = {0};
	if (parse_count("batch", batch, 0, 1, 1e9, &o.b.requests) ||
	    parse_count("context", ctx, 1, 1, 1e9, &o.b.context))
		return EXIT_USAGE;
	o.b.gpus = 1;
	if (arg_get(c, a, "gpus") &&
	    parse_count("gpus", arg_get(c, a, "gpus"), 0, 1, 1e6, &o.b.gpus))
		return EXIT_USAGE;
	struct kmodel m;
	struct kdevice d;
	struct klink l;
	int rc = load_setup_args(model, hw, &m, &d, &l);
	if (rc)
		return rc;
	struct kerr err;
	if ((rc = apply_sets(a, &m, NULL, NULL, NULL, model, &err)) != 0) /* model sections */
		return rc == 2 ? usage_error(c, "%s", err.msg) : (die_msg("%s", err.msg), 1);
	o.b.mtp = m.mtp_draft;
	if (arg_get(c, a, "mtp") &&
	    parse_count("mtp", arg_get(c, a, "mtp"), 0, 0, 64, &o.b.mtp))
		return EXIT_USAGE;
	static struct sparse_cfg sp;
	sp = m.sp;
	const char *algo = arg_get(c, a, "algo");
	if (algo && sparse_parse_spec(algo, &m.sp, &sp, &err) != 0)
		return cli_prefix(&err, "--algo: ", ""), usage_error(c, "%s", err.msg);
	if ((rc = apply_sets(a, NULL, &sp, NULL, NULL, NULL, &err)) != 0) /* sparse.* */
		return rc == 2 ? usage_error(c, "%s", err.msg) : (die_msg("%s", err.msg), 1);
	if ((rc = attn_applicable(&m, &sp, arg_get(c, a, "force") != NULL, &err)) != 0) {
		cli_prefix(&err, "", rc == -2 ? " (--force costs it anyway)" : "");
		die_msg("%s", err.msg);
		return 1;
	}
	o.b.sp = &sp;
	const char *eff = arg_get(c, a, "eff-from");
	if (eff) { /* e.g. measured CPU efficiencies for KARAT's general-purpose cores */
		struct kdevice cal;
		struct klink unused;
		if ((rc = load_device_arg(eff, &cal, &unused)) != 0)
			return rc;
		memcpy(d.eff_c, cal.eff_c, sizeof d.eff_c);
		memcpy(d.eff_m, cal.eff_m, sizeof d.eff_m);
		d.overhead = cal.overhead;
	}
	if ((rc = apply_sets(a, NULL, NULL, &d, &l, hw, &err)) != 0) /* hw.*, link.*: last */
		return rc == 2 ? usage_error(c, "%s", err.msg) : (die_msg("%s", err.msg), 1);
	o.b.pad_topk = d.kind == DEV_GPU && d.fixed_topk > 0;
	o.b.a2a_per_gpu = l.a2a_sends == A2A_PER_GPU; /* the GPU's own link carries it */
	char dev_label[64], link_label[64];
	arg_label(hw, dev_label, sizeof dev_label);
	snprintf(link_label, sizeof link_label, "%s", d.link);
	o.m = &m, o.d = &d, o.l = &l;
	o.dev_label = dev_label, o.link_label = link_label;

	static struct step s;
	struct table t;
	if (ops_table(&o, &s, &t, csv) != 0)
		return 1;
	if (!csv)
		ops_heading(&o, &s, stdout);
	rc = table_write(&t, stdout, csv) != 0;
	if (!csv)
		ops_footer(&o, &s, stdout);
	if (!csv && rc == 0)
		rc = ops_kinds(&o, stdout);
	const char *roof = arg_get(c, a, "roofline");
	if (rc == 0 && roof)
		rc = ops_roofline(&o, &s, roof);
	table_free(&t);
	return rc;
}
