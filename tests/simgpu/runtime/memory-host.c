/* SPDX-License-Identifier: MIT */
/*
 * Host memory the device can reach: pinned allocations (cudaMallocHost,
 * cudaHostAlloc), registered ranges (cudaHostRegister), managed memory, and
 * pointer queries. All of it is real host memory the program may use; the range
 * table (memory.c) is what tells a pinned source from a pageable one.
 */
#include <string.h>
#include <sys/mman.h>

#include "tests/simgpu/runtime/sim.h"

/* Pinned, registered and managed ranges: real host memory the program may use. */
static cudaError_t host_range(void **out, void *given, size_t size, uint8_t kind, unsigned flags)
{
	struct isc_sim_range r = { 0 };
	void *p = given;

	if (!p) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			return cudaErrorMemoryAllocation;
		}
	}
	isc_sim_busy_wait(isc_sim_cfg.malloc_cost_ns +
			  isc_sim_per_mib(isc_sim_cfg.host_alloc_cost_ns, size));
	r.base = (uintptr_t)p;
	r.size = size;
	r.kind = kind;
	r.live = true;
	r.device = isc_sim_current_device();
	r.flags = flags;
	pthread_mutex_lock(&isc_sim_lock);
	if (isc_sim_range_find(p) || isc_sim_range_find((char *)p + size - 1)) {
		pthread_mutex_unlock(&isc_sim_lock);
		return cudaErrorHostMemoryAlreadyRegistered;
	}
	if (!isc_sim_range_insert(&r)) {
		pthread_mutex_unlock(&isc_sim_lock);
		if (!given) {
			munmap(p, size);
		}
		return cudaErrorMemoryAllocation;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	if (out) {
		*out = p;
	}
	isc_sim_truth_mem(kind == SIM_ALLOC_REGISTERED ? "host_register" : "malloc_host", p, size,
			  kind == SIM_ALLOC_MANAGED ? SIMGPU_MEM_MANAGED : SIMGPU_MEM_PINNED,
			  r.device);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMallocHost_v3020), "cudaMallocHost", 0);

	if (err == cudaSuccess) {
		err = ptr && size ? host_range(ptr, NULL, size, SIM_ALLOC_HOST, 0)
				  : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaHostAlloc_v3020), "cudaHostAlloc", 0);

	if (err == cudaSuccess) {
		err = pHost && size ? host_range(pHost, NULL, size, SIM_ALLOC_HOST, flags)
				    : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaMallocManaged_v6000), "cudaMallocManaged", 0);

	if (err == cudaSuccess) {
		err = devPtr && size ? host_range(devPtr, NULL, size, SIM_ALLOC_MANAGED, flags)
				     : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaFreeHost_v3020), "cudaFreeHost", 0);

	if (err == cudaSuccess && ptr) {
		err = isc_sim_free_range(&c, ptr, true, "free_host");
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaHostRegister_v4000), "cudaHostRegister", 0);

	if (err == cudaSuccess) {
		err = ptr && size ? host_range(NULL, ptr, size, SIM_ALLOC_REGISTERED, flags)
				  : cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaHostUnregister_v4000), "cudaHostUnregister", 0);
	struct isc_sim_range *r;
	size_t size = 0;

	if (err != cudaSuccess) {
		return isc_sim_leave(&c, err);
	}
	pthread_mutex_lock(&isc_sim_lock);
	r = isc_sim_range_find(ptr);
	if (!r || r->kind != SIM_ALLOC_REGISTERED || r->base != (uintptr_t)ptr) {
		err = cudaErrorHostMemoryNotRegistered;
	} else {
		size = r->size;
		isc_sim_range_remove(r);
	}
	pthread_mutex_unlock(&isc_sim_lock);
	if (err == cudaSuccess) {
		isc_sim_truth_mem("host_unregister", ptr, size, SIMGPU_MEM_PINNED,
				  isc_sim_current_device());
	}
	return isc_sim_leave(&c, err);
}

static void pointer_attributes(struct cudaPointerAttributes *a, const void *ptr)
{
	const struct isc_sim_range *r;

	memset(a, 0, sizeof(*a));
	pthread_mutex_lock(&isc_sim_lock);
	r = isc_sim_range_find(ptr);
	if (!r) {
		a->type = cudaMemoryTypeUnregistered;
		a->device = -2;
	} else {
		a->device = r->device;
		a->type = r->kind == SIM_ALLOC_DEVICE	 ? cudaMemoryTypeDevice
			  : r->kind == SIM_ALLOC_MANAGED ? cudaMemoryTypeManaged
							 : cudaMemoryTypeHost;
		a->devicePointer = (void *)ptr;
		a->hostPointer = r->kind == SIM_ALLOC_DEVICE ? NULL : (void *)ptr;
	}
	pthread_mutex_unlock(&isc_sim_lock);
}

SIM_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
						const void *ptr)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaPointerGetAttributes_v4000),
					"cudaPointerGetAttributes", 0);

	if (err == cudaSuccess) {
		if (attributes) {
			pointer_attributes(attributes, ptr);
		} else {
			err = cudaErrorInvalidValue;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaHostGetDevicePointer_v3020),
					"cudaHostGetDevicePointer", 0);

	if (err == cudaSuccess) {
		uint8_t kind;

		pthread_mutex_lock(&isc_sim_lock);
		kind = isc_sim_mem_kind(pHost, NULL);
		pthread_mutex_unlock(&isc_sim_lock);
		if (!pDevice || kind != SIMGPU_MEM_PINNED) {
			err = cudaErrorInvalidValue;
		} else {
			*pDevice = pHost;
		}
	}
	return isc_sim_leave(&c, err);
}
