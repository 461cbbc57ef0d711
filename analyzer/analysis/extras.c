/* SPDX-License-Identifier: MIT */
/*
 * The analysis beyond one window's attribution (extras.h). Device categories the reader
 * does not model are never dropped silently: they are listed in the data quality, and
 * their share of the device time lowers the verdict's confidence, since the breakdown
 * cannot see that work.
 */
#include "analyzer/analysis/extras.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/fmt.h"

int isc_extras_prepare(const struct isc_trace *t, struct isc_analysis *a)
{
	a->extras = calloc(1, sizeof(*a->extras));
	if (a->extras == NULL) {
		return -ENOMEM;
	}
	a->extras->slowest = -1;
	return isc_steps_detect(t, a);
}

int isc_extras_segment(struct isc_analysis *a, int64_t s, int64_t e, int c)
{
	struct isc_extras *x = a->extras;
	if (x == NULL || !x->want_segs || e <= s) {
		return 0;
	}
	if (x->n_segs > 0 && x->segs[x->n_segs - 1].c == c && x->segs[x->n_segs - 1].e == s) {
		x->segs[x->n_segs - 1].e = e;
		return 0;
	}
	if (x->n_segs == x->cap_segs) {
		size_t cap = x->cap_segs ? x->cap_segs * 2 : 1024;
		struct isc_seg *v = realloc(x->segs, cap * sizeof(*v));
		if (v == NULL) {
			return -ENOMEM;
		}
		x->segs = v;
		x->cap_segs = cap;
	}
	x->segs[x->n_segs++] = (struct isc_seg){ s, e, c };
	return 0;
}

static int unknown_categories(const struct isc_trace *t, struct isc_analysis *a)
{
	struct isc_extras *x = a->extras;
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_agg_list *l = &t->inputs[i].unknown_cats;
		for (size_t k = 0; k < l->n; k++) {
			size_t j = 0;
			while (j < x->n_unknown && x->unknown[j].name != l->v[k].name) {
				j++;
			}
			if (j == x->n_unknown) {
				void *v = realloc(x->unknown, (j + 1) * sizeof(*x->unknown));
				if (v == NULL) {
					return -ENOMEM;
				}
				x->unknown = v;
				x->unknown[j] = (struct isc_unknown_cat){ .name = l->v[k].name };
				x->n_unknown++;
			}
			struct isc_unknown_cat *u = &x->unknown[j];
			u->count += l->v[k].count;
			u->device += l->v[k].bytes;
			u->ns += (int64_t)llround(l->v[k].total_us * 1000.0);
			if (l->v[k].bytes > 0) {
				x->unknown_device_events += l->v[k].bytes;
				/* device-looking categories: all of their time is device time */
				x->unknown_device_ns += (int64_t)llround(l->v[k].total_us * 1000.0);
			}
		}
	}
	return 0;
}

/* Device work the breakdown cannot see makes every share of it uncertain: the confidence
 * falls with that work's part of all device time, to at most half when it is all of it. */
static void unknown_confidence(const struct isc_trace *t, struct isc_analysis *a)
{
	struct isc_extras *x = a->extras;
	struct isc_verdict *v = &a->verdict;
	if (x->unknown_device_events == 0 || v->type == ISC_BOUND_UNKNOWN) {
		return;
	}
	double dev = (double)x->unknown_device_ns, known = (double)a->gpu_busy_ns;
	double part = dev + known > 0 ? dev / (dev + known) : 1.0;
	v->confidence = round(v->confidence * (1.0 - 0.5 * part) * 100.0) / 100.0;
	const struct isc_unknown_cat *top = NULL;
	for (size_t i = 0; i < x->n_unknown; i++) {
		if (x->unknown[i].device > 0 && (top == NULL || x->unknown[i].ns > top->ns)) {
			top = &x->unknown[i];
		}
	}
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_verdict_evidence(
		v,
		"%llu device events in categories the reader does not model (e.g. '%s', "
		"%s): %s of the device time is not in the breakdown (confidence lowered)",
		(unsigned long long)x->unknown_device_events,
		top != NULL ? isc_trace_str(t, top->name) : "?",
		isc_fmt_dur(b1, top != NULL ? (double)top->ns : 0), isc_fmt_pct(b2, part));
}

int isc_extras_run(const struct isc_trace *t, const struct isc_analyze_opts *o,
		   struct isc_analysis *a)
{
	int r = unknown_categories(t, a);
	if (r == 0) {
		unknown_confidence(t, a);
		r = isc_steps_measure(t, a);
	}
	free(a->extras->segs);
	a->extras->segs = NULL;
	a->extras->n_segs = a->extras->cap_segs = 0;
	if (r == 0 && (o == NULL || !o->one_rank)) {
		r = isc_ranks_analyse(t, o, a);
	}
	return r;
}

void isc_extras_destroy(struct isc_extras *x)
{
	if (x == NULL) {
		return;
	}
	free(x->unknown);
	free(x->segs);
	free(x->ranks);
	free(x);
}

double isc_pct_sorted(const int64_t *v, size_t n, double p)
{
	if (n == 0) {
		return 0;
	}
	double pos = p * (double)(n - 1);
	size_t lo = (size_t)pos;
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	return (double)v[lo] + (pos - (double)lo) * (double)(v[hi] - v[lo]);
}
