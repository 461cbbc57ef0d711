/* SPDX-License-Identifier: MIT */
/*
 * Check expressions: NAME OP VALUE, OP one of >= <= > < == !=.
 *
 * NAME is a breakdown category (percent of the window), a number of the analysis
 * (bottleneck, confidence, counts), `GROUP:PATTERN.STAT` for per-name statistics
 * (kernel:gemm*.total_ms) or `rule:ID`. Kernel names hold '<', '>' and '=' (C++
 * templates), values never do: the operator is the rightmost one in the text.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/gate/gate.h"
#include "analyzer/rules/rules.h"

struct name_def {
	const char *name;
	enum isc_check_kind kind;
	int arg;
	double scale;
	const char *unit;
};

static const struct name_def names[] = {
	{ "cpu_preprocessing", ISC_CK_CATEGORY, ISC_CAT_CPU, 1, "%" },
	{ "h2d_copy", ISC_CK_CATEGORY, ISC_CAT_H2D, 1, "%" },
	{ "gpu_compute", ISC_CK_CATEGORY, ISC_CAT_GPU, 1, "%" },
	{ "d2h_copy", ISC_CK_CATEGORY, ISC_CAT_D2H, 1, "%" },
	{ "idle", ISC_CK_CATEGORY, ISC_CAT_IDLE, 1, "%" },
	{ "framework_overhead", ISC_CK_CATEGORY, ISC_CAT_FRAMEWORK, 1, "%" },
	{ "gpu_busy", ISC_CK_GPU_BUSY, 0, 1, "%" },
	{ "bottleneck", ISC_CK_BOTTLENECK, 0, 1, "" },
	{ "confidence", ISC_CK_CONFIDENCE, 0, 1, "" },
	{ "end_to_end_latency_ms", ISC_CK_LATENCY, 0, 1000, "ms" },
	{ "end_to_end_latency_us", ISC_CK_LATENCY, 0, 1, "us" },
	{ "events", ISC_CK_EVENTS, 0, 1, "" },
	{ "dropped_events", ISC_CK_DROPPED, 0, 1, "" },
	{ "skipped_events", ISC_CK_SKIPPED, 0, 1, "" },
	{ "cupti_dropped_records", ISC_CK_CUPTI_DROPPED, 0, 1, "" },
	{ "suggestions", ISC_CK_SUGGESTIONS, 0, 1, "" },
	{ "kernels", ISC_CK_GROUP_COUNT, ISC_SG_KERNEL, 1, "" },
	{ "gpu_copies", ISC_CK_GROUP_COUNT, ISC_SG_GPU_COPY, 1, "" },
	{ "cuda_api_calls", ISC_CK_GROUP_COUNT, ISC_SG_CUDA_API, 1, "" },
	{ "scopes", ISC_CK_GROUP_COUNT, ISC_SG_SCOPE, 1, "" },
	{ "cpu_ops", ISC_CK_GROUP_COUNT, ISC_SG_CPU_OP, 1, "" },
	{ "syscalls", ISC_CK_GROUP_COUNT, ISC_SG_SYSCALL, 1, "" },
};

/* GROUP: prefixes of per-name statistics. */
static const char *const group_prefix[ISC_SG__COUNT] = {
	[ISC_SG_KERNEL] = "kernel", [ISC_SG_GPU_COPY] = "copy", [ISC_SG_CUDA_API] = "api",
	[ISC_SG_SCOPE] = "scope",   [ISC_SG_CPU_OP] = "op",	[ISC_SG_SYSCALL] = "syscall",
};

static const char *const pct_names[ISC_PCTS] = { "p5",	"p10", "p25", "p50",
						 "p75", "p90", "p95", "p99" };

static const char *trim(char *s)
{
	while (*s == ' ' || *s == '\t') {
		s++;
	}
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) {
		s[--n] = '\0';
	}
	return s;
}

static bool op_char(char c)
{
	return c == '>' || c == '<' || c == '=' || c == '!';
}

/* Finds the rightmost operator; returns its start, or -1 when there is none or it is
 * not one of the six ("=", "=>", "<==" ...). */
