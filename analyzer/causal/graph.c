/* SPDX-License-Identifier: MIT */
/* Builds the run's dependency graph (graph.h) from the model, once per analysis. */
#include "analyzer/causal/graph.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/sort.h"

struct build {
	const struct isc_trace *t;
	struct isc_analysis *a;
	struct isc_causal *c;
	size_t cap;
	uint32_t *last_seg;	     /* per event: the segment that ends it, ISC_GN_NONE */
	struct isc_event_wait *sync; /* cudaEventSynchronize calls on known handles */
	size_t n_sync;
	bool *kineto; /* per input: a Kineto trace (no wait records) */
};

bool isc_graph_in_window(const struct isc_analysis *a, const struct isc_ev *e)
{
	return e->ts >= a->window.start && e->ts <= a->window.end;
}

static bool is_gpu_op(const struct isc_ev *e)
{
	return isc_type_is_gpu(e->type) && e->type != ISC_T_GPU_SYNC;
}

static struct isc_gnode *push(struct build *b)
{
	struct isc_causal *c = b->c;
	if (c->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		if (cap >= ISC_GN_NONE) {
			return NULL;
		}
		struct isc_gnode *v = realloc(c->node, cap * sizeof(*v));
		if (v == NULL) {
			return NULL;
		}
		c->node = v;
		b->cap = cap;
	}
	struct isc_gnode *n = &c->node[c->n++];
	memset(n, 0, sizeof(*n));
	n->seq = n->dep = ISC_GN_NONE;
	return n;
}

struct open_ev {
	uint32_t ev;
	int64_t end;
	size_t nodes_at_push;
};

static int emit(struct build *b, uint32_t owner, int64_t s, int64_t e, uint32_t *prev,
		uint16_t lane)
{
	struct isc_gnode *n = push(b);
	if (n == NULL) {
		return -ENOMEM;
	}
	n->t1 = e;
	n->ev = owner;
	n->seq = *prev;
	n->lane = lane;
	const struct isc_ev *o = &b->t->ev[owner];
	uint16_t first = *prev == ISC_GN_NONE ? ISC_GN_FIRST : 0;
	bool waits =
		o->type == ISC_T_SYSCALL && (o->sub == ISC_SYS_WAIT || o->sub == ISC_SYS_SLEEP);
	/* A wait for a child is the run's work, done by the child (graph-children.c). */
	n->flags = !waits ? 0
		   : o->sub == ISC_SYS_WAIT &&
				   isc_wait_kind_of(isc_trace_str(b->t, o->name)) == ISC_WK_CHILD
			   ? ISC_GN_CHILD
			   : ISC_GN_IDLE;
	n->flags |= first;
	*prev = (uint32_t)(b->c->n - 1);
	b->c->host_nodes++;
	return 0;
}

/* Closes the innermost open event at time `at` (its end). */
static int pop(struct build *b, struct open_ev *st, size_t *depth, int64_t *cur, uint32_t *prev,
	       uint16_t lane)
{
	struct open_ev *o = &st[--*depth];
	const struct isc_ev *e = &b->t->ev[o->ev];
	int r = 0;
	bool none = b->c->n == o->nodes_at_push;
	if (o->end > *cur || (none && e->type == ISC_T_CUDA_API)) {
		r = emit(b, o->ev, *cur, o->end > *cur ? o->end : *cur, prev, lane);
	}
	if (r == 0 && *prev != ISC_GN_NONE && b->c->n > o->nodes_at_push) {
		b->last_seg[o->ev] = *prev;
		b->c->node[*prev].flags |= ISC_GN_LAST;
	}
	*cur = o->end > *cur ? o->end : *cur;
	return r;
}

