/* SPDX-License-Identifier: MIT */
/*
 * Allocation: device memory (cudaMalloc & co., stream-ordered pools, managed, pitched)
 * and host memory the runtime pins (cudaMallocHost, cudaHostAlloc, cudaHostRegister).
 * The pinned ranges are kept whether or not the call is recorded (a capture window
 * may open later), so copies can say which host memory they touched; a range leaves
 * the table before the memory is released, as the address may be reused at once.
 */
#include <cuda_runtime_api.h>

#include "preload/hooks/cuda/cuda-hook.h"

__typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
__typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;
__typeof__(cudaMallocFromPoolAsync) cudaMallocFromPoolAsync_ptsz;

static struct isc_cuda_info alloc_info(cudaError_t r, void **p, uint64_t bytes, cudaStream_t stream,
				       bool has_stream)
{
	struct isc_cuda_info i = {
		.stream = stream, .has_stream = has_stream, .bytes = bytes, .has_bytes = true
	};
	if (r == cudaSuccess && p != NULL) {
		i.ptr = (uintptr_t)*p;
		i.has_ptr = true;
	}
	return i;
}

static struct isc_cuda_info free_info(const void *p, cudaStream_t stream, bool has_stream)
{
	struct isc_cuda_info i = {
		.stream = stream, .has_stream = has_stream, .ptr = (uintptr_t)p, .has_ptr = true
	};
	return i;
}

ISC_CUDA_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	ISC_CUDA_HOOK(cudaMalloc, ISC_FN_cudaMalloc, (devPtr, size),
		      alloc_info(r_, devPtr, size, NULL, false));
}

ISC_CUDA_EXPORT cudaError_t cudaFree(void *devPtr)
{
	ISC_CUDA_HOOK(cudaFree, ISC_FN_cudaFree, (devPtr), free_info(devPtr, NULL, false));
}

ISC_CUDA_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMallocAsync, ISC_FN_cudaMallocAsync, (devPtr, size, stream),
		      alloc_info(r_, devPtr, size, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMallocAsync, ISC_FN_cudaMallocAsync_ptsz, (devPtr, size, stream),
		      alloc_info(r_, devPtr, size, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaFreeAsync, ISC_FN_cudaFreeAsync, (devPtr, stream),
		      free_info(devPtr, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaFreeAsync, ISC_FN_cudaFreeAsync_ptsz, (devPtr, stream),
		      free_info(devPtr, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
						    cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMallocFromPoolAsync, ISC_FN_cudaMallocFromPoolAsync,
		      (ptr, size, memPool, stream), alloc_info(r_, ptr, size, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
							 cudaMemPool_t memPool, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMallocFromPoolAsync, ISC_FN_cudaMallocFromPoolAsync_ptsz,
		      (ptr, size, memPool, stream), alloc_info(r_, ptr, size, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	ISC_CUDA_HOOK(cudaMallocManaged, ISC_FN_cudaMallocManaged, (devPtr, size, flags),
		      alloc_info(r_, devPtr, size, NULL, false));
}

ISC_CUDA_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
					    size_t height)
{
	ISC_CUDA_HOOK(cudaMallocPitch, ISC_FN_cudaMallocPitch, (devPtr, pitch, width, height),
		      alloc_info(r_, devPtr,
				 (r_ == cudaSuccess && pitch ? *pitch : width) * (uint64_t)height,
				 NULL, false));
}

static struct isc_cuda_info pitched_info(cudaError_t r, const struct cudaPitchedPtr *pp,
					 struct cudaExtent e)
{
	bool ok = r == cudaSuccess && pp != NULL;
	struct isc_cuda_info i = { .bytes = (uint64_t)(ok ? pp->pitch : e.width) *
					    (e.height ? e.height : 1) * (e.depth ? e.depth : 1),
				   .has_bytes = true };
	if (ok) {
		i.ptr = (uintptr_t)pp->ptr;
		i.has_ptr = true;
	}
	return i;
}

ISC_CUDA_EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr,
					 struct cudaExtent extent)
{
	ISC_CUDA_HOOK(cudaMalloc3D, ISC_FN_cudaMalloc3D, (pitchedDevPtr, extent),
		      pitched_info(r_, pitchedDevPtr, extent));
}

/* ---- pinned host memory: the table changes even when the call is not recorded ---- */

static cudaError_t host_alloc(unsigned fn, const void *caller, void **p, size_t size,
			      unsigned flags, bool with_flags)
{
	struct isc_cuda_call c;
	void *real = isc_cuda_real(fn, caller);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	bool rec = isc_cuda_enter(&c, fn);
	cudaError_t r = with_flags ? ((__typeof__(cudaHostAlloc) *)real)(p, size, flags)
				   : ((__typeof__(cudaMallocHost) *)real)(p, size);
	if (r == cudaSuccess && p != NULL) {
		isc_pinned_add(*p, size);
	}
	if (rec) {
		struct isc_cuda_info info = alloc_info(r, p, size, NULL, false);
		info.host_mem = ISC_MEM_PINNED;
		isc_cuda_leave(&c, r, &info);
	}
	return r;
}

ISC_CUDA_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return host_alloc(ISC_FN_cudaMallocHost, RA, ptr, size, 0, false);
}

ISC_CUDA_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	return host_alloc(ISC_FN_cudaHostAlloc, RA, pHost, size, flags, true);
}

ISC_CUDA_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	struct isc_cuda_call c;
	__typeof__(cudaHostRegister) *real = isc_cuda_real(ISC_FN_cudaHostRegister, RA);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	bool rec = isc_cuda_enter(&c, ISC_FN_cudaHostRegister);
	cudaError_t r = real(ptr, size, flags);
	if (r == cudaSuccess) {
		isc_pinned_add(ptr, size);
	}
	if (rec) {
		struct isc_cuda_info info = { .bytes = size,
					      .has_bytes = true,
					      .ptr = (uintptr_t)ptr,
					      .has_ptr = true,
					      .host_mem = ISC_MEM_PINNED };
		isc_cuda_leave(&c, r, &info);
	}
	return r;
}

