/* SPDX-License-Identifier: MIT */
/*
 * The what-if engine: re-times the dependency graph with a change and reports how much
 * earlier the window's work ends. One pass in topological order; a node starts when its
 * latest predecessor ends plus the gap it had after it in the recording (launch latency,
 * untraced host code), so an unchanged graph re-times to the recorded times exactly.
 * A blocking call ends when the GPU operation it waited for ends, plus the return time
 * it had; a launch on a full queue the same, so a faster GPU frees slots earlier and a
 * slower host no longer blocks; a thread waiting for another the same, with the segment
 * of the other thread that released it (graph-threads.c).
 * A scope changed by a factor (scope:NAME*F) takes along what it stands for: the CUDA
 * calls made inside it on its thread and the GPU operations they launched; at factor 0
 * those operations leave their streams (no time, no launch latency), and what followed
 * or waited for them waits for what they would have waited for.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/causal/graph.h"

struct iv_thread {
	uint32_t thread;
	int64_t s, e;
};

struct run {
	const struct isc_trace *t;
	const struct isc_analysis *a;
	const struct isc_causal *c;
	const struct isc_change *ch[2];
	bool *match[2];		 /* per string id */
	struct iv_thread *iv[2]; /* ISC_SEL_SCOPE: matching scopes, by thread then start */
	size_t n_iv[2];
	int64_t *worker; /* ISC_WI_OFFLOAD: per lane, n_workers each (when each is free) */
	size_t n_workers;
	uint64_t picked; /* nodes a change picked */
};

static bool name_matches(const char *name, const char *pattern)
{
	size_t n = strlen(pattern);
	if (n > 0 && pattern[n - 1] == '*') {
		return strncmp(name, pattern, n - 1) == 0;
	}
	return strcmp(name, pattern) == 0;
}

static int cmp_iv(const void *x, const void *y)
{
	const struct iv_thread *a = x, *b = y;
	if (a->thread != b->thread) {
		return a->thread < b->thread ? -1 : 1;
	}
	return a->s < b->s ? -1 : a->s > b->s ? 1 : 0;
}

/* Matching scopes and operators of the window, merged per thread. */
static int scope_intervals(struct run *r, int k)
{
	const struct isc_trace *t = r->t;
	size_t n = 0, cap = 0;
	struct iv_thread *v = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if ((e->type != ISC_T_SCOPE && e->type != ISC_T_CPU_OP) || !r->match[k][e->name]) {
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct iv_thread *nv = realloc(v, cap * sizeof(*nv));
			if (nv == NULL) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = (struct iv_thread){ e->thread, e->ts, e->ts + e->dur };
	}
	if (n > 1) {
		qsort(v, n, sizeof(*v), cmp_iv);
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m > 0 && v[m - 1].thread == v[i].thread && v[i].s <= v[m - 1].e) {
			v[m - 1].e = v[i].e > v[m - 1].e ? v[i].e : v[m - 1].e;
		} else {
			v[m++] = v[i];
		}
	}
	r->iv[k] = v;
	r->n_iv[k] = m;
	return 0;
}

/* The index in r->iv[k] of the matching scope that holds [s, e] on thread, or SIZE_MAX. */
static size_t scope_index(const struct run *r, int k, uint32_t thread, int64_t s, int64_t e)
{
	const struct iv_thread *v = r->iv[k];
	size_t lo = 0, hi = r->n_iv[k];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].thread < thread || (v[mid].thread == thread && v[mid].s <= s)) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	bool in = lo > 0 && v[lo - 1].thread == thread && v[lo - 1].s <= s && e <= v[lo - 1].e;
	return in ? lo - 1 : SIZE_MAX;
}

static bool inside_scope(const struct run *r, int k, uint32_t thread, int64_t s, int64_t e)
{
	return scope_index(r, k, thread, s, e) != SIZE_MAX;
}

/* Whether GPU operation e was launched by a call made inside a scope change k picks, on
 * the scope's thread (the call with its correlation id: a kernel's launch, a copy's or a
 * memset's call, the cudaGraphLaunch of a graph's nodes). */
