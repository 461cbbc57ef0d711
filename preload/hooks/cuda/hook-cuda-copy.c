/* SPDX-License-Identifier: MIT */
/*
 * Copies: cudaMemcpy* (synchronous and asynchronous, 2D, 3D, arrays, symbols, peer,
 * batches), with their _ptds/_ptsz variants. Each
 * record carries the bytes, the direction and, for a copy that touches host memory,
 * whether that memory is pinned (from the ranges cudaMallocHost & co. registered)
 * or pageable.
 */
#include <cuda_runtime_api.h>

#include "preload/hooks/cuda/cuda-hook.h"

#define SYNC NULL, false /* no stream argument */

/* The per-thread-default-stream variants: the plain function's prototype. */
__typeof__(cudaMemcpy) cudaMemcpy_ptds;
__typeof__(cudaMemcpyAsync) cudaMemcpyAsync_ptsz;
__typeof__(cudaMemcpy2D) cudaMemcpy2D_ptds;
__typeof__(cudaMemcpy2DAsync) cudaMemcpy2DAsync_ptsz;
__typeof__(cudaMemcpy3D) cudaMemcpy3D_ptds;
__typeof__(cudaMemcpy3DAsync) cudaMemcpy3DAsync_ptsz;
__typeof__(cudaMemcpy3DPeer) cudaMemcpy3DPeer_ptds;
__typeof__(cudaMemcpy3DPeerAsync) cudaMemcpy3DPeerAsync_ptsz;
__typeof__(cudaMemcpyToSymbol) cudaMemcpyToSymbol_ptds;
__typeof__(cudaMemcpyFromSymbol) cudaMemcpyFromSymbol_ptds;
__typeof__(cudaMemcpyToSymbolAsync) cudaMemcpyToSymbolAsync_ptsz;
__typeof__(cudaMemcpyFromSymbolAsync) cudaMemcpyFromSymbolAsync_ptsz;
__typeof__(cudaMemcpy2DToArray) cudaMemcpy2DToArray_ptds;
__typeof__(cudaMemcpy2DFromArray) cudaMemcpy2DFromArray_ptds;
__typeof__(cudaMemcpy2DToArrayAsync) cudaMemcpy2DToArrayAsync_ptsz;
__typeof__(cudaMemcpy2DFromArrayAsync) cudaMemcpy2DFromArrayAsync_ptsz;
__typeof__(cudaMemcpyBatchAsync) cudaMemcpyBatchAsync_ptsz;

static struct isc_cuda_info copy_info(enum cudaMemcpyKind kind, const void *dst, const void *src,
				      uint64_t bytes, cudaStream_t stream, bool has_stream)
{
	struct isc_cuda_info i = {
		.stream = stream, .has_stream = has_stream, .bytes = bytes, .has_bytes = true
	};
	switch (kind) {
	case cudaMemcpyHostToDevice:
		i.dir = ISC_DIR_H2D;
		i.host_ptr = src;
		break;
	case cudaMemcpyDeviceToHost:
		i.dir = ISC_DIR_D2H;
		i.host_ptr = dst;
		break;
	case cudaMemcpyDeviceToDevice:
		i.dir = ISC_DIR_D2D;
		break;
	case cudaMemcpyHostToHost:
		i.dir = ISC_DIR_H2H;
		i.host_ptr = src;
		break;
	default:
		i.dir = ISC_DIR_DEFAULT; /* the runtime infers it from the pointers */
		break;
	}
	return i;
}

static uint64_t extent_bytes(const struct cudaExtent *e)
{
	return (uint64_t)e->width * (e->height ? e->height : 1) * (e->depth ? e->depth : 1);
}

static struct isc_cuda_info copy3d_info(const struct cudaMemcpy3DParms *p, cudaStream_t stream,
					bool has_stream)
{
	if (p == NULL) {
		struct isc_cuda_info none = { .stream = stream, .has_stream = has_stream };
		return none;
	}
	return copy_info(p->kind, p->dstPtr.ptr, p->srcPtr.ptr, extent_bytes(&p->extent), stream,
			 has_stream);
}

static struct isc_cuda_info peer_info(uint64_t bytes, cudaStream_t stream, bool has_stream)
{
	struct isc_cuda_info i = { .stream = stream,
				   .has_stream = has_stream,
				   .bytes = bytes,
				   .has_bytes = true,
				   .dir = ISC_DIR_P2P };
	return i;
}

