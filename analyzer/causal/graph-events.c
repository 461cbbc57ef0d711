/* SPDX-License-Identifier: MIT */
/*
 * Cross-stream event edges (graph.h): cudaEventRecord(ev, A) marks the work submitted to
 * stream A so far; cudaStreamWaitEvent(B, ev) makes the work submitted to B afterwards
 * wait for that mark; cudaEventSynchronize(ev) makes the host wait for it. The calls are
 * paired by the event handle (isc_ev.v.handle) in submission order, as the device does:
 * a wait takes the last record of the same handle before it, a record takes the last
 * operation launched onto its stream before it (Holistic Trace Analysis pairs Kineto's
 * records and waits the same way, by the record's correlation id).
 *
 * Streams here are the calls' stream arguments (the recorder's numbering, one per input),
 * not CUPTI's ids: a record names a stream handle, and launches name the same handles, so
 * the launch calls link the two through correlation. Inputs without handles (Kineto)
 * are paired from their cuda_sync records instead (graph-events-kineto.c), or where they
 * have none, told from the order of two streams' operations.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/grow.h"
#include "analyzer/base/sort.h"
#include "analyzer/causal/graph.h"
#include "analyzer/causal/id-map.h"

#define KEY_BIT (UINT64_C(1) << 63)

static uint64_t stream_key(const struct isc_ev *e)
{
	return KEY_BIT | (uint64_t)e->input << 32 | (uint32_t)e->stream;
}

static uint64_t event_key(const struct isc_ev *e)
{
	return KEY_BIT | (uint64_t)e->input << 48 | (e->v.handle & ((UINT64_C(1) << 48) - 1));
}

/* Map values beside node indices (every index is below ISC_GN_NONE - 2): */
#define EMPTY (ISC_GN_NONE - 1)	 /* a mark of nothing: the stream had no work before */
#define UNSEEN (ISC_GN_NONE - 2) /* last: the stream's last work is not in the graph */

struct pass {
	const struct isc_trace *t;
	struct isc_causal *c;
	uint8_t *kind;		/* per string id: enum isc_event_call + 1, 0 not yet known */
	uint32_t *by_api;	/* GPU nodes in order of their launch call's index */
	int64_t *api;		/* the launch call's index of each GPU node (sort key) */
	size_t n_launched;	/* entries of by_api */
	struct isc_id_map last; /* stream -> the last operation launched onto it */
	struct isc_id_map pend; /* stream -> the mark its next operation waits for */
	struct isc_id_map mark; /* event -> the operation its last record marked */
};

static enum isc_event_call call_kind(struct pass *p, const struct isc_ev *e)
{
	if (p->kind[e->name] == 0) {
		p->kind[e->name] = (uint8_t)(isc_api_event_call(isc_trace_str(p->t, e->name)) + 1);
	}
	return (enum isc_event_call)(p->kind[e->name] - 1);
}

/* What the window holds to pair: a wait or a synchronize on a known handle (WANT_HANDLES),
 * a Kineto cuda_sync record that names the stream its event was recorded on (WANT_KINETO).
 * Neither: nothing to do. */
enum { WANT_HANDLES = 1, WANT_KINETO = 2 };

static unsigned wanted(struct pass *p, const struct isc_analysis *a)
{
	unsigned w = 0;
	for (size_t i = 0; i < p->t->n && w != (WANT_HANDLES | WANT_KINETO); i++) {
		const struct isc_ev *e = &p->t->ev[i];
		if (e->type == ISC_T_GPU_SYNC) {
			bool names = e->sub != ISC_GS_OTHER && e->v.sync.wait_stream >= 0;
			w |= names && isc_graph_in_window(a, e) ? WANT_KINETO : 0;
			continue;
		}
		if (e->type != ISC_T_CUDA_API || e->v.handle == 0 || !isc_graph_in_window(a, e)) {
			continue;
		}
		enum isc_event_call k = call_kind(p, e);
		w |= k == ISC_EC_WAIT || k == ISC_EC_SYNC ? WANT_HANDLES : 0;
	}
	return w;
}