static bool launched_inside(const struct run *r, int k, const struct isc_ev *e)
{
	const struct isc_ev *api = isc_trace_launch_of(r->t, e);
	return api != NULL && inside_scope(r, k, api->thread, api->ts, api->ts + api->dur);
}

/* Whether change k, picking a node at factor f, takes it away with the scope it stands
 * for (scope:NAME*0): a GPU operation of the scope is then removed from its stream, a
 * launch of the scope waits for no slot of a full queue. */
static bool removes(const struct run *r, int k, double f)
{
	return k >= 0 && f == 0 && r->ch[k]->op == ISC_WI_SCALE &&
	       r->ch[k]->sel == ISC_SEL_SCOPE_ALL;
}

/* The workers an offload change runs its scope on: overlap:NAME*K, K of them. */
static size_t workers_of(const struct isc_change *ch)
{
	return ch->op == ISC_WI_OFFLOAD && ch->factor >= 1 ? (size_t)ch->factor : 1;
}

/* Whether change k picks node n, which starts at t0; its factor in *f. */
static bool picks(const struct run *r, int k, const struct isc_gnode *n, int64_t t0, double *f)
{
	const struct isc_change *ch = r->ch[k];
	const struct isc_ev *e = &r->t->ev[n->ev];
	bool gpu = (n->flags & ISC_GN_GPU) != 0;
	bool call = !gpu && (e->type == ISC_T_CUDA_API || e->type == ISC_T_SYSCALL);
	*f = ch->factor;
	if (t0 < ch->after) {
		return false;
	}
	switch (ch->sel) {
	case ISC_SEL_SCOPE:
		return !gpu && inside_scope(r, k, e->thread, t0, n->t1);
	case ISC_SEL_SCOPE_ALL:
		return gpu ? launched_inside(r, k, e) : inside_scope(r, k, e->thread, t0, n->t1);
	case ISC_SEL_KERNEL:
		return gpu && e->type == ISC_T_KERNEL && r->match[k][e->name];
	case ISC_SEL_CALL:
		return call && r->match[k][e->name];
	case ISC_SEL_HOST_CODE:
		return !gpu && !call;
	case ISC_SEL_SYNC:
		return !gpu && (n->flags & (ISC_GN_SYNC | ISC_GN_BLOCKING)) &&
		       e->sub == ISC_AC_SYNC;
	case ISC_SEL_COPY_WAIT:
		return !gpu && (n->flags & (ISC_GN_COPY | ISC_GN_BLOCKING)) &&
		       e->sub == ISC_AC_MEMCPY;
	case ISC_SEL_LAUNCH:
		return !gpu && e->type == ISC_T_CUDA_API && e->sub == ISC_AC_LAUNCH;
	case ISC_SEL_PAGEABLE:
		return gpu && (e->type == ISC_T_H2D || e->type == ISC_T_D2H) &&
		       (e->flags & ISC_F_PAGEABLE);
	case ISC_SEL_COPIES:
		return gpu && (e->type == ISC_T_H2D || e->type == ISC_T_D2H);
	case ISC_SEL_SYSCALL:
		return !gpu && e->type == ISC_T_SYSCALL && ((ch->sub >> e->sub) & 1u) &&
		       !(e->flags & ISC_F_PACED);
	case ISC_SEL_PACED:
		return !gpu && e->type == ISC_T_SYSCALL && (e->flags & ISC_F_PACED);
	case ISC_SEL_API_CLASS:
		return !gpu && e->type == ISC_T_CUDA_API && ((ch->sub >> e->sub) & 1u);
	case ISC_SEL_ALL_GPU:
		return gpu;
	case ISC_SEL_CALLBACK:
		*f = ch->scale_of(r->t, e, ch->arg);
		return *f >= 0;
	case ISC_SEL_WAITS:
		return !gpu &&
		       (n->flags &
			(ISC_GN_WAIT | ISC_GN_HANDOFF | ISC_GN_BLOCKING | ISC_GN_IDLE)) &&
		       ((call && r->match[k][e->name]) || inside_scope(r, k, e->thread, t0, n->t1));
	}
	return false;
}

/* Whether a change with op GRAPH picks the launch call of GPU node n (its dep may be the
 * segment before the call, when the operation started before the call returned). */
