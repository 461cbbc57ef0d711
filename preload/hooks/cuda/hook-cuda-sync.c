/* SPDX-License-Identifier: MIT */
/*
 * Synchronisation and control: device, stream and event synchronisation, stream
 * waits, queries, event records, the current device, and cudaProfilerStart/Stop,
 * which open and close the capture window as profilers do.
 */
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <inferscope/inferscope.h>

#include "preload/hooks/cuda/cuda-hook.h"

__typeof__(cudaStreamSynchronize) cudaStreamSynchronize_ptsz;
__typeof__(cudaStreamWaitEvent) cudaStreamWaitEvent_ptsz;
__typeof__(cudaStreamQuery) cudaStreamQuery_ptsz;
__typeof__(cudaEventRecord) cudaEventRecord_ptsz;
__typeof__(cudaEventRecordWithFlags) cudaEventRecordWithFlags_ptsz;

static struct isc_cuda_info none(void)
{
	struct isc_cuda_info i = { 0 };
	return i;
}

static struct isc_cuda_info on(cudaStream_t stream)
{
	struct isc_cuda_info i = { .stream = stream, .has_stream = true };
	return i;
}

/* The event handle in the record's ptr: the analyzer pairs a cudaStreamWaitEvent or a
 * cudaEventSynchronize with the cudaEventRecord that last recorded the same handle
 * (docs/rules.md, "Cross-stream event edges"). A handle is reused once recorded again,
 * so only the order of the calls gives it meaning, and that is what the trace keeps. */
static struct isc_cuda_info event_on(cudaEvent_t event, cudaStream_t stream, bool has_stream)
{
	struct isc_cuda_info i = {
		.stream = stream, .has_stream = has_stream, .ptr = (uintptr_t)event, .has_ptr = true
	};
	return i;
}

ISC_CUDA_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	ISC_CUDA_HOOK(cudaDeviceSynchronize, ISC_FN_cudaDeviceSynchronize, (), none());
}

ISC_CUDA_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaStreamSynchronize, ISC_FN_cudaStreamSynchronize, (stream), on(stream));
}

ISC_CUDA_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaStreamSynchronize, ISC_FN_cudaStreamSynchronize_ptsz, (stream),
		      on(stream));
}

ISC_CUDA_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	ISC_CUDA_HOOK(cudaEventSynchronize, ISC_FN_cudaEventSynchronize, (event),
		      event_on(event, NULL, false));
}

ISC_CUDA_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
						unsigned int flags)
{
	ISC_CUDA_HOOK(cudaStreamWaitEvent, ISC_FN_cudaStreamWaitEvent, (stream, event, flags),
		      event_on(event, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
						     unsigned int flags)
{
	ISC_CUDA_HOOK(cudaStreamWaitEvent, ISC_FN_cudaStreamWaitEvent_ptsz, (stream, event, flags),
		      event_on(event, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaStreamQuery, ISC_FN_cudaStreamQuery, (stream), on(stream));
}

ISC_CUDA_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaStreamQuery, ISC_FN_cudaStreamQuery_ptsz, (stream), on(stream));
}

ISC_CUDA_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	ISC_CUDA_HOOK(cudaEventQuery, ISC_FN_cudaEventQuery, (event), event_on(event, NULL, false));
}

ISC_CUDA_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaEventRecord, ISC_FN_cudaEventRecord, (event, stream),
		      event_on(event, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaEventRecord, ISC_FN_cudaEventRecord_ptsz, (event, stream),
		      event_on(event, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
						     unsigned int flags)
{
	ISC_CUDA_HOOK(cudaEventRecordWithFlags, ISC_FN_cudaEventRecordWithFlags,
		      (event, stream, flags), event_on(event, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
							  unsigned int flags)
{
	ISC_CUDA_HOOK(cudaEventRecordWithFlags, ISC_FN_cudaEventRecordWithFlags_ptsz,
		      (event, stream, flags), event_on(event, stream, true));
}

/* The current device is per thread in CUDA; records carry it without asking the
 * runtime on every call. Kept even when the call is not recorded. */
ISC_CUDA_EXPORT cudaError_t cudaSetDevice(int device)
{
	struct isc_cuda_call c;
	__typeof__(cudaSetDevice) *real = isc_cuda_real(ISC_FN_cudaSetDevice, RA);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	bool rec = isc_cuda_enter(&c, ISC_FN_cudaSetDevice);
	cudaError_t r = real(device);
	struct isc_thread *t = isc_tls_self;
	if (r == cudaSuccess && t != NULL) {
		t->cuda.device = device;
	}
	if (rec) {
		struct isc_cuda_info info = none();
		isc_cuda_leave(&c, r, &info);
	}
	return r;
}

ISC_CUDA_EXPORT cudaError_t cudaProfilerStart(void)
{
	if (isc_core_ready() && atomic_load(&isc_cuda_on)) {
		inferscope_impl_capture_start();
	}
	ISC_CUDA_HOOK(cudaProfilerStart, ISC_FN_cudaProfilerStart, (), none());
}

ISC_CUDA_EXPORT cudaError_t cudaProfilerStop(void)
{
	struct isc_cuda_call c;
	__typeof__(cudaProfilerStop) *real = isc_cuda_real(ISC_FN_cudaProfilerStop, RA);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	bool rec = isc_cuda_enter(&c, ISC_FN_cudaProfilerStop);
	cudaError_t r = real();
	if (rec) {
		struct isc_cuda_info info = none();
		isc_cuda_leave(&c, r, &info);
	}
	if (isc_core_ready() && atomic_load(&isc_cuda_on)) {
		inferscope_impl_capture_stop();
	}
	return r;
}

/* Exported as hidden versions of libcudart's symbol versions (cuda-hook.h). */
ISC_CUDA_VERSIONED(cudaDeviceSynchronize)
ISC_CUDA_VERSIONED(cudaStreamSynchronize)
ISC_CUDA_VERSIONED(cudaStreamSynchronize_ptsz)
ISC_CUDA_VERSIONED(cudaEventSynchronize)
ISC_CUDA_VERSIONED(cudaStreamWaitEvent)
ISC_CUDA_VERSIONED(cudaStreamWaitEvent_ptsz)
ISC_CUDA_VERSIONED(cudaStreamQuery)
ISC_CUDA_VERSIONED(cudaStreamQuery_ptsz)
ISC_CUDA_VERSIONED(cudaEventQuery)
ISC_CUDA_VERSIONED(cudaEventRecord)
ISC_CUDA_VERSIONED(cudaEventRecord_ptsz)
ISC_CUDA_VERSIONED(cudaEventRecordWithFlags)
ISC_CUDA_VERSIONED(cudaEventRecordWithFlags_ptsz)
ISC_CUDA_VERSIONED(cudaSetDevice)
ISC_CUDA_VERSIONED(cudaProfilerStart)
ISC_CUDA_VERSIONED(cudaProfilerStop)
