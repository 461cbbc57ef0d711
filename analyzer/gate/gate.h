/* SPDX-License-Identifier: MIT */
/*
 * The CI gate: assertions on an analysis (--check EXPR), budgets against a baseline
 * analysis (--baseline, --max-regression) and an op diff of kernels, copies, CUDA API
 * calls, scopes and framework operators, as HTA's trace diff does.
 *
 * Everything the gate compares is a snapshot: the numbers of an analysis as its JSON
 * result holds them (shares in percent with two decimals, times in microseconds with
 * three), taken either from the analysis of this run or from a baseline file. Rounding
 * the current run like its JSON means a baseline written with `-f json` and the same
 * trace analysed again compare equal, to the last digit.
 */
#ifndef ISC_GATE_H
#define ISC_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/base/diag.h"
#include "analyzer/readers/reader.h"

/* ---- snapshots (snapshot.c, baseline.c) ---- */

struct isc_snap_op {
	char *name;
	uint64_t count;
	double total_us, mean_us, min_us, max_us;
	double pct_us[ISC_PCTS]; /* p5 p10 p25 p50 p75 p90 p95 p99 */
};

struct isc_snap_group {
	struct isc_snap_op *ops;
	size_t n;
	uint64_t events; /* sum of the counts */
};

struct isc_snapshot {
	char *label; /* where it came from: a path, or "this run" */
	char window_how[160];
	double pct[ISC_CAT__COUNT]; /* share of the window in percent */
	double gpu_busy_pct;
	double window_us;
	char bottleneck[24];
	double confidence;
	uint64_t events, dropped, skipped, cupti_dropped;
	struct isc_snap_group g[ISC_SG__COUNT];
	char **rules; /* rule ids of the suggestions */
	size_t n_rules;
};

/* A snapshot of an analysis; label is copied. Returns 0 or -ENOMEM. */
int isc_snapshot_from_analysis(const struct isc_trace *t, const struct isc_analysis *a,
			       const char *label, struct isc_snapshot **out);
void isc_snapshot_destroy(struct isc_snapshot *s);

/*
 * A baseline: an `inferscope-analyze -f json` result (gzip'd or not), or a trace, which
 * is then read with ro and analysed with ao like the current run. Returns 0; -EINVAL
 * when the file is neither (diag names the file and the problem); -ENOMEM.
 */
int isc_baseline_load(const char *path, const struct isc_read_opts *ro,
		      const struct isc_analyze_opts *ao, struct isc_snapshot **out,
		      struct isc_diag *d);
/* The same from an analysis result in memory (label names it in messages). */
int isc_baseline_parse(const char *label, const char *json, size_t len, struct isc_snapshot **out,
		       struct isc_diag *d);

/* True when name matches pattern, where '*' matches any run of characters. */
bool isc_glob_match(const char *pattern, const char *name);

/* ---- checks: NAME OP VALUE (check-expr.c) ---- */

enum isc_cmp { ISC_CMP_GE, ISC_CMP_LE, ISC_CMP_GT, ISC_CMP_LT, ISC_CMP_EQ, ISC_CMP_NE };

enum isc_check_kind {
	ISC_CK_CATEGORY,   /* arg: enum isc_category, percent */
	ISC_CK_GPU_BUSY,   /* percent of the window with any GPU work */
	ISC_CK_BOTTLENECK, /* verdict string */
	ISC_CK_CONFIDENCE,
	ISC_CK_LATENCY, /* end-to-end window; scale: us per unit */
	ISC_CK_EVENTS,
	ISC_CK_DROPPED,
	ISC_CK_SKIPPED,
	ISC_CK_CUPTI_DROPPED,
	ISC_CK_SUGGESTIONS,
	ISC_CK_GROUP_COUNT, /* arg: enum isc_stat_group */
	ISC_CK_OP,	    /* group:pattern.stat */
	ISC_CK_RULE,	    /* rule:ID, 1 when it fired */
};

enum isc_op_stat {
	ISC_OS_COUNT,
	ISC_OS_TOTAL,
	ISC_OS_MEAN,
	ISC_OS_MIN,
	ISC_OS_MAX,
	ISC_OS_PCT /* + index into pct_us */
};

struct isc_check {
	char *text;    /* the expression as given, trimmed */
	char *name;    /* its NAME part */
	char *pattern; /* ISC_CK_OP: name pattern; ISC_CK_RULE: rule id */
	enum isc_check_kind kind;
	int arg;	  /* category or statistics group */
	int stat, pct;	  /* ISC_CK_OP */
	double scale;	  /* microseconds per unit of VALUE for times, else 1 */
	const char *unit; /* "%", "ms", "us" or "" */
	enum isc_cmp op;
	double value;
	int bound; /* ISC_CK_BOTTLENECK: enum isc_bound */
};

