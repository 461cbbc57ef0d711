/* SPDX-License-Identifier: MIT */
#include "analyzer/model/model.h"
#include "analyzer/base/hash.h"
#include "format/vocab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/demangle.h"
#include "analyzer/base/grow.h"
#include "analyzer/base/sort.h"
#include "analyzer/model/stacks.h"
#include "analyzer/base/string-table.h"
#include "analyzer/model/graph-nodes.h"
#include "analyzer/model/hosts.h"
#include "analyzer/model/model-extra.h"

struct isc_trace *isc_trace_create(void)
{
	struct isc_trace *t = calloc(1, sizeof(*t));
	if (t == NULL) {
		return NULL;
	}
	t->str = calloc(1, sizeof(*t->str));
	if (t->str == NULL || isc_strtab_init(t->str) < 0) {
		free(t->str);
		free(t);
		return NULL;
	}
	return t;
}

void isc_trace_destroy(struct isc_trace *t)
{
	if (t == NULL) {
		return;
	}
	for (size_t i = 0; i < t->n_inputs; i++) {
		free(t->inputs[i].path);
		free(t->inputs[i].dropped_by_kind.v);
		free(t->inputs[i].agg_syscalls.v);
		free(t->inputs[i].agg_cuda_api.v);
		free(t->inputs[i].latency.v);
		free(t->inputs[i].distributed_info);
		free(t->inputs[i].device_properties);
		free(t->inputs[i].unknown_cats.v);
		isc_stacks_destroy(t->inputs[i].stacks);
	}
	isc_trace_extra_destroy(t->extra);
	isc_hosts_destroy(t->hosts);
	isc_gnodes_destroy(t->gnodes);
	free(t->inputs);
	isc_mem_free(t->ev);
	free(t->threads);
	free(t->thread_slots);
	free(t->flows);
	free(t->corr_slots);
	for (size_t i = 0; t->corr_direct != NULL && i < t->n_inputs; i++) {
		free(t->corr_direct[i].idx);
	}
	free(t->corr_direct);
	isc_strtab_finish(t->str);
	free(t->str);
	free(t);
}

uint32_t isc_trace_intern(struct isc_trace *t, const char *s, size_t n)
{
	return isc_strtab_intern(t->str, s, n);
}

const char *isc_trace_str(const struct isc_trace *t, uint32_t id)
{
	return isc_strtab_get(t->str, id);
}

uint32_t isc_trace_find_str(const struct isc_trace *t, const char *s)
{
	return isc_strtab_find(t->str, s, strlen(s));
}

size_t isc_trace_n_strings(const struct isc_trace *t)
{
	return t->str->n;
}

int isc_trace_add_input(struct isc_trace *t, const char *path)
{
	if (t->n_inputs >= UINT16_MAX) {
		return -E2BIG;
	}
	if (ISC_GROW(t->inputs, t->cap_inputs, t->n_inputs + 1, 4) < 0) {
		return -ENOMEM;
	}
	struct isc_input *in = &t->inputs[t->n_inputs];
	memset(in, 0, sizeof(*in));
	in->path = strdup(path);
	if (in->path == NULL) {
		return -ENOMEM;
	}
	in->complete = -1;
	in->rank = -1;
	in->format = "unknown";
	return (int)t->n_inputs++;
}

static int grow_thread_slots(struct isc_trace *t)
{
	size_t cap = t->thread_slot_mask ? (t->thread_slot_mask + 1) * 2 : 64;
	uint32_t *slots = calloc(cap, sizeof(*slots));
	if (slots == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < t->n_threads; k++) {
		const struct isc_thread_info *th = &t->threads[k];
		size_t i = isc_mix64((uint64_t)th->tid ^ ((uint64_t)th->input << 48)) & (cap - 1);
		while (slots[i] != 0) {
			i = (i + 1) & (cap - 1);
		}
		slots[i] = (uint32_t)k + 1;
	}
	free(t->thread_slots);
	t->thread_slots = slots;
	t->thread_slot_mask = cap - 1;
	return 0;
}