static int launched_nodes(struct pass *p)
{
	const struct isc_causal *c = p->c;
	p->by_api = malloc((c->gpu_nodes + 1) * sizeof(*p->by_api));
	p->api = malloc((c->gpu_nodes + 1) * sizeof(*p->api));
	if (p->by_api == NULL || p->api == NULL) {
		return -ENOMEM;
	}
	size_t m = 0;
	for (size_t i = c->host_nodes; i < c->n; i++) {
		const struct isc_ev *api = isc_trace_launch_of(p->t, &p->t->ev[c->node[i].ev]);
		if (api != NULL && api->stream >= 0) {
			p->api[i - c->host_nodes] = api - p->t->ev;
			p->by_api[m++] = (uint32_t)(i - c->host_nodes);
		}
	}
	p->n_launched = m;
	if (isc_sort_by_key(p->api, sizeof(*p->api), p->by_api, m) < 0) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < m; k++) {
		p->by_api[k] += (uint32_t)c->host_nodes;
	}
	return 0;
}

/* An asynchronous copy or memset: stream work a record marks like a launch's. */
static bool async_op(const struct isc_ev *e)
{
	return (e->sub == ISC_AC_MEMCPY || e->sub == ISC_AC_MEMSET) && !(e->flags & ISC_F_BLOCKED);
}

int isc_graph_add_xdep(struct isc_causal *c, uint32_t node, uint32_t src)
{
	if (c->xdep == NULL) {
		c->xdep = malloc((c->n + 1) * sizeof(*c->xdep));
		if (c->xdep == NULL) {
			return -ENOMEM;
		}
		memset(c->xdep, 0xff, (c->n + 1) * sizeof(*c->xdep));
	}
	c->xdep[node] = src;
	c->event_edges++;
	return 0;
}

int isc_graph_push_wait(struct isc_event_wait **v, size_t *n, size_t *cap, uint32_t ev,
			uint32_t src)
{
	if (isc_grow(v, cap, *n + 1, sizeof(**v), 64) < 0) {
		return -ENOMEM;
	}
	(*v)[(*n)++] = (struct isc_event_wait){ ev, src };
	return 0;
}

/* The operations of launch call i (by_api[*k...]): the stream's pending mark becomes
 * their dependency; the last to end is what a record on the stream marks next. */
static int launch(struct pass *p, size_t i, size_t *k)
{
	struct isc_causal *c = p->c;
	const struct isc_ev *e = &p->t->ev[i];
	uint32_t *pend = isc_id_map_at(&p->pend, stream_key(e), ISC_GN_NONE);
	uint32_t *last = pend != NULL ? isc_id_map_at(&p->last, stream_key(e), ISC_GN_NONE) : NULL;
	if (last == NULL) {
		return -ENOMEM;
	}
	uint32_t best = ISC_GN_NONE;
	for (; *k < p->n_launched && p->api[p->by_api[*k] - c->host_nodes] == (int64_t)i; (*k)++) {
		uint32_t g = p->by_api[*k];
		if (*pend != ISC_GN_NONE && isc_graph_add_xdep(c, g, *pend) < 0) {
			return -ENOMEM;
		}
		if (best == ISC_GN_NONE || c->node[g].t1 >= c->node[best].t1) {
			best = g;
		}
	}
	*last = best;
	*pend = ISC_GN_NONE;
	return 0;
}

