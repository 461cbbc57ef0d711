/* SPDX-License-Identifier: MIT */
/* Containers of the InferScope reader: where events begin and end, and what ends do. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/grow.h"
#include "analyzer/model/graph-nodes.h"
#include "analyzer/readers/inferscope-meta.h"
#include "analyzer/readers/reader-inferscope.h"
#include "format/vocab.h"

static int push(struct isc_isr *r, int fr)
{
	if (isc_jframes_push(&r->fr, fr)) {
		r->key = -1;
	}
	return 1;
}

int isc_isr_push(struct isc_isr *r, int fr)
{
	return push(r, fr);
}

static void begin_event(struct isc_isr *r)
{
	r->n_legacy = 0;
	struct isc_isf_event *e = &r->ev;
	e->seen = 0;
	e->ndims[0] = e->ndims[1] = 0;
	e->type[0] = '\0';
	e->name = 0;
	e->value_is_int = false;
	e->offset = isc_jsax_offset(&r->js);
	e->index = r->n_events++;
}

static int top_open(struct isc_isr *r, bool is_map)
{
	const char *key = r->key >= 0 ? isc_isr_top_defs[r->key].key : "";
	switch (r->key) {
	case TK_EVENTS:
		if (is_map) {
			return r->bare ? push(r, FR_SKIP)
				       : isc_isr_fail_at(r, "events: expected an array, got an "
							    "object");
		}
		r->seen_top[TK_EVENTS] = true;
		if (r->mode == ISR_MAIN) {
			isc_jscan_pause(r->js.scan); /* the parts begin here */
		}
		return push(r, FR_EVENTS);
	case TK_META:
	case TK_SYSINFO:
	case TK_REL:
		if (!is_map) {
			return r->bare ? push(r, FR_SKIP)
				       : isc_isr_fail_at(r, "%s: expected an object, got an array",
							 key);
		}
		r->seen_top[r->key] = true;
		if (r->key == TK_REL) {
			return push(r, r->bare ? FR_SKIP : FR_REL);
		}
		if (r->bare) {
			return push(r, FR_SKIP);
		}
		isc_jdom_init(&r->dom);
		r->dom_live = true;
		r->dom_key = r->key;
		isc_jdom_open(&r->dom, ISC_J_OBJECT);
		return push(r, FR_DOM);
	case TK_STACKS:
		if (r->bare) {
			return push(r, FR_SKIP);
		}
		if (!is_map) {
			return isc_isr_fail_at(r, "stacks: expected an object, got an array");
		}
		r->seen_top[TK_STACKS] = true;
		return push(r, FR_STK);
	case TK_VERSION:
		if (!r->bare) {
			return isc_isr_fail_at(r, "format_version: expected a string, got %s",
					       is_map ? "an object" : "an array");
		}
		return push(r, FR_SKIP);
	default:
		return push(r, FR_SKIP);
	}
}

static int field_open(struct isc_isr *r, int fr, bool is_map)
{
	int k = r->key;
	bool meta_key = k >= K_FIRST_META && !isc_isf_either_level(k);
	if (k < 0 || (fr == FR_EVENT && meta_key && !r->bare) ||
	    (fr == FR_META && k < K_FIRST_META)) {
		return push(r, FR_SKIP);
	}
	enum isc_isf_vkind vk = isc_isf_kind(k);
	bool want_map = vk == VK_OBJ;
	bool want_arr = vk == VK_INT3 || vk == VK_STRARR;
	if ((!want_map && !want_arr) || (want_map != is_map)) {
		if (r->bare) {
			return push(r, FR_SKIP);
		}
		return isc_isr_fail_ev(r, "%s: expected %s, got %s", isc_isf_key_path(k),
				       isc_isr_expect_text(vk), is_map ? "an object" : "an array");
	}
	r->ev.seen |= 1ull << k;
	if (k == K_METADATA) {
		return push(r, FR_META);
	}
	if (vk == VK_INT3) {
		r->dim = k == K_BLOCK_DIM;
		r->ev.ndims[r->dim] = 0;
		return push(r, FR_DIM);
	}
	return push(r, vk == VK_STRARR ? FR_STRARR : FR_SKIP);
}