uint32_t isc_trace_thread(struct isc_trace *t, uint16_t input, int64_t tid)
{
	if (t->thread_slots == NULL && grow_thread_slots(t) < 0) {
		return UINT32_MAX;
	}
	size_t i = isc_mix64((uint64_t)tid ^ ((uint64_t)input << 48)) & t->thread_slot_mask;
	while (t->thread_slots[i] != 0) {
		uint32_t k = t->thread_slots[i] - 1;
		if (t->threads[k].tid == tid && t->threads[k].input == input) {
			return k;
		}
		i = (i + 1) & t->thread_slot_mask;
	}
	if (ISC_GROW(t->threads, t->cap_threads, t->n_threads + 1, 16) < 0) {
		return UINT32_MAX;
	}
	uint32_t k = (uint32_t)t->n_threads++;
	t->threads[k] = (struct isc_thread_info){ .tid = tid, .name = 0, .input = input };
	t->thread_slots[i] = k + 1;
	if (t->n_threads * 2 > t->thread_slot_mask + 1 && grow_thread_slots(t) < 0) {
		return UINT32_MAX;
	}
	return k;
}

int isc_trace_reserve(struct isc_trace *t, size_t n)
{
	if (n > t->cap) {
		/* Doubling through realloc: large blocks move by mremap, untouched pages
		 * of the new capacity cost no memory. */
		size_t cap = isc_grow_cap(t->cap, n, 4096);
		if (cap > UINT32_MAX - 1 || ISC_RESIZE(t->ev, cap) < 0) {
			return -ENOMEM;
		}
		t->cap = cap;
	}
	return 0;
}

struct isc_ev *isc_trace_push(struct isc_trace *t)
{
	if (t->n == t->cap && isc_trace_reserve(t, t->n + 1) < 0) {
		return NULL;
	}
	struct isc_ev *e = &t->ev[t->n++];
	memset(e, 0, sizeof(*e));
	e->stream = -1;
	e->device = -1;
	e->occupancy = -1.0f;
	return e;
}

int isc_trace_add_flow(struct isc_trace *t, uint32_t src, uint32_t dst, enum isc_flow_kind kind)
{
	if (ISC_GROW(t->flows, t->cap_flows, t->n_flows + 1, 64) < 0) {
		return -ENOMEM;
	}
	t->flows[t->n_flows++] = (struct isc_flow){ src, dst, (uint8_t)kind };
	return 0;
}

const char *isc_flow_kind_name(unsigned kind)
{
	return kind == ISC_FLOW_LAUNCH ? "launch" : kind == ISC_FLOW_FWDBWD ? "fwdbwd" : "unknown";
}

static int flow_cmp(const void *pa, const void *pb)
{
	const struct isc_flow *a = pa, *b = pb;
	return a->src != b->src	  ? (a->src < b->src ? -1 : 1)
	       : a->dst != b->dst ? (a->dst < b->dst ? -1 : 1)
				  : (int)a->kind - (int)b->kind;
}

/* The flows follow their events to the positions the sort gave them (idx: new position ->
 * old index, before permute consumes it), then are put in order of their source. */
static int move_flows(struct isc_trace *t, const uint32_t *idx)
{
	if (t->n_flows == 0) {
		return 0;
	}
	uint32_t *inv = idx != NULL ? malloc(t->n * sizeof(*inv)) : NULL;
	if (idx != NULL && inv == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; inv != NULL && i < t->n; i++) {
		inv[idx[i]] = (uint32_t)i;
	}
	for (size_t i = 0; inv != NULL && i < t->n_flows; i++) {
		t->flows[i].src = inv[t->flows[i].src];
		t->flows[i].dst = inv[t->flows[i].dst];
	}
	free(inv);
	isc_qsort(t->flows, t->n_flows, sizeof(*t->flows), flow_cmp);
	return 0;
}

/* Applies the permutation idx (new position -> old index) to the events, in place. */
static void permute(struct isc_ev *ev, uint32_t *idx, size_t n)
{
	for (size_t start = 0; start < n; start++) {
		if (idx[start] == start) {
			continue;
		}
		struct isc_ev tmp = ev[start];
		size_t cur = start;
		for (;;) {
			size_t from = idx[cur];
			idx[cur] = (uint32_t)cur;
			if (from == start) {
				ev[cur] = tmp;
				break;
			}
			ev[cur] = ev[from];
			cur = from;
		}
	}
}

