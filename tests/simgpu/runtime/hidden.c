/* SPDX-License-Identifier: MIT */
/*
 * Launches an LD_PRELOAD interposer cannot see. cuBLAS and cuDNN carry a private
 * static copy of the runtime, and Triton launches through the driver API
 * (cuLaunchKernel), so their launches never pass through the exported
 * cudaLaunchKernel symbol; CUPTI, which sits below both, still reports an API
 * record and the kernel. simgpu_launch_hidden() reproduces exactly that: it runs
 * the shared launch path without entering any exported launch function.
 */
#include <cupti_driver_cbid.h>
#include <stdlib.h>
#include <string.h>

#include "tests/simgpu/runtime/sim.h"

struct hidden_kernel {
	const char *name; /* interned; its address is the kernel's key */
	struct hidden_kernel *next;
};

static struct hidden_kernel *hidden_kernels;

/* The kernel standing for @p name (hidden kernels have no host function). */
static struct CUkern_st *kernel_named(const char *name)
{
	struct hidden_kernel *h;
	const char *key = NULL;
	bool created = false;

	pthread_mutex_lock(&isc_sim_lock);
	for (h = hidden_kernels; h; h = h->next) {
		if (strcmp(h->name, name) == 0) {
			key = h->name;
			break;
		}
	}
	if (!key) {
		h = malloc(sizeof(*h));
		if (h) {
			h->name = key = isc_sim_intern(name);
			h->next = hidden_kernels;
			hidden_kernels = h;
			created = true;
		}
	}
	pthread_mutex_unlock(&isc_sim_lock);
	if (!key) {
		return NULL;
	}
	if (created) {
		simgpu_kernel_register(key, key, SIM_DURATION_DEFAULT);
	}
	return isc_sim_kernel_get(key, false);
}

SIM_EXPORT int simgpu_launch_hidden(int api, const char *name, uint64_t duration_ns,
				    unsigned grid_x, unsigned grid_y, unsigned grid_z,
				    unsigned block_x, unsigned block_y, unsigned block_z,
				    size_t shared_bytes, void *stream)
{
	bool driver = api == SIMGPU_HIDDEN_DRIVER;
	dim3 grid = { grid_x, grid_y, grid_z };
	dim3 block = { block_x, block_y, block_z };
	struct isc_sim_call c;
	cudaError_t err;

	if (api != SIMGPU_HIDDEN_DRIVER && api != SIMGPU_HIDDEN_STATIC_RUNTIME) {
		return cudaErrorInvalidValue;
	}
	err = isc_sim_enter(&c,
			    driver ? CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel
				   : SIM_CBID(cudaLaunchKernel_v7000),
			    driver ? "cuLaunchKernel" : "cudaLaunchKernel",
			    SIM_CALL_HIDDEN | (driver ? SIM_CALL_DRIVER : 0));
	if (err == cudaSuccess) {
		struct CUkern_st *k = name && name[0] ? kernel_named(name) : NULL;

		simgpu_next_kernel_duration(duration_ns);
		err = k ? isc_sim_launch(&c, k, grid, block, shared_bytes, stream, false)
			: cudaErrorInvalidDeviceFunction;
		simgpu_next_kernel_duration(0);
	}
	return isc_sim_leave(&c, err);
}
