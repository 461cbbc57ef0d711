/* SPDX-License-Identifier: MIT */
/* Memsets: cudaMemset, 2D and 3D, synchronous and asynchronous, _ptds/_ptsz variants. */
#include <cuda_runtime_api.h>

#include "preload/hooks/cuda/cuda-hook.h"

#define SYNC NULL, false /* no stream argument */

__typeof__(cudaMemset) cudaMemset_ptds;
__typeof__(cudaMemsetAsync) cudaMemsetAsync_ptsz;
__typeof__(cudaMemset2D) cudaMemset2D_ptds;
__typeof__(cudaMemset2DAsync) cudaMemset2DAsync_ptsz;
__typeof__(cudaMemset3D) cudaMemset3D_ptds;
__typeof__(cudaMemset3DAsync) cudaMemset3DAsync_ptsz;

static uint64_t extent_bytes(const struct cudaExtent *e)
{
	return (uint64_t)e->width * (e->height ? e->height : 1) * (e->depth ? e->depth : 1);
}

static struct isc_cuda_info set_info(uint64_t bytes, cudaStream_t stream, bool has_stream)
{
	struct isc_cuda_info i = {
		.stream = stream, .has_stream = has_stream, .bytes = bytes, .has_bytes = true
	};
	return i;
}

ISC_CUDA_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	ISC_CUDA_HOOK(cudaMemset, ISC_FN_cudaMemset, (devPtr, value, count), set_info(count, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	ISC_CUDA_HOOK(cudaMemset, ISC_FN_cudaMemset_ptds, (devPtr, value, count),
		      set_info(count, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
					    cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemsetAsync, ISC_FN_cudaMemsetAsync, (devPtr, value, count, stream),
		      set_info(count, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
						 cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemsetAsync, ISC_FN_cudaMemsetAsync_ptsz, (devPtr, value, count, stream),
		      set_info(count, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width,
					 size_t height)
{
	ISC_CUDA_HOOK(cudaMemset2D, ISC_FN_cudaMemset2D, (devPtr, pitch, value, width, height),
		      set_info((uint64_t)width * height, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width,
					      size_t height)
{
	ISC_CUDA_HOOK(cudaMemset2D, ISC_FN_cudaMemset2D_ptds, (devPtr, pitch, value, width, height),
		      set_info((uint64_t)width * height, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width,
					      size_t height, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemset2DAsync, ISC_FN_cudaMemset2DAsync,
		      (devPtr, pitch, value, width, height, stream),
		      set_info((uint64_t)width * height, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value,
						   size_t width, size_t height, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemset2DAsync, ISC_FN_cudaMemset2DAsync_ptsz,
		      (devPtr, pitch, value, width, height, stream),
		      set_info((uint64_t)width * height, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemset3D(struct cudaPitchedPtr pitchedDevPtr, int value,
					 struct cudaExtent extent)
{
	ISC_CUDA_HOOK(cudaMemset3D, ISC_FN_cudaMemset3D, (pitchedDevPtr, value, extent),
		      set_info(extent_bytes(&extent), SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value,
					      struct cudaExtent extent)
{
	ISC_CUDA_HOOK(cudaMemset3D, ISC_FN_cudaMemset3D_ptds, (pitchedDevPtr, value, extent),
		      set_info(extent_bytes(&extent), SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr pitchedDevPtr, int value,
					      struct cudaExtent extent, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemset3DAsync, ISC_FN_cudaMemset3DAsync,
		      (pitchedDevPtr, value, extent, stream),
		      set_info(extent_bytes(&extent), stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr, int value,
						   struct cudaExtent extent, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemset3DAsync, ISC_FN_cudaMemset3DAsync_ptsz,
		      (pitchedDevPtr, value, extent, stream),
		      set_info(extent_bytes(&extent), stream, true));
}

/* Exported as hidden versions of libcudart's symbol versions (cuda-hook.h). */
ISC_CUDA_VERSIONED(cudaMemset)
ISC_CUDA_VERSIONED(cudaMemset_ptds)
ISC_CUDA_VERSIONED(cudaMemsetAsync)
ISC_CUDA_VERSIONED(cudaMemsetAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemset2D)
ISC_CUDA_VERSIONED(cudaMemset2D_ptds)
ISC_CUDA_VERSIONED(cudaMemset2DAsync)
ISC_CUDA_VERSIONED(cudaMemset2DAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemset3D)
ISC_CUDA_VERSIONED(cudaMemset3D_ptds)
ISC_CUDA_VERSIONED(cudaMemset3DAsync)
ISC_CUDA_VERSIONED(cudaMemset3DAsync_ptsz)
