/* SPDX-License-Identifier: MIT */
/*
 * The per-thread default stream variants (_ptsz for stream-taking calls, _ptds for
 * synchronous ones), which code built with --default-stream per-thread or
 * CUDA_API_PER_THREAD_DEFAULT_STREAM calls. This file is compiled with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM defined, so cuda_runtime_api.h declares
 * exactly these names and the definitions are checked against the toolkit's
 * prototypes. A NULL stream here means the calling thread's default stream.
 */
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "ptsz.c must be compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif

#include "tests/simgpu/runtime/sim.h"

SIM_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamSynchronize_ptsz_v7000),
					"cudaStreamSynchronize_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_stream_sync(&c, stream, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaStreamQuery_ptsz_v7000), "cudaStreamQuery_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_stream_query(stream, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
						unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamWaitEvent_ptsz_v7000),
					"cudaStreamWaitEvent_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_stream_wait_event(&c, stream, event, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamGetPriority_ptsz_v7000),
					"cudaStreamGetPriority_ptsz", 0);

	if (err == cudaSuccess) {
		err = priority ? isc_sim_stream_get(hStream, true, priority, NULL, NULL, NULL)
			       : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamGetFlags_ptsz_v7000),
					"cudaStreamGetFlags_ptsz", 0);

	if (err == cudaSuccess) {
		err = flags ? isc_sim_stream_get(hStream, true, NULL, flags, NULL, NULL)
			    : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long *streamId)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaStreamGetId_ptsz_v12000), "cudaStreamGetId_ptsz", 0);

	if (err == cudaSuccess) {
		err = streamId ? isc_sim_stream_get(hStream, true, NULL, NULL, streamId, NULL)
			       : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t hStream, int *device)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamGetDevice_ptsz_v12080),
					"cudaStreamGetDevice_ptsz", 0);

	if (err == cudaSuccess) {
		err = device ? isc_sim_stream_get(hStream, true, NULL, NULL, NULL, device)
			     : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
					     void **args, size_t sharedMem, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaLaunchKernel_ptsz_v7000),
					"cudaLaunchKernel_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_launch(&c, isc_sim_kernel_get(func, true), gridDim, blockDim,
				     sharedMem, stream, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
						void **args)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaLaunchKernelExC_ptsz_v11060),
					"cudaLaunchKernelExC_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_launch_ex(&c, config, func, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
				       enum cudaMemcpyKind kind)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpy_ptds_v7000), "cudaMemcpy_ptds", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_2d(&c, dst, count, src, count, count, 1, kind, NULL,
				      SIM_COPY_SYNC | SIM_COPY_PTSZ);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
					    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaMemcpyAsync_ptsz_v7000), "cudaMemcpyAsync_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_2d(&c, dst, count, src, count, count, 1, kind, stream,
				      SIM_COPY_ASYNC | SIM_COPY_PTSZ);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
					 size_t width, size_t height, enum cudaMemcpyKind kind)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaMemcpy2D_ptds_v7000), "cudaMemcpy2D_ptds", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_2d(&c, dst, dpitch, src, spitch, width, height, kind, NULL,
				      SIM_COPY_SYNC | SIM_COPY_PTSZ);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
					      size_t spitch, size_t width, size_t height,
					      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpy2DAsync_ptsz_v7000),
					"cudaMemcpy2DAsync_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_2d(&c, dst, dpitch, src, spitch, width, height, kind, stream,
				      SIM_COPY_ASYNC | SIM_COPY_PTSZ);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
					       size_t offset, enum cudaMemcpyKind kind)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpyToSymbol_ptds_v7000),
					"cudaMemcpyToSymbol_ptds", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_symbol(&c, (char *)symbol + offset, src, count, kind, NULL,
					  SIM_COPY_SYNC | SIM_COPY_PTSZ, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
						    size_t count, size_t offset,
						    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpyToSymbolAsync_ptsz_v7000),
					"cudaMemcpyToSymbolAsync_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_symbol(&c, (char *)symbol + offset, src, count, kind, stream,
					  SIM_COPY_ASYNC | SIM_COPY_PTSZ, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
						 size_t offset, enum cudaMemcpyKind kind)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpyFromSymbol_ptds_v7000),
					"cudaMemcpyFromSymbol_ptds", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_symbol(&c, dst, (const char *)symbol + offset, count, kind, NULL,
					  SIM_COPY_SYNC | SIM_COPY_PTSZ, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
						      size_t offset, enum cudaMemcpyKind kind,
						      cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpyFromSymbolAsync_ptsz_v7000),
					"cudaMemcpyFromSymbolAsync_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_symbol(&c, dst, (const char *)symbol + offset, count, kind,
					  stream, SIM_COPY_ASYNC | SIM_COPY_PTSZ, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemset_ptds_v7000), "cudaMemset_ptds", 0);

	if (err == cudaSuccess) {
		err = isc_sim_memset(&c, devPtr, value, count, NULL, SIM_COPY_SYNC | SIM_COPY_PTSZ);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
					    cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaMemsetAsync_ptsz_v7000), "cudaMemsetAsync_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_memset(&c, devPtr, value, count, stream,
				     SIM_COPY_ASYNC | SIM_COPY_PTSZ);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaEventRecord_ptsz_v7000), "cudaEventRecord_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_event_record(&c, event, stream, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
						     unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaEventRecordWithFlags_ptsz_v11010),
					"cudaEventRecordWithFlags_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_event_record(&c, event, stream, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaMallocAsync_ptsz_v11020), "cudaMallocAsync_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_malloc_async(&c, devPtr, size, hStream, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaFreeAsync_ptsz_v11020), "cudaFreeAsync_ptsz", 0);

	if (err == cudaSuccess) {
		err = devPtr ? isc_sim_free_async(&c, devPtr, hStream, true) : cudaSuccess;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
						   enum cudaStreamCaptureMode mode)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamBeginCapture_ptsz_v10000),
					"cudaStreamBeginCapture_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_begin_capture(stream, mode, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamEndCapture_ptsz_v10000),
					"cudaStreamEndCapture_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_end_capture(stream, pGraph, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
						  enum cudaStreamCaptureStatus *pCaptureStatus)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamIsCapturing_ptsz_v10000),
					"cudaStreamIsCapturing_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_is_capturing(stream, pCaptureStatus, NULL, NULL, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaGraphLaunch_ptsz_v10000), "cudaGraphLaunch_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_graph_launch(&c, graphExec, stream, true);
	}
	return isc_sim_leave(&c, err);
}