static int event_call(struct pass *p, const struct isc_ev *e, enum isc_event_call k,
		      struct isc_event_wait **sync, size_t *n_sync, size_t *cap)
{
	const struct isc_causal *c = p->c;
	uint32_t *m = isc_id_map_at(&p->mark, event_key(e), ISC_GN_NONE);
	if (m == NULL) {
		return -ENOMEM;
	}
	if (k == ISC_EC_RECORD) {
		uint32_t *last =
			e->stream >= 0 ? isc_id_map_at(&p->last, stream_key(e), ISC_GN_NONE) : NULL;
		if (e->stream >= 0 && last == NULL) {
			return -ENOMEM;
		}
		/* ISC_GN_NONE (not yet written): nothing launched onto it before */
		*m = last == NULL || *last == UNSEEN ? ISC_GN_NONE
		     : *last == ISC_GN_NONE	     ? EMPTY
						     : *last;
		return 0;
	}
	if (k == ISC_EC_WAIT && *m < UNSEEN && e->stream >= 0) {
		uint32_t src = *m;
		uint32_t *pend = isc_id_map_at(&p->pend, stream_key(e), ISC_GN_NONE);
		if (pend == NULL) {
			return -ENOMEM;
		}
		if (*pend == ISC_GN_NONE || c->node[src].t1 > c->node[*pend].t1) {
			*pend = src;
		}
		return 0;
	}
	if (k == ISC_EC_SYNC && *m != ISC_GN_NONE) { /* else: its record is unknown */
		return isc_graph_push_wait(sync, n_sync, cap, (uint32_t)(e - p->t->ev),
					   *m == EMPTY ? ISC_GN_NONE : *m);
	}
	return 0;
}

static int cmp_wait(const void *x, const void *y)
{
	const struct isc_event_wait *a = x, *b = y;
	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

int isc_graph_event_edges(const struct isc_trace *t, const struct isc_analysis *a,
			  struct isc_causal *c, struct isc_event_wait **sync, size_t *n_sync)
{
	struct pass p = { .t = t, .c = c };
	size_t cap = 0, k = 0;
	*sync = NULL;
	*n_sync = 0;
	p.kind = calloc(isc_trace_n_strings(t) + 1, 1);
	int r = p.kind == NULL ? -ENOMEM : 0;
	unsigned want = r == 0 ? wanted(&p, a) : 0;
	if (want & WANT_KINETO) {
		r = isc_graph_kineto_event_edges(t, c, sync, n_sync, &cap);
	}
	if (r < 0 || !(want & WANT_HANDLES) || (r = launched_nodes(&p)) < 0) {
		goto out;
	}
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type != ISC_T_CUDA_API) {
			continue;
		}
		while (k < p.n_launched && p.api[p.by_api[k] - c->host_nodes] < (int64_t)i) {
			k++;
		}
		if (k < p.n_launched && p.api[p.by_api[k] - c->host_nodes] == (int64_t)i) {
			r = launch(&p, i, &k);
			continue;
		}
		if (e->stream >= 0 && e->corr != 0 && (e->sub == ISC_AC_LAUNCH || async_op(e))) {
			/* work whose operation is not in the graph (outside the window, or
			 * no GPU record): a record after it marks something unknown */
			uint32_t *last = isc_id_map_at(&p.last, stream_key(e), ISC_GN_NONE);
			r = last == NULL ? -ENOMEM : 0;
			if (last != NULL) {
				*last = UNSEEN;
			}
			continue;
		}
		enum isc_event_call kind = e->v.handle != 0 ? call_kind(&p, e) : ISC_EC_NONE;
		if (kind != ISC_EC_NONE && kind != ISC_EC_QUERY) {
			r = event_call(&p, e, kind, sync, n_sync, &cap);
		}
	}
out:
	if (r == 0 && (want & WANT_KINETO) && *n_sync > 1) {
		/* Kineto's come in correlation order, after the other pass's if any: the
		 * lookup (isc_graph_event_source) wants them in event order */
		qsort(*sync, *n_sync, sizeof(**sync), cmp_wait);
	}
	free(p.kind);
	free(p.by_api);
	free(p.api);
	isc_id_map_free(&p.last);
	isc_id_map_free(&p.pend);
	isc_id_map_free(&p.mark);
	return r;
}

uint32_t isc_graph_event_source(const struct isc_event_wait *v, size_t n, uint32_t ev, bool *known)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].ev < ev) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	*known = lo < n && v[lo].ev == ev;
	return *known ? v[lo].src : ISC_GN_NONE;
}