static int sort_events(struct isc_trace *t)
{
	bool sorted = true;
	for (size_t i = 1; i < t->n && sorted; i++) {
		sorted = t->ev[i - 1].ts <= t->ev[i].ts;
	}
	if (sorted) {
		return move_flows(t, NULL);
	}
	uint32_t *idx = malloc(t->n * sizeof(*idx));
	if (idx == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++) {
		idx[i] = (uint32_t)i;
	}
	int r = isc_sort_by_key(&t->ev[0].ts, sizeof(struct isc_ev), idx, t->n);
	r = r == 0 ? move_flows(t, idx) : r;
	if (r == 0) {
		permute(t->ev, idx, t->n);
	}
	free(idx);
	return r;
}

static uint64_t corr_key(const struct isc_ev *e)
{
	return isc_mix64(e->corr ^ ((uint64_t)e->input << 52));
}

/* Direct tables for the inputs whose ids span at most four times their count. */
static int index_direct(struct isc_trace *t)
{
	t->corr_direct = calloc(t->n_inputs + 1, sizeof(*t->corr_direct));
	uint64_t *lo = calloc(t->n_inputs + 1, sizeof(*lo)),
		 *hi = calloc(t->n_inputs + 1, sizeof(*hi));
	size_t *count = calloc(t->n_inputs + 1, sizeof(*count));
	int r = t->corr_direct && lo && hi && count ? 0 : -ENOMEM;
	for (size_t k = 0; k < t->n && r == 0; k++) {
		const struct isc_ev *e = &t->ev[k];
		if (e->type == ISC_T_CUDA_API && e->corr != 0) {
			lo[e->input] = count[e->input] == 0 || e->corr < lo[e->input]
					       ? e->corr
					       : lo[e->input];
			hi[e->input] = e->corr > hi[e->input] ? e->corr : hi[e->input];
			count[e->input]++;
		}
	}
	for (size_t i = 0; i < t->n_inputs && r == 0; i++) {
		struct isc_corr_direct *d = &t->corr_direct[i];
		if (count[i] > 0 && hi[i] - lo[i] < 4 * (uint64_t)count[i] + 64) {
			d->base = lo[i];
			d->n = (size_t)(hi[i] - lo[i] + 1);
			d->idx = calloc(d->n, sizeof(*d->idx));
			r = d->idx == NULL ? -ENOMEM : 0;
		}
	}
	for (size_t k = 0; k < t->n && r == 0; k++) {
		const struct isc_ev *e = &t->ev[k];
		const struct isc_corr_direct *d = &t->corr_direct[e->input];
		if (e->type == ISC_T_CUDA_API && e->corr != 0 && d->idx != NULL &&
		    d->idx[e->corr - d->base] == 0) {
			d->idx[e->corr - d->base] = (uint32_t)k + 1;
		}
	}
	free(lo);
	free(hi);
	free(count);
	return r;
}

static int index_correlations(struct isc_trace *t)
{
	int r = index_direct(t);
	if (r < 0) {
		return r;
	}
	size_t n_api = 0;
	for (size_t i = 0; i < t->n; i++) {
		n_api += t->ev[i].type == ISC_T_CUDA_API && t->ev[i].corr != 0;
	}
	size_t cap = 16;
	while (cap < n_api * 2) {
		cap *= 2;
	}
	free(t->corr_slots);
	t->corr_slots = calloc(cap, sizeof(*t->corr_slots));
	if (t->corr_slots == NULL) {
		return -ENOMEM;
	}
	t->corr_slot_mask = cap - 1;
	for (size_t k = 0; k < t->n; k++) {
		const struct isc_ev *e = &t->ev[k];
		if (e->type != ISC_T_CUDA_API || e->corr == 0 || t->corr_direct[e->input].idx) {
			continue;
		}
		size_t i = corr_key(e) & t->corr_slot_mask;
		bool dup = false;
		while (t->corr_slots[i] != 0 && !dup) {
			const struct isc_ev *o = &t->ev[t->corr_slots[i] - 1];
			dup = o->corr == e->corr && o->input == e->input;
			i = dup ? i : (i + 1) & t->corr_slot_mask;
		}
		if (!dup) {
			/* The first call with an id wins: ids are unique per process. */
			t->corr_slots[i] = (uint32_t)k + 1;
		}
	}
	return 0;
}