static struct isc_cuda_info peer3d_info(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream,
					bool has_stream)
{
	return peer_info(p ? extent_bytes(&p->extent) : 0, stream, has_stream);
}

static struct isc_cuda_info batch_info(const size_t *sizes, size_t count, cudaStream_t stream)
{
	uint64_t total = 0;
	for (size_t k = 0; sizes != NULL && k < count; k++) {
		total += sizes[k];
	}
	struct isc_cuda_info i = { .stream = stream,
				   .has_stream = true,
				   .bytes = total,
				   .has_bytes = true,
				   .dir = ISC_DIR_DEFAULT };
	return i;
}

/* ---- linear copies ---- */

ISC_CUDA_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
				       enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpy, ISC_FN_cudaMemcpy, (dst, src, count, kind),
		      copy_info(kind, dst, src, count, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
					    enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpy, ISC_FN_cudaMemcpy_ptds, (dst, src, count, kind),
		      copy_info(kind, dst, src, count, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
					    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpyAsync, ISC_FN_cudaMemcpyAsync, (dst, src, count, kind, stream),
		      copy_info(kind, dst, src, count, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
						 enum cudaMemcpyKind kind, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpyAsync, ISC_FN_cudaMemcpyAsync_ptsz, (dst, src, count, kind, stream),
		      copy_info(kind, dst, src, count, stream, true));
}

/* ---- 2D and 3D ---- */

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
					 size_t width, size_t height, enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpy2D, ISC_FN_cudaMemcpy2D,
		      (dst, dpitch, src, spitch, width, height, kind),
		      copy_info(kind, dst, src, (uint64_t)width * height, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
					      size_t spitch, size_t width, size_t height,
					      enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpy2D, ISC_FN_cudaMemcpy2D_ptds,
		      (dst, dpitch, src, spitch, width, height, kind),
		      copy_info(kind, dst, src, (uint64_t)width * height, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
					      size_t spitch, size_t width, size_t height,
					      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy2DAsync, ISC_FN_cudaMemcpy2DAsync,
		      (dst, dpitch, src, spitch, width, height, kind, stream),
		      copy_info(kind, dst, src, (uint64_t)width * height, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
						   size_t spitch, size_t width, size_t height,
						   enum cudaMemcpyKind kind, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy2DAsync, ISC_FN_cudaMemcpy2DAsync_ptsz,
		      (dst, dpitch, src, spitch, width, height, kind, stream),
		      copy_info(kind, dst, src, (uint64_t)width * height, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
	ISC_CUDA_HOOK(cudaMemcpy3D, ISC_FN_cudaMemcpy3D, (p), copy3d_info(p, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
	ISC_CUDA_HOOK(cudaMemcpy3D, ISC_FN_cudaMemcpy3D_ptds, (p), copy3d_info(p, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p,
					      cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy3DAsync, ISC_FN_cudaMemcpy3DAsync, (p, stream),
		      copy3d_info(p, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
						   cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy3DAsync, ISC_FN_cudaMemcpy3DAsync_ptsz, (p, stream),
		      copy3d_info(p, stream, true));
}

/* ---- peer ---- */

ISC_CUDA_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
					   size_t count)
{
	ISC_CUDA_HOOK(cudaMemcpyPeer, ISC_FN_cudaMemcpyPeer,
		      (dst, dstDevice, src, srcDevice, count), peer_info(count, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
						int srcDevice, size_t count, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpyPeerAsync, ISC_FN_cudaMemcpyPeerAsync,
		      (dst, dstDevice, src, srcDevice, count, stream),
		      peer_info(count, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
	ISC_CUDA_HOOK(cudaMemcpy3DPeer, ISC_FN_cudaMemcpy3DPeer, (p), peer3d_info(p, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p)
{
	ISC_CUDA_HOOK(cudaMemcpy3DPeer, ISC_FN_cudaMemcpy3DPeer_ptds, (p), peer3d_info(p, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p,
						  cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy3DPeerAsync, ISC_FN_cudaMemcpy3DPeerAsync, (p, stream),
		      peer3d_info(p, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p,
						       cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy3DPeerAsync, ISC_FN_cudaMemcpy3DPeerAsync_ptsz, (p, stream),
		      peer3d_info(p, stream, true));
}

/* ---- symbols ---- */

ISC_CUDA_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
					       size_t offset, enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpyToSymbol, ISC_FN_cudaMemcpyToSymbol,
		      (symbol, src, count, offset, kind), copy_info(kind, NULL, src, count, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src,
						    size_t count, size_t offset,
						    enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpyToSymbol, ISC_FN_cudaMemcpyToSymbol_ptds,
		      (symbol, src, count, offset, kind), copy_info(kind, NULL, src, count, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
						 size_t offset, enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpyFromSymbol, ISC_FN_cudaMemcpyFromSymbol,
		      (dst, symbol, count, offset, kind), copy_info(kind, dst, NULL, count, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
						      size_t offset, enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpyFromSymbol, ISC_FN_cudaMemcpyFromSymbol_ptds,
		      (dst, symbol, count, offset, kind), copy_info(kind, dst, NULL, count, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src,
						    size_t count, size_t offset,
						    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpyToSymbolAsync, ISC_FN_cudaMemcpyToSymbolAsync,
		      (symbol, src, count, offset, kind, stream),
		      copy_info(kind, NULL, src, count, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
							 size_t count, size_t offset,
							 enum cudaMemcpyKind kind,
							 cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpyToSymbolAsync, ISC_FN_cudaMemcpyToSymbolAsync_ptsz,
		      (symbol, src, count, offset, kind, stream),
		      copy_info(kind, NULL, src, count, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
						      size_t offset, enum cudaMemcpyKind kind,
						      cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpyFromSymbolAsync, ISC_FN_cudaMemcpyFromSymbolAsync,
		      (dst, symbol, count, offset, kind, stream),
		      copy_info(kind, dst, NULL, count, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol,
							   size_t count, size_t offset,
							   enum cudaMemcpyKind kind,
							   cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpyFromSymbolAsync, ISC_FN_cudaMemcpyFromSymbolAsync_ptsz,
		      (dst, symbol, count, offset, kind, stream),
		      copy_info(kind, dst, NULL, count, stream, true));
}

/* ---- arrays ---- */

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset,
						const void *src, size_t spitch, size_t width,
						size_t height, enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpy2DToArray, ISC_FN_cudaMemcpy2DToArray,
		      (dst, wOffset, hOffset, src, spitch, width, height, kind),
		      copy_info(kind, NULL, src, (uint64_t)width * height, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DToArray_ptds(cudaArray_t dst, size_t wOffset,
						     size_t hOffset, const void *src, size_t spitch,
						     size_t width, size_t height,
						     enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpy2DToArray, ISC_FN_cudaMemcpy2DToArray_ptds,
		      (dst, wOffset, hOffset, src, spitch, width, height, kind),
		      copy_info(kind, NULL, src, (uint64_t)width * height, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src,
						  size_t wOffset, size_t hOffset, size_t width,
						  size_t height, enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpy2DFromArray, ISC_FN_cudaMemcpy2DFromArray,
		      (dst, dpitch, src, wOffset, hOffset, width, height, kind),
		      copy_info(kind, dst, NULL, (uint64_t)width * height, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DFromArray_ptds(void *dst, size_t dpitch,
						       cudaArray_const_t src, size_t wOffset,
						       size_t hOffset, size_t width, size_t height,
						       enum cudaMemcpyKind kind)
{
	ISC_CUDA_HOOK(cudaMemcpy2DFromArray, ISC_FN_cudaMemcpy2DFromArray_ptds,
		      (dst, dpitch, src, wOffset, hOffset, width, height, kind),
		      copy_info(kind, dst, NULL, (uint64_t)width * height, SYNC));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset,
						     size_t hOffset, const void *src, size_t spitch,
						     size_t width, size_t height,
						     enum cudaMemcpyKind kind, cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy2DToArrayAsync, ISC_FN_cudaMemcpy2DToArrayAsync,
		      (dst, wOffset, hOffset, src, spitch, width, height, kind, stream),
		      copy_info(kind, NULL, src, (uint64_t)width * height, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset,
							  size_t hOffset, const void *src,
							  size_t spitch, size_t width,
							  size_t height, enum cudaMemcpyKind kind,
							  cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy2DToArrayAsync, ISC_FN_cudaMemcpy2DToArrayAsync_ptsz,
		      (dst, wOffset, hOffset, src, spitch, width, height, kind, stream),
		      copy_info(kind, NULL, src, (uint64_t)width * height, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch,
						       cudaArray_const_t src, size_t wOffset,
						       size_t hOffset, size_t width, size_t height,
						       enum cudaMemcpyKind kind,
						       cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy2DFromArrayAsync, ISC_FN_cudaMemcpy2DFromArrayAsync,
		      (dst, dpitch, src, wOffset, hOffset, width, height, kind, stream),
		      copy_info(kind, dst, NULL, (uint64_t)width * height, stream, true));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpy2DFromArrayAsync_ptsz(void *dst, size_t dpitch,
							    cudaArray_const_t src, size_t wOffset,
							    size_t hOffset, size_t width,
							    size_t height, enum cudaMemcpyKind kind,
							    cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpy2DFromArrayAsync, ISC_FN_cudaMemcpy2DFromArrayAsync_ptsz,
		      (dst, dpitch, src, wOffset, hOffset, width, height, kind, stream),
		      copy_info(kind, dst, NULL, (uint64_t)width * height, stream, true));
}

/* ---- batches ---- */

ISC_CUDA_EXPORT cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs,
						 const size_t *sizes, size_t count,
						 struct cudaMemcpyAttributes *attrs,
						 size_t *attrsIdxs, size_t numAttrs,
						 cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpyBatchAsync, ISC_FN_cudaMemcpyBatchAsync,
		      (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream),
		      batch_info(sizes, count, stream));
}

ISC_CUDA_EXPORT cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs,
						      const size_t *sizes, size_t count,
						      struct cudaMemcpyAttributes *attrs,
						      size_t *attrsIdxs, size_t numAttrs,
						      cudaStream_t stream)
{
	ISC_CUDA_HOOK(cudaMemcpyBatchAsync, ISC_FN_cudaMemcpyBatchAsync_ptsz,
		      (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream),
		      batch_info(sizes, count, stream));
}

/* Exported as hidden versions of libcudart's symbol versions (cuda-hook.h). */
ISC_CUDA_VERSIONED(cudaMemcpy)
ISC_CUDA_VERSIONED(cudaMemcpy_ptds)
ISC_CUDA_VERSIONED(cudaMemcpyAsync)
ISC_CUDA_VERSIONED(cudaMemcpyAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemcpy2D)
ISC_CUDA_VERSIONED(cudaMemcpy2D_ptds)
ISC_CUDA_VERSIONED(cudaMemcpy2DAsync)
ISC_CUDA_VERSIONED(cudaMemcpy2DAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemcpy3D)
ISC_CUDA_VERSIONED(cudaMemcpy3D_ptds)
ISC_CUDA_VERSIONED(cudaMemcpy3DAsync)
ISC_CUDA_VERSIONED(cudaMemcpy3DAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemcpyPeer)
ISC_CUDA_VERSIONED(cudaMemcpyPeerAsync)
ISC_CUDA_VERSIONED(cudaMemcpy3DPeer)
ISC_CUDA_VERSIONED(cudaMemcpy3DPeer_ptds)
ISC_CUDA_VERSIONED(cudaMemcpy3DPeerAsync)
ISC_CUDA_VERSIONED(cudaMemcpy3DPeerAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemcpyToSymbol)
ISC_CUDA_VERSIONED(cudaMemcpyToSymbol_ptds)
ISC_CUDA_VERSIONED(cudaMemcpyFromSymbol)
ISC_CUDA_VERSIONED(cudaMemcpyFromSymbol_ptds)
ISC_CUDA_VERSIONED(cudaMemcpyToSymbolAsync)
ISC_CUDA_VERSIONED(cudaMemcpyToSymbolAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemcpyFromSymbolAsync)
ISC_CUDA_VERSIONED(cudaMemcpyFromSymbolAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemcpy2DToArray)
ISC_CUDA_VERSIONED(cudaMemcpy2DToArray_ptds)
ISC_CUDA_VERSIONED(cudaMemcpy2DFromArray)
ISC_CUDA_VERSIONED(cudaMemcpy2DFromArray_ptds)
ISC_CUDA_VERSIONED(cudaMemcpy2DToArrayAsync)
ISC_CUDA_VERSIONED(cudaMemcpy2DToArrayAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemcpy2DFromArrayAsync)
ISC_CUDA_VERSIONED(cudaMemcpy2DFromArrayAsync_ptsz)
ISC_CUDA_VERSIONED(cudaMemcpyBatchAsync)
ISC_CUDA_VERSIONED(cudaMemcpyBatchAsync_ptsz)
