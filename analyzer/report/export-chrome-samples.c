/* SPDX-License-Identifier: MIT */
/*
 * CPU samples in the Chrome export as the trace-event format has them: a top-level
 * "samples" array (one entry per sample: pid, tid, ts, the leaf's "sf" and its weight in
 * microseconds of CPU time) and a "stackFrames" dictionary, a tree of frames in which a
 * node is a frame under its parent node, so that a stack is the path from its leaf to the
 * root. Viewers that read them (speedscope, chrome://tracing) show a flame chart per
 * thread; the weight is what the folded and pprof exports count.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyzer/base/wmap.h"
#include "analyzer/model/profile.h"
#include "analyzer/model/stacks.h"
#include "analyzer/report/report.h"
#include "format/json-writer.h"

struct node {
	const struct isc_frame *frame;
	uint32_t parent; /* node id, 0 for a root frame */
};

/* A frame is known by its address in the model: frames are per input and per table (a
 * "stacks" section, or stacks given as strings), so their ids alone would collide. */
struct tree {
	struct isc_wmap map; /* (parent node, frame) -> node index */
	struct node *v;
	size_t cap;
};

/* The node of a frame under parent (ids from 1), 0 on allocation failure. */
static uint32_t node_of(struct tree *tr, uint32_t parent, const struct isc_frame *frame)
{
	bool added;
	size_t k = isc_wmap_get(&tr->map, parent, (uint64_t)(uintptr_t)frame, &added);
	if (k == SIZE_MAX) {
		return 0;
	}
	if (k >= tr->cap) {
		size_t cap = tr->cap ? tr->cap * 2 : 256;
		struct node *v = realloc(tr->v, cap * sizeof(*v));
		if (v == NULL) {
			return 0;
		}
		tr->v = v;
		tr->cap = cap;
	}
	if (added) {
		tr->v[k] = (struct node){ .frame = frame, .parent = parent };
	}
	return (uint32_t)k + 1;
}

/* The leaf node of a sample's stack, outermost frame first; 0 on allocation failure. */
static uint32_t leaf_of(struct tree *tr, const struct isc_stack_ref *r)
{
	uint32_t id = 0;
	for (size_t i = r->n; i-- > 0;) {
		id = node_of(tr, id, isc_stack_frame(r, i));
		if (id == 0) {
			return 0;
		}
	}
	return id;
}

static void sample(struct isc_json *j, const struct isc_trace *t, const struct isc_ev *e,
		   uint32_t leaf)
{
	char id[16];
	const struct isc_thread_info *th = &t->threads[e->thread];
	isc_json_begin_object(j);
	isc_json_kv_int(j, "pid", t->inputs[e->input].pid);
	isc_json_kv_int(j, "tid", th->tid);
	isc_json_key(j, "ts");
	isc_json_ns_as_us(j, e->ts);
	isc_json_kv_string(j, "name", "cpu");
	snprintf(id, sizeof(id), "%u", leaf);
	isc_json_kv_string(j, "sf", id);
	isc_json_key(j, "weight");
	isc_json_ns_as_us(j, (int64_t)e->v.bytes);
	isc_json_end_object(j);
}

static void frames(struct isc_json *j, const struct isc_trace *t, const struct tree *tr)
{
	char id[24], text[512]; /* id: a size_t in decimal */
	isc_json_key(j, "stackFrames");
	isc_json_begin_object(j);
	for (size_t k = 0; k < tr->map.n && j->err == 0; k++) {
		const struct node *nd = &tr->v[k];
		snprintf(id, sizeof(id), "%zu", k + 1);
		isc_json_key(j, id);
		isc_json_begin_object(j);
		isc_folded_frame(t, nd->frame, text, sizeof(text));
		const char *where = isc_trace_str(t, isc_frame_where(nd->frame));
		isc_json_kv_string(j, "name", text);
		isc_json_kv_string(j, "category", *where ? where : "unknown");
		if (nd->parent != 0) {
			snprintf(id, sizeof(id), "%u", nd->parent);
			isc_json_kv_string(j, "parent", id);
		}
		isc_json_end_object(j);
	}
	isc_json_end_object(j);
}

int isc_chrome_samples(struct isc_json *j, const struct isc_trace *t)
{
	struct tree tr = { 0 };
	int r = 0;
	isc_json_key(j, "samples");
	isc_json_begin_array(j);
	for (size_t i = 0; i < t->n && j->err == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		struct isc_stack_ref st;
		if (e->type != ISC_T_CPU_SAMPLE || e->thread >= t->n_threads ||
		    !isc_stack_of(t, e, &st) || st.n == 0) {
			continue;
		}
		uint32_t leaf = leaf_of(&tr, &st);
		if (leaf == 0) {
			r = -ENOMEM;
			break;
		}
		sample(j, t, e, leaf);
	}
	isc_json_end_array(j);
	if (r == 0) {
		frames(j, t, &tr);
	}
	free(tr.v);
	isc_wmap_free(&tr.map);
	return r;
}
