/* SPDX-License-Identifier: MIT */
/*
 * Small calls that programs link against and the model has little to say about,
 * and what the simulator refuses. Host callbacks (cudaLaunchHostFunc,
 * cudaStreamAddCallback) would need a thread running user code at modelled
 * times; they return cudaErrorNotSupported, so a program that needs them fails
 * cleanly instead of silently losing its callbacks.
 */
#include "tests/simgpu/runtime/sim.h"

/* Declared by cuda_runtime_api.h only under CUDA_API_PER_THREAD_DEFAULT_STREAM. */
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData);
cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
				       void *userData, unsigned int flags);

static cudaError_t refuse(uint32_t cbid, const char *name)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, cbid, name, 0);

	return isc_sim_leave(&c, err ? err : cudaErrorNotSupported);
}

SIM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return refuse(SIM_CBID(cudaLaunchHostFunc_v10000), "cudaLaunchHostFunc");
}

SIM_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return refuse(SIM_CBID(cudaLaunchHostFunc_ptsz_v10000), "cudaLaunchHostFunc_ptsz");
}

SIM_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
					     void *userData, unsigned int flags)
{
	return refuse(SIM_CBID(cudaStreamAddCallback_v5000), "cudaStreamAddCallback");
}

SIM_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
						  cudaStreamCallback_t callback, void *userData,
						  unsigned int flags)
{
	return refuse(SIM_CBID(cudaStreamAddCallback_ptsz_v7000), "cudaStreamAddCallback_ptsz");
}

SIM_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaDeviceDisablePeerAccess_v4000),
					"cudaDeviceDisablePeerAccess", 0);

	if (err == cudaSuccess && (peerDevice < 0 || peerDevice >= isc_sim_cfg.device_count)) {
		err = cudaErrorInvalidDevice;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaHostGetFlags_v3020), "cudaHostGetFlags", 0);
	const struct isc_sim_range *r;

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		r = isc_sim_range_find(pHost);
		if (!pFlags || !r || r->kind == SIM_ALLOC_DEVICE || r->kind == SIM_ALLOC_MANAGED) {
			err = cudaErrorInvalidValue;
		} else {
			*pFlags = r->flags;
		}
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}

/* No driver library exists to hand entry points from: report every symbol missing. */
SIM_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(
	const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *status)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaGetDriverEntryPointByVersion_v12050),
					"cudaGetDriverEntryPointByVersion", 0);

	if (funcPtr) {
		*funcPtr = NULL;
	}
	if (status) {
		*status = cudaDriverEntryPointSymbolNotFound;
	}
	return isc_sim_leave(&c, err);
}
