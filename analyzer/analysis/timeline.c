/* SPDX-License-Identifier: MIT */
/*
 * Timeline attribution. Every instant of the window gets exactly one category by a sweep
 * over interval unions, in priority order: GPU compute, host-to-device copy,
 * device-to-host copy, host inside the CUDA runtime (framework overhead), host computing
 * (cpu_preprocessing), else idle. The categories therefore add up to the window.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis/extras.h"
#include "analyzer/base/fmt.h"
#include "analyzer/analysis/timeline.h"

static bool name_matches(const char *name, const char *pattern)
{
	size_t n = strlen(pattern);
	if (n > 0 && pattern[n - 1] == '*') {
		return strncmp(name, pattern, n - 1) == 0;
	}
	return strcmp(name, pattern) == 0;
}

static int window_from_scopes(const struct isc_trace *t, const struct isc_analyze_opts *o,
			      struct isc_analysis *a, struct isc_diag *d)
{
	size_t ns = isc_trace_n_strings(t);
	bool *match = calloc(ns, sizeof(*match));
	if (match == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < ns; i++) {
		match[i] = name_matches(isc_trace_str(t, (uint32_t)i), o->window_scope);
	}
	uint64_t hits = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if ((e->type == ISC_T_SCOPE || e->type == ISC_T_CPU_OP) && match[e->name]) {
			a->window.start =
				hits == 0 || e->ts < a->window.start ? e->ts : a->window.start;
			int64_t end = e->ts + e->dur;
			a->window.end = hits == 0 || end > a->window.end ? end : a->window.end;
			hits++;
		}
	}
	free(match);
	if (hits == 0) {
		isc_diag_set(d, "--window-scope: no scope named '%s' in the trace",
			     o->window_scope);
		return -ENOENT;
	}
	a->window.trimmed = true;
	snprintf(a->window.how, sizeof(a->window.how), "scopes named '%s' (%llu)", o->window_scope,
		 (unsigned long long)hits);
	return 0;
}

/* An event of an image that exec'd into the program (before the program's image
 * started: trace_metadata.start_us is the final image's). */
static bool is_startup(const struct isc_trace *t, const struct isc_ev *e)
{
	const struct isc_input *in = &t->inputs[e->input];
	return in->startup_images > 0 && e->ts < in->meta_start_ns;
}

static bool has_program_events(const struct isc_trace *t)
{
	bool chains = false;
	for (size_t i = 0; i < t->n_inputs; i++) {
		chains = chains || t->inputs[i].startup_images > 0;
	}
	for (size_t i = 0; chains && i < t->n; i++) {
		if (!is_startup(t, &t->ev[i])) {
			return true;
		}
	}
	return false;
}

static const struct isc_input *first_chain(const struct isc_trace *t)
{
	for (size_t i = 0; i < t->n_inputs; i++) {
		if (t->inputs[i].startup_images > 0) {
			return &t->inputs[i];
		}
	}
	return NULL;
}

/* The start-up images and their time: from each chain's first event to its program's
 * start, summed over the inputs that have a chain. */
static void startup_span(const struct isc_trace *t, int64_t *ns, unsigned *images)
{
	for (size_t k = 0; k < t->n_inputs; k++) {
		const struct isc_input *in = &t->inputs[k];
		if (in->startup_images == 0) {
			continue;
		}
		int64_t first = in->meta_start_ns;
		for (size_t i = 0; i < t->n; i++) {
			const struct isc_ev *e = &t->ev[i];
			first = e->input == k && e->ts < first ? e->ts : first;
		}
		*ns = isc_time_add(*ns, in->meta_start_ns - first);
		*images += in->startup_images;
	}
}