static long find_op(const char *s, enum isc_cmp *op, size_t *oplen)
{
	for (long i = (long)strlen(s) - 1; i >= 0; i--) {
		char c = s[i], p = i > 0 ? s[i - 1] : '\0';
		if (!op_char(c)) {
			continue;
		}
		*oplen = c == '=' && (p == '>' || p == '<' || p == '=' || p == '!') ? 2 : 1;
		if (*oplen == 1 && c != '>' && c != '<') {
			return -1;
		}
		long at = i + 1 - (long)*oplen;
		if (at > 0 && op_char(s[at - 1])) {
			return -1;
		}
		char k = *oplen == 2 ? p : c;
		*op = *oplen == 1 ? (k == '>' ? ISC_CMP_GT : ISC_CMP_LT)
		      : k == '>'  ? ISC_CMP_GE
		      : k == '<'  ? ISC_CMP_LE
		      : k == '='  ? ISC_CMP_EQ
				  : ISC_CMP_NE;
		return at;
	}
	return -1;
}

/* STAT of GROUP:PATTERN.STAT: count, or total|mean|min|max|pNN with _ms or _us. */
static bool parse_stat(const char *s, struct isc_check *c)
{
	if (strcmp(s, "count") == 0) {
		c->stat = ISC_OS_COUNT;
		c->unit = "";
		return true;
	}
	const char *us = strrchr(s, '_');
	if (us == NULL || (strcmp(us, "_ms") != 0 && strcmp(us, "_us") != 0)) {
		return false;
	}
	c->scale = strcmp(us, "_ms") == 0 ? 1000 : 1;
	c->unit = c->scale > 1 ? "ms" : "us";
	static const char *const stats[] = { "total", "mean", "min", "max" };
	size_t n = (size_t)(us - s);
	for (int i = 0; i < 4; i++) {
		if (strlen(stats[i]) == n && strncmp(s, stats[i], n) == 0) {
			c->stat = ISC_OS_TOTAL + i;
			return true;
		}
	}
	for (int k = 0; k < ISC_PCTS; k++) {
		if (strlen(pct_names[k]) == n && strncmp(s, pct_names[k], n) == 0) {
			c->stat = ISC_OS_PCT;
			c->pct = k;
			return true;
		}
	}
	return false;
}

static void find_rule(const struct isc_rule *r, void *ctx)
{
	struct isc_check *c = ctx;
	if (strcmp(r->id, c->pattern) == 0) {
		c->arg = 1;
	}
}

static int parse_prefixed(const char *name, struct isc_check *c, char *err, size_t len)
{
	const char *colon = strchr(name, ':');
	size_t plen = (size_t)(colon - name);
	if (plen == 4 && strncmp(name, "rule", 4) == 0) {
		c->kind = ISC_CK_RULE;
		c->unit = "";
		if ((c->pattern = strdup(colon + 1)) == NULL) {
			return -ENOMEM;
		}
		c->arg = 0;
		isc_rules_each(find_rule, c);
		if (c->arg == 0) {
			snprintf(err, len, "unknown rule '%s' (see --list-rules)", c->pattern);
			return -EINVAL;
		}
		return 0;
	}
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		if (strlen(group_prefix[g]) != plen || strncmp(name, group_prefix[g], plen) != 0) {
			continue;
		}
		const char *dot = strrchr(colon + 1, '.');
		c->kind = ISC_CK_OP;
		c->arg = g;
		if (dot == NULL || dot == colon + 1 || !parse_stat(dot + 1, c)) {
			snprintf(err, len,
				 "'%s': expected %s:NAME.STAT with STAT count, or total, "
				 "mean, min, max, p5 ... p99 with _ms or _us",
				 name, group_prefix[g]);
			return -EINVAL;
		}
		c->pattern = strndup(colon + 1, (size_t)(dot - colon - 1));
		return c->pattern == NULL ? -ENOMEM : 0;
	}
	snprintf(err, len,
		 "unknown prefix in '%s' (kernel:, copy:, api:, scope:, op:, "
		 "syscall: or rule:)",
		 name);
	return -EINVAL;
}

