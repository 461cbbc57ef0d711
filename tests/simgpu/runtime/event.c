/* SPDX-License-Identifier: MIT */
/*
 * Events. Recording an event on a stream stamps it with the time at which all
 * work queued before it on that stream completes (the stream's floor, so the
 * legacy stream's implicit synchronisation applies); waiting for an event moves a
 * stream's tail to that time. Events never recorded count as complete, as in CUDA.
 */
#include <cupti_activity.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "tests/simgpu/runtime/sim.h"

#define EVENT_MAGIC 0x45564e54u

struct CUevent_st {
	uint32_t magic;
	uint32_t id;
	unsigned flags;
	int device;
	bool recorded;
	uint64_t time_ns;
};

static _Atomic uint32_t next_event_id = 1;

static cudaError_t create(cudaEvent_t *out, unsigned flags)
{
	struct CUevent_st *e;

	if (!out || (flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming |
					 cudaEventInterprocess))) {
		return cudaErrorInvalidValue;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		return cudaErrorMemoryAllocation;
	}
	e->magic = EVENT_MAGIC;
	e->id = atomic_fetch_add(&next_event_id, 1);
	e->flags = flags;
	e->device = isc_sim_current_device();
	pthread_mutex_lock(&isc_sim_lock);
	if (!isc_sim_handle_add(e)) {
		pthread_mutex_unlock(&isc_sim_lock);
		free(e);
		return cudaErrorMemoryAllocation;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	*out = e;
	return cudaSuccess;
}

/* Caller holds the lock. */
static bool valid(cudaEvent_t e)
{
	return isc_sim_handle_live(e) && e->magic == EVENT_MAGIC;
}

SIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaEventCreate_v3020), "cudaEventCreate", 0);

	if (err == cudaSuccess) {
		err = create(event, 0);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaEventCreateWithFlags_v3020),
					"cudaEventCreateWithFlags", 0);

	if (err == cudaSuccess) {
		err = create(event, flags);
	}
	return isc_sim_leave(&c, err);
}

/* A stale handle is then unknown to the handle set: an error, not a use-after-free. */
SIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaEventDestroy_v3020), "cudaEventDestroy", 0);

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		if (valid(event)) {
			isc_sim_handle_remove(event);
			free(event);
		} else {
			err = cudaErrorInvalidResourceHandle;
		}
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}

cudaError_t isc_sim_event_record(struct isc_sim_call *c, cudaEvent_t event, cudaStream_t stream,
				 bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;

	isc_sim_busy_wait(isc_sim_cfg.api_cost_ns);
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (!valid(event)) {
		err = cudaErrorInvalidResourceHandle;
	} else if (s && !s->capture) {
		event->time_ns = sim_max(isc_sim_now(), isc_sim_stream_floor(s));
		event->recorded = true;
		event->device = s->device;
		if (s->legacy) {
			/* later blocking-stream work waits for what this record waited for */
			isc_sim_stream_advance(s, event->time_ns);
		}
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}

SIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaEventRecord_v3020), "cudaEventRecord", 0);

	if (err == cudaSuccess) {
		err = isc_sim_event_record(&c, event, stream, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
						unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaEventRecordWithFlags_v11010),
					"cudaEventRecordWithFlags", 0);

	if (err == cudaSuccess) {
		err = isc_sim_event_record(&c, event, stream, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaEventSynchronize_v3020), "cudaEventSynchronize", 0);
	uint64_t until = 0;
	bool spin = true;
	uint32_t id = 0;
	int device = 0;

	if (err != cudaSuccess) {
		return isc_sim_leave(&c, err);
	}
	pthread_mutex_lock(&isc_sim_lock);
	if (!valid(event)) {
		err = cudaErrorInvalidResourceHandle;
	} else {
		until = event->recorded ? event->time_ns : 0;
		spin = !(event->flags & cudaEventBlockingSync) &&
		       !isc_sim_device_blocking_sync(event->device);
		id = event->id;
		device = event->device;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	if (err == cudaSuccess) {
		isc_sim_block(&c, until, spin);
		isc_sim_notify_sync(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 0,
				    id, device);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaEventQuery_v3020), "cudaEventQuery", 0);

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		if (!valid(event)) {
			err = cudaErrorInvalidResourceHandle;
		} else if (event->recorded && event->time_ns > isc_sim_now()) {
			err = cudaErrorNotReady;
		}
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}

static cudaError_t elapsed(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	uint64_t now = isc_sim_now();

	if (!ms) {
		return cudaErrorInvalidValue;
	}
	if (!valid(start) || !valid(end) || !start->recorded || !end->recorded ||
	    ((start->flags | end->flags) & cudaEventDisableTiming)) {
		return cudaErrorInvalidResourceHandle;
	}
	if (start->time_ns > now || end->time_ns > now) {
		return cudaErrorNotReady;
	}
	*ms = (float)(((double)end->time_ns - (double)start->time_ns) / 1e6);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaEventElapsedTime_v3020), "cudaEventElapsedTime", 0);

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		err = elapsed(ms, start, end);
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}

cudaError_t isc_sim_stream_wait_event(struct isc_sim_call *c, cudaStream_t stream,
				      cudaEvent_t event, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;
	uint32_t stream_id = 0;
	uint32_t event_id = 0;
	int device = 0;

	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s && !valid(event)) {
		err = cudaErrorInvalidResourceHandle;
	} else if (s) {
		if (event->recorded && !s->capture) {
			isc_sim_stream_advance(s, event->time_ns);
		}
		stream_id = s->id;
		event_id = event->id;
		device = s->device;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	if (err == cudaSuccess) {
		isc_sim_notify_sync(c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT,
				    stream_id, event_id, device);
	}
	return err;
}

SIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
					   unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaStreamWaitEvent_v3020), "cudaStreamWaitEvent", 0);

	if (err == cudaSuccess) {
		err = isc_sim_stream_wait_event(&c, stream, event, false);
	}
	return isc_sim_leave(&c, err);
}
