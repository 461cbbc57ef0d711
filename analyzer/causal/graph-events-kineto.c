/* SPDX-License-Identifier: MIT */
/*
 * Cross-stream event edges of Kineto input (graph.h, docs/rules.md). A PyTorch-profiler
 * trace names no cudaEvent_t, but its cuda_sync records of a wait on an event ("Stream
 * Wait Event" for cudaStreamWaitEvent, "Event Sync" for cudaEventSynchronize; correlation:
 * the waiting call's) say on which stream the event was recorded (wait_on_stream) and,
 * from PyTorch 2.2 on, which cudaEventRecord call recorded it
 * (wait_on_cuda_event_record_corr_id), as Holistic Trace Analysis pairs them.
 *
 * Submission order is correlation order: CUPTI hands correlation ids out from one counter
 * as calls enter, and a GPU operation carries its launch call's. One sweep, in that order
 * per input:
 *  - the record, at correlation R on stream W, marks the operation launched onto W before
 *    R that W runs last;
 *  - without R (older PyTorch) the record still came before the wait call C, so the mark
 *    is at most the last operation launched onto W before C: the wait is tied to that one,
 *    an edge that may over-constrain (counted as assumed; an Event Sync is then left to
 *    the general rule, "the last operation that ended inside it");
 *  - the first operation launched onto the waiting stream after C waits for the mark; an
 *    Event Sync's host call waits for exactly the mark.
 * A record whose mark is not in the graph (before the window, or the stream's work before
 * the trace began) pairs with nothing. An edge the recorded times contradict is left out
 * and counted: the waiting operation started before its mark ended (beyond the microsecond
 * Kineto rounds to). Nothing is inferred from timing where waits are recorded; an input
 * that records none has its waits told from the order of two streams' operations
 * (isc_graph_kineto_inferred_waits, at the end).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/sort.h"
#include "analyzer/causal/graph.h"
#include "analyzer/causal/id-map.h"

/* Kineto writes whole microseconds: a start and an end each lose up to one. */
#define ROUNDING_NS 1000

/* The sweep's steps at one correlation, in this order: a record's mark is taken before
 * the wait that uses it (the same correlation where R is not known). */
enum step { S_MARK, S_OP, S_WAIT };

struct item {
	int64_t key;   /* input, correlation, step: the sweep's order */
	uint32_t ev;   /* trace event: a GPU operation or a cuda_sync record */
	uint32_t node; /* S_OP: its graph node; S_MARK: the node marked; ISC_GN_NONE */
};

struct kpass {
	const struct isc_trace *t;
	struct isc_causal *c;
	struct item *it;
	size_t n;
	struct isc_id_map last; /* stream -> the item of the operation it runs last so far */
	struct isc_id_map pend; /* stream -> the S_WAIT item its next operation waits for */
};

static uint64_t stream_key(const struct isc_ev *e, int32_t stream)
{
	return UINT64_C(1) << 63 | (uint64_t)e->input << 48 | (uint64_t)(uint16_t)e->device << 32 |
	       (uint32_t)stream;
}

static void add(struct kpass *p, uint64_t corr, enum step s, size_t ev, uint32_t node)
{
	/* the sign bit is the input's: keys of one input keep their order */
	uint64_t k =
		(uint64_t)p->t->ev[ev].input << 48 | (corr & ((UINT64_C(1) << 46) - 1)) << 2 | s;
	p->it[p->n++] = (struct item){ (int64_t)k, (uint32_t)ev, node };
}

/* The correlation whose submissions a wait's record marked: R, or C when R is unknown
 * (a Stream Wait Event only); 0 when the record says nothing usable. */
static uint64_t mark_corr(const struct isc_ev *e)
{
	uint64_t r = e->v.sync.record_corr;
	if (e->v.sync.wait_stream < 0 || e->corr == 0) {
		return 0;
	}
	if (r != 0) {
		return r < e->corr ? r : 0; /* a record after its wait: a corrupt trace */
	}
	return e->sub == ISC_GS_WAIT_EVENT ? e->corr : 0;
}

static bool is_op(const struct isc_ev *e)
{
	return isc_type_is_gpu(e->type) && e->type != ISC_T_GPU_SYNC && e->corr != 0 &&
	       e->stream >= 0 && !(e->flags & ISC_F_NO_STREAM);
}

/* Every GPU operation with a stream and a launch, and every wait on an event; counted
 * first, so that the items take what they need and no doubling slack (a Kineto trace is
 * about one operation in four events). */