static int parse_name(const char *name, struct isc_check *c, char *err, size_t len)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(names[i].name, name) == 0) {
			c->kind = names[i].kind;
			c->arg = names[i].arg;
			c->scale = names[i].scale;
			c->unit = names[i].unit;
			return 0;
		}
	}
	if (strchr(name, ':') != NULL) {
		return parse_prefixed(name, c, err, len);
	}
	snprintf(err, len,
		 "unknown name '%s': a category (gpu_compute, idle, ...), "
		 "bottleneck, confidence, a count (kernels, dropped_events, ...), "
		 "kernel:NAME.STAT or rule:ID (see inferscope-analyze(1), GATES)",
		 name);
	return -EINVAL;
}

static int parse_value(const char *v, struct isc_check *c, char *err, size_t len)
{
	if (c->kind == ISC_CK_BOTTLENECK) {
		for (int b = ISC_BOUND_UNKNOWN; b < ISC_BOUND__COUNT; b++) {
			if (strcmp(v, isc_bound_name(b)) == 0) {
				c->bound = b;
				if (c->op == ISC_CMP_EQ || c->op == ISC_CMP_NE) {
					return 0;
				}
				snprintf(err, len, "bottleneck takes == or !=, not %s",
					 isc_cmp_text(c->op));
				return -EINVAL;
			}
		}
		snprintf(err, len,
			 "bottleneck: '%s' is not cpu_bound, gpu_bound, memory_bound, "
			 "balanced, idle, cpu_starved, io_bound, lock_bound, child_bound or "
			 "unknown",
			 v);
		return -EINVAL;
	}
	char *end = NULL;
	c->value = strtod(v, &end);
	if (end != v && *end == '%' && strcmp(c->unit, "%") == 0) {
		end++;
	}
	if (end == v || *end != '\0' || !isfinite(c->value)) {
		snprintf(err, len, "'%s' is not a number", v);
		return -EINVAL;
	}
	return 0;
}

int isc_check_parse(const char *text, struct isc_check *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->scale = 1;
	c->unit = "";
	char *buf = strdup(text);
	if (buf == NULL) {
		return -ENOMEM;
	}
	const char *s = trim(buf);
	size_t oplen = 0;
	long at = find_op(s, &c->op, &oplen);
	int r = 0;
	if (at < 0) {
		snprintf(err, errlen,
			 "'%s': expected NAME OP VALUE with OP one of >= <= > < == !=", s);
		r = -EINVAL;
	}
	if (r == 0 && (c->text = strdup(s)) == NULL) {
		r = -ENOMEM;
	}
	if (r == 0) {
		char *value = (char *)s + at + oplen;
		((char *)s)[at] = '\0';
		const char *name = trim((char *)s);
		value = (char *)trim(value);
		if (*name == '\0' || *value == '\0') {
			snprintf(err, errlen, "'%s': the %s is missing", c->text,
				 *name == '\0' ? "name" : "value");
			r = -EINVAL;
		}
		if (r == 0 && (c->name = strdup(name)) == NULL) {
			r = -ENOMEM;
		}
		r = r == 0 ? parse_name(name, c, err, errlen) : r;
		r = r == 0 ? parse_value(value, c, err, errlen) : r;
	}
	free(buf);
	if (r < 0) {
		isc_check_finish(c);
	}
	return r;
}

void isc_check_finish(struct isc_check *c)
{
	free(c->text);
	free(c->name);
	free(c->pattern);
	c->text = NULL;
	c->name = NULL;
	c->pattern = NULL;
}

const char *isc_cmp_text(enum isc_cmp op)
{
	static const char *const t[] = { ">=", "<=", ">", "<", "==", "!=" };
	return op <= ISC_CMP_NE ? t[op] : "?";
}

/* Equality within rounding: values come from two decimals of JSON or from arithmetic. */
static bool compare(double v, enum isc_cmp op, double limit)
{
	double eps = 1e-9 * fmax(1.0, fmax(fabs(v), fabs(limit)));
	switch (op) {
	case ISC_CMP_GE:
		return v >= limit - eps;
	case ISC_CMP_LE:
		return v <= limit + eps;
	case ISC_CMP_GT:
		return v > limit + eps;
	case ISC_CMP_LT:
		return v < limit - eps;
	case ISC_CMP_EQ:
		return fabs(v - limit) <= eps;
	case ISC_CMP_NE:
		return fabs(v - limit) > eps;
	}
	return false;
}

