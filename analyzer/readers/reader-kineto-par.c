/* SPDX-License-Identifier: MIT */
/*
 * The Kineto reader on several threads (split-read.c): "traceEvents" split into parts at
 * event boundaries, each read by a thread into a model and a reader of its own, merged in
 * order by the main thread. What depends on the order is carried across the merge: string
 * ids (thread names as tids, flow ids as strings) are mapped, a part's first flow events
 * bind to the last complete event of the part before, flow endpoints, GPU annotations and
 * unknown categories are appended (the latter summed in the serial order, as doubles must
 * be), and the first process id, thread names and the counters of what was seen are
 * carried. The top-level values (deviceProperties, distributedInfo) are the main reader's.
 */
#include <errno.h>
#include <stdlib.h>

#include "analyzer/model/model-extra.h"
#include "analyzer/readers/reader-kineto.h"
#include "analyzer/readers/split-read.h"

struct kpart {
	struct isc_read_ctx rc;
	struct isc_diag diag;
	struct krd *r;
};

static void drop(void *state)
{
	struct kpart *s = state;
	if (s != NULL) {
		struct isc_trace *t = s->rc.t;
		isc_krd_free(s->r);
		isc_trace_destroy(t);
		free(s);
	}
}

static void read_part(void *ctx, size_t k, int fd, const unsigned char *mem,
		      struct isc_split_part *pt)
{
	const struct krd *main = ctx;
	struct kpart *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		return;
	}
	s->rc = *main->rc;
	s->rc.src = NULL;
	s->rc.diag = &s->diag;
	s->rc.t = isc_split_part_trace(main->rc);
	s->r = s->rc.t != NULL ? isc_krd_new(&s->rc) : NULL;
	if (s->r == NULL) {
		drop(s);
		return;
	}
	s->r->mode = KRD_PART;
	isc_jframes_push(&s->r->fr, KF_TOP);
	isc_jframes_push(&s->r->fr, KF_EVENTS);
	isc_split_run_part(&s->r->js, k, fd, mem, pt);
	if (!s->r->last.valid) {
		s->r->flows_pre = s->r->flows.n;
	}
	pt->state = s;
}

/* A part's tid in the trace: its negative ones are its string ids (-1 - id). */
static int64_t map_tid(const struct isc_split_maps *m, int64_t tid)
{
	return tid < 0 ? -1 - (int64_t)m->str[-1 - tid] : tid;
}

/* The part's flow endpoints, its events from base on; the first ones (before its first
 * complete event) bind to the last complete event read before the part, as serially. */
static int merge_flows(struct krd *m, const struct krd *w, const struct isc_split_maps *maps,
		       uint32_t base)
{
	for (size_t i = 0; i < w->flows.n; i++) {
		struct isc_kineto_flow_end f = w->flows.v[i];
		f.ev = f.ev != 0 ? f.ev + base : 0;
		f.id = f.id_str ? maps->str[f.id] : f.id;
		f.tid = map_tid(maps, f.tid);
		if (i < w->flows_pre && m->last.valid && m->last.ts == f.ts &&
		    m->last.pid == f.pid && m->last.tid == f.tid &&
		    m->last.pid_kind == f.pid_kind && m->last.tid_kind == f.tid_kind) {
			f.ev = m->last.ev;
		}
		if (isc_kineto_flow_add(&m->flows, &f) < 0) {
			return -ENOMEM;
		}
	}
	if (w->last.valid) {
		m->last = w->last;
		m->last.ev = w->last.ev != 0 ? w->last.ev + base : 0;
		m->last.tid = map_tid(maps, w->last.tid);
	}
	return 0;
}

/* What the part read beside its events: thread names, the process id, GPU annotations,
 * unknown categories, the counters of what was seen. */
static int merge_extra(struct krd *m, const struct krd *w, const struct isc_split_maps *maps)
{
	struct isc_trace *mt = m->rc->t;
	const struct isc_trace *wt = w->rc->t;
	uint16_t in = m->rc->input;
	for (size_t k = 0; k < wt->n_threads; k++) {
		if (wt->threads[k].name != 0) {
			mt->threads[maps->thread[k]].name = maps->str[wt->threads[k].name];
		}
	}
	if (mt->inputs[in].pid == 0) {
		mt->inputs[in].pid = wt->inputs[in].pid;
	}
	const struct isc_trace_extra *wx = wt->extra;
	for (size_t i = 0; wx != NULL && i < wx->n_annot; i++) {
		struct isc_gpu_annot a = wx->annot[i];
		a.name = maps->str[a.name];
		if (isc_trace_add_annot(mt, &a) < 0) {
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < w->n_unk; i++) {
		struct isc_agg g = w->unk[i];
		g.name = maps->str[g.name];
		if (isc_agg_add(&mt->inputs[in].unknown_cats, &g) < 0) {
			return -ENOMEM;
		}
	}
	m->n_events += w->n_events;
	m->unknown_seen += w->unknown_seen;
	m->non_objects += w->non_objects;
	for (size_t i = 0; i < ISC_KINETO_MAX_CATS; i++) {
		m->cat_seen[i] += w->cat_seen[i];
	}
	for (size_t i = 0; i < 128; i++) {
		m->nocat_seen[i] += w->nocat_seen[i];
	}
	return 0;
}

/* Appends a part: 1 when it must be read serially instead (kernel shapes past the shape
 * table's limit), 0, or -ENOMEM. */
static int merge(void *ctx, struct isc_split_part *pt)
{
	struct krd *m = ctx;
	struct kpart *s = pt->state;
	struct krd *w = s->r;
	struct isc_trace *mt = m->rc->t, *wt = s->rc.t;
	if (!isc_split_shapes_fit(mt, wt)) {
		return 1;
	}
	uint32_t base = (uint32_t)mt->n;
	struct isc_split_maps maps = { 0 };
	int r = isc_split_map_strings(mt, wt, &maps);
	for (size_t k = 0; r == 0 && k < wt->n_threads; k++) {
		wt->threads[k].tid = map_tid(&maps, wt->threads[k].tid);
	}
	r = r == 0 ? isc_split_map_rest(mt, wt, &maps) : r;
	r = r == 0 ? isc_split_append(mt, wt, m->rc->input, &maps) : r;
	r = r == 0 ? merge_extra(m, w, &maps) : r;
	r = r == 0 ? merge_flows(m, w, &maps, base) : r;
	isc_split_maps_free(&maps);
	return r;
}

static void serial(void *ctx)
{
	((struct krd *)ctx)->mode = KRD_SERIAL;
}

static const struct isc_split_ops ops = { read_part, merge, drop, serial };

int isc_krd_read(struct krd *r)
{
	r->mode = KRD_MAIN;
	return isc_split_read(r->rc, &r->js, &ops, r);
}
