/* SPDX-License-Identifier: MIT */
/*
 * Rules: table-driven, one family per file in rules/, stable ids. A rule that fires
 * fills a suggestion: action, rationale, evidence lines with numbers from the trace, and
 * an estimated improvement computed from the timeline (docs/rules.md gives each formula).
 */
#ifndef ISC_RULES_H
#define ISC_RULES_H

#include <stdbool.h>

#include "analyzer/model/result.h"
#include "analyzer/base/interval.h"

/* Events the rules look at, gathered by one pass so that no rule scans the whole trace. */
enum isc_rule_list {
	ISC_RL_COPY,
	ISC_RL_MEMCPY_API,
	ISC_RL_SYNC_API,
	ISC_RL_ALLOC_API,
	ISC_RL_KERNEL,
	ISC_RL__COUNT
};

struct isc_rule_ctx {
	const struct isc_trace *t;
	const struct isc_analysis *a;
	double window_ns;
	struct isc_ivec gpu_ops;       /* union of GPU work in the window */
	uint32_t *list[ISC_RL__COUNT]; /* event indices, in time order */
	size_t n_list[ISC_RL__COUNT];
	uint64_t launches; /* calls that queue GPU work, in the window */
};

struct isc_rule {
	const char *id;
	const char *summary; /* one line for --list-rules and the man page */
	bool advisory;	     /* reported whatever its estimate: about the data, or an answer
				 * the verdict needs even when little can be gained */
	bool (*eval)(struct isc_rule_ctx *c, struct isc_suggestion *out);
};

/* Families, each a table ending with a zeroed entry. */
extern const struct isc_rule isc_rules_copy[];
extern const struct isc_rule isc_rules_launch[];
extern const struct isc_rule isc_rules_sync[];
extern const struct isc_rule isc_rules_alloc[];
extern const struct isc_rule isc_rules_gpu[];
extern const struct isc_rule isc_rules_host[];
extern const struct isc_rule isc_rules_data[];
extern const struct isc_rule isc_rules_pipeline[];

/* The last stage of the analysis (isc_analyze): fills a->sugg. Returns 0 or -ENOMEM. */
int isc_rules_run(const struct isc_trace *t, struct isc_analysis *a);
/* Names the code each suggestion means, from the stacks of its events (rules/where.c). */
int isc_rules_where(const struct isc_trace *t, struct isc_analysis *a);

/* Calls fn for every rule in table order. */
void isc_rules_each(void (*fn)(const struct isc_rule *r, void *ctx), void *ctx);

/* Helpers for rule files. */
void isc_sugg_evidence(struct isc_suggestion *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void isc_sugg_text(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Union of GPU operations (kernels, copies, memsets) in the window. */
const struct isc_ivec *isc_rules_gpu_ops(struct isc_rule_ctx *c);
/* The i-th event of a list. */
static inline const struct isc_ev *isc_rules_ev(const struct isc_rule_ctx *c, enum isc_rule_list l,
						size_t i)
{
	return &c->t->ev[c->list[l][i]];
}
double isc_rules_pct(const struct isc_rule_ctx *c, double ns);
struct isc_change;
/* Re-times the graph with the change (rules/simulate.c): adds an evidence line saying
 * what was simulated and returns the gain in percent of the window, >= 0. */
double isc_sugg_simulate(const struct isc_rule_ctx *c, const struct isc_change *ch,
			 struct isc_suggestion *s, const char *what);

#endif /* ISC_RULES_H */