/* Parses one expression. Returns 0, or -EINVAL with err set to one line. */
int isc_check_parse(const char *text, struct isc_check *c, char *err, size_t errlen);
void isc_check_finish(struct isc_check *c);

/*
 * Evaluates a check on a snapshot: *passed, and the value in words (value, size 64)
 * or, when there is no value (no name matched), why (value holds "no match").
 */
void isc_check_eval(const struct isc_check *c, const struct isc_snapshot *s, bool *passed,
		    char *value, size_t len);
const char *isc_cmp_text(enum isc_cmp op);

/* ---- op diff (op-diff.c) ---- */

enum isc_diff_change {
	ISC_DIFF_ADDED,
	ISC_DIFF_REMOVED,
	ISC_DIFF_INCREASED,
	ISC_DIFF_DECREASED,
	ISC_DIFF_UNCHANGED,
	ISC_DIFF__COUNT
};

struct isc_diff_row {
	const char *name; /* owned by a snapshot */
	int group;	  /* enum isc_stat_group */
	enum isc_diff_change change;
	uint64_t base_count, count;
	double base_total_us, total_us;
};

struct isc_diff {
	struct isc_diff_row *rows; /* by change, then by size of the time change */
	size_t n;
	size_t by_change[ISC_DIFF__COUNT];
	size_t by_group[ISC_SG__COUNT][ISC_DIFF__COUNT];
	double threshold_pct;
};

/* True for the groups the diff compares (every one but syscalls). */
bool isc_diff_group(int group);
/* Returns 0 or -ENOMEM. The rows point into both snapshots. */
int isc_diff_compute(const struct isc_snapshot *base, const struct isc_snapshot *cur,
		     double threshold_pct, struct isc_diff *out);
void isc_diff_finish(struct isc_diff *d);
const char *isc_diff_change_name(enum isc_diff_change c);

/* ---- the gate (gate.c) ---- */

/* A budget in percentage points on one category's share against the baseline. */
struct isc_budget {
	bool set;
	bool off;
	int dir; /* +1: a rise is limited, -1: a fall is limited */
	double pp;
};

struct isc_gate_spec {
	struct isc_check *checks;
	size_t n_checks, cap_checks;
	const char *baseline; /* path, NULL for none */
	bool default_set;
	bool default_off;  /* --max-regression off: only categories named */
	double default_pp; /* for categories without a budget of their own */
	struct isc_budget cat[ISC_CAT__COUNT];
	double diff_threshold_pct;
};

#define ISC_GATE_DEFAULT_PP 5.0
#define ISC_GATE_DEFAULT_DIFF_PCT 10.0

void isc_gate_spec_init(struct isc_gate_spec *s);
void isc_gate_spec_finish(struct isc_gate_spec *s);
/* --check EXPR. Returns 0, -EINVAL (err set) or -ENOMEM. */
int isc_gate_add_check(struct isc_gate_spec *s, const char *expr, char *err, size_t errlen);
/* --max-regression PP | off | CATEGORY=[+|-]PP | CATEGORY=off. Returns 0 or -EINVAL. */
int isc_gate_add_budget(struct isc_gate_spec *s, const char *arg, char *err, size_t errlen);
bool isc_gate_active(const struct isc_gate_spec *s);
/* The direction a category regresses in: -1 for gpu_compute (a fall), else +1. */
int isc_category_bad_dir(enum isc_category c);

enum isc_gate_kind { ISC_GATE_CHECK, ISC_GATE_BUDGET };

struct isc_gate_item {
	enum isc_gate_kind kind;
	const char *name; /* the check as given, or the category */
	bool passed;
	char value[64];	   /* the value in words; budgets: the change */
	char expected[64]; /* ">= 60 %", "rise <= 5 pp" */
	double base, cur;  /* budgets: shares in percent */
	struct isc_budget budget;
	char detail[ISC_LINE]; /* one line: what was compared and why it failed */
};

struct isc_gate_result {
	bool passed;
	size_t n_failed;
	struct isc_gate_item *items; /* checks in the order given, then budgets */
	size_t n;
	const struct isc_snapshot *cur;
	const struct isc_snapshot *base; /* NULL without a baseline */
	bool has_diff;
	struct isc_diff diff;
};

/*
 * Runs every check on cur and, with a baseline, every budget and the op diff. The
 * result points into spec and both snapshots. Returns 0 or -ENOMEM.
 */
int isc_gate_run(const struct isc_gate_spec *spec, const struct isc_snapshot *cur,
		 const struct isc_snapshot *base, struct isc_gate_result **out);
void isc_gate_result_destroy(struct isc_gate_result *r);

#endif /* ISC_GATE_H */
