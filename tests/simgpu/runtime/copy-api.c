/* SPDX-License-Identifier: MIT */
/*
 * The exported copy and memset functions (legacy default-stream flavour; the
 * _ptds/_ptsz flavours are in ptsz.c). Each builds a struct isc_sim_copy and
 * hands it to copy.c.
 */
#include "tests/simgpu/runtime/sim.h"

static struct isc_sim_copy linear(void *dst, const void *src, size_t count,
				  enum cudaMemcpyKind kind)
{
	struct isc_sim_copy cp = {
		.dst = dst,
		.src = src,
		.bytes = count,
		.rows = 1,
		.kind = kind,
		.dst_device = -1,
		.src_device = -1,
	};

	return cp;
}

cudaError_t isc_sim_copy_2d(struct isc_sim_call *c, void *dst, size_t dpitch, const void *src,
			    size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind,
			    cudaStream_t stream, unsigned mode)
{
	struct isc_sim_copy cp = linear(dst, src, width, kind);

	if ((height > 1 && (width > dpitch || width > spitch))) {
		return cudaErrorInvalidPitchValue;
	}
	cp.rows = height;
	return isc_sim_copy(c, &cp, stream, mode);
}

cudaError_t isc_sim_copy_peer(struct isc_sim_call *c, void *dst, int dstDevice, const void *src,
			      int srcDevice, size_t count, cudaStream_t stream, unsigned mode)
{
	struct isc_sim_copy cp = linear(dst, src, count, cudaMemcpyDeviceToDevice);

	if (dstDevice < 0 || dstDevice >= isc_sim_cfg.device_count || srcDevice < 0 ||
	    srcDevice >= isc_sim_cfg.device_count) {
		return cudaErrorInvalidDevice;
	}
	cp.dst_device = dstDevice;
	cp.src_device = srcDevice;
	return isc_sim_copy(c, &cp, stream, mode);
}

cudaError_t isc_sim_copy_symbol(struct isc_sim_call *c, void *dst, const void *src, size_t count,
				enum cudaMemcpyKind kind, cudaStream_t stream, unsigned mode,
				bool to_symbol)
{
	struct isc_sim_copy cp = linear(dst, src, count, kind);

	return isc_sim_symbol_copy(c, &cp, stream, mode, to_symbol);
}

SIM_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
				  enum cudaMemcpyKind kind)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpy_v3020), "cudaMemcpy", 0);
	struct isc_sim_copy cp = linear(dst, src, count, kind);

	if (err == cudaSuccess) {
		err = isc_sim_copy(&c, &cp, NULL, SIM_COPY_SYNC);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
				       enum cudaMemcpyKind kind, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpyAsync_v3020), "cudaMemcpyAsync", 0);
	struct isc_sim_copy cp = linear(dst, src, count, kind);

	if (err == cudaSuccess) {
		err = isc_sim_copy(&c, &cp, stream, SIM_COPY_ASYNC);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
				    size_t width, size_t height, enum cudaMemcpyKind kind)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpy2D_v3020), "cudaMemcpy2D", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_2d(&c, dst, dpitch, src, spitch, width, height, kind, NULL,
				      SIM_COPY_SYNC);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
					 size_t width, size_t height, enum cudaMemcpyKind kind,
					 cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaMemcpy2DAsync_v3020), "cudaMemcpy2DAsync", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_2d(&c, dst, dpitch, src, spitch, width, height, kind, stream,
				      SIM_COPY_ASYNC);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
				      size_t count)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpyPeer_v4000), "cudaMemcpyPeer", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_peer(&c, dst, dstDevice, src, srcDevice, count, NULL,
					SIM_COPY_SYNC);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
					   size_t count, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaMemcpyPeerAsync_v4000), "cudaMemcpyPeerAsync", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_peer(&c, dst, dstDevice, src, srcDevice, count, stream,
					SIM_COPY_ASYNC);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
					  size_t offset, enum cudaMemcpyKind kind)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaMemcpyToSymbol_v3020), "cudaMemcpyToSymbol", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_symbol(&c, (char *)symbol + offset, src, count, kind, NULL,
					  SIM_COPY_SYNC, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
					       size_t offset, enum cudaMemcpyKind kind,
					       cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpyToSymbolAsync_v3020),
					"cudaMemcpyToSymbolAsync", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_symbol(&c, (char *)symbol + offset, src, count, kind, stream,
					  SIM_COPY_ASYNC, true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
					    size_t offset, enum cudaMemcpyKind kind)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaMemcpyFromSymbol_v3020), "cudaMemcpyFromSymbol", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_symbol(&c, dst, (const char *)symbol + offset, count, kind, NULL,
					  SIM_COPY_SYNC, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
						 size_t offset, enum cudaMemcpyKind kind,
						 cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemcpyFromSymbolAsync_v3020),
					"cudaMemcpyFromSymbolAsync", 0);

	if (err == cudaSuccess) {
		err = isc_sim_copy_symbol(&c, dst, (const char *)symbol + offset, count, kind,
					  stream, SIM_COPY_ASYNC, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemset_v3020), "cudaMemset", 0);

	if (err == cudaSuccess) {
		err = isc_sim_memset(&c, devPtr, value, count, NULL, SIM_COPY_SYNC);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemsetAsync_v3020), "cudaMemsetAsync", 0);

	if (err == cudaSuccess) {
		err = isc_sim_memset(&c, devPtr, value, count, stream, SIM_COPY_ASYNC);
	}
	return isc_sim_leave(&c, err);
}
