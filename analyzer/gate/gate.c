/* SPDX-License-Identifier: MIT */
/*
 * The gate: checks on this run, budgets against a baseline, the op diff, one verdict.
 *
 * Budgets are in percentage points of the window, per category, and look one way: a
 * category regresses when its share moves in its bad direction - gpu_compute when it
 * falls (the GPU does less of the window), every other category when it rises (more
 * of the window is copies, host work, runtime overhead or idle). A budget can name the
 * direction instead (CATEGORY=+PP limits a rise, CATEGORY=-PP a fall).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/grow.h"
#include "analyzer/gate/gate.h"

void isc_gate_spec_init(struct isc_gate_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->default_pp = ISC_GATE_DEFAULT_PP;
	s->diff_threshold_pct = ISC_GATE_DEFAULT_DIFF_PCT;
}

void isc_gate_spec_finish(struct isc_gate_spec *s)
{
	for (size_t i = 0; i < s->n_checks; i++) {
		isc_check_finish(&s->checks[i]);
	}
	free(s->checks);
	s->checks = NULL;
	s->n_checks = s->cap_checks = 0;
}

int isc_gate_add_check(struct isc_gate_spec *s, const char *expr, char *err, size_t errlen)
{
	if (ISC_GROW(s->checks, s->cap_checks, s->n_checks + 1, 8) < 0) {
		return -ENOMEM;
	}
	int r = isc_check_parse(expr, &s->checks[s->n_checks], err, errlen);
	s->n_checks += r == 0;
	return r;
}

int isc_category_bad_dir(enum isc_category c)
{
	return c == ISC_CAT_GPU ? -1 : 1;
}

/* PP, +PP or -PP: a finite, non-negative number of percentage points. */
static bool parse_pp(const char *v, double *pp, int *sign)
{
	*sign = *v == '+' ? 1 : *v == '-' ? -1 : 0;
	v += *sign != 0;
	char *end = NULL;
	*pp = strtod(v, &end);
	return end != v && *end == '\0' && isfinite(*pp) && *pp >= 0 && *v != '-' && *v != '+';
}

int isc_gate_add_budget(struct isc_gate_spec *s, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	double pp;
	int sign;
	if (eq == NULL) {
		s->default_off = strcmp(arg, "off") == 0;
		if (s->default_off) {
			s->default_set = true;
			return 0;
		}
		if (!parse_pp(arg, &pp, &sign) || sign != 0) {
			snprintf(err, errlen,
				 "--max-regression: expected PP (percentage points), "
				 "off or CATEGORY=[+|-]PP, got '%s'",
				 arg);
			return -EINVAL;
		}
		s->default_set = true;
		s->default_pp = pp;
		return 0;
	}
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		const char *name = isc_category_name(c);
		if (strlen(name) != (size_t)(eq - arg) || strncmp(arg, name, strlen(name)) != 0) {
			continue;
		}
		struct isc_budget *b = &s->cat[c];
		b->set = true;
		b->off = strcmp(eq + 1, "off") == 0;
		if (b->off) {
			return 0;
		}
		if (!parse_pp(eq + 1, &b->pp, &sign)) {
			snprintf(err, errlen, "--max-regression %s: '%s' is not [+|-]PP or off",
				 name, eq + 1);
			return -EINVAL;
		}
		b->dir = sign != 0 ? sign : isc_category_bad_dir(c);
		return 0;
	}
	snprintf(err, errlen,
		 "--max-regression: unknown category '%.*s' (cpu_preprocessing, "
		 "h2d_copy, gpu_compute, d2h_copy, idle, framework_overhead)",
		 (int)(eq - arg), arg);
	return -EINVAL;
}

bool isc_gate_active(const struct isc_gate_spec *s)
{
	return s->n_checks > 0 || s->baseline != NULL;
}