/* Per-name value over every name the pattern matches; false when none matches. */
static bool op_value(const struct isc_check *c, const struct isc_snapshot *s, double *out)
{
	const struct isc_snap_group *g = &s->g[c->arg];
	uint64_t count = 0;
	double total = 0, v = 0;
	bool any = false;
	for (size_t i = 0; i < g->n; i++) {
		const struct isc_snap_op *op = &g->ops[i];
		if (!isc_glob_match(c->pattern, op->name)) {
			continue;
		}
		double x = c->stat == ISC_OS_MIN   ? op->min_us
			   : c->stat == ISC_OS_MAX ? op->max_us
						   : op->pct_us[c->pct];
		/* several names: the smallest minimum, the largest of the rest */
		v = !any ? x : c->stat == ISC_OS_MIN ? fmin(v, x) : fmax(v, x);
		count += op->count;
		total += op->total_us;
		any = true;
	}
	switch (c->stat) {
	case ISC_OS_COUNT:
		*out = (double)count;
		return true;
	case ISC_OS_TOTAL:
		*out = total;
		return true;
	case ISC_OS_MEAN:
		*out = count > 0 ? total / (double)count : 0;
		return any;
	default:
		*out = v;
		return any;
	}
}

static bool has_rule(const struct isc_snapshot *s, const char *id)
{
	for (size_t i = 0; i < s->n_rules; i++) {
		if (strcmp(s->rules[i], id) == 0) {
			return true;
		}
	}
	return false;
}

/* The value of a check's name, in its unit; false when there is none. */
static bool value_of(const struct isc_check *c, const struct isc_snapshot *s, double *v)
{
	switch (c->kind) {
	case ISC_CK_CATEGORY:
		*v = s->pct[c->arg];
		return true;
	case ISC_CK_GPU_BUSY:
		*v = s->gpu_busy_pct;
		return true;
	case ISC_CK_BOTTLENECK:
		return false;
	case ISC_CK_CONFIDENCE:
		*v = s->confidence;
		return true;
	case ISC_CK_LATENCY:
		*v = s->window_us;
		break;
	case ISC_CK_EVENTS:
		*v = (double)s->events;
		return true;
	case ISC_CK_DROPPED:
		*v = (double)s->dropped;
		return true;
	case ISC_CK_SKIPPED:
		*v = (double)s->skipped;
		return true;
	case ISC_CK_CUPTI_DROPPED:
		*v = (double)s->cupti_dropped;
		return true;
	case ISC_CK_SUGGESTIONS:
		*v = (double)s->n_rules;
		return true;
	case ISC_CK_GROUP_COUNT:
		*v = (double)s->g[c->arg].events;
		return true;
	case ISC_CK_OP:
		if (!op_value(c, s, v)) {
			return false;
		}
		break;
	case ISC_CK_RULE:
		*v = has_rule(s, c->pattern) ? 1 : 0;
		return true;
	}
	*v /= c->scale;
	return true;
}

void isc_check_eval(const struct isc_check *c, const struct isc_snapshot *s, bool *passed,
		    char *value, size_t len)
{
	double v = 0;
	if (c->kind == ISC_CK_BOTTLENECK) {
		bool eq = strcmp(s->bottleneck, isc_bound_name(c->bound)) == 0;
		*passed = c->op == ISC_CMP_EQ ? eq : !eq;
		snprintf(value, len, "%s", s->bottleneck);
		return;
	}
	if (!value_of(c, s, &v)) {
		*passed = false;
		snprintf(value, len, "no match");
		return;
	}
	*passed = compare(v, c->op, c->value);
	if (strcmp(c->unit, "%") == 0) {
		snprintf(value, len, "%.2f %%", v);
	} else if (*c->unit != '\0') {
		snprintf(value, len, "%.3f %s", v, c->unit);
	} else if (c->kind == ISC_CK_CONFIDENCE) {
		snprintf(value, len, "%.2f", v);
	} else {
		snprintf(value, len, "%.0f", v);
	}
}
