/* cmd_ops.c: `karat ops`, the per-operator table of one decode step. */
#include <string.h>

#include "cli/load.h"
#include "cli/report.h"
#include "cost/attn.h"

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
	o.b.mtp = m.mtp_draft;
	if (arg_get(c, a, "mtp") &&
	    parse_count("mtp", arg_get(c, a, "mtp"), 0, 0, 64, &o.b.mtp))
		return EXIT_USAGE;
	static struct sparse_cfg sp;
	sp = m.sp;
	const char *algo = arg_get(c, a, "algo");
	struct kerr err;
	if (algo && sparse_parse_spec(algo, &m.sp, &sp, &err) != 0)
		return usage_error(c, "%s", err.msg);
	if (attn_applicable(&m, &sp, arg_get(c, a, "force") != NULL, &err) != 0) {
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
