/* SPDX-License-Identifier: MIT */
/*
 * Baselines: the JSON result of an earlier `inferscope-analyze -f json` (what CI keeps as
 * an artifact), or a trace, which is analysed like the current one. The JSON is small by
 * design (per-name statistics, not events), so a tree parser is the right tool; its size
 * is still capped, so that a wrong file cannot take unbounded memory.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "analyzer/base/grow.h"
#include "analyzer/gate/gate.h"
#include "analyzer/readers/input-source.h"

#define BASELINE_MAX_BYTES (512u << 20)
#define DETECT_BYTES 4096

static yajl_val get(yajl_val v, const char *k1, const char *k2)
{
	const char *path[3] = { k1, k2, NULL };
	return yajl_tree_get(v, path, yajl_t_any);
}

static double num(yajl_val v)
{
	double d = YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : 0.0;
	return isfinite(d) ? d : 0.0;
}

static uint64_t count(yajl_val v)
{
	if (YAJL_IS_INTEGER(v)) {
		return YAJL_GET_INTEGER(v) > 0 ? (uint64_t)YAJL_GET_INTEGER(v) : 0;
	}
	double d = num(v);
	return d > 0 ? (uint64_t)d : 0;
}

static int breakdown(yajl_val root, struct isc_snapshot *s, const char *label, struct isc_diag *d)
{
	yajl_val arr = get(root, "timeline_breakdown", NULL);
	bool seen[ISC_CAT__COUNT] = { false };
	for (size_t i = 0; YAJL_IS_ARRAY(arr) && i < arr->u.array.len; i++) {
		yajl_val row = arr->u.array.values[i];
		const char *cat = YAJL_GET_STRING(get(row, "category", NULL));
		for (int c = 0; cat != NULL && c < ISC_CAT__COUNT; c++) {
			if (strcmp(cat, isc_category_name(c)) == 0) {
				s->pct[c] = num(get(row, "percentage", NULL));
				seen[c] = true;
			}
		}
	}
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		if (!seen[c]) {
			isc_diag_set(d,
				     "%s: not an inferscope-analyze result: timeline_breakdown "
				     "has no category '%s'",
				     label, isc_category_name(c));
			return -EINVAL;
		}
	}
	return 0;
}

static int op_row(yajl_val row, struct isc_snap_op *op)
{
	static const char *const pct[ISC_PCTS] = { "p5_us",  "p10_us", "p25_us", "p50_us",
						   "p75_us", "p90_us", "p95_us", "p99_us" };
	const char *name = YAJL_GET_STRING(get(row, "name", NULL));
	if (name == NULL || (op->name = strdup(name)) == NULL) {
		return name == NULL ? -EINVAL : -ENOMEM;
	}
	op->count = count(get(row, "count", NULL));
	op->total_us = num(get(row, "total_us", NULL));
	op->mean_us = num(get(row, "mean_us", NULL));
	op->min_us = num(get(row, "min_us", NULL));
	op->max_us = num(get(row, "max_us", NULL));
	for (int k = 0; k < ISC_PCTS; k++) {
		op->pct_us[k] = num(get(row, pct[k], NULL));
	}
	return 0;
}

static int statistics(yajl_val root, struct isc_snapshot *s, const char *label, struct isc_diag *d)
{
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		yajl_val arr = get(root, "statistics", isc_stat_group_name(g));
		size_t n = YAJL_IS_ARRAY(arr) ? arr->u.array.len : 0;
		s->g[g].ops = calloc(n + 1, sizeof(*s->g[g].ops));
		if (s->g[g].ops == NULL) {
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			int r = op_row(arr->u.array.values[i], &s->g[g].ops[s->g[g].n]);
			if (r == -EINVAL) {
				isc_diag_set(d, "%s: statistics.%s[%zu] has no name", label,
					     isc_stat_group_name(g), i);
			}
			if (r < 0) {
				return r;
			}
			s->g[g].events += s->g[g].ops[s->g[g].n++].count;
		}
	}
	return 0;
}

static int rules(yajl_val root, struct isc_snapshot *s)
{
	yajl_val arr = get(root, "suggestions", NULL);
	size_t n = YAJL_IS_ARRAY(arr) ? arr->u.array.len : 0;
	s->rules = calloc(n + 1, sizeof(*s->rules));
	if (s->rules == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const char *id = YAJL_GET_STRING(get(arr->u.array.values[i], "rule_id", NULL));
		if (id != NULL && (s->rules[s->n_rules++] = strdup(id)) == NULL) {
			return -ENOMEM;
		}
	}
	return 0;
}

static void scalars(yajl_val root, struct isc_snapshot *s)
{
	const char *how = YAJL_GET_STRING(get(root, "window", "how"));
	snprintf(s->window_how, sizeof(s->window_how), "%s", how ? how : "");
	s->window_us = num(get(root, "summary", "end_to_end_latency_us"));
	double busy = num(get(root, "summary", "gpu_busy_us"));
	s->gpu_busy_pct = s->window_us > 0 ? round(10000.0 * busy / s->window_us) / 100.0 : 0;
	const char *type = YAJL_GET_STRING(get(root, "bottleneck", "type"));
	snprintf(s->bottleneck, sizeof(s->bottleneck), "%s", type ? type : "unknown");
	s->confidence = num(get(root, "bottleneck", "confidence"));
	s->events = count(get(root, "data_quality", "events"));
	s->dropped = count(get(root, "data_quality", "dropped_events"));
	s->skipped = count(get(root, "data_quality", "skipped_events"));
	s->cupti_dropped = count(get(root, "data_quality", "cupti_dropped_records"));
}

int isc_baseline_parse(const char *label, const char *json, size_t len, struct isc_snapshot **out,
		       struct isc_diag *d)
{
	char err[256] = "";
	char *text = malloc(len + 1);
	if (text == NULL) {
		return -ENOMEM;
	}
	memcpy(text, json, len);
	text[len] = '\0';
	yajl_val root = yajl_tree_parse(text, err, sizeof(err));
	free(text);
	if (root == NULL) {
		char *nl = strchr(err, '\n');
		if (nl != NULL) {
			*nl = '\0';
		}
		isc_diag_set(d, "%s: not valid JSON: %s", label, err[0] ? err : "parse error");
		return -EINVAL;
	}
	struct isc_snapshot *s = calloc(1, sizeof(*s));
	int r = s == NULL || (s->label = strdup(label)) == NULL ? -ENOMEM : 0;
	if (r == 0 && !YAJL_IS_STRING(get(root, "analysis_version", NULL))) {
		isc_diag_set(d, "%s: not an inferscope-analyze result (no analysis_version)",
			     label);
		r = -EINVAL;
	}
	r = r == 0 ? breakdown(root, s, label, d) : r;
	r = r == 0 ? statistics(root, s, label, d) : r;
	r = r == 0 ? rules(root, s) : r;
	if (r == 0) {
		scalars(root, s);
		*out = s;
	} else {
		isc_snapshot_destroy(s);
	}
	yajl_tree_free(root);
	return r;
}

/* The whole (decompressed) file, or NULL with diag set. */
static char *slurp(struct isc_source *src, const char *path, size_t *len, struct isc_diag *d)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	ssize_t r = 1;
	while (buf != NULL && r > 0) {
		if (n == cap) {
			if (cap >= BASELINE_MAX_BYTES || ISC_RESIZE(buf, cap * 2) < 0) {
				isc_diag_set(d, "%s: baseline larger than %u MiB", path,
					     BASELINE_MAX_BYTES >> 20);
				free(buf);
				return NULL;
			}
			cap *= 2;
		}
		r = isc_source_read(src, (unsigned char *)buf + n, cap - n);
		n += r > 0 ? (size_t)r : 0;
	}
	if (buf == NULL || r < 0) {
		isc_diag_set(d, "%s: %s", path, buf == NULL ? "out of memory" : src->err);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static int from_trace(const char *path, const struct isc_read_opts *ro,
		      const struct isc_analyze_opts *ao, struct isc_snapshot **out,
		      struct isc_diag *d)
{
	struct isc_trace *t = isc_trace_create();
	struct isc_analysis *a = NULL;
	int r = t == NULL ? -ENOMEM : isc_read_file(t, path, ro, d);
	r = r == 0 ? isc_trace_finalize(t) : r;
	if (r == 0 && (r = isc_analyze(t, ao, &a, d)) == -ENOENT) {
		/* a window scope that the baseline lacks: bad baseline, not bad usage */
		char msg[sizeof(d->msg)];
		snprintf(msg, sizeof(msg), "%s", d->msg);
		isc_diag_set(d, "%s: %s", path, msg);
		r = -EINVAL;
	}
	r = r == 0 ? isc_snapshot_from_analysis(t, a, path, out) : r;
	if (r == -ENOMEM) {
		isc_diag_set(d, "%s: out of memory", path);
	} else if (r < 0) {
		r = -EINVAL; /* the reader said why */
	}
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	return r;
}

int isc_baseline_load(const char *path, const struct isc_read_opts *ro,
		      const struct isc_analyze_opts *ao, struct isc_snapshot **out,
		      struct isc_diag *d)
{
	struct isc_source src;
	if (isc_source_open_file(&src, path) < 0) {
		isc_diag_set(d, "%s: %s", path, src.err);
		isc_source_close(&src);
		return -EINVAL;
	}
	/* The JSON writer puts analysis_version first: a look at the head tells a result
	 * from a trace without parsing either. */
	size_t head = src.head_len < DETECT_BYTES ? src.head_len : DETECT_BYTES;
	bool result = memmem(src.head, head, "\"analysis_version\"", 18) != NULL;
	if (!result) {
		isc_source_close(&src);
		return from_trace(path, ro, ao, out, d);
	}
	size_t len = 0;
	char *json = slurp(&src, path, &len, d);
	isc_source_close(&src);
	if (json == NULL) {
		return -EINVAL;
	}
	int r = isc_baseline_parse(path, json, len, out, d);
	free(json);
	return r;
}