/* Host-side releases: the range goes first, the memory after. */
static cudaError_t host_release(unsigned fn, const void *caller, void *ptr)
{
	struct isc_cuda_call c;
	__typeof__(cudaFreeHost) *real = isc_cuda_real(fn, caller);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	bool rec = isc_cuda_enter(&c, fn);
	isc_pinned_remove(ptr);
	cudaError_t r = real(ptr);
	if (rec) {
		struct isc_cuda_info info = free_info(ptr, NULL, false);
		info.host_mem = ISC_MEM_PINNED;
		isc_cuda_leave(&c, r, &info);
	}
	return r;
}

ISC_CUDA_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	return host_release(ISC_FN_cudaFreeHost, RA, ptr);
}

ISC_CUDA_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
	return host_release(ISC_FN_cudaHostUnregister, RA, ptr);
}

/* Exported as hidden versions of libcudart's symbol versions (cuda-hook.h). */
ISC_CUDA_VERSIONED(cudaMalloc)
ISC_CUDA_VERSIONED(cudaFree)
ISC_CUDA_VERSIONED(cudaMallocAsync)
ISC_CUDA_VERSIONED(cudaMallocAsync_ptsz)
ISC_CUDA_VERSIONED(cudaFreeAsync)
ISC_CUDA_VERSIONED(cudaFreeAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMallocFromPoolAsync)
ISC_CUDA_VERSIONED(cudaMallocFromPoolAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMallocManaged)
ISC_CUDA_VERSIONED(cudaMallocPitch)
ISC_CUDA_VERSIONED(cudaMalloc3D)
ISC_CUDA_VERSIONED(cudaMallocHost)
ISC_CUDA_VERSIONED(cudaHostAlloc)
ISC_CUDA_VERSIONED(cudaHostRegister)
ISC_CUDA_VERSIONED(cudaFreeHost)
ISC_CUDA_VERSIONED(cudaHostUnregister)
