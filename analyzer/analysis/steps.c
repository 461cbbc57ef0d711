/* SPDX-License-Identifier: MIT */
/*
 * Steady-state steps and the start-up before them. Steps are the profiler's own
 * (ProfilerStep#N annotations) or, without them, the annotation scope (not a framework
 * operator) that repeats at least three times, never overlapping itself, and covers at
 * least half of the window. Leading steps much
 * slower than the median (warm-up) and everything before the first steady step are the
 * start-up: context creation, lazy module loading, first allocations, warm-up. Per-step
 * distributions come from the attribution's own segments, so a step's categories add up
 * to the step. Rules whose evidence lies mostly in the start-up say so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis/extras.h"
#include "analyzer/base/fmt.h"
#include "analyzer/base/sort.h"

#define PROFILER_STEP "ProfilerStep#"
#define ANY_PROFILER_STEP UINT32_MAX
#define WARMUP_FACTOR 1.5 /* a leading step this much slower than the median is warm-up */

static bool is_scope(const struct isc_ev *e)
{
	return e->type == ISC_T_SCOPE || e->type == ISC_T_CPU_OP;
}

static bool is_step(const struct isc_trace *t, const struct isc_steps *s, const struct isc_ev *e)
{
	if (!is_scope(e)) {
		return false;
	}
	if (s->name == ANY_PROFILER_STEP) {
		return strncmp(isc_trace_str(t, e->name), PROFILER_STEP, 13) == 0;
	}
	return e->name == s->name;
}

struct rep {
	uint64_t count;
	int64_t total, last_end;
	uint32_t thread;
	bool overlaps;
};

/* The repeating scope that covers most of the window, or UINT32_MAX. */
static int repeated_scope(const struct isc_trace *t, const struct isc_analysis *a, uint32_t *out)
{
	size_t ns = isc_trace_n_strings(t);
	struct rep *r = calloc(ns, sizeof(*r));
	if (r == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		/* Annotations and ranges only: a framework operator that repeats is no step. */
		if (e->type != ISC_T_SCOPE || !isc_in_window(t, a, e)) {
			continue;
		}
		struct rep *p = &r[e->name];
		p->overlaps |= p->count > 0 && (e->ts < p->last_end || e->thread != p->thread);
		p->count++;
		p->total += e->dur;
		p->last_end = e->ts + e->dur;
		p->thread = e->thread;
	}
	int64_t w = a->window.host_end - a->window.start, best = 0;
	*out = UINT32_MAX;
	for (size_t k = 1; k < ns; k++) {
		if (r[k].count >= 3 && !r[k].overlaps && 2 * r[k].total >= w && r[k].total > best) {
			best = r[k].total;
			*out = (uint32_t)k;
		}
	}
	free(r);
	return 0;
}

int isc_steps_detect(const struct isc_trace *t, struct isc_analysis *a)
{
	struct isc_steps *s = &a->extras->steps;
	uint64_t n = 0;
	s->name = ANY_PROFILER_STEP;
	for (size_t i = 0; i < t->n; i++) {
		n += is_step(t, s, &t->ev[i]) && isc_in_window(t, a, &t->ev[i]);
	}
	if (n >= 2) {
		snprintf(s->how, sizeof(s->how), "ProfilerStep#N annotations");
	} else {
		int r = repeated_scope(t, a, &s->name);
		if (r < 0 || s->name == UINT32_MAX) {
			return r;
		}
		snprintf(s->how, sizeof(s->how), "the scope '%.100s', repeated",
			 isc_trace_str(t, s->name));
	}
	a->extras->want_segs = true;
	return 0;
}

static void dist(struct isc_dist *d, int64_t *v, size_t n)
{
	memset(d, 0, sizeof(*d));
	if (n == 0) {
		return;
	}
	isc_sort_i64(v, n);
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		sum += (double)v[i];
	}
	d->n = n;
	d->mean = sum / (double)n;
	d->p50 = isc_pct_sorted(v, n, 0.5);
	d->p90 = isc_pct_sorted(v, n, 0.9);
	d->max = (double)v[n - 1];
}