static void check_item(const struct isc_check *c, const struct isc_snapshot *cur,
		       struct isc_gate_item *it)
{
	it->kind = ISC_GATE_CHECK;
	it->name = c->text;
	isc_check_eval(c, cur, &it->passed, it->value, sizeof(it->value));
	if (c->kind == ISC_CK_BOTTLENECK) {
		snprintf(it->expected, sizeof(it->expected), "%s %s", isc_cmp_text(c->op),
			 isc_bound_name(c->bound));
	} else {
		snprintf(it->expected, sizeof(it->expected), "%s %g%s%s", isc_cmp_text(c->op),
			 c->value, *c->unit ? " " : "", c->unit);
	}
	if (c->kind == ISC_CK_BOTTLENECK) {
		snprintf(it->detail, sizeof(it->detail), "bottleneck is %s, expected %s %s",
			 it->value, isc_cmp_text(c->op), isc_bound_name(c->bound));
	} else if (strcmp(it->value, "no match") == 0) {
		snprintf(it->detail, sizeof(it->detail), "nothing in %s matches '%s' in this run",
			 isc_stat_group_name(c->arg), c->pattern);
	} else {
		snprintf(it->detail, sizeof(it->detail), "%s is %s, expected %s %g%s%s", c->name,
			 it->value, isc_cmp_text(c->op), c->value, *c->unit ? " " : "", c->unit);
	}
}

static void budget_item(enum isc_category c, const struct isc_budget *b,
			const struct isc_snapshot *base, const struct isc_snapshot *cur,
			struct isc_gate_item *it)
{
	it->kind = ISC_GATE_BUDGET;
	it->name = isc_category_name(c);
	it->budget = *b;
	it->base = base->pct[c];
	it->cur = cur->pct[c];
	/* two decimals, as the shares: 90.00 -> 85.00 is 5.00 pp, not 5.000000001 */
	double change = round((it->cur - it->base) * 100.0) / 100.0;
	double bad = change * b->dir;
	it->passed = bad <= b->pp + 1e-9;
	snprintf(it->value, sizeof(it->value), "%+.2f pp", change);
	snprintf(it->expected, sizeof(it->expected), "%s <= %g pp", b->dir > 0 ? "rise" : "fall",
		 b->pp);
	snprintf(it->detail, sizeof(it->detail),
		 "%s %.2f %% -> %.2f %% (%+.2f pp), may %s by "
		 "at most %g pp",
		 it->name, it->base, it->cur, change, b->dir > 0 ? "rise" : "fall", b->pp);
}

/* The budget in force for a category: its own, else the default. */
static struct isc_budget budget_of(const struct isc_gate_spec *s, enum isc_category c)
{
	if (s->cat[c].set) {
		return s->cat[c];
	}
	return (struct isc_budget){ .set = true,
				    .off = s->default_off,
				    .dir = isc_category_bad_dir(c),
				    .pp = s->default_pp };
}

int isc_gate_run(const struct isc_gate_spec *spec, const struct isc_snapshot *cur,
		 const struct isc_snapshot *base, struct isc_gate_result **out)
{
	struct isc_gate_result *r = calloc(1, sizeof(*r));
	if (r == NULL ||
	    (r->items = calloc(spec->n_checks + ISC_CAT__COUNT + 1, sizeof(*r->items))) == NULL) {
		free(r);
		return -ENOMEM;
	}
	r->cur = cur;
	r->base = base;
	for (size_t i = 0; i < spec->n_checks; i++) {
		check_item(&spec->checks[i], cur, &r->items[r->n++]);
	}
	for (int k = 0; base != NULL && k < ISC_CAT__COUNT; k++) {
		enum isc_category c = isc_category_order[k];
		struct isc_budget b = budget_of(spec, c);
		if (!b.off) {
			budget_item(c, &b, base, cur, &r->items[r->n++]);
		}
	}
	for (size_t i = 0; i < r->n; i++) {
		r->n_failed += !r->items[i].passed;
	}
	r->passed = r->n_failed == 0;
	if (base != NULL) {
		r->has_diff = true;
		if (isc_diff_compute(base, cur, spec->diff_threshold_pct, &r->diff) < 0) {
			isc_gate_result_destroy(r);
			return -ENOMEM;
		}
	}
	*out = r;
	return 0;
}

void isc_gate_result_destroy(struct isc_gate_result *r)
{
	if (r == NULL) {
		return;
	}
	isc_diff_finish(&r->diff);
	free(r->items);
	free(r);
}