/* One thread: cut at every event boundary, each piece owned by the innermost event. */
static int thread_segments(struct build *b, const uint32_t *idx, size_t n, uint16_t lane,
			   struct open_ev **stack, size_t *cap)
{
	size_t depth = 0;
	int64_t cur = INT64_MIN;
	uint32_t prev = ISC_GN_NONE;
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		if (idx[i] == ISC_GN_NONE) {
			continue; /* a syscall inside a CUDA call */
		}
		const struct isc_ev *e = &b->t->ev[idx[i]];
		while (r == 0 && depth > 0 && (*stack)[depth - 1].end <= e->ts) {
			r = pop(b, *stack, &depth, &cur, &prev, lane);
		}
		if (e->type == ISC_T_CPU_SAMPLE && depth > 0) {
			continue; /* inside a recorded event: that event owns the time */
		}
		if (r == 0 && depth > 0 && e->ts > cur) {
			r = emit(b, (*stack)[depth - 1].ev, cur, e->ts, &prev, lane);
		}
		if (depth == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			struct open_ev *v = realloc(*stack, nc * sizeof(*v));
			if (v == NULL) {
				return -ENOMEM;
			}
			*stack = v;
			*cap = nc;
		}
		int64_t end = e->ts + isc_graph_host_dur(e);
		/* A child that outlives its parent is cut at the parent's end. */
		end = depth > 0 && end > (*stack)[depth - 1].end ? (*stack)[depth - 1].end : end;
		cur = e->ts > cur ? e->ts : cur;
		(*stack)[depth++] = (struct open_ev){ idx[i], end, b->c->n };
	}
	while (r == 0 && depth > 0) {
		r = pop(b, *stack, &depth, &cur, &prev, lane);
	}
	return r;
}

static int host_nodes(struct build *b)
{
	const struct isc_trace *t = b->t;
	size_t *off = NULL;
	uint32_t *idx = isc_graph_host_events(t, b->a, &off);
	if (idx == NULL) {
		return -ENOMEM;
	}
	struct open_ev *stack = NULL;
	size_t cap = 0;
	int r = 0;
	for (size_t k = 0; k < t->n_threads && r == 0; k++) {
		if (off[k + 1] > off[k]) {
			uint16_t lane =
				b->c->n_lanes < UINT16_MAX ? (uint16_t)b->c->n_lanes : UINT16_MAX;
			b->c->n_lanes++;
			r = thread_segments(b, idx + off[k], off[k + 1] - off[k], lane, &stack,
					    &cap);
		}
	}
	free(stack);
	free(idx);
	free(off);
	return r;
}

struct stream_lane {
	int16_t device;
	int32_t stream;
	uint32_t last;
	uint16_t lane;
};

static int gpu_nodes(struct build *b)
{
	const struct isc_trace *t = b->t;
	struct stream_lane *lanes = NULL;
	size_t n_lanes = 0, hit = 0;
	int r = 0;
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (!is_gpu_op(e) || !isc_graph_in_window(b->a, e)) {
			continue;
		}
		if (hit >= n_lanes || lanes[hit].device != e->device ||
		    lanes[hit].stream != e->stream) {
			for (hit = 0; hit < n_lanes; hit++) {
				if (lanes[hit].device == e->device &&
				    lanes[hit].stream == e->stream) {
					break;
				}
			}
		}
		if (hit == n_lanes) {
			struct stream_lane *v = realloc(lanes, (n_lanes + 1) * sizeof(*v));
			if (v == NULL) {
				r = -ENOMEM;
				break;
			}
			lanes = v;
			uint32_t ln = b->c->n_lanes++;
			lanes[n_lanes++] =
				(struct stream_lane){ e->device, e->stream, ISC_GN_NONE,
						      ln < UINT16_MAX ? (uint16_t)ln : UINT16_MAX };
		}
		struct isc_gnode *n = push(b);
		if (n == NULL) {
			r = -ENOMEM;
			break;
		}
		n->t1 = e->ts + e->dur;
		n->ev = (uint32_t)i;
		n->flags = ISC_GN_GPU;
		n->lane = lanes[hit].lane;
		n->seq = lanes[hit].last;
		lanes[hit].last = (uint32_t)(b->c->n - 1);
		b->c->gpu_nodes++;
		b->c->stream_edges += n->seq != ISC_GN_NONE;
		b->c->unknown_device_ops += e->device < 0;
		const struct isc_ev *api = isc_trace_launch_of(t, e);
		if (api != NULL) {
			uint32_t s = b->last_seg[api - t->ev];
			/* Started before its call returned (a synchronous copy, a launch onto an
			 * idle GPU): it depends on the call's start, the segment before it. */
			while (s != ISC_GN_NONE && e->ts < api->ts + api->dur &&
			       isc_gn_t0(b->c, &b->c->node[s]) >= api->ts) {
				s = b->c->node[s].seq;
			}
			n->dep = s;
			b->c->launch_edges += s != ISC_GN_NONE;
		}
	}
	free(lanes);
	return r;
}