/* Category time of [s, e) from the sweep's segments (sorted, disjoint). */
static void step_cats(const struct isc_extras *x, int64_t s, int64_t e, int64_t *cat)
{
	size_t lo = 0, hi = x->n_segs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->segs[mid].e <= s) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	for (size_t k = lo; k < x->n_segs && x->segs[k].s < e; k++) {
		int64_t a = x->segs[k].s > s ? x->segs[k].s : s;
		int64_t b = x->segs[k].e < e ? x->segs[k].e : e;
		cat[x->segs[k].c] += b > a ? b - a : 0;
	}
}

static int startup_kind(const struct isc_trace *t, const struct isc_ev *e, bool first_call)
{
	const char *n = isc_trace_str(t, e->name);
	static const char *const ctx[] = { "cuInit", "CtxCreate", "PrimaryCtx", "cudaSetDevice" };
	static const char *const mod[] = { "ModuleLoad", "LibraryLoad", "ModuleGetFunction",
					   "LibraryGetKernel" };
	for (size_t i = 0; i < sizeof(mod) / sizeof(mod[0]); i++) {
		if (strstr(n, mod[i]) != NULL) {
			return ISC_SU_MODULES;
		}
	}
	for (size_t i = 0; i < sizeof(ctx) / sizeof(ctx[0]); i++) {
		if (strstr(n, ctx[i]) != NULL) {
			return ISC_SU_CONTEXT;
		}
	}
	/* The runtime creates the context lazily inside the first call, whatever it is. */
	if (first_call && e->dur >= 1000000) {
		return ISC_SU_CONTEXT;
	}
	if (e->sub == ISC_AC_MALLOC || e->sub == ISC_AC_HOST_ALLOC) {
		return ISC_SU_ALLOC;
	}
	return -1;
}

static int startup(const struct isc_trace *t, struct isc_analysis *a)
{
	struct isc_steps *s = &a->extras->steps;
	bool *seen = calloc(t->n_inputs + 1, sizeof(*seen));
	if (seen == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n && t->ev[i].ts < s->steady_start; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type != ISC_T_CUDA_API) {
			continue;
		}
		int k = startup_kind(t, e, !seen[e->input]);
		seen[e->input] = true;
		if (k >= 0 && e->ts >= a->window.start) {
			s->startup[k] += e->dur;
		}
	}
	free(seen);
	return 0;
}

/* The events a rule family's evidence comes from. */
static bool family_event(const char *rule, const struct isc_ev *e)
{
	if (strncmp(rule, "alloc.device", 12) == 0) {
		return e->type == ISC_T_CUDA_API &&
		       (e->sub == ISC_AC_MALLOC || e->sub == ISC_AC_FREE ||
			e->sub == ISC_AC_HOST_ALLOC);
	}
	if (strncmp(rule, "sync.", 5) == 0) {
		return e->type == ISC_T_CUDA_API && e->sub == ISC_AC_SYNC;
	}
	if (strncmp(rule, "copy.", 5) == 0) {
		return e->type == ISC_T_H2D || e->type == ISC_T_D2H;
	}
	if (strncmp(rule, "launch.", 7) == 0 || strncmp(rule, "gpu.", 4) == 0) {
		return e->type == ISC_T_KERNEL;
	}
	if (strncmp(rule, "host.", 5) == 0) {
		return e->type == ISC_T_SCOPE || e->type == ISC_T_CPU_OP ||
		       e->type == ISC_T_SYSCALL;
	}
	return false;
}

static void startup_notes(const struct isc_trace *t, struct isc_analysis *a)
{
	const struct isc_steps *s = &a->extras->steps;
	char b1[ISC_FMT_LEN];
	for (size_t k = 0; k < a->n_sugg; k++) {
		struct isc_suggestion *g = &a->sugg[k];
		uint64_t all = 0, early = 0;
		for (size_t i = 0; i < t->n; i++) {
			const struct isc_ev *e = &t->ev[i];
			if (family_event(g->rule_id, e) && isc_in_window(t, a, e)) {
				all++;
				early += e->ts < s->steady_start;
			}
		}
		if (all == 0 || 2 * early < all || g->n_evidence >= ISC_SUGGESTION_EVIDENCE) {
			continue;
		}
		snprintf(g->evidence[g->n_evidence++], ISC_LINE,
			 "start-up: %llu of its %llu events lie before the first steady step (the "
			 "first %s): it may not apply to the steady state",
			 (unsigned long long)early, (unsigned long long)all,
			 isc_fmt_dur(b1, (double)s->startup_ns));
	}
}