static bool graph_launched(const struct run *r, const struct isc_gnode *n)
{
	const struct isc_ev *api = isc_trace_launch_of(r->t, &r->t->ev[n->ev]);
	if (api == NULL || api->type != ISC_T_CUDA_API || api->sub != ISC_AC_LAUNCH) {
		return false;
	}
	for (int k = 0; k < 2; k++) {
		if (r->ch[k] != NULL && r->ch[k]->op == ISC_WI_GRAPH &&
		    api->ts >= r->ch[k]->after) {
			return true;
		}
	}
	return false;
}

/*
 * The re-timed start of a GPU operation with more than one predecessor: the previous
 * operation of its stream, its launch, and the operation an event wait holds it for. The
 * one that held it back in the recording (the last to end) keeps the gap it had; the
 * others keep at most what the device needs after them: nothing after the previous
 * operation of the stream (a queued operation starts when it ends) or after an event's
 * operation (the wait is released on the device), the launch latency after a launch.
 * None is more than the recorded gap, so an unchanged graph re-times to the recorded
 * start. Under a graph change the stream's operations follow each other
 * launch.graph_node_gap_us apart.
 */
static int64_t gpu_start(const struct run *r, const struct isc_gnode *n, uint32_t x,
			 const int64_t *ne)
{
	const struct isc_causal *c = r->c;
	const int64_t none = INT64_MIN;
	int64_t es = n->seq != ISC_GN_NONE ? c->node[n->seq].t1 : none;
	int64_t ed = n->dep != ISC_GN_NONE ? c->node[n->dep].t1 : none;
	int64_t ex = x != ISC_GN_NONE ? c->node[x].t1 : none;
	int64_t t0 = isc_gn_t0(c, n);
	int64_t gs = es != none ? t0 - es : 0, gd = ed != none ? t0 - ed : 0;
	int64_t gx = ex != none ? t0 - ex : 0;
	if (es >= ed && es >= ex) {
		gd = gd < c->launch_latency ? gd : c->launch_latency;
		gx = gx < 0 ? gx : 0;
	} else if (ed >= ex) {
		gs = gs < 0 ? gs : 0;
		gx = gx < 0 ? gx : 0;
	} else {
		gs = gs < 0 ? gs : 0;
		gd = gd < c->launch_latency ? gd : c->launch_latency;
	}
	if (graph_launched(r, n)) {
		int64_t g = (int64_t)(isc_thr(&r->a->th, ISC_THR_GRAPH_NODE_GAP_US) * 1000.0);
		gs = gs > g ? gs : g;
	}
	int64_t s = es != none ? ne[n->seq] + gs : none;
	int64_t d = ed != none ? ne[n->dep] + gd : none;
	int64_t e = ex != none ? ne[x] + gx : none;
	s = s > d ? s : d;
	return s > e ? s : e;
}

