/* SPDX-License-Identifier: MIT */
/*
 * The activity API: enabling kinds, buffer callbacks, flushing, dropped-record
 * counts, attributes and cuptiFinalize. Kinds the simulator does not produce are
 * accepted and stay silent. With SIMGPU_CUPTI_HOLDER set, another tool (say
 * Nsight Systems) owns CUPTI in this process and every enable is refused.
 */
#include <string.h>

#include "tests/simgpu/cupti/cupti-sim.h"

#define ATTRIBUTES 9

static size_t attributes[ATTRIBUTES] = {
	[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE] = 8u << 20,
	[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP] = 8u << 20,
	[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT] = 250,
	[CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE] = 65536,
	[CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT] = 65536,
};

static CUptiResult set_kind(CUpti_ActivityKind kind, bool on)
{
	isc_cupti_setup();
	if (isc_cupti.holder[0]) {
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	if ((int)kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT ||
	    kind >= ISC_CUPTI_KINDS) {
		return CUPTI_ERROR_INVALID_KIND;
	}
	atomic_store(&isc_cupti.enabled[kind], on);
	if (kind == CUPTI_ACTIVITY_KIND_KERNEL) {
		/* the KERNEL kind serialises kernel execution, as the real one does */
		pthread_mutex_lock(&isc_cupti.lock);
		isc_cupti.kernels_serialised = on;
		if (isc_cupti.rt) {
			isc_cupti.rt->serialize_kernels(on);
		}
		pthread_mutex_unlock(&isc_cupti.lock);
	}
	isc_cupti_connect();
	if (on && kind == CUPTI_ACTIVITY_KIND_DEVICE) {
		isc_cupti_record_devices();
	}
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	return set_kind(kind, true);
}

CUPTI_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	return set_kind(kind, false);
}

CUPTI_EXPORT CUptiResult cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind)
{
	return set_kind(kind, true);
}

CUPTI_EXPORT CUptiResult cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind)
{
	return set_kind(kind, false);
}

CUPTI_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
							CUpti_BuffersCallbackCompleteFunc complete)
{
	if (!request || !complete) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	isc_cupti_setup();
	pthread_mutex_lock(&isc_cupti.lock);
	isc_cupti.request = request;
	isc_cupti.complete = complete;
	pthread_mutex_unlock(&isc_cupti.lock);
	isc_cupti_connect();
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	isc_cupti_setup();
	if (!isc_cupti.complete) {
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	return isc_cupti_flush((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0, false);
}

CUPTI_EXPORT CUptiResult cuptiActivityFlush(CUcontext context, uint32_t streamId, uint32_t flag)
{
	return cuptiActivityFlushAll(flag);
}

CUPTI_EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t time)
{
	isc_cupti_setup();
	pthread_mutex_lock(&isc_cupti.lock);
	isc_cupti.flush_period_ms = time ? time : 100;
	pthread_mutex_unlock(&isc_cupti.lock);
	return CUPTI_SUCCESS;
}

/* All buffers are global since CUDA 6, so every context and stream reads one count. */
CUPTI_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
							   size_t *dropped)
{
	if (!dropped) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	isc_cupti_setup();
	pthread_mutex_lock(&isc_cupti.lock);
	*dropped = isc_cupti.dropped;
	isc_cupti.dropped = 0;
	pthread_mutex_unlock(&isc_cupti.lock);
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize,
						   void *value)
{
	if (!valueSize || !value || (unsigned)attr >= ATTRIBUTES) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	if (*valueSize < sizeof(size_t)) {
		return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
	}
	memcpy(value, &attributes[attr], sizeof(size_t));
	*valueSize = sizeof(size_t);
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize,
						   void *value)
{
	size_t v = 0;

	if (!valueSize || !value || (unsigned)attr >= ATTRIBUTES || *valueSize == 0) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	memcpy(&v, value, *valueSize < sizeof(v) ? *valueSize : sizeof(v));
	attributes[attr] = v;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
	isc_cupti_setup();
	isc_cupti.latency_timestamps = enable != 0;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiActivityEnableLaunchAttributes(uint8_t enable)
{
	return CUPTI_SUCCESS;
}

/*
 * Detaches from the process. Clients are told to flush first; buffers still held
 * are handed back anyway (empty ones too), so the client can free them.
 */
CUPTI_EXPORT CUptiResult cuptiFinalize(void)
{
	const struct simgpu_runtime *rt;
	size_t i;

	isc_cupti_setup();
	if (isc_cupti.complete) {
		isc_cupti_flush(true, true);
	}
	for (i = 0; i < ISC_CUPTI_KINDS; i++) {
		atomic_store(&isc_cupti.enabled[i], false);
	}
	isc_cupti_unsubscribe_all();
	isc_cupti_worker_stop();
	pthread_mutex_lock(&isc_cupti.lock);
	rt = isc_cupti.rt;
	if (rt && isc_cupti.kernels_serialised) {
		rt->serialize_kernels(false);
	}
	isc_cupti.kernels_serialised = false;
	isc_cupti.devices_emitted = 0;
	pthread_mutex_unlock(&isc_cupti.lock);
	return CUPTI_SUCCESS;
}