/* Which blocking call a host segment ends, if any: 1 sync, 2 copy, 3 maybe queue-full;
 * in Kineto input, which records no waits, 4 an asynchronous copy or memset and 5 a
 * slow launch that may have waited: wait_edges keeps them when a GPU operation ended
 * just before they returned. */
static int blocking_kind(const struct build *b, const struct isc_ev *e)
{
	if (e->type != ISC_T_CUDA_API) {
		return 0;
	}
	const char *name = isc_trace_str(b->t, e->name);
	bool kineto = b->kineto[e->input];
	bool slow = e->dur > (int64_t)(isc_thr(&b->a->th, ISC_THR_LAUNCH_RUNTIME_US) * 1000.0);
	switch (e->sub) {
	case ISC_AC_SYNC:
		return strstr(name, "WaitEvent") == NULL ? 1 : 0;
	case ISC_AC_MEMCPY:
	case ISC_AC_MEMSET:
		if ((e->flags & ISC_F_BLOCKED) || strstr(name, "Async") == NULL) {
			return 2;
		}
		return kineto ? 4 : 0;
	case ISC_AC_LAUNCH:
		return !slow ? 0 : kineto ? 5 : 3;
	default:
		return (e->flags & ISC_F_BLOCKED) ? 1 : 0;
	}
}

/* Last index in by_end (sorted by node end) whose end is <= t, or -1. */
static ptrdiff_t last_ending_by(const struct isc_causal *c, const uint32_t *by_end, size_t n,
				int64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->node[by_end[mid]].t1 <= t) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return (ptrdiff_t)lo - 1;
}

static size_t count_le(const int64_t *v, const uint32_t *order, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[order[mid]] <= t) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

/* Launches in flight (launched, not finished) at each slow launch's start: a launch that
 * starts with the queue at its deepest and returns only when an operation ends waited
 * for a free slot. */
static int queue_depths(struct build *b, const uint32_t *by_end, size_t n_gpu, int64_t **depth,
			size_t *n_slow)
{
	struct isc_causal *c = b->c;
	int64_t *lend = malloc((n_gpu + 1) * sizeof(*lend));
	uint32_t *ord = malloc((n_gpu + 1) * sizeof(*ord));
	size_t m = 0;
	for (size_t k = 0; lend != NULL && ord != NULL && k < n_gpu; k++) {
		const struct isc_gnode *g = &c->node[by_end[k]];
		if (g->dep != ISC_GN_NONE) {
			lend[m] = c->node[g->dep].t1;
			ord[m] = (uint32_t)m;
			m++;
		}
	}
	if (lend == NULL || ord == NULL || isc_sort_by_key(lend, sizeof(*lend), ord, m) < 0) {
		free(lend);
		free(ord);
		return -ENOMEM;
	}
	size_t cnt = 0;
	for (size_t i = 0; i < c->host_nodes; i++) {
		cnt += (c->node[i].flags & ISC_GN_QFULL) != 0;
	}
	*depth = malloc((cnt + 1) * sizeof(**depth));
	if (*depth == NULL) {
		free(lend);
		free(ord);
		return -ENOMEM;
	}
	size_t j = 0;
	for (size_t i = 0; i < c->host_nodes; i++) {
		if (c->node[i].flags & ISC_GN_QFULL) {
			const struct isc_ev *e = &b->t->ev[c->node[i].ev];
			int64_t d = (int64_t)count_le(lend, ord, m, e->ts) -
				    (int64_t)(last_ending_by(c, by_end, n_gpu, e->ts) + 1);
			(*depth)[j++] = d;
			c->max_queue_depth = d > c->max_queue_depth ? d : c->max_queue_depth;
		}
	}
	*n_slow = cnt;
	free(lend);
	free(ord);
	return 0;
}