const struct isc_ev *isc_trace_launch_of(const struct isc_trace *t, const struct isc_ev *gpu)
{
	if (t->corr_slots == NULL || gpu->corr == 0) {
		return NULL;
	}
	const struct isc_corr_direct *d = &t->corr_direct[gpu->input];
	if (d->idx != NULL) {
		uint64_t off = gpu->corr - d->base;
		bool hit = gpu->corr >= d->base && off < d->n && d->idx[off] != 0;
		return hit ? &t->ev[d->idx[off] - 1] : NULL;
	}
	size_t i = corr_key(gpu) & t->corr_slot_mask;
	while (t->corr_slots[i] != 0) {
		const struct isc_ev *o = &t->ev[t->corr_slots[i] - 1];
		if (o->corr == gpu->corr && o->input == gpu->input) {
			return o;
		}
		i = (i + 1) & t->corr_slot_mask;
	}
	return NULL;
}

int isc_trace_finalize(struct isc_trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		t->ev[i].ts = isc_time_bound(t->ev[i].ts);
		t->ev[i].dur = t->ev[i].dur < 0 ? 0 : isc_time_bound(t->ev[i].dur);
	}
	for (size_t i = 0; i < t->n_inputs; i++) {
		struct isc_input *in = &t->inputs[i];
		in->meta_start_ns = isc_time_bound(in->meta_start_ns);
		in->meta_end_ns = isc_time_bound(in->meta_end_ns);
		in->anchor_mono_ns = isc_time_bound(in->anchor_mono_ns);
		in->anchor_real_ns = isc_time_bound(in->anchor_real_ns);
	}
	int r = isc_hosts_align(t);
	r = r == 0 ? sort_events(t) : r;
	if (r == 0) {
		r = index_correlations(t);
	}
	if (r < 0) {
		return r;
	}
	for (size_t i = 0; i < t->n; i++) {
		struct isc_ev *e = &t->ev[i];
		if (e->thread == UINT32_MAX && isc_type_is_gpu(e->type)) {
			const struct isc_ev *api = isc_trace_launch_of(t, e);
			e->thread = api != NULL ? api->thread : UINT32_MAX;
		}
	}
	isc_gnodes_resolve(t->gnodes);
	isc_trace_extra_finalize(t);
	if (isc_strtab_demangle(t->str) < 0) {
		return -ENOMEM;
	}
	t->finalized = true;
	return 0;
}

bool isc_type_is_gpu(unsigned type)
{
	return type >= ISC_T_KERNEL && type < ISC_T__COUNT;
}