/* New end of node i, the ends of its predecessors known. */
static int64_t retime(struct run *r, uint32_t i, int64_t *ne)
{
	const struct isc_causal *c = r->c;
	const struct isc_gnode *n = &c->node[i];
	int64_t po = INT64_MIN, pn = INT64_MIN, s0 = isc_gn_t0(c, n);
	bool gpu = (n->flags & ISC_GN_GPU) != 0;
	if (n->seq != ISC_GN_NONE) {
		po = c->node[n->seq].t1;
		pn = ne[n->seq];
	}
	if (gpu && n->dep != ISC_GN_NONE) {
		po = c->node[n->dep].t1 > po ? c->node[n->dep].t1 : po;
		pn = ne[n->dep] > pn ? ne[n->dep] : pn;
	}
	int k = -1;
	double f = 1.0;
	for (int j = 0; j < 2 && k < 0; j++) {
		k = r->ch[j] != NULL && picks(r, j, n, s0, &f) ? j : -1;
	}
	enum isc_change_op op = k >= 0 ? r->ch[k]->op : ISC_WI_SCALE;
	r->picked += k >= 0;
	uint32_t x = gpu ? isc_graph_xdep(c, i) : ISC_GN_NONE;
	if (k >= 0 && op == ISC_WI_NO_GPU_GAPS && (n->flags & ISC_GN_ORDERED)) {
		x = ISC_GN_NONE; /* a wait told from a gap is the gap the change removes */
	}
	if (x != ISC_GN_NONE) {
		po = c->node[x].t1 > po ? c->node[x].t1 : po;
		pn = ne[x] > pn ? ne[x] : pn;
	}
	if (gpu && removes(r, k, f)) {
		/* Gone with the call that launched it: no time, no launch latency. What came
		 * after it on its stream, or waited for it, waits for what it would have
		 * waited for: the stream's previous operation, an event's; with neither, its
		 * launch's place in the host's order. */
		int64_t end = n->dep != ISC_GN_NONE ? ne[n->dep] : s0;
		if (n->seq != ISC_GN_NONE || x != ISC_GN_NONE) {
			int64_t es = n->seq != ISC_GN_NONE ? ne[n->seq] : INT64_MIN;
			end = x != ISC_GN_NONE && ne[x] > es ? ne[x] : es;
		}
		return end;
	}
	int preds = (n->seq != ISC_GN_NONE) + (gpu && n->dep != ISC_GN_NONE) + (x != ISC_GN_NONE);
	int64_t gap = po == INT64_MIN ? 0 : s0 - po; /* INT64_MIN: no predecessor */
	if (gpu && op == ISC_WI_NO_GPU_GAPS && k >= 0 && n->seq != ISC_GN_NONE &&
	    po == c->node[n->seq].t1) {
		gap = gap > 0 ? 0 : gap; /* released by the stream: start at once */
	}
	int64_t t0 = po == INT64_MIN ? s0 : pn + gap;
	if (gpu && preds > 1 && !(k >= 0 && op == ISC_WI_NO_GPU_GAPS)) {
		t0 = gpu_start(r, n, x, ne);
	}
	if (!gpu && (n->flags & ISC_GN_WOKEN)) {
		/* handed work by another thread: it starts the gap it had after that thread's
		 * segment, and no earlier than its own thread is free (it sat idle) */
		int64_t d = ne[n->dep] + (s0 - c->node[n->dep].t1);
		t0 = pn > d ? pn : d;
	}
	int64_t dur = n->t1 - s0;
	bool waits = (n->flags & (ISC_GN_WAIT | ISC_GN_HANDOFF)) && n->dep != ISC_GN_NONE;
	if (k >= 0 && (op == ISC_WI_NO_WAIT || op == ISC_WI_ASYNC)) {
		/* No wait: the call costs nothing, or what a launch costs. */
		int64_t cost = op == ISC_WI_NO_WAIT ? 0 : (int64_t)r->a->launch.median_launch_ns;
		return t0 + (cost < dur ? cost : dur);
	}
	if (waits && removes(r, k, f) && (n->flags & ISC_GN_QFULL)) {
		return t0; /* a launch taken away takes no slot of the queue */
	}
	if (waits) {
		int64_t ret = n->t1 - c->node[n->dep].t1;
		int64_t own = k >= 0 && op == ISC_WI_SCALE ? (int64_t)((double)ret * f) : ret;
		int64_t rel = ne[n->dep] + own;
		return rel > t0 + own ? rel : t0 + own;
	}
	if (k < 0 && !gpu && (r->t->ev[n->ev].flags & ISC_F_PACED)) {
		/* its data arrives when it did, whenever the thread gets there */
		return t0 > n->t1 ? t0 : n->t1;
	}
	if (k < 0) {
		return t0 + dur;
	}
	if (op == ISC_WI_OFFLOAD && !gpu) {
		/* The scope's instances go round the workers (a DataLoader's batches), each
		 * worker one after the other from the thread's first one, all of them ready
		 * from then on. */
		int64_t *lane = &r->worker[n->lane * r->n_workers];
		size_t nw = workers_of(r->ch[k]);
		if (lane[0] == INT64_MIN) {
			for (size_t j = 0; j < nw; j++) {
				lane[j] = t0;
			}
		}
		const struct isc_ev *e = &r->t->ev[n->ev];
		int64_t *w = &lane[scope_index(r, k, e->thread, s0, n->t1) % nw];
		*w += dur;
		return *w > t0 ? *w : t0;
	}
	if (op == ISC_WI_GRAPH) {
		return gpu ? t0 + dur : t0; /* the launch: one graph launch for all, nothing each */
	}
	return t0 + (int64_t)llround((double)dur * (op == ISC_WI_SCALE ? f : 1.0));
}