static int scope_open(struct isc_isr *r, bool is_map)
{
	if (r->key == SK_CHILDREN && !is_map) {
		r->scope_seen |= 1u << SK_CHILDREN;
		return push(r, FR_IDARR);
	}
	if (r->key >= 0 && r->key <= SK_THREAD) {
		return isc_isr_fail_at(r, "relationships.scopes[%llu].%s: expected %s, got %s",
				       (unsigned long long)r->n_scopes - 1,
				       isc_isr_scope_defs[r->key].key,
				       r->key == SK_CHILDREN ? "an array" : "a scalar",
				       is_map ? "an object" : "an array");
	}
	return push(r, FR_SKIP);
}

/* A container inside grid_dim/block_dim or stack, which hold scalars only. */
static int nested_in_array(struct isc_isr *r, bool is_map)
{
	if (r->bare) {
		return push(r, FR_SKIP);
	}
	bool stack = isc_isr_cur(r) == FR_STRARR;
	int key = stack ? K_STACK : r->dim ? K_BLOCK_DIM : K_GRID_DIM;
	return isc_isr_fail_ev(r, "%s: expected %s, got a nested %s", isc_isf_key_path(key),
			       stack ? "strings" : "integers", is_map ? "object" : "array");
}

int isc_isr_open(struct isc_isr *r, bool is_map)
{
	isc_jsax_tick(&r->js);
	switch (isc_isr_cur(r)) {
	case -1:
		if (!is_map) {
			return isc_isr_fail_at(r, "expected an object at the top level, got an "
						  "array");
		}
		return push(r, FR_TOP);
	case FR_TOP:
		return top_open(r, is_map);
	case FR_EVENTS:
		begin_event(r);
		if (!is_map) {
			return r->bare ? push(r, FR_SKIP)
				       : isc_isr_fail_ev(r, "expected an object, got an array");
		}
		return push(r, FR_EVENT);
	case FR_EVENT:
	case FR_META:
		return field_open(r, isc_isr_cur(r), is_map);
	case FR_DIM:
	case FR_STRARR:
		return nested_in_array(r, is_map);
	case FR_DOM:
		if (!isc_jdom_open(&r->dom, is_map ? ISC_J_OBJECT : ISC_J_ARRAY)) {
			return isc_isr_fail_at(r, "%s: %s", isc_isr_top_defs[r->dom_key].key,
					       r->dom.error);
		}
		return push(r, FR_DOM);
	case FR_REL:
		if (r->key == SK_SCOPES) {
			if (is_map) {
				return isc_isr_fail_at(r, "relationships.scopes: expected an "
							  "array, got an object");
			}
			return push(r, FR_SCOPES);
		}
		return push(r, FR_SKIP);
	case FR_SCOPES:
		r->n_scopes++;
		r->scope_seen = 0;
		if (!is_map) {
			return isc_isr_fail_at(r,
					       "relationships.scopes[%llu]: expected an object, "
					       "got an array",
					       (unsigned long long)r->n_scopes - 1);
		}
		return push(r, FR_SCOPE);
	case FR_SCOPE:
		return scope_open(r, is_map);
	case FR_IDARR:
		return isc_isr_fail_at(r,
				       "relationships.scopes[%llu].child_ids: expected integers "
				       "or strings, got %s",
				       (unsigned long long)r->n_scopes - 1,
				       is_map ? "an object" : "an array");
	case FR_STK:
	case FR_STK_FRAMES:
	case FR_STK_FRAME:
	case FR_STK_STACKS:
	case FR_STK_STACK:
	case FR_STK_IDS:
		return isc_isr_stk_open(r, is_map);
	default:
		return push(r, FR_SKIP);
	}
}

static struct bare_thread *bare_thread(struct isc_isr *r, int64_t tid)
{
	for (size_t i = 0; i < r->n_bt; i++) {
		if (r->bt[i].tid == tid) {
			return &r->bt[i];
		}
	}
	if (ISC_GROW(r->bt, r->cap_bt, r->n_bt + 1, 8) < 0) {
		return NULL;
	}
	r->bt[r->n_bt] = (struct bare_thread){ .tid = tid };
	return &r->bt[r->n_bt++];
}

