/* SPDX-License-Identifier: MIT */
/*
 * Analysing a trace: the pure stages (timeline, stats, classify, then the rules) run once
 * on a finalized trace and fill the result (analyzer/model/result.h).
 */
#ifndef ISC_ANALYSIS_H
#define ISC_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/base/diag.h"
#include "analyzer/model/result.h"

struct isc_analyze_opts {
	const char *window_scope; /* trim to scopes with this name ("prefix*" allowed) */
	bool window_explicit;
	int64_t window_start, window_end; /* ns, when window_explicit */
	const struct isc_thresholds *th;  /* NULL: defaults */
	const char *const *what_if;	  /* --what-if questions (analyzer/causal/graph.h) */
	size_t n_what_if;
	bool one_rank;	     /* set by ranks.c for its per-rank analyses */
	bool no_path_pieces; /* no output draws the critical path (isc_analysis) */
};

/* Returns 0, -EINVAL (diag set: e.g. no scope matched the window) or -ENOMEM. */
int isc_analyze(const struct isc_trace *t, const struct isc_analyze_opts *o,
		struct isc_analysis **out, struct isc_diag *d);
/* Frees a result of isc_analyze (and what the extras hold); NULL is a no-op. */
void isc_analysis_destroy(struct isc_analysis *a);

/* Stages (analyze.c runs them in this order, then isc_rules_run of rules/rules.h). */
int isc_timeline_window(const struct isc_trace *t, const struct isc_analyze_opts *o,
			struct isc_analysis *a, struct isc_diag *d);
int isc_timeline_attribute(const struct isc_trace *t, struct isc_analysis *a);
int isc_timeline_gpu(const struct isc_trace *t, struct isc_analysis *a);
int isc_stats_compute(const struct isc_trace *t, struct isc_analysis *a);
void isc_classify(const struct isc_trace *t, struct isc_analysis *a);
/* The verdict from the what-ifs of the dependency graph (verdict-path.c); false when
 * there is no graph to re-time, and the shares decide. */
bool isc_verdict_from_path(const struct isc_trace *t, struct isc_analysis *a, double *margin);
/* Confidence factor for what the graph could not see, with evidence lines. */
double isc_path_penalties(struct isc_analysis *a);

/*
 * The result's invariants (invariants.c), which every analysis the tests run is checked
 * against: the verdict agrees with its what-ifs; no gain exceeds 100 %, nor a host-side
 * one the idle share of the busiest GPU stream; every share of the window, and every percentage in an
 * evidence line, rationale or action, is at most 100 %; without GPU work no verdict line
 * or suggestion speaks of a GPU or CUDA. Returns true, or false with what broke in msg.
 */
bool isc_analysis_check(const struct isc_analysis *a, char *msg, size_t n);

#endif /* ISC_ANALYSIS_H */