static int prepare(struct run *r, int k)
{
	const struct isc_change *ch = r->ch[k];
	size_t ns = isc_trace_n_strings(r->t);
	r->match[k] = calloc(ns + 1, sizeof(bool));
	if (r->match[k] == NULL) {
		return -ENOMEM;
	}
	if (ch->pattern != NULL) {
		/* An empty name picks every one: "kernel:*0.5". */
		const char *p = *ch->pattern != '\0' ? ch->pattern : "*";
		for (size_t i = 0; i < ns; i++) {
			r->match[k][i] = name_matches(isc_trace_str(r->t, (uint32_t)i), p);
		}
	}
	bool scopes = ch->sel == ISC_SEL_SCOPE || ch->sel == ISC_SEL_SCOPE_ALL ||
		      ch->sel == ISC_SEL_WAITS;
	return scopes ? scope_intervals(r, k) : 0;
}

static void finish(struct run *r)
{
	for (int k = 0; k < 2; k++) {
		free(r->match[k]);
		free(r->iv[k]);
	}
	free(r->worker);
}

int isc_whatif_run(const struct isc_trace *t, const struct isc_analysis *a,
		   const struct isc_change *ch, int64_t *before, int64_t *after, double *gain_pct)
{
	return isc_whatif_run_picked(t, a, ch, before, after, gain_pct, NULL);
}