/* Whether GPU operations ran for at least half of [s, e) (summed over streams), from the
 * ones ending by e back (by_end[0..k]); a long scan counts as busy. */
static bool gpu_busy(const struct isc_causal *c, const uint32_t *by_end, ptrdiff_t k, int64_t s,
		     int64_t e)
{
	int64_t sum = 0;
	for (int scan = 0; k >= 0 && scan < 4096; k--, scan++) {
		const struct isc_gnode *g = &c->node[by_end[k]];
		if (2 * sum >= e - s) {
			return true;
		}
		if (g->t1 <= s) {
			continue; /* ends are sorted, starts are not */
		}
		int64_t t0 = isc_gn_t0(c, g);
		sum += g->t1 - (t0 > s ? t0 : s);
	}
	return k >= 0 || 2 * sum >= e - s;
}

/* A Kineto call that may have blocked (an asynchronous copy or memset, a slow launch at
 * queue depth d): it waited when it returned within ret of the end of a GPU operation
 * that ended inside it - for a copy or memset its own operation (a D2H copy to pageable
 * memory is synchronous), or, with the GPU busy for at least half of the call, the
 * operation whose end freed a slot of the launch queue. Else it is host time. */
static void infer(const struct isc_trace *t, struct isc_causal *c, struct isc_gnode *n,
		  const uint32_t *by_end, size_t n_gpu, int64_t ret, double d)
{
	ptrdiff_t k = last_ending_by(c, by_end, n_gpu, n->t1);
	const struct isc_gnode *g = k >= 0 ? &c->node[by_end[k]] : NULL;
	bool launch = (n->flags & ISC_GN_QFULL) != 0;
	n->flags &= (uint16_t) ~(ISC_GN_COPY | ISC_GN_QFULL | ISC_GN_INFER);
	int64_t t0 = isc_gn_t0(c, n);
	if (g == NULL || g->t1 <= t0 || n->t1 - g->t1 > ret || n->t1 - t0 <= ret) {
		return;
	}
	const struct isc_ev *e = &t->ev[n->ev], *o = &t->ev[g->ev];
	/* a launch that returns after its own kernel ran did not wait for it (CUDA's lazy
	 * loading runs the first launch of a module that way): only a copy returns with its
	 * operation */
	bool own = !launch && o->corr == e->corr && o->input == e->input && e->corr != 0;
	if (!own && ((launch && d < 1) || !gpu_busy(c, by_end, k, t0, n->t1))) {
		return;
	}
	n->dep = by_end[k];
	n->flags |= ISC_GN_WAIT | ISC_GN_INFER | (launch ? ISC_GN_QFULL : ISC_GN_COPY);
	c->wait_edges++;
	c->inferred_waits++;
	c->copy_waits += !launch;
	c->queue_full += launch;
}

