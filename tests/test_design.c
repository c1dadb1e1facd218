/* test_design.c: the design assembled in the library (zoo/design.h) and
 * its one override router (zoo/override.h).  Every key `karat show`
 * prints for a design's files is an override, under the role that names
 * the file; an override lands where it belongs (system keys before the
 * devices they name are loaded, model keys before the algorithm); each
 * failure names its input; the defaults are the documented ones. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "karat.h"

static struct design_parts A, B;

static int assemble(const char *model, const char *system, const char *algo,
		    const char *const *sets, int nsets, struct design_parts *dp,
		    struct kerr *err)
{
	struct design_spec s = DESIGN_SPEC_INIT;
	s.model = model, s.system = system, s.algo = algo, s.workload = "agentic";
	s.sets = sets, s.nsets = nsets;
	design_free(dp);
	return design_assemble(&s, dp, err);
}

/* Each entry of doc, set under `role` to the value its file gives, leaves
 * the part exactly as loaded (the key as show prints it: section.key). */
static int round_trip(const char *role, const struct ini_doc *doc, const void *part,
		      const void *again, size_t size)
{
	int n = 0;
	struct kerr err;
	for (int i = 0; i < doc->n; i++) {
		const struct ini_entry *e = &doc->e[i];
		if (!strcmp(e->key, "kind") || !strcmp(e->key, "ops") || !strcmp(e->key, "link") ||
		    (!strcmp(e->section, "sparse") && !strcmp(e->key, "algo")))
			continue; /* refused on purpose: a copy of the file changes them */
		if (!strcmp(e->section, "range"))
			continue; /* a figure's range, not a figure (show prints them apart) */
		char item[600];
		if (role[0])
			snprintf(item, sizeof item, "%s.%s.%s=%s", role, e->section, e->key, e->value);
		else
			snprintf(item, sizeof item, "%s.%s=%s", e->section, e->key, e->value);
		const char *sets[1] = {item};
		int rc = assemble("deepseek-v3.2", "gpu-karat", NULL, sets, 1, &B, &err);
		cr_expect_eq(rc, 0, "%s: %s", item, err.msg);
		int link = strstr(role, "link") != NULL || !strcmp(role, "gpu_port");
		if (rc == 0 && link) {
			/* a link's kernel value set here is not its fit, so it is
			 * no longer marked fitted (zoo/override.c); all else stays */
			struct klink a = *(const struct klink *)part, b = *(const struct klink *)again;
			if (cal_is_kernel_value(e->section, e->key)) {
				cr_expect_eq(b.fitted, 0, "%s: still marked fitted", item);
				b.fitted = a.fitted;
			}
			cr_expect(memcmp(&a, &b, sizeof a) == 0, "%s changed the %s", item, role);
		} else if (rc == 0)
			cr_expect(memcmp(part, again, size) == 0, "%s changed the %s", item,
				  role[0] ? role : "model");
		n++;
	}
	return n;
}

Test(design, every_key_show_prints_is_an_override)
{
	struct kerr err;
	cr_assert_eq(assemble("deepseek-v3.2", "gpu-karat", NULL, NULL, 0, &A, &err), 0, "%s",
		     err.msg);
	struct ini_doc *doc;
	struct kdevice dv;
	struct klink lk;
	struct kmodel m;
	struct ksystem sy;
	int n = 0;
	cr_assert_eq(zoo_load_device(A.sys.gpu, &dv, &doc, &err), 0, "%s", err.msg);
	n += round_trip("gpu", doc, &A.gpu, &B.gpu, sizeof A.gpu);
	ini_doc_free(doc);
	cr_assert_eq(zoo_load_device(A.sys.memdev, &dv, &doc, &err), 0, "%s", err.msg);
	n += round_trip("memdev", doc, &A.mem, &B.mem, sizeof A.mem);
	ini_doc_free(doc);
	const char *links[] = {A.sys.scaleup_link, A.sys.scaleout_link, A.sys.memdev_link,
			       A.sys.gpu_port};
	const char *roles[] = {"scaleup_link", "scaleout_link", "memdev_link", "gpu_port"};
	const struct klink *had[] = {&A.up, &A.out, &A.ml, &A.port};
	const struct klink *got[] = {&B.up, &B.out, &B.ml, &B.port};
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(zoo_load_link(links[i], &lk, &doc, &err), 0, "%s", err.msg);
		n += round_trip(roles[i], doc, had[i], got[i], sizeof lk);
		ini_doc_free(doc);
	}
	cr_assert_eq(zoo_load_system("gpu-karat", &sy, &doc, &err), 0, "%s", err.msg);
	n += round_trip("", doc, &A.sys, &B.sys, sizeof sy);
	ini_doc_free(doc);
	cr_assert_eq(zoo_load_model("deepseek-v3.2", &m, &doc, &err), 0, "%s", err.msg);
	n += round_trip("", doc, &A.m, &B.m, sizeof m);
	ini_doc_free(doc);
	cr_expect_geq(n, 60, "only %d keys tried", n);
	design_free(&A), design_free(&B);
}