static int gather(struct kpass *p)
{
	const struct isc_trace *t = p->t;
	const struct isc_causal *c = p->c;
	size_t n = 0, g = c->host_nodes;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_GPU_SYNC && e->sub != ISC_GS_OTHER) {
			n += 2;
		}
		n += is_op(e);
	}
	p->it = malloc((n + 1) * sizeof(*p->it));
	if (p->it == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_GPU_SYNC) {
			uint64_t m = e->sub != ISC_GS_OTHER ? mark_corr(e) : 0;
			if (m != 0) {
				add(p, m, S_MARK, i, ISC_GN_NONE);
			}
			if (m != 0 && e->sub == ISC_GS_WAIT_EVENT) {
				add(p, e->corr, S_WAIT, i, ISC_GN_NONE);
			}
			continue;
		}
		/* the graph's operations are the window's, in event order */
		while (g < c->n && c->node[g].ev < i) {
			g++;
		}
		if (is_op(e)) {
			add(p, e->corr, S_OP, i,
			    g < c->n && c->node[g].ev == i ? (uint32_t)g : ISC_GN_NONE);
		}
	}
	return 0;
}

static int op(struct kpass *p, uint32_t k, size_t *assumed, size_t *refuted)
{
	struct isc_causal *c = p->c;
	const struct item *it = &p->it[k];
	const struct isc_ev *e = &p->t->ev[it->ev];
	uint32_t *last = isc_id_map_at(&p->last, stream_key(e, e->stream), ISC_GN_NONE);
	if (last == NULL) {
		return -ENOMEM;
	}
	/* what the stream runs last so far: stream order is start order, the event order */
	if (*last == ISC_GN_NONE || p->it[*last].ev < it->ev) {
		*last = k;
	}
	uint32_t *pend = isc_id_map_at(&p->pend, stream_key(e, e->stream), ISC_GN_NONE);
	if (pend == NULL) {
		return -ENOMEM;
	}
	uint32_t w = *pend;
	*pend = ISC_GN_NONE; /* the first operation after the wait takes it, in the graph or not */
	if (w == ISC_GN_NONE || it->node == ISC_GN_NONE) {
		return 0;
	}
	uint32_t src = p->it[w - 1].node;
	if (c->node[src].t1 - isc_gn_t0(c, &c->node[it->node]) >= ROUNDING_NS) {
		(*refuted)++;
		return 0;
	}
	if (c->node[src].t1 >= c->node[it->node].t1) {
		c->cycle_edges++; /* a zero-length operation: the order would drop it as one */
		return 0;
	}
	*assumed += p->t->ev[p->it[w].ev].v.sync.record_corr == 0;
	return isc_graph_add_xdep(c, it->node, src);
}

static int mark(struct kpass *p, uint32_t k, struct isc_event_wait **sync, size_t *n_sync,
		size_t *cap)
{
	struct item *it = &p->it[k];
	const struct isc_ev *e = &p->t->ev[it->ev];
	uint32_t *last = isc_id_map_at(&p->last, stream_key(e, e->v.sync.wait_stream), ISC_GN_NONE);
	if (last == NULL) {
		return -ENOMEM;
	}
	/* nothing launched onto the stream in the trace: it may have run work before the
	 * profiler started, so the mark is unknown, not empty */
	it->node = *last != ISC_GN_NONE ? p->it[*last].node : ISC_GN_NONE;
	if (e->sub != ISC_GS_EVENT_SYNC || it->node == ISC_GN_NONE) {
		return 0;
	}
	const struct isc_ev *api = isc_trace_launch_of(p->t, e); /* the synchronize call */
	if (api == NULL || api->type != ISC_T_CUDA_API) {
		return 0;
	}
	return isc_graph_push_wait(sync, n_sync, cap, (uint32_t)(api - p->t->ev), it->node);
}

static int wait(struct kpass *p, uint32_t k)
{
	const struct isc_causal *c = p->c;
	uint32_t src = p->it[k - 1].node; /* its S_MARK, added just before it */
	if (src == ISC_GN_NONE) {
		return 0;
	}
	const struct isc_ev *e = &p->t->ev[p->it[k].ev];
	uint32_t *pend = isc_id_map_at(&p->pend, stream_key(e, e->stream), ISC_GN_NONE);
	if (pend == NULL) {
		return -ENOMEM;
	}
	/* several waits before one operation: it starts when the last of their marks ends */
	if (*pend == ISC_GN_NONE || c->node[src].t1 > c->node[p->it[*pend - 1].node].t1) {
		*pend = k;
	}
	return 0;
}