/* The GPU operation whose end released a blocking call: the last one to end inside it. */
static void wait_edges(struct build *b, const uint32_t *by_end, size_t n_gpu, const int64_t *depth)
{
	struct isc_causal *c = b->c;
	const struct isc_analysis *a = b->a;
	double min_depth = isc_thr(&a->th, ISC_THR_QUEUE_FULL_DEPTH);
	double full = (double)c->max_queue_depth * 0.9;
	full = full > min_depth ? full : min_depth;
	int64_t ret = (int64_t)(isc_thr(&a->th, ISC_THR_LAUNCH_RUNTIME_US) * 500.0);
	size_t j = 0;
	for (size_t i = 0; i < c->host_nodes; i++) {
		struct isc_gnode *n = &c->node[i];
		if (!(n->flags & (ISC_GN_SYNC | ISC_GN_COPY | ISC_GN_QFULL))) {
			continue;
		}
		const struct isc_ev *e = &b->t->ev[n->ev];
		double d = (n->flags & ISC_GN_QFULL) ? (double)depth[j++] : 0;
		if (n->flags & ISC_GN_INFER) {
			infer(b->t, c, n, by_end, n_gpu, ret, d);
			continue;
		}
		if ((n->flags & ISC_GN_QFULL) && d < full) {
			n->flags &= (uint16_t)~ISC_GN_QFULL;
			continue;
		}
		bool known = false;
		uint32_t src = isc_graph_event_source(b->sync, b->n_sync, n->ev, &known);
		if (known && (src == ISC_GN_NONE || c->node[src].t1 < e->ts)) {
			/* the event it waits for had completed (or marked nothing): no wait */
			n->flags &= (uint16_t)~ISC_GN_SYNC;
			continue;
		}
		ptrdiff_t k = last_ending_by(c, by_end, n_gpu, n->t1);
		if (known && c->node[src].t1 <= n->t1) {
			n->dep = src; /* exactly what its record marked */
			n->flags |= ISC_GN_WAIT;
			c->wait_edges++;
			c->sync_waits++;
			c->event_syncs++;
			continue;
		}
		if (k < 0 || c->node[by_end[k]].t1 < e->ts) {
			n->flags |= (n->flags & (ISC_GN_SYNC | ISC_GN_COPY)) ? ISC_GN_BLOCKING : 0;
			n->flags &= (uint16_t) ~(ISC_GN_SYNC | ISC_GN_COPY | ISC_GN_QFULL);
			continue; /* nothing ended while it ran: no recorded GPU work to wait for */
		}
		n->dep = by_end[k];
		n->flags |= ISC_GN_WAIT;
		c->wait_edges++;
		c->sync_waits += (n->flags & ISC_GN_SYNC) != 0;
		c->copy_waits += (n->flags & ISC_GN_COPY) != 0;
		c->queue_full += (n->flags & ISC_GN_QFULL) != 0;
	}
}

static int waits(struct build *b)
{
	struct isc_causal *c = b->c;
	size_t n_gpu = c->gpu_nodes, n_slow = 0;
	bool slow = false;
	for (size_t i = 0; i < c->host_nodes; i++) {
		struct isc_gnode *n = &c->node[i];
		const struct isc_ev *e = &b->t->ev[n->ev];
		if (!(n->flags & ISC_GN_LAST) || e->ts + e->dur != n->t1) {
			continue;
		}
		static const uint16_t flag[] = { 0,
						 ISC_GN_SYNC,
						 ISC_GN_COPY,
						 ISC_GN_QFULL,
						 ISC_GN_COPY | ISC_GN_INFER,
						 ISC_GN_QFULL | ISC_GN_INFER };
		int k = blocking_kind(b, e);
		n->flags |= flag[k];
		slow |= k == 3 || k == 5;
	}
	if (n_gpu == 0) {
		for (size_t i = 0; i < c->host_nodes; i++) {
			struct isc_gnode *n = &c->node[i];
			bool blocks = (n->flags & (ISC_GN_SYNC | ISC_GN_COPY)) &&
				      !(n->flags & ISC_GN_INFER);
			n->flags |= blocks ? ISC_GN_BLOCKING : 0;
			n->flags &= (uint16_t) ~(ISC_GN_SYNC | ISC_GN_COPY | ISC_GN_QFULL |
						 ISC_GN_INFER);
		}
		return 0;
	}
	uint32_t *by_end = malloc(n_gpu * sizeof(*by_end));
	if (by_end == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < n_gpu; k++) {
		by_end[k] = (uint32_t)(c->host_nodes + k);
	}
	int64_t *depth = NULL;
	int r = isc_sort_by_key(&c->node[0].t1, sizeof(struct isc_gnode), by_end, n_gpu);
	if (r == 0 && slow) {
		r = queue_depths(b, by_end, n_gpu, &depth, &n_slow);
	}
	if (r == 0) {
		wait_edges(b, by_end, n_gpu, depth);
	}
	free(depth);
	free(by_end);
	return r;
}

