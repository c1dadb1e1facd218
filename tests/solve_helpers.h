/* solve_helpers.h: shared by the solver's tests (test_solve.c,
 * test_place.c): a design from the zoo with fewer samples, its plan, and
 * one evaluation, each asserting success. */
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

#endif
