/* cmd_ops.c: `karat ops`, the per-operator table of one decode step. */
#include <string.h>

#include "cli/load.h"
#include "cli/override.h"
#include "cli/report.h"
#include "cost/attn.h"

/* --set for ops: model sections (m), sparse.* (sp), hw.KEY (the device d)
 * and link.KEY (its link l); each call applies the kinds whose target is
 * given, so model overrides land before the algorithm is parsed. */
static int apply_sets(const struct args *a, struct kmodel *m, struct sparse_cfg *sp,
		      struct kdevice *d, struct klink *l, struct kerr *err)
{
	for (int i = 0; i < a->nmany; i++) {
		struct override o;
		int rc = override_split(a->many[i], &o, err);
		if (rc)
			return rc;
		int model = override_is_model_section(o.section);
		int sparse = strcmp(o.section, "sparse") == 0;
		int dev = strcmp(o.section, "hw") == 0, link = strcmp(o.section, "link") == 0;
		if (!model && !sparse && !dev && !link) {
			kerr_set(err, 0, 0, "--set %s: unknown section '%s' for ops (model "
				 "sections, sparse, hw, link)", a->many[i], o.section);
			return 2;
		}
		if (model && m)
			rc = override_model(&o, m, &m->sp, err);
		else if (sparse && sp)
			rc = override_model(&o, NULL, sp, err);
		else if (dev && d && (!strcmp(o.key, "kind") || !strcmp(o.key, "ops") ||
				      !strcmp(o.key, "link"))) {
			kerr_set(err, 0, 0, "--set %s: copy the device file to change its %s",
				 o.what, o.key);
			rc = 2;
		} else if (dev && d)
			rc = override_field(&device_schema, NULL, &o, d, err);
		else if (link && l)
			rc = override_field(&link_schema, NULL, &o, l, err);
		if (rc)
			return rc;
	}
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
	if ((rc = apply_sets(a, &m, NULL, NULL, NULL, &err)) != 0) /* model sections */
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
	if ((rc = apply_sets(a, NULL, &sp, NULL, NULL, &err)) != 0) /* sparse.* */
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
	if ((rc = apply_sets(a, NULL, NULL, &d, &l, &err)) != 0) /* hw.*, link.*: last */
		return rc == 2 ? usage_error(c, "%s", err.msg) : (die_msg("%s", err.msg), 1);
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
	table_free(&t);
	return rc;
}