/*
 * The order the what-if engine re-times nodes in: by end, a GPU operation before the host
 * segment that ends at the same instant (a sync returning as its kernel ends: the sort is
 * stable and the GPU operations go in first). Every edge goes from an earlier end to a
 * later one; an edge that does not (a corrupt trace) is left out, so the order is
 * topological.
 */
static int order(struct isc_causal *c)
{
	c->order = malloc((c->n + 1) * sizeof(*c->order));
	if (c->order == NULL) {
		return -ENOMEM;
	}
	size_t n_gpu = c->n - c->host_nodes;
	for (size_t i = 0; i < c->n; i++) {
		c->order[i] = (uint32_t)(i < n_gpu ? c->host_nodes + i : i - n_gpu);
	}
	/* no node, no array to take an address in */
	if (c->n > 0 &&
	    isc_sort_by_key(&c->node[0].t1, sizeof(struct isc_gnode), c->order, c->n) < 0) {
		return -ENOMEM;
	}
	uint32_t *pos = malloc((c->n + 1) * sizeof(*pos));
	if (pos == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < c->n; k++) {
		pos[c->order[k]] = (uint32_t)k;
	}
	for (size_t i = 0; i < c->n; i++) {
		struct isc_gnode *n = &c->node[i];
		if (n->seq != ISC_GN_NONE && pos[n->seq] >= pos[i]) {
			n->seq = ISC_GN_NONE;
			c->cycle_edges++;
		}
		uint32_t x = isc_graph_xdep(c, (uint32_t)i);
		if (x != ISC_GN_NONE && pos[x] >= pos[i]) {
			c->xdep[i] = ISC_GN_NONE;
			c->event_edges--;
			c->cycle_edges++;
		}
		if (n->dep != ISC_GN_NONE && pos[n->dep] >= pos[i]) {
			n->dep = ISC_GN_NONE;
			n->flags &= (uint16_t) ~(ISC_GN_WAIT | ISC_GN_SYNC | ISC_GN_COPY |
						 ISC_GN_QFULL | ISC_GN_HANDOFF | ISC_GN_WOKEN);
			c->cycle_edges++;
		}
	}
	free(pos);
	return 0;
}

int64_t isc_graph_kth(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;
	while (hi - lo > 1) {
		int64_t p = v[lo + (hi - lo) / 2], x;
		size_t lt = lo, i = lo, gt = hi;
		while (i < gt) {
			if (v[i] < p) {
				x = v[lt];
				v[lt++] = v[i];
				v[i++] = x;
			} else if (v[i] > p) {
				x = v[--gt];
				v[gt] = v[i];
				v[i] = x;
			} else {
				i++;
			}
		}
		if (k < lt) {
			hi = lt;
		} else if (k >= gt) {
			lo = gt;
		} else {
			return p;
		}
	}
	return v[lo];
}

/* The launch latency the what-ifs keep after a launch that no longer holds its operation
 * back: the median gap from a launch's return to its operation's start, over operations
 * that the launch, not the stream nor an event wait, held back. */