int isc_whatif_run_picked(const struct isc_trace *t, const struct isc_analysis *a,
			  const struct isc_change *ch, int64_t *before, int64_t *after,
			  double *gain_pct, uint64_t *picked)
{
	const struct isc_causal *c = a->causal;
	*before = *after = c != NULL ? c->end : 0;
	*gain_pct = 0;
	if (picked != NULL) {
		*picked = 0;
	}
	if (c == NULL || c->n == 0 || ch == NULL) {
		return 0;
	}
	struct run r = { .t = t, .a = a, .c = c, .ch = { ch, ch->also } };
	int err = 0;
	for (int k = 0; k < 2 && err == 0; k++) {
		err = r.ch[k] != NULL ? prepare(&r, k) : 0;
	}
	r.n_workers = 1;
	for (int k = 0; k < 2; k++) {
		if (r.ch[k] != NULL && workers_of(r.ch[k]) > r.n_workers) {
			r.n_workers = workers_of(r.ch[k]);
		}
	}
	r.worker = malloc((c->n_lanes + 1) * r.n_workers * sizeof(*r.worker));
	/* The re-timed ends, one per node: the caller's (what-ifs run side by side, each with
	 * its own), else allocated by the first what-if, not by the graph (an analysis
	 * without one never holds them), and kept for the next ones (a block this size is
	 * mapped afresh, its pages faulted in again, each time). */
	if (ch->ends == NULL && c->retimed == NULL) {
		((struct isc_causal *)c)->retimed = malloc(c->n * sizeof(*c->retimed));
	}
	int64_t *ne = ch->ends != NULL ? ch->ends : c->retimed, end = a->window.start;
	if (err != 0 || r.worker == NULL || ne == NULL) {
		finish(&r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < (c->n_lanes + 1) * r.n_workers; i++) {
		r.worker[i] = INT64_MIN;
	}
	for (size_t k = 0; k < c->n; k++) {
		uint32_t i = c->order[k];
		ne[i] = retime(&r, i, ne);
		if (isc_graph_ends_run(t, c, i)) {
			end = ne[i] > end ? ne[i] : end;
		}
	}
	finish(&r);
	*after = end;
	if (picked != NULL) {
		*picked = r.picked;
	}
	double w = (double)(a->window.end - a->window.start);
	double gain = w > 0 ? 100.0 * (double)(c->end - end) / w : 0;
	*gain_pct = gain > 100.0 ? 100.0 : gain;
	return 0;
}

/* "NAME*FACTOR": the factor after the last '*'. */
static int split_factor(const char *s, char *pat, size_t n, double *f)
{
	const char *star = strrchr(s, '*');
	char *end = NULL;
	if (star == NULL) {
		return -EINVAL;
	}
	*f = strtod(star + 1, &end);
	if (end == star + 1 || *end != '\0' || !(*f >= 0) || *f > 1e6) {
		return -EINVAL;
	}
	size_t len = (size_t)(star - s);
	if (len >= n) {
		return -EINVAL;
	}
	memcpy(pat, s, len);
	pat[len] = '\0';
	return 0;
}

int isc_whatif_parse(const char *spec, struct isc_change *ch, char *pat, size_t np, char *err,
		     size_t n)
{
	static const struct {
		const char *prefix;
		enum isc_selector sel;
	} scaled[] = {
		{ "scope:", ISC_SEL_SCOPE_ALL },
		{ "kernel:", ISC_SEL_KERNEL },
		{ "call:", ISC_SEL_CALL },
	};
	/* Forms that name what they change and take no factor. overlap: the scope runs
	 * beside the loop (a worker); no-wait: a wait scaled by a factor still ends when what
	 * it waited for ends (a scope's own time is what "scope:NAME*0" removes), a
	 * synchronisation removed does not wait. */
	static const struct {
		const char *prefix;
		enum isc_change_op op;
		enum isc_selector sel;
		double factor;
	} named[] = {
		{ "overlap:", ISC_WI_OFFLOAD, ISC_SEL_SCOPE, 1 },
		{ "no-wait:", ISC_WI_NO_WAIT, ISC_SEL_WAITS, 0 },
	};
	memset(ch, 0, sizeof(*ch));
	ch->after = INT64_MIN;
	ch->factor = 1.0;
	for (size_t i = 0; i < sizeof(scaled) / sizeof(scaled[0]); i++) {
		size_t l = strlen(scaled[i].prefix);
		if (strncmp(spec, scaled[i].prefix, l) == 0) {
			ch->op = ISC_WI_SCALE;
			ch->sel = scaled[i].sel;
			ch->pattern = pat;
			if (split_factor(spec + l, pat, np, &ch->factor) < 0) {
				snprintf(err, n, "--what-if '%s': expected %sNAME*FACTOR", spec,
					 scaled[i].prefix);
				return -EINVAL;
			}
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		size_t l = strlen(named[i].prefix);
		if (strncmp(spec, named[i].prefix, l) == 0 && spec[l] != '\0' &&
		    strlen(spec + l) < np) {
			snprintf(pat, np, "%s", spec + l);
			ch->op = named[i].op;
			ch->sel = named[i].sel;
			ch->pattern = pat;
			ch->factor = named[i].factor;
			/* overlap:NAME*K: K workers (a NAME ending in '*' is a prefix) */
			double w;
			if (ch->op == ISC_WI_OFFLOAD && split_factor(spec + l, pat, np, &w) == 0) {
				if (w < 1 || w > 64 || w != floor(w)) {
					snprintf(err, n,
						 "--what-if '%s': expected overlap:NAME or "
						 "overlap:NAME*K, K workers from 1 to 64",
						 spec);
					return -EINVAL;
				}
				ch->factor = w;
			}
			return 0;
		}
	}
	if (strcmp(spec, "no-sync") == 0) {
		ch->op = ISC_WI_NO_WAIT;
		ch->sel = ISC_SEL_SYNC;
		return 0;
	}
	if (strcmp(spec, "async-copies") == 0) {
		ch->op = ISC_WI_ASYNC;
		ch->sel = ISC_SEL_COPY_WAIT;
		return 0;
	}
	if (strcmp(spec, "graph") == 0) {
		ch->op = ISC_WI_GRAPH;
		ch->sel = ISC_SEL_LAUNCH;
		ch->factor = 0;
		return 0;
	}
	if (strncmp(spec, "gpu*", 4) == 0 && split_factor(spec, pat, np, &ch->factor) == 0) {
		ch->op = ISC_WI_SCALE;
		ch->sel = ISC_SEL_ALL_GPU;
		return 0;
	}
	if (strncmp(spec, "copies*", 7) == 0 && split_factor(spec, pat, np, &ch->factor) == 0) {
		ch->op = ISC_WI_SCALE;
		ch->sel = ISC_SEL_COPIES;
		return 0;
	}
	snprintf(err, n,
		 "--what-if '%s': expected scope:NAME*F, kernel:NAME*F, call:NAME*F, "
		 "overlap:NAME[*K], no-wait:NAME, gpu*F, copies*F, no-sync, async-copies or "
		 "graph",
		 spec);
	return -EINVAL;
}

static void describe(const struct isc_change *ch, const char *spec, char *out, size_t n)
{
	switch (ch->op) {
	case ISC_WI_OFFLOAD:
		if (workers_of(ch) > 1) {
			snprintf(out, n,
				 "host time inside '%s' runs on %zu workers ahead of the thread, "
				 "overlapped with the previous steps",
				 ch->pattern, workers_of(ch));
			return;
		}
		snprintf(out, n,
			 "host time inside '%s' runs on a worker ahead of the thread, "
			 "overlapped with the previous step",
			 ch->pattern);
		return;
	case ISC_WI_NO_WAIT:
		if (ch->sel == ISC_SEL_WAITS) {
			snprintf(out, n,
				 "no wait in '%s': its waits for the GPU, another thread or a "
				 "lock return at once",
				 ch->pattern);
			return;
		}
		snprintf(out, n, "no blocking synchronisation: the host never waits for the GPU");
		return;
	case ISC_WI_ASYNC:
		snprintf(out, n,
			 "synchronous copies return as launches do, the host does not wait");
		return;
	case ISC_WI_GRAPH:
		snprintf(out, n,
			 "launch calls cost nothing: a CUDA graph replays the kernels, "
			 "launch.graph_node_gap_us apart");
		return;
	default:
		break;
	}
	if (ch->sel == ISC_SEL_SCOPE_ALL) {
		const char *name = *ch->pattern != '\0' ? ch->pattern : "*";
		if (ch->factor == 0) {
			snprintf(out, n,
				 "scopes named '%s' removed: their own time, the CUDA calls made "
				 "in them and the GPU work those launched",
				 name);
		} else {
			snprintf(out, n,
				 "scopes named '%s', the CUDA calls made in them and the GPU work "
				 "those launched take %g x their recorded time",
				 name, ch->factor);
		}
		return;
	}
	static const char *const what[] = {
		[ISC_SEL_SCOPE] = "host time inside scopes",
		[ISC_SEL_KERNEL] = "kernels",
		[ISC_SEL_CALL] = "calls",
		[ISC_SEL_LAUNCH] = "launch calls",
		[ISC_SEL_ALL_GPU] = "every GPU operation",
		[ISC_SEL_COPIES] = "host-device copies",
	};
	const char *w =
		ch->sel < sizeof(what) / sizeof(what[0]) && what[ch->sel] ? what[ch->sel] : spec;
	bool named = ch->pattern != NULL && *ch->pattern != '\0';
	snprintf(out, n, "%s%s%s%s take %g x their recorded time", w, named ? " named '" : "",
		 named ? ch->pattern : "", named ? "'" : "", ch->factor);
}

int isc_whatif_answer(const struct isc_trace *t, struct isc_analysis *a, const char *const *specs,
		      size_t n)
{
	struct isc_causal *c = a->causal;
	if (c == NULL || n == 0) {
		return 0;
	}
	c->whatif = calloc(n, sizeof(*c->whatif));
	if (c->whatif == NULL) {
		return -ENOMEM;
	}
	c->n_whatif = n;
	for (size_t i = 0; i < n; i++) {
		struct isc_whatif_result *w = &c->whatif[i];
		struct isc_change ch;
		char pat[128];
		snprintf(w->spec, sizeof(w->spec), "%s", specs[i]);
		if (isc_whatif_parse(specs[i], &ch, pat, sizeof(pat), w->error, sizeof(w->error)) <
		    0) {
			continue;
		}
		describe(&ch, specs[i], w->what, sizeof(w->what));
		if (isc_whatif_run_picked(t, a, &ch, &w->before, &w->after, &w->gain_pct,
					  &w->picked) < 0) {
			return -ENOMEM;
		}
		w->ok = true;
	}
	return 0;
}
