/* SPDX-License-Identifier: MIT */
/*
 * Flow events of a Chrome trace into the model's flows (model.h, isc_flow): each endpoint
 * binds to the complete event that starts at its time on its track, and the endpoints of
 * one (kind, id) link in time order. The reader binds almost all of them on the spot
 * (Kineto writes a flow event right after its slice); what is left - the legacy export
 * writes a kernel's flow end before the kernel - is bound here through a table of the
 * input's events by (track, start), built only when something is left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/grow.h"
#include "analyzer/base/hash.h"
#include "analyzer/base/sort.h"
#include "analyzer/readers/reader-kineto-extra.h"

int isc_kineto_flow_add(struct isc_kineto_flows *f, const struct isc_kineto_flow_end *e)
{
	if (ISC_GROW(f->v, f->cap, f->n + 1, 256) < 0) {
		return -ENOMEM;
	}
	f->v[f->n++] = *e;
	return 0;
}

/* A track's key: host threads by index, GPU work by device and stream. */
static uint64_t host_track(uint32_t thread)
{
	return (uint64_t)thread;
}

static uint64_t gpu_track(int64_t device, int64_t stream)
{
	return 1ull << 63 | ((uint64_t)(uint16_t)device << 32) | (uint32_t)stream;
}

static uint64_t track_of(const struct isc_ev *e)
{
	return isc_type_is_gpu(e->type) ? gpu_track(e->device, e->stream) : host_track(e->thread);
}

struct slots {
	uint32_t *v; /* event index + 1 */
	size_t mask;
};

static size_t slot_hash(uint64_t track, int64_t ts, size_t mask)
{
	return isc_mix64(track * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts) & mask;
}

static int build(const struct isc_trace *t, size_t first, struct slots *s)
{
	size_t cap = 64;
	while (cap < (t->n - first) * 2) {
		cap *= 2;
	}
	s->v = calloc(cap, sizeof(*s->v));
	s->mask = cap - 1;
	if (s->v == NULL) {
		return -ENOMEM;
	}
	for (size_t k = first; k < t->n; k++) {
		const struct isc_ev *e = &t->ev[k];
		size_t i = slot_hash(track_of(e), e->ts, s->mask);
		while (s->v[i] != 0) {
			i = (i + 1) & s->mask;
		}
		s->v[i] = (uint32_t)k + 1;
	}
	return 0;
}

static uint32_t find(const struct isc_trace *t, const struct slots *s, uint64_t track, int64_t ts)
{
	for (size_t i = slot_hash(track, ts, s->mask); s->v[i] != 0; i = (i + 1) & s->mask) {
		const struct isc_ev *e = &t->ev[s->v[i] - 1];
		if (e->ts == ts && track_of(e) == track) {
			return s->v[i];
		}
	}
	return 0;
}

/* The thread (input, tid) if the input has one; never creates it. */
static uint32_t thread_of(const struct isc_trace *t, uint16_t input, int64_t tid)
{
	for (size_t k = 0; k < t->n_threads; k++) {
		if (t->threads[k].tid == tid && t->threads[k].input == input) {
			return (uint32_t)k;
		}
	}
	return UINT32_MAX;
}

/* An endpoint the reader could not bind: on a host thread of its tid, or on the GPU
 * stream its pid (the device) and tid name; the legacy export's GPU track is the device. */
static uint32_t bind(const struct isc_read_ctx *rc, const struct slots *s,
		     const struct isc_kineto_flow_end *e)
{
	const struct isc_trace *t = rc->t;
	uint32_t ev = 0;
	if (e->track == ISC_KT_LEGACY_GPU) {
		return find(t, s, gpu_track(e->tid, 0), e->ts);
	}
	if (e->track != ISC_KT_STREAM) {
		uint32_t th = thread_of(t, rc->input, e->tid);
		ev = th != UINT32_MAX ? find(t, s, host_track(th), e->ts) : 0;
	}
	if (ev == 0 && e->track != ISC_KT_LEGACY_CPU) {
		ev = find(t, s, gpu_track(e->pid, e->tid), e->ts);
	}
	return ev;
}

static int phase_rank(uint8_t phase)
{
	return phase == 's' ? 0 : phase == 't' ? 1 : 2;
}

static int end_cmp(const void *pa, const void *pb)
{
	const struct isc_kineto_flow_end *a = pa, *b = pb;
	if (a->kind != b->kind) {
		return a->kind < b->kind ? -1 : 1;
	}
	if (a->id != b->id) {
		return a->id < b->id ? -1 : 1;
	}
	if (a->ts != b->ts) {
		return a->ts < b->ts ? -1 : 1;
	}
	return phase_rank(a->phase) - phase_rank(b->phase);
}

/* Links the bound endpoints: each t or f from the latest s or t of its (kind, id). */
static int link_ends(struct isc_trace *t, struct isc_kineto_flow_end *v, size_t n)
{
	isc_qsort(v, n, sizeof(*v), end_cmp);
	uint32_t from = 0;
	for (size_t i = 0; i < n; i++) {
		const struct isc_kineto_flow_end *e = &v[i];
		if (i > 0 && (e->kind != v[i - 1].kind || e->id != v[i - 1].id)) {
			from = 0;
		}
		if (e->ev == 0) {
			continue;
		}
		if (e->phase != 's' && from != 0 && from != e->ev &&
		    isc_trace_add_flow(t, from - 1, e->ev - 1, e->kind) < 0) {
			return -ENOMEM;
		}
		from = e->phase == 'f' ? from : e->ev;
	}
	return 0;
}

int isc_kineto_flows_finish(struct isc_read_ctx *rc, struct isc_kineto_flows *f, size_t first)
{
	struct slots s = { NULL, 0 };
	int r = 0;
	for (size_t i = 0; i < f->n && r == 0; i++) {
		struct isc_kineto_flow_end *e = &f->v[i];
		if (e->ev != 0) {
			continue;
		}
		if (s.v == NULL) {
			r = build(rc->t, first, &s);
		}
		e->ev = r == 0 ? bind(rc, &s, e) : 0;
	}
	r = r == 0 ? link_ends(rc->t, f->v, f->n) : r;
	free(s.v);
	free(f->v);
	memset(f, 0, sizeof(*f));
	return r;
}