const char *isc_type_name(unsigned type)
{
	static const char *const names[ISC_T__COUNT] = {
		[ISC_T_SCOPE] = ISC_TYPE_CPU_CALL,	[ISC_T_CPU_OP] = "cpu_op",
		[ISC_T_INSTANT] = ISC_TYPE_INSTANT,	[ISC_T_SYSCALL] = ISC_TYPE_CPU_SYSCALL,
		[ISC_T_MEMORY] = ISC_TYPE_MEMORY_EVENT, [ISC_T_COUNTER] = ISC_TYPE_COUNTER,
		[ISC_T_CUDA_API] = ISC_TYPE_CUDA_API,	[ISC_T_KERNEL] = ISC_TYPE_GPU_KERNEL,
		[ISC_T_H2D] = ISC_TYPE_H2D_COPY,	[ISC_T_D2H] = ISC_TYPE_D2H_COPY,
		[ISC_T_D2D] = ISC_TYPE_D2D_COPY,	[ISC_T_H2H] = ISC_TYPE_H2H_COPY,
		[ISC_T_MEMSET] = ISC_TYPE_GPU_MEMSET,	[ISC_T_GPU_SYNC] = ISC_TYPE_GPU_SYNC,
		[ISC_T_CPU_SAMPLE] = "cpu_sample",
	};
	return type < ISC_T__COUNT ? names[type] : "unknown";
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

enum isc_api_class isc_api_classify(const char *n)
{
	/* Runtime (cuda*) and driver (cu*) spellings of the same families. */
	if (strstr(n, "LaunchKernel") || strstr(n, "LaunchCooperativeKernel") ||
	    starts(n, "cudaGraphLaunch") || starts(n, "cuGraphLaunch") || starts(n, "cuLaunch") ||
	    starts(n, "__cudaLaunch")) {
		return ISC_AC_LAUNCH;
	}
	if (starts(n, "cudaMemcpy") || starts(n, "cuMemcpy")) {
		return ISC_AC_MEMCPY;
	}
	if (starts(n, "cudaMemset") || starts(n, "cuMemset") || starts(n, "cuMemsetD")) {
		return ISC_AC_MEMSET;
	}
	if (strstr(n, "Synchronize") || starts(n, "cudaStreamWaitEvent") ||
	    starts(n, "cuStreamWaitEvent")) {
		return ISC_AC_SYNC;
	}
	if (starts(n, "cudaMallocHost") || starts(n, "cudaHostAlloc") ||
	    starts(n, "cudaHostRegister") || starts(n, "cudaFreeHost") ||
	    starts(n, "cuMemAllocHost") || starts(n, "cuMemHostAlloc") ||
	    starts(n, "cuMemFreeHost")) {
		return ISC_AC_HOST_ALLOC;
	}
	if (starts(n, "cudaMalloc") || starts(n, "cuMemAlloc") || starts(n, "cuMemCreate")) {
		return ISC_AC_MALLOC;
	}
	if (starts(n, "cudaFree") || starts(n, "cuMemFree") || starts(n, "cuMemRelease")) {
		return ISC_AC_FREE;
	}
	if (strstr(n, "Query") || strstr(n, "GetAttribute") || strstr(n, "IsCapturing") ||
	    strstr(n, "GetDevice") || strstr(n, "GetLastError")) {
		return ISC_AC_QUERY;
	}
	return ISC_AC_OTHER;
}

enum isc_event_call isc_api_event_call(const char *n)
{
	if (starts(n, "cudaEventRecord") || starts(n, "cuEventRecord")) {
		return ISC_EC_RECORD;
	}
	if (starts(n, "cudaStreamWaitEvent") || starts(n, "cuStreamWaitEvent")) {
		return ISC_EC_WAIT;
	}
	if (starts(n, "cudaEventSynchronize") || starts(n, "cuEventSynchronize")) {
		return ISC_EC_SYNC;
	}
	if (starts(n, "cudaEventQuery") || starts(n, "cuEventQuery")) {
		return ISC_EC_QUERY;
	}
	return ISC_EC_NONE;
}

enum isc_counter_kind isc_counter_kind(const char *name)
{
	static const struct {
		const char *name;
		enum isc_counter_kind kind;
	} kinds[] = {
		{ "cpu_time", ISC_CTR_CPU_TIME },
		{ "wait_time", ISC_CTR_WAIT_TIME },
		{ "live_heap", ISC_CTR_LIVE_HEAP },
		{ "device_memory", ISC_CTR_DEVICE_MEMORY },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(kinds[i].name, name) == 0) {
			return kinds[i].kind;
		}
	}
	return ISC_CTR_OTHER;
}

int isc_agg_add(struct isc_agg_list *l, const struct isc_agg *a)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].name == a->name) {
			l->v[i].count += a->count;
			l->v[i].total_us += a->total_us;
			l->v[i].bytes += a->bytes;
			l->v[i].max_us = a->max_us > l->v[i].max_us ? a->max_us : l->v[i].max_us;
			return 0;
		}
	}
	if (ISC_GROW(l->v, l->cap, l->n + 1, 8) < 0) {
		return -ENOMEM;
	}
	l->v[l->n++] = *a;
	return 0;
}