int isc_timeline_window(const struct isc_trace *t, const struct isc_analyze_opts *o,
			struct isc_analysis *a, struct isc_diag *d)
{
	if (o != NULL && o->window_explicit) {
		if (o->window_end <= o->window_start) {
			isc_diag_set(d, "--window: the end must be after the start");
			return -ENOENT;
		}
		/* Bounded like event times (model.c), so that differences cannot overflow. */
		const int64_t lim = INT64_C(1) << 61;
		a->window.start = o->window_start < -lim  ? -lim
				  : o->window_start > lim ? lim
							  : o->window_start;
		a->window.end = o->window_end < -lim  ? -lim
				: o->window_end > lim ? lim
						      : o->window_end;
		a->window.trimmed = true;
		snprintf(a->window.how, sizeof(a->window.how), "--window");
		return 0;
	}
	if (o != NULL && o->window_scope != NULL) {
		return window_from_scopes(t, o, a, d);
	}
	/* Counters and marks are sampled from library start to exit: they say when the
	 * process lived, not when it worked, so they bound the window only when alone.
	 * The start-up images of an exec chain (a shim, env, sh -c exec) are left out while
	 * the program's own image has events: they are not the program. */
	bool skip_startup = has_program_events(t);
	int64_t startup_ns = 0;
	unsigned images = 0;
	for (int pass = 0; pass < 2; pass++) {
		bool any = false;
		for (size_t i = 0; i < t->n; i++) {
			const struct isc_ev *e = &t->ev[i];
			bool marker = e->type == ISC_T_COUNTER || e->type == ISC_T_INSTANT;
			if ((marker && pass == 0) || (skip_startup && is_startup(t, e))) {
				continue;
			}
			a->window.start = !any || e->ts < a->window.start ? e->ts : a->window.start;
			a->window.end = !any || e->ts + e->dur > a->window.end ? e->ts + e->dur
									       : a->window.end;
			any = true;
		}
		if (any) {
			break;
		}
	}
	if (skip_startup) {
		startup_span(t, &startup_ns, &images);
	}
	if (images > 0) {
		char b[32];
		const struct isc_input *in = first_chain(t);
		snprintf(a->window.how, sizeof(a->window.how),
			 "the program; start-up in %u earlier image%s (%s) left out: %s", images,
			 images == 1 ? "" : "s", isc_trace_str(t, in->startup_command),
			 isc_fmt_dur(b, (double)startup_ns));
	} else {
		snprintf(a->window.how, sizeof(a->window.how), "whole trace");
	}
	return 0;
}

static struct isc_ivec *lane_of(struct isc_lanes *l, unsigned type, unsigned sub)
{
	switch (type) {
	case ISC_T_KERNEL:
	case ISC_T_MEMSET:
	case ISC_T_D2D:
		return &l->gpu;
	case ISC_T_H2D:
		return &l->h2d;
	case ISC_T_D2H:
		return &l->d2h;
	case ISC_T_CUDA_API:
		return &l->api;
	case ISC_T_SYSCALL:
		return sub == ISC_SYS_DRIVER ? &l->api : NULL;
	default:
		return NULL;
	}
}

/* Example names per category: time per name of the events that feed it. */
static int examples(const struct isc_trace *t, struct isc_analysis *a)
{
	size_t ns = isc_trace_n_strings(t);
	int64_t *by = calloc(ns * 4, sizeof(*by));
	if (by == NULL) {
		return -ENOMEM;
	}
	const int64_t ws = a->window.start, we = a->window.end;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		int64_t we_e = we < isc_window_end_of(a, e) ? we : isc_window_end_of(a, e);
		int64_t s = e->ts > ws ? e->ts : ws,
			en = e->ts + e->dur < we_e ? e->ts + e->dur : we_e;
		if (en <= s ||
		    (a->window.trimmed && isc_type_is_gpu(e->type) && !isc_in_window(t, a, e))) {
			continue;
		}
		int slot = e->type == ISC_T_KERNEL     ? 0
			   : e->type == ISC_T_H2D      ? 1
			   : e->type == ISC_T_D2H      ? 2
			   : e->type == ISC_T_CUDA_API ? 3
						       : -1;
		if (slot >= 0) {
			by[(size_t)slot * ns + e->name] += en - s;
		}
	}
	isc_top_names(by, ns, a->examples[ISC_CAT_GPU], ISC_EXAMPLES);
	isc_top_names(by + ns, ns, a->examples[ISC_CAT_H2D], ISC_EXAMPLES);
	isc_top_names(by + 2 * ns, ns, a->examples[ISC_CAT_D2H], ISC_EXAMPLES);
	isc_top_names(by + 3 * ns, ns, a->examples[ISC_CAT_FRAMEWORK], ISC_EXAMPLES);
	free(by);
	return 0;
}

static int collect(const struct isc_trace *t, struct isc_analysis *a, struct isc_lanes *l)
{
	const int64_t ws = a->window.start;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		bool in = isc_in_window(t, a, e);
		a->count[e->type] += in;
		struct isc_ivec *lane = lane_of(l, e->type, e->sub);
		/* GPU work of a trimmed window is the work it launched (window.c), unclipped. */
		if (lane == NULL || (a->window.trimmed && isc_type_is_gpu(e->type) && !in)) {
			continue;
		}
		if (isc_ivec_add(lane, e->ts, e->ts + e->dur, ws, isc_window_end_of(a, e)) < 0) {
			return -ENOMEM;
		}
	}
	if (isc_ivec_union(&l->gpu) < 0 || isc_ivec_union(&l->h2d) < 0 ||
	    isc_ivec_union(&l->d2h) < 0 || isc_ivec_union(&l->api) < 0) {
		return -ENOMEM;
	}
	int r = isc_host_busy(t, a, &l->host);
	a->host_busy_ns = isc_ivec_total(&l->host);
	return r;
}

