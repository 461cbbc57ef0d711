/* SPDX-License-Identifier: MIT */
/* The trailer's per-thread aggregates (trailer.h), from the counters the hooks keep in
 * struct isc_thread. docs/trace-format.md documents every member. */
#include "preload/trailer.h"

#include "format/json-writer.h"
#include "format/vocab.h"
#include "preload/core/buffer.h"
#include "preload/hooks/cuda/cuda-family.h"
#include "preload/hooks/host/host.h"
#include "preload/samplers/cpu-sampler.h"

static void json_thread_cuda(struct isc_json *j, const struct isc_thread *t,
			     const struct isc_cuda_report *r)
{
	bool any = false;
	for (unsigned i = 0; t->cuda.calls != NULL && i < r->n_functions; i++) {
		if (t->cuda.calls[i].count == 0) {
			continue;
		}
		if (!any) {
			isc_json_key(j, "cuda_api");
			isc_json_begin_object(j);
			any = true;
		}
		isc_json_key(j, r->function_names[i]);
		isc_json_begin_object(j);
		isc_json_kv_uint(j, "count", t->cuda.calls[i].count);
		isc_json_key(j, "total_us");
		isc_json_ns_as_us(j, (int64_t)t->cuda.calls[i].ns);
		isc_json_end_object(j);
	}
	if (any) {
		isc_json_end_object(j);
	}
}

static void json_thread_malloc(struct isc_json *j, const struct isc_thread *t)
{
	const struct isc_malloc_counters *m = &t->malloc;
	if (!isc_host_malloc_on) {
		return;
	}
	isc_json_key(j, "malloc");
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "calls", m->calls);
	isc_json_kv_uint(j, "frees", m->frees);
	isc_json_kv_uint(j, "failed", m->failed);
	isc_json_kv_uint(j, "bytes_requested", t->alloc_bytes);
	isc_json_kv_uint(j, "bytes_allocated", (uint64_t)m->live + m->bytes_freed);
	isc_json_kv_uint(j, "bytes_freed", m->bytes_freed);
	isc_json_kv_int(j, "live_bytes", m->live);
	isc_json_kv_int(j, "peak_live_bytes", m->peak);
	isc_json_kv_uint(j, "sampled_events", m->sampled);
	isc_json_kv_uint(j, "mmap_calls", m->mmaps);
	isc_json_kv_uint(j, "munmap_calls", m->munmaps);
	isc_json_kv_uint(j, "mremap_calls", m->mremaps);
	isc_json_kv_uint(j, "bytes_mapped", m->mapped_bytes);
	isc_json_kv_uint(j, "bytes_unmapped", m->unmapped_bytes);
	isc_json_end_object(j);
}

static void json_thread_syscalls(struct isc_json *j, const struct isc_thread *t)
{
	if (!isc_sys.on) {
		return;
	}
	isc_json_key(j, "syscalls");
	isc_json_begin_object(j);
	for (unsigned i = 0; i < ISC_SC__COUNT; i++) {
		const struct isc_syscall_agg *a = &t->syscalls[i];
		if (a->count == 0) {
			continue;
		}
		isc_json_key(j, isc_sys_table[i].name);
		isc_json_begin_object(j);
		isc_json_kv_uint(j, "count", a->count);
		isc_json_key(j, "total_us");
		isc_json_ns_as_us(j, (int64_t)isc_sys_units_to_ns(a->total));
		isc_json_key(j, "max_us");
		isc_json_ns_as_us(j, (int64_t)isc_sys_units_to_ns(a->max));
		isc_json_kv_uint(j, "bytes", a->bytes);
		isc_json_kv_uint(j, "errors", a->errors);
		isc_json_kv_uint(j, "events", a->events);
		isc_json_end_object(j);
	}
	isc_json_end_object(j);
}

/*
 * aggregates.syscall_latency: each call name's latency histogram, the threads' merged, as
 * [low_ns, high_ns, calls] for the buckets that hold calls (high exclusive; the last bucket
 * ends at the longest call). Bucket bounds are converted from clock units with the clock's
 * final calibration, the same for every thread.
 */
static void json_syscall_latency(struct isc_json *j)
{
	if (!isc_sys.on) {
		return;
	}
	isc_json_key(j, ISC_KEY_SYSCALL_LATENCY);
	isc_json_begin_object(j);
	for (unsigned i = 0; i < ISC_SC__COUNT; i++) {
		uint64_t h[ISC_SYSCALL_HIST] = { 0 }, max = 0, calls = 0;
		for (const struct isc_thread *t = isc_registry_first(); t; t = t->next) {
			const struct isc_syscall_agg *a = &t->syscalls[i];
			if (a->count == 0) {
				continue;
			}
			for (unsigned b = 0; a->hist != NULL && b < ISC_SYSCALL_HIST; b++) {
				h[b] += a->hist[b];
			}
			calls += a->count;
			max = a->max > max ? a->max : max;
		}
		if (calls == 0) {
			continue;
		}
		isc_json_key(j, isc_sys_table[i].name);
		isc_json_begin_array(j);
		for (unsigned b = 0; b < ISC_SYSCALL_HIST; b++) {
			if (h[b] == 0) {
				continue;
			}
			uint64_t hi = isc_sys_bucket_low(b + 1);
			if (b == ISC_SYSCALL_HIST - 1 && max >= hi) {
				hi = max + 1;
			}
			isc_json_begin_array(j);
			isc_json_uint(j, isc_sys_units_to_ns(isc_sys_bucket_low(b)));
			isc_json_uint(j, isc_sys_units_to_ns(hi));
			isc_json_uint(j, h[b]);
			isc_json_end_array(j);
		}
		isc_json_end_array(j);
	}
	isc_json_end_object(j);
}

void isc_trailer_threads(struct isc_json *j, const struct isc_cuda_report *cuda)
{
	isc_json_key(j, "aggregates");
	isc_json_begin_object(j);
	isc_json_key(j, "threads");
	isc_json_begin_array(j);
	isc_thread_names_refresh();
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		isc_json_begin_object(j);
		isc_json_kv_uint(j, "thread_id", t->tid);
		isc_json_kv_string(j, "name", t->comm);
		isc_json_kv_uint(j, "events", t->recorded);
		if (cuda) {
			json_thread_cuda(j, t, cuda);
		}
		/* aggregates.threads[].numa_node: the node a host hook last saw it on */
		if (t->numa_node > 0) {
			isc_json_kv_int(j, "numa_node", t->numa_node - 1);
		}
		json_thread_malloc(j, t);
		json_thread_syscalls(j, t);
		if (isc_sampler_signal()) {
			isc_json_kv_uint(j, "cpu_samples", t->samples);
			isc_json_kv_uint(j, "cpu_samples_lost", t->samples_lost);
		}
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
	json_syscall_latency(j);
	isc_json_end_object(j);
}