int isc_graph_kineto_event_edges(const struct isc_trace *t, struct isc_causal *c,
				 struct isc_event_wait **sync, size_t *n_sync, size_t *cap)
{
	struct kpass p = { .t = t, .c = c };
	size_t assumed = 0, refuted = 0;
	uint32_t *idx = NULL;
	int r = gather(&p);
	if (r == 0 && p.n > 0) {
		idx = malloc(p.n * sizeof(*idx));
		r = idx == NULL ? -ENOMEM : 0;
	}
	for (size_t k = 0; r == 0 && k < p.n; k++) {
		idx[k] = (uint32_t)k;
	}
	if (r == 0 && p.n > 0) {
		r = isc_sort_by_key(&p.it[0].key, sizeof(struct item), idx, p.n);
	}
	for (size_t k = 0; r == 0 && k < p.n; k++) {
		switch ((enum step)(p.it[idx[k]].key & 3)) {
		case S_MARK:
			r = mark(&p, idx[k], sync, n_sync, cap);
			break;
		case S_OP:
			r = op(&p, idx[k], &assumed, &refuted);
			break;
		case S_WAIT:
			r = wait(&p, idx[k]);
			break;
		}
	}
	c->event_assumed += assumed;
	c->event_refuted += refuted;
	free(idx);
	free(p.it);
	isc_id_map_free(&p.last);
	isc_id_map_free(&p.pend);
	return r;
}

/*
 * Stream waits that a Kineto input does not record (docs/rules.md): PyTorch before 2.0
 * writes no cuda_sync records, so a stream that waits on another through an event (a
 * compute stream waiting for an NCCL all-reduce, an NCCL stream waiting for the
 * gradients) shows only as a gap. An operation that started at least INFER_GAP_NS after
 * both its stream's previous operation and its launch had ended - nothing recorded held
 * it back - and at most INFER_SLACK_NS after an operation of another stream of its device
 * ended (the last one to end before it), after that gap began, waited for that operation.
 * Only in inputs without any "Stream Wait Event" record: where waits are recorded, an
 * unrecorded one is not assumed.
 */
#define INFER_GAP_NS 50000
#define INFER_SLACK_NS 30000

int isc_graph_kineto_inferred_waits(const struct isc_trace *t, struct isc_causal *c)
{
	bool *want = calloc(t->n_inputs + 1, sizeof(*want));
	uint32_t *by_end = malloc((c->gpu_nodes + 1) * sizeof(*by_end));
	bool any = false;
	int r = want == NULL || by_end == NULL ? -ENOMEM : 0;
	for (size_t i = 0; r == 0 && i < t->n_inputs; i++) {
		want[i] = t->inputs[i].format != NULL && strcmp(t->inputs[i].format, "kineto") == 0;
	}
	for (size_t i = 0; r == 0 && i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_GPU_SYNC && e->sub == ISC_GS_WAIT_EVENT) {
			want[e->input] = false;
		}
	}
	for (size_t i = 0; r == 0 && i < t->n_inputs; i++) {
		any |= want[i];
	}
	for (size_t k = 0; r == 0 && any && k < c->gpu_nodes; k++) {
		by_end[k] = (uint32_t)(c->host_nodes + k);
	}
	if (r == 0 && any) {
		r = isc_sort_by_key(&c->node[0].t1, sizeof(struct isc_gnode), by_end, c->gpu_nodes);
	}
	for (size_t i = c->host_nodes; r == 0 && any && i < c->n; i++) {
		const struct isc_gnode *n = &c->node[i];
		const struct isc_ev *e = &t->ev[n->ev];
		if (!want[e->input] || isc_graph_xdep(c, (uint32_t)i) != ISC_GN_NONE ||
		    (n->seq == ISC_GN_NONE && n->dep == ISC_GN_NONE)) {
			continue;
		}
		int64_t rel = INT64_MIN;
		rel = n->seq != ISC_GN_NONE && c->node[n->seq].t1 > rel ? c->node[n->seq].t1 : rel;
		rel = n->dep != ISC_GN_NONE && c->node[n->dep].t1 > rel ? c->node[n->dep].t1 : rel;
		if (isc_gn_t0(c, n) - rel < INFER_GAP_NS) {
			continue;
		}
		/* the operations ending by its start, the last first */
		size_t lo = 0, hi = c->gpu_nodes;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (c->node[by_end[mid]].t1 <= isc_gn_t0(c, n)) {
				lo = mid + 1;
			} else {
				hi = mid;
			}
		}
		for (size_t k = lo; k-- > 0;) {
			const struct isc_gnode *m = &c->node[by_end[k]];
			const struct isc_ev *o = &t->ev[m->ev];
			if (m->t1 < isc_gn_t0(c, n) - INFER_SLACK_NS || m->t1 <= rel) {
				break;
			}
			if (m->lane != n->lane && o->input == e->input && o->device == e->device) {
				r = isc_graph_add_xdep(c, (uint32_t)i, by_end[k]);
				c->node[i].flags |= ISC_GN_ORDERED;
				c->event_ordered++;
				break;
			}
		}
	}
	free(want);
	free(by_end);
	return r;
}
