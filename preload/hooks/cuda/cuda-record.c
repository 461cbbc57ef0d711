/* SPDX-License-Identifier: MIT */
/* Writing one intercepted CUDA call: a cuda_api record, plus an EXT for launches. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "preload/core/arena.h"
#include "preload/hooks/cuda/cuda-family.h"
#include "preload/hooks/cuda/cuda-hook.h"
#include "preload/samplers/cpu-sampler.h"

static uint32_t aux_of(const struct isc_cuda_call *c, const struct isc_cuda_info *info)
{
	int32_t dev = c->t->cuda.device;
	uint32_t aux = dev >= 0 && dev < 255 ? (uint32_t)dev + 1 : 0;
	uint8_t host = info->host_mem;
	if (host == ISC_MEM_UNKNOWN && info->host_ptr != NULL) {
		host = isc_pinned_contains(info->host_ptr) ? ISC_MEM_PINNED : ISC_MEM_PAGEABLE;
	}
	aux |= (uint32_t)(info->dir & 7) << ISC_API_DIR_SHIFT;
	aux |= (uint32_t)(host & 7) << ISC_API_HOSTMEM_SHIFT;
	aux |= info->has_bytes ? ISC_API_HAS_BYTES : 0;
	aux |= info->has_ptr ? ISC_API_HAS_PTR : 0;
	return aux;
}

static bool blocked(const struct isc_cuda_call *c, const struct isc_cuda_info *info, uint32_t aux)
{
	unsigned f = isc_cuda_fn_flags[c->fn];
	if (info->blocked) {
		return true;
	}
	if (!(f & ISC_CF_B)) {
		/* an async copy into pageable memory waits for the copy (CUDA's documented
		 * "API synchronization behavior") */
		return info->dir == ISC_DIR_D2H && (f & ISC_CF_A) &&
		       (aux >> ISC_API_HOSTMEM_SHIFT & 7) == ISC_MEM_PAGEABLE;
	}
	/* a synchronous device-to-device copy does not wait on the host */
	return info->dir != ISC_DIR_D2D;
}

void isc_cuda_record(const struct isc_cuda_call *c, uint64_t end, int result,
		     const struct isc_cuda_info *info, const struct isc_launch_payload *launch)
{
	struct isc_thread *t = c->t;
	int saved = errno;
	unsigned n = launch ? 2 : 1;

	isc_guard_enter();
	if (__builtin_expect(atomic_load_explicit(&isc_cuda_versions_pending, memory_order_relaxed),
			     0)) {
		isc_cuda_query_versions();
	}
	if (__builtin_expect(t->cuda.calls == NULL, 0)) {
		size_t bytes = ISC_CUDA_FN_MAX * sizeof(*t->cuda.calls);
		t->cuda.calls = isc_arena_alloc(bytes, 64);
		if (t->cuda.calls != NULL) {
			memset(t->cuda.calls, 0, bytes);
		}
	}
	if (__builtin_expect(t->cuda.calls != NULL, 1)) {
		t->cuda.calls[c->fn].count++;
		t->cuda.calls[c->fn].ns += end - c->t0;
	}
	uint32_t aux = aux_of(c, info);
	/* where the rules point: calls that waited, copies from pageable memory, and a
	 * sample of launches (their exact count is in the aggregates) */
	uint64_t w[ISC_CUDA_STACK_WORDS];
	unsigned nw = 0;
	bool pageable = (aux >> ISC_API_HOSTMEM_SHIFT & 7) == ISC_MEM_PAGEABLE;
	if (launch || pageable || blocked(c, info, aux)) {
		nw = isc_cuda_stack(w, ISC_CUDA_STACK_WORDS, launch != NULL);
	}
	unsigned ns = nw ? isc_stack_records(nw) : 0;
	struct isc_event *e = isc_event_reserve(ISC_EV_CUDA_API, n + ns);
	if (e) {
		unsigned f = isc_cuda_fn_flags[c->fn];
		e->ts = c->t0;
		e->dur = end - c->t0;
		e->tid = t->tid;
		e->kind = ISC_EV_CUDA_API;
		e->flags = (uint16_t)((blocked(c, info, aux) ? ISC_EVF_BLOCKED : 0) |
				      ((f & ISC_CF_A) ? ISC_EVF_ASYNC : 0));
		e->name = isc_cuda_fn_id(c->fn);
		e->aux = aux | (launch ? ISC_API_LAUNCH : 0) | (ns ? ISC_API_STACK : 0);
		e->u.cuda_api.correlation_id = c->corr;
		e->u.cuda_api.bytes = info->bytes;
		e->u.cuda_api.ptr = info->ptr;
		e->u.cuda_api.stream_id = info->has_stream
						  ? isc_cuda_stream_id(info->stream, f & ISC_CF_P)
						  : ISC_STREAM_NONE;
		e->u.cuda_api.result = result;
		if (launch) {
			memset(&e[1], 0, 32);
			e[1].tid = t->tid;
			e[1].kind = ISC_EV_EXT;
			e[1].u.launch = *launch;
		}
		if (ns) {
			isc_cuda_stack_fill(&e[n], t->tid, w, nw);
		}
		isc_event_commit(n + ns);
	}
	isc_guard_leave();
	errno = saved;
}