/* The prototype writes a call with a placeholder end and a separate return event. */
static int bare_pending(struct isc_isr *r, int64_t tid, uint32_t ev_index, bool is_return,
			int64_t ts)
{
	struct bare_thread *bt = bare_thread(r, tid);
	if (bt == NULL) {
		return isc_isr_fail_ev(r, "out of memory");
	}
	if (!is_return) {
		if (ISC_GROW(bt->v, bt->cap, bt->n + 1, 16) < 0) {
			return isc_isr_fail_ev(r, "out of memory");
		}
		bt->v[bt->n++] = (struct pending){ .ev = ev_index, .name = r->ev.name };
		return 1;
	}
	for (size_t k = bt->n; k > 0; k--) {
		if (bt->v[k - 1].name == r->ev.name) {
			struct isc_ev *call = &r->rc->t->ev[bt->v[k - 1].ev];
			call->dur = ts > call->ts ? ts - call->ts : 0;
			call->flags &= (uint16_t)~ISC_F_PLACEHOLDER_END;
			bt->n = k - 1;
			break;
		}
	}
	return 1;
}

#define SEEN(k) ((r->ev.seen >> (k)) & 1u)

/* A stack_id is checked against the "stacks" section when it has been read (it comes
 * after the events); a "stack" string array is interned at once. */
static int attach_stack(struct isc_isr *r, struct isc_ev *ev)
{
	if (!SEEN(K_STACK_ID) && r->n_legacy == 0) {
		return 1;
	}
	struct isc_stacks *s = isc_stacks_of(r->rc->t, r->rc->input);
	if (s == NULL) {
		return isc_isr_fail_ev(r, "out of memory");
	}
	if (SEEN(K_STACK_ID)) {
		if (r->ev.iv[K_STACK_ID] >= (int64_t)ISC_STACK_ID_LIMIT && !r->bare) {
			return isc_isr_fail_ev(r, "metadata.stack_id: %lld is too large",
					       (long long)r->ev.iv[K_STACK_ID]);
		}
		uint32_t id = (ev->flags & ISC_F_STACK) ? ev->stack : 0;
		s->max_ref = id > s->max_ref ? id : s->max_ref;
		return 1;
	}
	if (r->mode == ISR_PART) {
		return isc_isr_serial_only(r); /* ids in the order of the whole trace */
	}
	uint32_t id = isc_stacks_intern_strings(r->rc->t, s, r->legacy, r->n_legacy);
	if (id == 0) {
		return isc_isr_fail_ev(r, "out of memory");
	}
	ev->stack = id;
	ev->flags |= ISC_F_STACK;
	return 1;
}

/* A cuda_graph_node event: a row of the trace's node table, not an event of the model. */
static int graph_node(struct isc_isr *r, int64_t tid)
{
	const struct isc_isf_event *e = &r->ev;
	struct isc_trace *t = r->rc->t;
	if (r->mode == ISR_PART) {
		return isc_isr_serial_only(r); /* node rows in the order of the whole trace */
	}
	if (!SEEN(K_GRAPH_NODE_ID) || e->iv[K_GRAPH_NODE_ID] <= 0) {
		t->inputs[r->rc->input].skipped++; /* a bare input's: strict ones fail earlier */
		return 1;
	}
	uint32_t stack = 0;
	if (SEEN(K_STACK_ID) && e->iv[K_STACK_ID] > 0) {
		struct isc_stacks *s = isc_stacks_of(t, r->rc->input);
		if (s == NULL) {
			return isc_isr_fail_ev(r, "out of memory");
		}
		if (e->iv[K_STACK_ID] >= (int64_t)ISC_STACK_ID_LIMIT) {
			return isc_isr_fail_ev(r, "metadata.stack_id: %lld is too large",
					       (long long)e->iv[K_STACK_ID]);
		}
		stack = (uint32_t)e->iv[K_STACK_ID];
		s->max_ref = stack > s->max_ref ? stack : s->max_ref;
	}
	bool cloned = SEEN(K_OPERATION) && strcmp(e->ev_str[ES_OPERATION], ISC_NODE_OP_CLONED) == 0;
	uint64_t original =
		cloned && SEEN(K_ORIGINAL_NODE_ID) ? (uint64_t)e->iv[K_ORIGINAL_NODE_ID] : 0;
	if (cloned && original == 0) {
		t->inputs[r->rc->input].skipped++; /* a bare input's: strict ones fail earlier */
		return 1;
	}
	uint32_t thread = isc_trace_thread(t, r->rc->input, tid);
	if (thread == UINT32_MAX ||
	    isc_gnode_define(t, r->rc->input, (uint64_t)e->iv[K_GRAPH_NODE_ID], original,
			     cloned ? 0 : stack, thread) < 0) {
		return isc_isr_fail_ev(r, "out of memory");
	}
	return 1;
}

