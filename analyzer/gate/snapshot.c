/* SPDX-License-Identifier: MIT */
/*
 * The numbers of an analysis the gate compares, copied out of the analysis and rounded
 * as the JSON writer rounds them (report/json-result.c): a baseline read back from JSON and the
 * same trace analysed now must give the same values, not values one ulp apart.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/gate/gate.h"

static double round_to(double v, double scale)
{
	return round(v * scale) / scale;
}

static double us3(double ns)
{
	return round_to(ns / 1000.0, 1000.0);
}

bool isc_glob_match(const char *p, const char *s)
{
	/* Iterative '*' matching with one backtrack point: linear in practice and never
	 * exponential, whatever the pattern. */
	const char *star = NULL, *resume = NULL;
	while (*s != '\0') {
		if (*p == '*') {
			star = p++;
			resume = s;
		} else if (*p == *s) {
			p++;
			s++;
		} else if (star != NULL) {
			p = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*') {
		p++;
	}
	return *p == '\0';
}

static int copy_group(const struct isc_trace *t, const struct isc_stat_table *tab,
		      struct isc_snap_group *g)
{
	g->ops = calloc(tab->n + 1, sizeof(*g->ops));
	if (g->ops == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < tab->n; i++) {
		const struct isc_stat *st = &tab->rows[i];
		struct isc_snap_op *op = &g->ops[g->n];
		op->name = strdup(isc_trace_str(t, st->name));
		if (op->name == NULL) {
			return -ENOMEM;
		}
		g->n++;
		op->count = st->count;
		op->total_us = us3((double)st->total);
		op->mean_us = us3(st->mean);
		op->min_us = us3((double)st->min);
		op->max_us = us3((double)st->max);
		for (int k = 0; k < ISC_PCTS; k++) {
			op->pct_us[k] = us3(st->pct[k]);
		}
		g->events += st->count;
	}
	return 0;
}

static int copy_rules(const struct isc_analysis *a, struct isc_snapshot *s)
{
	s->rules = calloc(a->n_sugg + 1, sizeof(*s->rules));
	if (s->rules == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < a->n_sugg; i++) {
		s->rules[i] = strdup(a->sugg[i].rule_id);
		if (s->rules[i] == NULL) {
			return -ENOMEM;
		}
		s->n_rules++;
	}
	return 0;
}

int isc_snapshot_from_analysis(const struct isc_trace *t, const struct isc_analysis *a,
			       const char *label, struct isc_snapshot **out)
{
	struct isc_snapshot *s = calloc(1, sizeof(*s));
	if (s == NULL || (s->label = strdup(label)) == NULL) {
		isc_snapshot_destroy(s);
		return -ENOMEM;
	}
	snprintf(s->window_how, sizeof(s->window_how), "%s", a->window.how);
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		s->pct[c] = round_to(100.0 * isc_share(a, a->cat_ns[c]), 100.0);
	}
	s->window_us = us3((double)(a->window.end - a->window.start));
	double busy = us3((double)a->gpu_busy_ns);
	s->gpu_busy_pct = s->window_us > 0 ? round_to(100.0 * busy / s->window_us, 100.0) : 0;
	snprintf(s->bottleneck, sizeof(s->bottleneck), "%s", isc_bound_name(a->verdict.type));
	s->confidence = round_to(a->verdict.confidence, 100.0);
	s->events = a->events_total;
	s->dropped = a->dropped;
	s->skipped = a->skipped;
	s->cupti_dropped = a->cupti_dropped;
	int r = copy_rules(a, s);
	for (int g = 0; g < ISC_SG__COUNT && r == 0; g++) {
		r = copy_group(t, &a->stats[g], &s->g[g]);
	}
	if (r < 0) {
		isc_snapshot_destroy(s);
		return r;
	}
	*out = s;
	return 0;
}

void isc_snapshot_destroy(struct isc_snapshot *s)
{
	if (s == NULL) {
		return;
	}
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		for (size_t i = 0; i < s->g[g].n; i++) {
			free(s->g[g].ops[i].name);
		}
		free(s->g[g].ops);
	}
	for (size_t i = 0; i < s->n_rules; i++) {
		free(s->rules[i]);
	}
	free(s->rules);
	free(s->label);
	free(s);
}