static int launch_latency(struct isc_causal *c)
{
	int64_t *v = malloc((c->gpu_nodes + 1) * sizeof(*v));
	if (v == NULL) {
		return -ENOMEM;
	}
	size_t m = 0;
	for (size_t i = c->host_nodes; i < c->n; i++) {
		const struct isc_gnode *n = &c->node[i];
		int64_t ed = n->dep != ISC_GN_NONE ? c->node[n->dep].t1 : INT64_MAX;
		uint32_t x = isc_graph_xdep(c, (uint32_t)i);
		int64_t t0 = isc_gn_t0(c, n);
		if (t0 >= ed && (n->seq == ISC_GN_NONE || c->node[n->seq].t1 < ed) &&
		    (x == ISC_GN_NONE || c->node[x].t1 < ed)) {
			v[m++] = t0 - ed;
		}
	}
	c->launch_latency = m > 0 ? isc_graph_kth(v, m, m / 2) : 0;
	free(v);
	return 0;
}

int isc_causal_build(const struct isc_trace *t, struct isc_analysis *a)
{
	struct isc_causal *c = calloc(1, sizeof(*c));
	if ((a->causal = c) == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n_inputs; i++) {
		c->kineto |=
			t->inputs[i].format != NULL && strcmp(t->inputs[i].format, "kineto") == 0;
	}
	struct build b = { .t = t, .a = a, .c = c };
	b.last_seg = malloc((t->n + 1) * sizeof(*b.last_seg));
	if (b.last_seg == NULL) {
		return -ENOMEM;
	}
	memset(b.last_seg, 0xff, (t->n + 1) * sizeof(*b.last_seg));
	b.kineto = calloc(t->n_inputs + 1, sizeof(*b.kineto));
	if (b.kineto == NULL) {
		free(b.last_seg);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n_inputs; i++) {
		b.kineto[i] =
			t->inputs[i].format != NULL && strcmp(t->inputs[i].format, "kineto") == 0;
	}
	c->ev = t->ev;
	int r = host_nodes(&b);
	r = r == 0 ? gpu_nodes(&b) : r;
	free(b.last_seg);
	r = r == 0 ? isc_graph_event_edges(t, a, c, &b.sync, &b.n_sync) : r;
	r = r == 0 && c->kineto ? isc_graph_kineto_inferred_waits(t, c) : r;
	r = r == 0 ? waits(&b) : r;
	free(b.sync);
	free(b.kineto);
	r = r == 0 ? isc_graph_threads(t, c) : r;
	r = r == 0 ? isc_graph_children(t, c) : r;
	r = r == 0 ? order(c) : r;
	r = r == 0 ? launch_latency(c) : r;
	c->end = a->window.start;
	c->samples_only = true;
	for (size_t i = 0; i < c->n && c->samples_only; i++) {
		const struct isc_gnode *g = &c->node[i];
		c->samples_only =
			(g->flags & ISC_GN_WAITING) ||
			(!(g->flags & ISC_GN_GPU) && t->ev[g->ev].type == ISC_T_CPU_SAMPLE);
	}
	for (size_t i = 0; i < c->n; i++) {
		if (isc_graph_ends_run(t, c, (uint32_t)i)) {
			c->end = c->node[i].t1 > c->end ? c->node[i].t1 : c->end;
		}
	}
	return r == 0 ? isc_critical_path(t, a, c) : r;
}

bool isc_graph_ends_run(const struct isc_trace *t, const struct isc_causal *c, uint32_t i)
{
	const struct isc_gnode *g = &c->node[i];
	if (g->flags & (ISC_GN_IDLE | ISC_GN_POLL | ISC_GN_TEARDOWN)) {
		return false;
	}
	return c->samples_only || (g->flags & ISC_GN_GPU) || t->ev[g->ev].type != ISC_T_CPU_SAMPLE;
}

void isc_causal_destroy(struct isc_causal *c)
{
	if (c == NULL) {
		return;
	}
	free(c->node);
	free(c->xdep);
	free(c->order);
	free(c->retimed);
	free(c->pieces);
	free(c->path_thread);
	free(c->whatif);
	free(c);
}