/* A GPU operation replayed from a graph refers to its node's row. */
static int refer_node(struct isc_isr *r, struct isc_ev *ev)
{
	if (!SEEN(K_GRAPH_NODE_ID) || r->ev.iv[K_GRAPH_NODE_ID] <= 0) {
		return 1;
	}
	if (r->mode == ISR_PART) {
		return isc_isr_serial_only(r);
	}
	uint32_t k = isc_gnode_ref(r->rc->t, r->rc->input, (uint64_t)r->ev.iv[K_GRAPH_NODE_ID]);
	if (k == 0) {
		return isc_isr_fail_ev(r, "out of memory");
	}
	ev->aux = k;
	ev->flags |= ISC_F_GRAPH;
	return 1;
}

static int end_event(struct isc_isr *r)
{
	struct isc_isf_event *e = &r->ev;
	struct isc_input *in = &r->rc->t->inputs[r->rc->input];
	int type = SEEN(K_TYPE) && !e->type_too_long ? isc_isf_type_of(e->type) : -1;
	char buf[400];
	const char *problem = isc_isf_check(e, type, !r->bare, buf, sizeof(buf));
	if (problem != NULL) {
		return isc_isr_fail_ev(r, "%s", problem);
	}
	int64_t tid = SEEN(K_THREAD_ID) ? e->iv[K_THREAD_ID] : 0;
	int64_t ts = SEEN(K_TS_START) ? e->iv[K_TS_START] : SEEN(K_TS) ? e->iv[K_TS] : 0;
	if (r->bare && strcmp(e->type, "cpu_return") == 0) {
		in->ignored++;
		return bare_pending(r, tid, 0, true, ts);
	}
	if (type < 0) {
		in->skipped++;
		return 1;
	}
	if (type == ISC_ISF_GRAPH_NODE) {
		return graph_node(r, tid);
	}
	struct isc_ev *ev = isc_trace_push(r->rc->t);
	uint32_t thread = isc_trace_thread(r->rc->t, r->rc->input, tid);
	if (ev == NULL || thread == UINT32_MAX) {
		return isc_isr_fail_ev(r, "out of memory");
	}
	ev->ts = ts;
	ev->dur = SEEN(K_DUR) ? e->iv[K_DUR] : SEEN(K_TS_END) ? e->iv[K_TS_END] - ts : 0;
	ev->dur = ev->dur > 0 ? ev->dur : 0;
	ev->input = r->rc->input;
	ev->thread = !SEEN(K_THREAD_ID) && isc_type_is_gpu((unsigned)type) ? UINT32_MAX : thread;
	isc_isf_to_model(e, type, isc_trace_str(r->rc->t, e->name), ev);
	if (type == ISC_T_KERNEL && isc_isf_geom(r->rc->t, e, ev) < 0) {
		return isc_isr_fail_ev(r, "out of memory");
	}
	if (isc_type_is_gpu((unsigned)type) && refer_node(r, ev) == 0) {
		return 0;
	}
	in->events++;
	if (type != ISC_T_KERNEL && attach_stack(r, ev) == 0) {
		return 0;
	}
	if (r->bare && type == ISC_T_SCOPE && !SEEN(K_DUR) && SEEN(K_TS_END) && ev->dur == 0) {
		ev->flags |= ISC_F_PLACEHOLDER_END;
		return bare_pending(r, tid, (uint32_t)(ev - r->rc->t->ev), false, ts);
	}
	return 1;
}

