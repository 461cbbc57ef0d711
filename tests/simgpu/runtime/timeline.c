/* SPDX-License-Identifier: MIT */
/*
 * The virtual device timeline. Nothing runs: an operation's start is computed as
 * the latest of
 *   - its enqueue time plus the launch latency (the caller passes it as @ready),
 *   - the end of the previous operation on its stream, or an event it waits for,
 *   - for the legacy default stream, the tails of every blocking stream, and for a
 *     blocking stream, the tail of the legacy default stream (the implicit
 *     synchronisation of the legacy stream; non-blocking streams skip both),
 *   - the engine it needs: one copy engine per direction; kernels share no engine
 *     and overlap freely across streams, unless kernels are serialised (what real
 *     CUPTI does when the KERNEL activity kind is enabled).
 * Its end is start plus its modelled duration. Every caller holds isc_sim_lock.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "tests/simgpu/runtime/sim.h"

#define STREAM_MAGIC 0x5354524du

static __thread struct CUstream_st *per_thread_streams[SIM_MAX_DEVICES];
static _Atomic uint32_t next_stream_id = 13;

uint32_t isc_sim_next_stream_id(void)
{
	return atomic_fetch_add(&next_stream_id, 1);
}

static bool is_blocking(const struct CUstream_st *s)
{
	return !s->legacy && !(s->flags & cudaStreamNonBlocking);
}

/* The per-thread default stream: blocking, so it synchronises with the legacy one. */
static struct CUstream_st *per_thread_stream(int device)
{
	struct CUstream_st *s = per_thread_streams[device];

	if (s) {
		return s;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		return NULL;
	}
	s->magic = STREAM_MAGIC;
	s->id = isc_sim_next_stream_id();
	s->device = device;
	s->per_thread = true;
	per_thread_streams[device] = s;
	isc_sim_handle_add(s);
	return s;
}

struct CUstream_st *isc_sim_stream_new(unsigned flags, int priority)
{
	struct CUstream_st *s = calloc(1, sizeof(*s));

	if (!s) {
		return NULL;
	}
	s->magic = STREAM_MAGIC;
	s->id = isc_sim_next_stream_id();
	s->device = isc_sim_current_device();
	s->flags = flags;
	s->priority = priority;
	if (!isc_sim_handle_add(s)) {
		free(s);
		return NULL;
	}
	return s;
}

/*
 * A destroyed stream leaves the handle set, so a stale handle gets
 * cudaErrorInvalidResourceHandle instead of a use-after-free. Per-thread default
 * streams are never destroyed (their thread may be gone, their work not).
 */
void isc_sim_stream_kill(struct CUstream_st *s)
{
	isc_sim_handle_remove(s);
	free(s->ring);
	free(s);
}

/* The launch queue (SIMGPU_QUEUE_DEPTH): when the kernel queue_depth launches back has
 * not ended, the slot a new launch needs frees at its end. Caller holds the lock. */
uint64_t isc_sim_stream_slot(struct CUstream_st *s)
{
	uint64_t depth = isc_sim_cfg.queue_depth;

	if (depth == 0 || depth > 1000000) {
		return 0;
	}
	if (!s->ring) {
		s->ring = calloc((size_t)depth, sizeof(*s->ring));
		if (!s->ring) {
			return 0;
		}
	}
	return s->ring[s->ring_pos % depth];
}

void isc_sim_stream_slot_take(struct CUstream_st *s, uint64_t end)
{
	if (s->ring) {
		s->ring[s->ring_pos++ % isc_sim_cfg.queue_depth] = end;
	}
}

struct CUstream_st *isc_sim_stream_resolve(cudaStream_t handle, bool ptsz, cudaError_t *err)
{
	int device = isc_sim_current_device();
	struct CUstream_st *s;

	if (!handle) {
		handle = ptsz ? cudaStreamPerThread : cudaStreamLegacy;
	}
	if (handle == cudaStreamLegacy) {
		return isc_sim_devices[device].legacy;
	}
	if (handle == cudaStreamPerThread) {
		s = per_thread_stream(device);
		if (!s) {
			*err = cudaErrorMemoryAllocation;
		}
		return s;
	}
	if (!isc_sim_handle_live(handle) || handle->magic != STREAM_MAGIC) {
		*err = cudaErrorInvalidResourceHandle;
		return NULL;
	}
	return handle;
}

uint64_t isc_sim_stream_floor(const struct CUstream_st *s)
{
	const struct isc_sim_device *d = &isc_sim_devices[s->device];
	uint64_t t = s->tail;

	if (s->legacy) {
		t = sim_max(t, d->blocking_tail);
	} else if (is_blocking(s)) {
		t = sim_max(t, d->legacy->tail);
	}
	return t;
}

void isc_sim_stream_advance(struct CUstream_st *s, uint64_t t)
{
	struct isc_sim_device *d = &isc_sim_devices[s->device];

	s->tail = sim_max(s->tail, t);
	if (is_blocking(s)) {
		d->blocking_tail = sim_max(d->blocking_tail, s->tail);
	}
	d->max_end = sim_max(d->max_end, t);
}

uint64_t isc_sim_schedule(struct CUstream_st *s, enum isc_sim_engine engine, uint64_t ready,
			  uint64_t duration, uint64_t *start)
{
	struct isc_sim_device *d = &isc_sim_devices[s->device];
	uint64_t *engine_free = NULL;
	uint64_t begin = sim_max(ready, isc_sim_stream_floor(s));
	uint64_t end;

	if (engine == SIM_ENGINE_KERNEL && !isc_sim_serialize_kernels) {
		engine = SIM_ENGINE_NONE;
	}
	switch (engine) {
	case SIM_ENGINE_H2D:
		engine_free = &d->h2d_free;
		break;
	case SIM_ENGINE_D2H:
		engine_free = &d->d2h_free;
		break;
	case SIM_ENGINE_KERNEL:
		engine_free = &d->kernel_free;
		break;
	case SIM_ENGINE_NONE:
		break;
	}
	if (engine_free) {
		begin = sim_max(begin, *engine_free);
	}
	end = begin + duration;
	if (engine_free) {
		*engine_free = end;
	}
	isc_sim_stream_advance(s, end);
	*start = begin;
	return end;
}