/* A window mostly made of start-up is judged on its start-up: the verdict says so. */
static void startup_evidence(const struct isc_trace *t, struct isc_analysis *a)
{
	const struct isc_steps *s = &a->extras->steps;
	struct isc_verdict *v = &a->verdict;
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN];
	if (isc_share(a, s->startup_ns) < 0.25 || v->n_evidence >= ISC_MAX_EVIDENCE) {
		return;
	}
	snprintf(v->evidence[v->n_evidence++], ISC_LINE,
		 "start-up takes %s of the window (%s before the first steady step, context "
		 "creation %s): the steady state alone with --window-scope '%s'",
		 isc_fmt_pct(b1, isc_share(a, s->startup_ns)),
		 isc_fmt_dur(b2, (double)s->startup_ns),
		 isc_fmt_dur(b3, (double)s->startup[ISC_SU_CONTEXT]),
		 s->name == ANY_PROFILER_STEP ? "ProfilerStep*" : isc_trace_str(t, s->name));
}

int isc_steps_measure(const struct isc_trace *t, struct isc_analysis *a)
{
	struct isc_extras *x = a->extras;
	struct isc_steps *s = &x->steps;
	if (!x->want_segs) {
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		n += is_step(t, s, &t->ev[i]) && isc_in_window(t, a, &t->ev[i]);
	}
	int64_t *v = malloc((n + 1) * (ISC_CAT__COUNT + 2) * sizeof(*v));
	if (v == NULL) {
		return -ENOMEM;
	}
	int64_t *dur = v, *ts = v + n + 1, *cats = v + 2 * (n + 1);
	size_t k = 0;
	for (size_t i = 0; i < t->n && k < n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (is_step(t, s, e) && isc_in_window(t, a, e)) {
			ts[k] = e->ts;
			dur[k++] = e->dur;
		}
	}
	int64_t *sorted = cats; /* scratch before the categories fill it */
	memcpy(sorted, dur, n * sizeof(*dur));
	isc_sort_i64(sorted, n);
	double med = isc_pct_sorted(sorted, n, 0.5);
	while (s->warmup + 1 < n && (double)dur[s->warmup] > WARMUP_FACTOR * med) {
		s->warmup++;
	}
	s->n = n - s->warmup;
	s->steady_start = ts[s->warmup];
	s->startup_ns = s->steady_start > a->window.start ? s->steady_start - a->window.start : 0;
	for (size_t j = 0; j < s->warmup; j++) {
		s->startup[ISC_SU_WARMUP] += dur[j] - (int64_t)med > 0 ? dur[j] - (int64_t)med : 0;
	}
	memset(cats, 0, (n + 1) * ISC_CAT__COUNT * sizeof(*cats));
	for (size_t j = s->warmup; j < n; j++) {
		step_cats(x, ts[j], ts[j] + dur[j], cats + (j - s->warmup) * ISC_CAT__COUNT);
	}
	int64_t *col = malloc((s->n + 1) * sizeof(*col));
	int r = col == NULL ? -ENOMEM : 0;
	for (int c = 0; c < ISC_CAT__COUNT && r == 0; c++) {
		for (size_t j = 0; j < s->n; j++) {
			col[j] = cats[j * ISC_CAT__COUNT + (size_t)c];
		}
		dist(&s->cat[c], col, s->n);
	}
	dist(&s->step, dur + s->warmup, s->n);
	free(col);
	free(v);
	r = r == 0 ? startup(t, a) : r;
	if (r == 0) {
		startup_notes(t, a);
		startup_evidence(t, a);
	}
	return r;
}