Test(design, a_device_key_alone_or_with_its_section)
{
	struct kerr err;
	const char *full[] = {"memdev.memory.bandwidth=3TB/s", "gpu_port.link.bandwidth=50GB/s"};
	const char *alone[] = {"memdev.bandwidth=3TB/s", "gpu_port.bandwidth=50GB/s"};
	cr_assert_eq(assemble("deepseek-v3.2", "gpu-karat", NULL, full, 2, &A, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(assemble("deepseek-v3.2", "gpu-karat", NULL, alone, 2, &B, &err), 0, "%s",
		     err.msg);
	cr_expect_eq(A.mem.mem_bw, 3e12);
	cr_expect_eq(A.port.bw, 50e9);
	cr_expect(memcmp(&A.mem, &B.mem, sizeof A.mem) == 0);
	cr_expect(memcmp(&A.port, &B.port, sizeof A.port) == 0);
	design_free(&A), design_free(&B);
}

Test(design, overrides_land_where_they_belong)
{
	struct kerr err;
	/* the system's GPU is changed first, then the override of the GPU
	 * applies to the one it now names, whatever the order given */
	const char *sets[] = {"gpu.memory.bandwidth=1TB/s", "system.gpu=h100",
			      "sparse.topk=512", "attention.heads=64"};
	cr_assert_eq(assemble("deepseek-v3.2", "gpu-karat", "dsa:topk=1024", sets, 4, &A, &err), 0,
		     "%s", err.msg);
	cr_expect(strstr(A.gpu.name, "H100"), "%s", A.gpu.name);
	cr_expect_eq(A.gpu.mem_bw, 1e12);
	cr_expect_eq(A.sp.p[SP_TOPK], 512, "sparse.* lands after --algo");
	cr_expect_eq(A.m.heads, 64);
	cr_expect(A.d.sp == &A.sp && A.d.gpu == &A.gpu && A.d.mem == &A.mem);
	design_free(&A);
}

Test(design, each_failure_names_its_input)
{
	struct kerr err;
	struct design_spec s = DESIGN_SPEC_INIT;
	s.model = "deepseek-v3.9", s.system = "gpu-karat", s.workload = "agentic";
	cr_expect_eq(design_assemble(&s, &A, &err), -2);
	cr_expect_eq(A.fail, DI_MODEL);
	cr_expect(strstr(err.msg, "did you mean 'deepseek-v3'"), "%s", err.msg);
	cr_expect(!strstr(err.msg, "karat") && !strstr(err.msg, "--"), "CLI words: %s", err.msg);
	design_free(&A);

	const char *bad_key[] = {"system.gpus=16", "memdev.memory.bandwith=1TB/s"};
	cr_expect_eq(assemble("deepseek-v3.2", "gpu-karat", NULL, bad_key, 2, &A, &err), -2);
	cr_expect(A.fail == DI_SET && A.fail_set == 1, "fail %d set %d", A.fail, A.fail_set);
	cr_expect(strstr(err.msg, "did you mean 'memory.bandwidth'"), "%s", err.msg);

	const char *bad_value[] = {"system.gpus=3.5"};
	cr_expect_eq(assemble("deepseek-v3.2", "gpu-karat", NULL, bad_value, 1, &A, &err), -1);
	cr_expect(A.fail == DI_SET && A.fail_set == 0);

	const char *bad_section[] = {"memdevs.bandwidth=1"};
	cr_expect_eq(assemble("deepseek-v3.2", "gpu-karat", NULL, bad_section, 1, &A, &err), -2);
	cr_expect(strstr(err.msg, "did you mean 'memdev'"), "%s", err.msg);

	cr_expect_eq(assemble("deepseek-v3.2", "gpu-karat", "dsb", NULL, 0, &A, &err), -2);
	cr_expect_eq(A.fail, DI_ALGO);
	cr_expect_eq(assemble("deepseek-v3", "gpu-karat", "dsa", NULL, 0, &A, &err), -1);
	cr_expect_eq(A.fail, DI_FORCE);
	cr_expect_eq(assemble("deepseek-v3.2", "gpu-karat", "gqa", NULL, 0, &A, &err), -1);
	cr_expect_eq(A.fail, DI_ALGO, "a layout mismatch is not forced");

	/* a memory device's override on a system without one: refused, or
	 * skipped when the spec says so (sweeps over several systems) */
	const char *mem[] = {"memdev.bandwidth=1TB/s", "system.memdevs=4"};
	cr_expect_eq(assemble("deepseek-v3.2", "gpu-only", NULL, mem, 1, &A, &err), -2);
	cr_expect(strstr(err.msg, "no memory device"), "%s", err.msg);
	s = (struct design_spec)DESIGN_SPEC_INIT;
	s.model = "deepseek-v3.2", s.system = "gpu-only", s.workload = "agentic";
	s.sets = mem, s.nsets = 2, s.skip_memdev_sets = 1;
	design_free(&A);
	cr_expect_eq(design_assemble(&s, &A, &err), 0, "%s", err.msg);
	cr_expect(A.d.mem == NULL);

	/* a fixed context: beyond the model's window, and workload keys */
	s = (struct design_spec)DESIGN_SPEC_INIT;
	s.model = "deepseek-v3.2", s.system = "gpu-only", s.context = 200000;
	design_free(&A);
	cr_expect_eq(design_assemble(&s, &A, &err), -1);
	cr_expect_eq(A.fail, DI_CONTEXT);
	const char *wl[] = {"input.median=5000"};
	s.context = 4096, s.sets = wl, s.nsets = 1;
	design_free(&A);
	cr_expect_eq(design_assemble(&s, &A, &err), -2);
	cr_expect(A.fail == DI_SET && strstr(err.msg, "the context is fixed"), "%s", err.msg);
	design_free(&A);
}

Test(design, defaults_are_the_documented_ones)
{
	struct kerr err;
	cr_assert_eq(design_load(&A, "glm-5.2", "gpu-karat", "agentic", 0, &err), 0, "%s",
		     err.msg);
	cr_expect_str_eq(sched_names[DESIGN_DEFAULT_SCHED], DESIGN_DEFAULT_SCHED_NAME);
	cr_expect_eq(A.d.sched, DESIGN_DEFAULT_SCHED);
	cr_expect_eq(A.d.slo, 0.1);
	cr_expect_eq(A.d.samples, 256);
	cr_expect_eq(A.d.seed, 1);
	cr_expect_eq(A.d.mtp, A.m.mtp_draft);
	cr_expect_eq(A.d.accept, A.m.mtp_accept);
	/* given settings win */
	struct design_spec s = DESIGN_SPEC_INIT;
	s.model = "glm-5.2", s.system = "gpu-karat", s.workload = "agentic";
	s.sched = SCHED_NAIVE, s.mtp = 0, s.accept = 0.5, s.slo_s = 0.05, s.samples = 7, s.seed = 9;
	design_free(&A);
	cr_assert_eq(design_assemble(&s, &A, &err), 0, "%s", err.msg);
	cr_expect(A.d.sched == SCHED_NAIVE && A.d.mtp == 0 && A.d.accept == 0.5 &&
		  A.d.slo == 0.05 && A.d.samples == 7 && A.d.seed == 9);
	design_free(&A);
}

/* Issue 14: ROLE[NAME] names the device an override is for.  On gpu-karat
 * memdev[karat] lands (bit 0 of applied); on gpu-attacc it is refused,
 * or skipped in a sweep or study (skip_memdev_sets), leaving AttAcc's
 * device as its file has it. */
Test(design, an_override_may_name_its_device)
{
	struct kerr err;
	const char *sets[] = {"memdev[karat].memory.bandwidth=2.4TB/s", "system.gpus=16"};
	cr_assert_eq(assemble("deepseek-v3.2", "gpu-karat", NULL, sets, 2, &A, &err), 0, "%s",
		     err.msg);
	cr_expect_eq(A.mem.mem_bw, 2.4e12);
	cr_expect_eq(A.applied, 3ULL);
	cr_expect_eq(assemble("deepseek-v3.2", "gpu-attacc", NULL, sets, 2, &A, &err), -2);
	cr_expect(A.fail == DI_SET && A.fail_set == 0);
	cr_expect(strstr(err.msg, "the system's memdev is attacc, not karat"), "%s", err.msg);
	struct design_spec s = DESIGN_SPEC_INIT;
	s.model = "deepseek-v3.2", s.system = "gpu-attacc", s.workload = "agentic";
	s.sets = sets, s.nsets = 2, s.skip_memdev_sets = 1;
	design_free(&A);
	cr_assert_eq(design_assemble(&s, &A, &err), 0, "%s", err.msg);
	struct kdevice att;
	cr_assert_eq(zoo_load_device("attacc", &att, NULL, &err), 0);
	cr_expect_eq(A.mem.mem_bw, att.mem_bw);
	cr_expect_eq(A.applied, 2ULL, "only system.gpus reached it");
	/* the role must be a system's device or link */
	const char *bad[] = {"attention[x].heads=64"};
	cr_expect_eq(assemble("deepseek-v3.2", "gpu-karat", NULL, bad, 1, &A, &err), -2);
	cr_expect(strstr(err.msg, "only a system's device or link role takes [NAME]"), "%s",
		  err.msg);
	design_free(&A);
}