/* The sweep: one category per instant, highest priority first. */
static int sweep(struct isc_analysis *a, struct isc_lanes *l)
{
	const struct isc_ivec *lanes[5] = { &l->gpu, &l->h2d, &l->d2h, &l->api, &l->host };
	static const enum isc_category cat[5] = { ISC_CAT_GPU, ISC_CAT_H2D, ISC_CAT_D2H,
						  ISC_CAT_FRAMEWORK, ISC_CAT_CPU };
	size_t pos[5] = { 0 };
	int64_t tnow = a->window.start;
	while (tnow < a->window.end) {
		int64_t next = a->window.end;
		int active = -1;
		for (int k = 0; k < 5; k++) {
			const struct isc_ivec *v = lanes[k];
			while (pos[k] < v->n && v->v[pos[k]].e <= tnow) {
				pos[k]++;
			}
			if (pos[k] == v->n) {
				continue;
			}
			bool in = v->v[pos[k]].s <= tnow;
			int64_t edge = in ? v->v[pos[k]].e : v->v[pos[k]].s;
			next = edge < next ? edge : next;
			if (in && active < 0) {
				active = k;
			}
		}
		enum isc_category c = active < 0 ? ISC_CAT_IDLE : cat[active];
		a->cat_ns[c] += next - tnow;
		if (isc_extras_segment(a, tnow, next, (int)c) < 0) {
			return -ENOMEM;
		}
		if (c == ISC_CAT_CPU && isc_ivec_add_merge(&l->cpu, tnow, next) < 0) {
			return -ENOMEM;
		}
		if ((c == ISC_CAT_CPU || c == ISC_CAT_FRAMEWORK) &&
		    isc_ivec_add_merge(&a->host_active, tnow, next) < 0) {
			return -ENOMEM;
		}
		if (c == ISC_CAT_IDLE && isc_ivec_add_merge(&l->idle, tnow, next) < 0) {
			return -ENOMEM;
		}
		tnow = next;
	}
	return 0;
}

static int gpu_busy(struct isc_analysis *a, struct isc_lanes *l)
{
	struct isc_ivec copies = { 0 }, all = { 0 };
	int r = 0;
	for (size_t i = 0; i < l->h2d.n && r == 0; i++) {
		r = isc_ivec_add_merge(&copies, l->h2d.v[i].s, l->h2d.v[i].e);
	}
	for (size_t i = 0; i < l->d2h.n && r == 0; i++) {
		r = isc_ivec_add(&copies, l->d2h.v[i].s, l->d2h.v[i].e, INT64_MIN, INT64_MAX);
	}
	r = r == 0 ? isc_ivec_union(&copies) : r;
	for (size_t i = 0; i < copies.n && r == 0; i++) {
		a->copy_overlap_ns += isc_ivec_overlap(&l->gpu, copies.v[i].s, copies.v[i].e);
		r = isc_ivec_add(&all, copies.v[i].s, copies.v[i].e, INT64_MIN, INT64_MAX);
	}
	for (size_t i = 0; i < l->gpu.n && r == 0; i++) {
		r = isc_ivec_add(&all, l->gpu.v[i].s, l->gpu.v[i].e, INT64_MIN, INT64_MAX);
	}
	r = r == 0 ? isc_ivec_union(&all) : r;
	a->copy_union_ns = isc_ivec_total(&copies);
	a->gpu_busy_ns = isc_ivec_total(&all);
	isc_ivec_free(&copies);
	isc_ivec_free(&all);
	return r;
}

int isc_timeline_attribute(const struct isc_trace *t, struct isc_analysis *a)
{
	struct isc_lanes l;
	memset(&l, 0, sizeof(l));
	int r = collect(t, a, &l);
	r = r == 0 ? sweep(a, &l) : r;
	r = r == 0 ? gpu_busy(a, &l) : r;
	r = r == 0 ? examples(t, a) : r;
	r = r == 0 ? isc_scope_times(t, a, &l.cpu) : r;
	r = r == 0 ? isc_wait_times(t, a, &l.idle) : r;
	struct isc_ivec *all[] = { &l.gpu, &l.h2d, &l.d2h, &l.api, &l.host, &l.cpu, &l.idle };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		isc_ivec_free(all[i]);
	}
	return r;
}
