/* SPDX-License-Identifier: MIT */
/*
 * Streams: creation, destruction, synchronisation and queries. The _ptsz
 * variants (ptsz.c) share the implementations below.
 */
#include <cupti_activity.h>

#include "tests/simgpu/runtime/sim.h"

static cudaError_t create(struct isc_sim_call *c, cudaStream_t *out, unsigned flags, int priority)
{
	struct CUstream_st *s;

	if (!out) {
		return cudaErrorInvalidValue;
	}
	if (flags & ~(unsigned)cudaStreamNonBlocking) {
		return cudaErrorInvalidValue;
	}
	isc_sim_busy_wait(isc_sim_cfg.api_cost_ns);
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_new(flags, priority < -5 ? -5 : priority > 0 ? 0 : priority);
	pthread_mutex_unlock(&isc_sim_lock);
	if (!s) {
		return cudaErrorMemoryAllocation;
	}
	*out = s;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaStreamCreate_v3020), "cudaStreamCreate", 0);

	if (err == cudaSuccess) {
		err = create(&c, pStream, 0, 0);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamCreateWithFlags_v5000),
					"cudaStreamCreateWithFlags", 0);

	if (err == cudaSuccess) {
		err = create(&c, pStream, flags, 0);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags,
						    int priority)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamCreateWithPriority_v5050),
					"cudaStreamCreateWithPriority", 0);

	if (err == cudaSuccess) {
		err = create(&c, pStream, flags, priority);
	}
	return isc_sim_leave(&c, err);
}

/* Work still queued on the stream completes; the handle is invalid at once. */
SIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaStreamDestroy_v3020), "cudaStreamDestroy", 0);
	struct CUstream_st *s;

	if (err != cudaSuccess) {
		return isc_sim_leave(&c, err);
	}
	if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
		return isc_sim_leave(&c, cudaErrorInvalidResourceHandle);
	}
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, false, &err);
	if (s) {
		isc_sim_stream_kill(s);
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return isc_sim_leave(&c, err);
}

cudaError_t isc_sim_stream_sync(struct isc_sim_call *c, cudaStream_t stream, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;
	uint64_t until = 0;
	uint32_t id = 0;
	int device = 0;

	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s && s->capture) {
		err = cudaErrorStreamCaptureUnsupported;
	} else if (s) {
		until = isc_sim_stream_floor(s);
		id = s->id;
		device = s->device;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	if (err != cudaSuccess) {
		return err;
	}
	isc_sim_block(c, until, !isc_sim_device_blocking_sync(device));
	isc_sim_notify_sync(c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, id, 0,
			    device);
	return cudaSuccess;
}

cudaError_t isc_sim_stream_query(cudaStream_t stream, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;

	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s && isc_sim_stream_floor(s) > isc_sim_now()) {
		err = cudaErrorNotReady;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}

cudaError_t isc_sim_stream_get(cudaStream_t stream, bool ptsz, int *priority, unsigned *flags,
			       unsigned long long *id, int *device)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;

	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s) {
		if (priority) {
			*priority = s->priority;
		}
		if (flags) {
			*flags = s->flags;
		}
		if (id) {
			*id = s->id;
		}
		if (device) {
			*device = s->device;
		}
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}

SIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamSynchronize_v3020),
					"cudaStreamSynchronize", 0);

	if (err == cudaSuccess) {
		err = isc_sim_stream_sync(&c, stream, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamQuery_v3020), "cudaStreamQuery", 0);

	if (err == cudaSuccess) {
		err = isc_sim_stream_query(stream, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamGetPriority_v5050),
					"cudaStreamGetPriority", 0);

	if (err == cudaSuccess) {
		err = priority ? isc_sim_stream_get(hStream, false, priority, NULL, NULL, NULL)
			       : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaStreamGetFlags_v5050), "cudaStreamGetFlags", 0);

	if (err == cudaSuccess) {
		err = flags ? isc_sim_stream_get(hStream, false, NULL, flags, NULL, NULL)
			    : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamGetId_v12000), "cudaStreamGetId", 0);

	if (err == cudaSuccess) {
		err = streamId ? isc_sim_stream_get(hStream, false, NULL, NULL, streamId, NULL)
			       : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaStreamGetDevice_v12080), "cudaStreamGetDevice", 0);

	if (err == cudaSuccess) {
		err = device ? isc_sim_stream_get(hStream, false, NULL, NULL, NULL, device)
			     : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}
