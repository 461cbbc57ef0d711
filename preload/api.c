/* SPDX-License-Identifier: MIT */
/*
 * The annotation API's implementation: what include/inferscope/inferscope.h and the
 * Python helper call through dlsym. Exported, versioned (INFERSCOPE_1).
 */
#include <inferscope/inferscope.h>
#include <sched.h>
#include <string.h>

#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "common/clock.h"
#include "format/encode.h"
#include "preload/core/ids.h"
#include "preload/core/intern.h"
#include "preload/core/export.h"
#include "preload/lifecycle.h"
#include "preload/scope.h"
#include "preload/window.h"

#define MAX_KV 16
#define MAX_KV_TEXT 255

ISC_EXPORT int inferscope_impl_abi_version(void)
{
	return isc_core_ready() ? INFERSCOPE_ABI_VERSION : 0;
}

ISC_EXPORT int inferscope_impl_range_push(const char *name, int source)
{
	if (!isc_core_ready() || name == NULL) {
		return -1;
	}
	isc_tls_guard++;
	struct isc_thread *t = isc_thread_self();
	if (t == NULL) {
		isc_tls_guard--;
		return -1;
	}
	uint32_t d = t->depth++;
	if (d < ISC_SCOPE_MAX) {
		struct isc_scope_frame *f = &t->scopes[d];
		f->start = isc_now();
		f->id = isc_next_id();
		f->name = isc_intern_cstr(name);
		f->cpu = sched_getcpu();
		f->alloc_at_open = t->alloc_bytes;
		f->source = (uint32_t)source;
		if (d == 0 && atomic_load_explicit(&isc_window_armed, memory_order_relaxed)) {
			/* a capture window waits for or counts steps (window.h) */
			isc_window_on_push(t->tid, f->name, f->start);
		}
		f->recorded = isc_capturing(f->start);
	} else {
		t->scope_overflow++;
	}
	isc_tls_guard--;
	return (int)d + 1;
}

void isc_scope_record(struct isc_event *e, const struct isc_thread *t, uint32_t d, uint64_t end,
		      uint16_t flags)
{
	const struct isc_scope_frame *f = &t->scopes[d];
	e->ts = f->start;
	e->dur = end > f->start ? end - f->start : 0;
	e->tid = t->tid;
	e->kind = ISC_EV_SCOPE;
	e->flags = flags;
	e->name = f->name;
	e->aux = d | f->source << 16;
	e->u.scope.scope_id = f->id;
	e->u.scope.parent_id = d > 0 ? t->scopes[d - 1].id : 0;
	e->u.scope.parent_name = d > 0 ? t->scopes[d - 1].name : 0;
	e->u.scope.cpu = f->cpu;
	e->u.scope.alloc_bytes = t->alloc_bytes - f->alloc_at_open;
}

ISC_EXPORT int inferscope_impl_range_pop(void)
{
	struct isc_thread *t = isc_core_ready() ? isc_tls_self : NULL;
	if (t == NULL || t->depth == 0) {
		return -1;
	}
	uint32_t d = --t->depth;
	if (d >= ISC_SCOPE_MAX) {
		return (int)d;
	}
	const struct isc_scope_frame *f = &t->scopes[d];
	uint64_t now = isc_now();
	if (!f->recorded && !isc_capturing(now)) {
		return (int)d;
	}
	isc_tls_guard++;
	struct isc_event *e = isc_event_reserve(ISC_EV_SCOPE, 1);
	if (e) {
		isc_scope_record(e, t, d, now, 0);
		isc_event_commit(1);
	}
	if (d == 0 && atomic_load_explicit(&isc_window_armed, memory_order_relaxed)) {
		isc_window_on_pop(t->tid, f->name, now);
	}
	isc_tls_guard--;
	return (int)d;
}

/* Records one mark: the head, then per pair a KV record and its text records. */
static unsigned kv_records(const struct inferscope_kv *kv, size_t n)
{
	unsigned recs = 1;
	for (size_t i = 0; i < n; i++) {
		recs++;
		if (kv[i].type == INFERSCOPE_KV_STRING && kv[i].value.s) {
			recs += isc_text_records(strnlen(kv[i].value.s, MAX_KV_TEXT));
		}
	}
	return recs;
}

static void fill_kv(struct isc_event *r, uint32_t tid, const struct inferscope_kv *kv)
{
	memset(r, 0, sizeof(*r));
	r->tid = tid;
	r->kind = ISC_EV_KV;
	r->u.kv.key = isc_intern_cstr(kv->key ? kv->key : "");
	r->u.kv.type = (uint32_t)kv->type;
	if (kv->type == INFERSCOPE_KV_INT) {
		r->u.kv.v.i = kv->value.i;
	} else if (kv->type == INFERSCOPE_KV_DOUBLE) {
		r->u.kv.v.d = kv->value.d;
	} else {
		r->u.kv.type = ISC_KV_STRING;
		size_t len = kv->value.s ? strnlen(kv->value.s, MAX_KV_TEXT) : 0;
		r->u.kv.v.text_len = len;
		isc_text_fill(r + 1, tid, kv->value.s, len);
	}
}

ISC_EXPORT int inferscope_impl_mark(const char *name, const struct inferscope_kv *kv, size_t n,
				    int source)
{
	uint64_t now = isc_now();
	if (!isc_core_ready() || name == NULL || !isc_capturing(now)) {
		return -1;
	}
	n = kv ? (n < MAX_KV ? n : MAX_KV) : 0;
	int r = -1;
	isc_tls_guard++;
	struct isc_thread *t = isc_thread_self();
	unsigned recs = kv_records(kv, n);
	struct isc_event *e = t ? isc_event_reserve(ISC_EV_INSTANT, recs) : NULL;
	if (e) {
		memset(e, 0, sizeof(*e));
		e->ts = now;
		e->tid = t->tid;
		e->kind = ISC_EV_INSTANT;
		e->name = isc_intern_cstr(name);
		uint32_t d = t->depth < ISC_SCOPE_MAX ? t->depth : ISC_SCOPE_MAX;
		e->u.instant.scope_id = d > 0 ? t->scopes[d - 1].id : 0;
		e->u.instant.n_kv = (uint32_t)n;
		e->u.instant.source = (uint32_t)source;
		unsigned at = 1;
		for (size_t i = 0; i < n; i++) {
			fill_kv(&e[at], t->tid, &kv[i]);
			at += 1 + (e[at].u.kv.type == ISC_KV_STRING
					   ? isc_text_records(e[at].u.kv.v.text_len)
					   : 0);
		}
		isc_event_commit(recs);
		r = 0;
	}
	isc_tls_guard--;
	return r;
}

/* The library's own marks around capture changes, so a reader sees the windows. */
static void capture_mark(const char *name)
{
	inferscope_impl_mark(name, NULL, 0, ISC_SRC_INFERSCOPE);
}

ISC_EXPORT void inferscope_impl_capture_start(void)
{
	if (isc_core_ready()) {
		isc_capture_resume();
		capture_mark("capture_start");
	}
}

ISC_EXPORT void inferscope_impl_capture_stop(void)
{
	if (isc_core_ready()) {
		capture_mark("capture_stop");
		isc_capture_pause();
	}
}

ISC_EXPORT int inferscope_impl_flush(void)
{
	return isc_lifecycle_snapshot("api");
}
