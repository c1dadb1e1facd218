/* solve_helpers.h: shared by the solver's tests (test_solve.c,
 * test_place.c and others): a design from the zoo with fewer samples,
 * its plan, one evaluation and one solve, each asserting success. */
#ifndef KARAT_TESTS_SOLVE_HELPERS_H
#define KARAT_TESTS_SOLVE_HELPERS_H

#include <criterion/criterion.h>

#include "karat.h"

/* The design assembly of the library (zoo/design.h), with fewer samples. */
#define setup design_parts

/* Loads model and system from the zoo; context > 0: fixed contexts, else
 * the named workload. */
static inline void load(struct setup *s, const char *model, const char *system,
		 double context, const char *workload)
{
	struct kerr err;
	cr_assert_eq(design_load(s, model, system, workload, context, &err), 0, "%s", err.msg);
	s->d.samples = 32;
}

/* One GPU's weights as the plan holds them: the model's with the experts
 * spread over the GPUs, and the redundant expert copies of system.eplb. */
static inline double weights_by_hand(const struct setup *s)
{
	return model_weight_bytes(&s->m, s->sys.gpus) +
	       system_moe_redundant(&s->sys) * model_expert_bytes(&s->m);
}

/* The GPU side of one MoE decoder layer of `model` (loaded into *m) at
 * `requests` over `gpus` GPUs: the batch, to vary and build. */
static inline struct kbatch moe_layer(struct kmodel *m, const char *model, double requests,
				      double gpus)
{
	struct kerr err;
	cr_assert_eq(zoo_load_model(model, m, NULL, &err), 0, "%s", err.msg);
	unsigned char seq[PIPE_MAX_LAYERS];
	struct layer_kind kinds[PIPE_MAX_CLASSES];
	double counts[PIPE_MAX_CLASSES];
	int k = step_layer_kinds(m, &m->sp, seq, kinds, counts) - 1;
	cr_assert(kinds[k].moe, "%s: its last kind of layer is a MoE one", model);
	return (struct kbatch){.requests = requests, .gpus = gpus, .context = 1, .gpu_only = 1,
			       .part = STEP_LAYER, .kind = kinds[k]};
}

/* Builds m's step for batches ka and kb into a and b, operator by
 * operator alike. */
static inline void build_pair(const struct kmodel *m, const struct kbatch *ka,
			      const struct kbatch *kb, struct step *a, struct step *b)
{
	struct kerr err;
	cr_assert_eq(step_build(m, ka, a, &err), 0, "%s", err.msg);
	cr_assert_eq(step_build(m, kb, b, &err), 0, "%s", err.msg);
	cr_assert_eq(a->n, b->n);
	for (int i = 0; i < a->n; i++)
		cr_assert_eq(a->op[i].kind, b->op[i].kind);
}

static inline struct plan *plan(struct setup *s)
{
	struct kerr err;
	struct plan *p = plan_new(&s->d, &err);
	cr_assert_not_null(p, "%s", err.msg);
	return p;
}

static inline struct result eval(struct plan *p, double B, int m)
{
	struct result r;
	struct kerr err;
	cr_assert_eq(plan_eval(p, B, m, &r, &err), 0, "%s", err.msg);
	return r;
}

/* The answer of the loaded design s at m micro-batches (0: auto), 0 when
 * nothing fits; s is freed (what: names the design in a failure). */
static inline double solved_batch(struct setup *s, int m, const char *what)
{
	struct plan *p = plan(s);
	struct result r;
	struct kerr err;
	cr_assert_eq(plan_solve(p, m, &r, &err), 0, "%s: %s", what, err.msg);
	plan_free(p);
	design_free(s);
	return r.feasible ? r.batch : 0;
}

#endif