static int end_scope(struct isc_isr *r)
{
	static const int required[] = { SK_ID, SK_NAME };
	for (size_t i = 0; i < 2; i++) {
		if (!(r->scope_seen & (1u << required[i]))) {
			return isc_isr_fail_at(r, "relationships.scopes[%llu].%s is missing",
					       (unsigned long long)r->n_scopes - 1,
					       isc_isr_scope_defs[required[i]].key);
		}
	}
	return 1;
}

static int dom_done(struct isc_isr *r)
{
	char err[400];
	int ok = r->dom_key == TK_META ? isc_meta_apply(r->rc, &r->dom, err, sizeof(err))
				       : isc_sysinfo_apply(r->rc, &r->dom, err, sizeof(err));
	isc_jdom_finish(&r->dom);
	r->dom_live = false;
	if (ok < 0) {
		return isc_isr_fail_at(r, "%s%s", isc_isr_top_defs[r->dom_key].key, err);
	}
	return 1;
}

int isc_isr_close(struct isc_isr *r)
{
	isc_jsax_tick(&r->js);
	int fr = isc_jframes_pop(&r->fr);
	if (fr < 0) {
		return 1;
	}
	r->key = -1;
	switch (fr) {
	case FR_EVENT:
		return end_event(r);
	case FR_EVENTS:
		if (r->mode == ISR_PART) {
			isc_jscan_pause(r->js.scan); /* the main reader goes on from here */
		}
		return 1;
	case FR_DIM:
		if (r->ev.ndims[r->dim] != 3 && !r->bare) {
			return isc_isr_fail_ev(r, "%s: expected an array of 3 integers, got %d",
					       isc_isf_key_path(r->dim ? K_BLOCK_DIM : K_GRID_DIM),
					       r->ev.ndims[r->dim]);
		}
		return 1;
	case FR_DOM:
		return isc_jdom_close(&r->dom) ? dom_done(r) : 1;
	case FR_SCOPE:
		return end_scope(r);
	default:
		return isc_isr_in_stk(fr) ? isc_isr_stk_close(r, fr) : 1;
	}
}

/* "1.N" or "1.N.M", as the schema's pattern says. */
static bool version_1x(const char *v)
{
	if (v[0] != '1' || v[1] != '.') {
		return false;
	}
	int groups = 0;
	const char *p = v + 2;
	for (;;) {
		const char *d = p;
		while (*p >= '0' && *p <= '9') {
			p++;
		}
		if (p == d) {
			return false;
		}
		groups++;
		if (*p == '\0') {
			return groups <= 2;
		}
		if (*p++ != '.') {
			return false;
		}
	}
}

int isc_isr_finish(struct isc_isr *r)
{
	struct isc_input *in = &r->rc->t->inputs[r->rc->input];
	const char *label = r->rc->label;
	if (r->bare) {
		if (!r->seen_top[TK_EVENTS]) {
			isc_diag_set(r->rc->diag, "%s: byte 0: no \"events\" array", label);
			return -EINVAL;
		}
		snprintf(in->format_version, sizeof(in->format_version), "prototype");
		return 0;
	}
	static const int required[] = { TK_VERSION, TK_META, TK_EVENTS };
	for (size_t i = 0; i < 3; i++) {
		if (!r->seen_top[required[i]]) {
			isc_diag_set(r->rc->diag, "%s: byte %llu: %s is missing", label,
				     (unsigned long long)r->js.base,
				     isc_isr_top_defs[required[i]].key);
			return -EINVAL;
		}
	}
	const char *v = r->version;
	if (!version_1x(v)) {
		isc_diag_set(r->rc->diag,
			     "%s: byte 0: format_version '%s' is not 1.x: this reader "
			     "reads InferScope format 1.x",
			     label, v);
		return -EINVAL;
	}
	snprintf(in->format_version, sizeof(in->format_version), "%s", v);
	return isc_isr_stk_finish(r);
}

void isc_isr_free(struct isc_isr *r)
{
	for (size_t i = 0; i < r->n_bt; i++) {
		free(r->bt[i].v);
	}
	free(r->bt);
	if (r->dom_live) {
		isc_jdom_finish(&r->dom);
	}
}
