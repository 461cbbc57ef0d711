/* SPDX-License-Identifier: MIT */
/*
 * Memory: the table of device allocations and pinned/managed host ranges, which
 * is how the copy model tells pageable from pinned memory, as the real driver
 * does. Device pointers come from an address range reserved PROT_NONE, so they
 * never alias host memory and dereferencing one on the host faults, as it would
 * with a real GPU. Pinned and managed allocations are real host memory.
 */
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "tests/simgpu/runtime/sim.h"

#define DEVICE_ALIGN 512u
#define RESERVED_PER_DEVICE (512ull << 20) /* what a context costs on the real device */

static struct isc_sim_range *ranges; /* sorted by base; dead device entries are kept */
static size_t n_ranges;
static size_t cap_ranges;
static uintptr_t va_next;
static uintptr_t va_end;

static size_t lower_bound(uintptr_t p)
{
	size_t lo = 0;
	size_t hi = n_ranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ranges[mid].base <= p) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo; /* ranges[lo - 1] is the last one starting at or below p */
}

struct isc_sim_range *isc_sim_range_find(const void *ptr)
{
	uintptr_t p = (uintptr_t)ptr;
	size_t i = lower_bound(p);

	if (i == 0) {
		return NULL;
	}
	if (ranges[i - 1].live && p < ranges[i - 1].base + ranges[i - 1].size) {
		return &ranges[i - 1];
	}
	return NULL;
}

struct isc_sim_range *isc_sim_range_insert(const struct isc_sim_range *r)
{
	size_t i;

	if (n_ranges == cap_ranges) {
		size_t cap = cap_ranges ? cap_ranges * 2 : 256;
		struct isc_sim_range *grown = realloc(ranges, cap * sizeof(*ranges));

		if (!grown) {
			return NULL;
		}
		ranges = grown;
		cap_ranges = cap;
	}
	i = lower_bound(r->base);
	memmove(&ranges[i + 1], &ranges[i], (n_ranges - i) * sizeof(*ranges));
	ranges[i] = *r;
	n_ranges++;
	return &ranges[i];
}

void isc_sim_range_remove(struct isc_sim_range *r)
{
	size_t i = (size_t)(r - ranges);

	memmove(&ranges[i], &ranges[i + 1], (n_ranges - i - 1) * sizeof(*ranges));
	n_ranges--;
}

/* Callers hold the lock. */
uint8_t isc_sim_mem_kind(const void *p, int *device)
{
	const struct isc_sim_range *r = isc_sim_range_find(p);

	if (device) {
		*device = r ? r->device : -1;
	}
	if (!r) {
		return SIMGPU_MEM_PAGEABLE;
	}
	switch (r->kind) {
	case SIM_ALLOC_DEVICE:
		return SIMGPU_MEM_DEVICE;
	case SIM_ALLOC_MANAGED:
		return SIMGPU_MEM_MANAGED;
	default:
		return SIMGPU_MEM_PINNED;
	}
}

static bool reserve_va(void)
{
	static const size_t sizes[] = { 1ull << 40, 1ull << 37, 1ull << 34 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = mmap(NULL, sizes[i], PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p != MAP_FAILED) {
			va_next =
				((uintptr_t)p + DEVICE_ALIGN - 1) & ~(uintptr_t)(DEVICE_ALIGN - 1);
			va_end = (uintptr_t)p + sizes[i];
			return true;
		}
	}
	return false;
}

/* Caller holds the lock. A freed block of the same size is reused, as allocators do. */
static void *device_alloc(size_t size, int device, bool pool)
{
	struct isc_sim_device *d = &isc_sim_devices[device];
	struct isc_sim_range r = { 0 };
	size_t i;

	size = (size + DEVICE_ALIGN - 1) & ~(size_t)(DEVICE_ALIGN - 1);
	if (d->mem_used + size + RESERVED_PER_DEVICE > isc_sim_cfg.device_memory) {
		return NULL;
	}
	for (i = 0; i < n_ranges; i++) {
		if (!ranges[i].live && ranges[i].kind == SIM_ALLOC_DEVICE &&
		    ranges[i].size == size && ranges[i].device == device) {
			ranges[i].live = true;
			ranges[i].pool = pool;
			d->mem_used += size;
			return (void *)ranges[i].base;
		}
	}
	if ((!va_end && !reserve_va()) || va_end - va_next < size) {
		return NULL;
	}
	r.base = va_next;
	r.size = size;
	r.kind = SIM_ALLOC_DEVICE;
	r.live = true;
	r.pool = pool;
	r.device = device;
	if (!isc_sim_range_insert(&r)) {
		return NULL;
	}
	va_next += size;
	d->mem_used += size;
	return (void *)r.base;
}

void isc_sim_mem_reset(int device)
{
	size_t i;

	for (i = 0; i < n_ranges; i++) {
		if (ranges[i].kind == SIM_ALLOC_DEVICE && ranges[i].device == device) {
			ranges[i].live = false;
		}
	}
	isc_sim_devices[device].mem_used = 0;
}

uint64_t isc_sim_per_mib(uint64_t ns_per_mib, size_t bytes)
{
	return (uint64_t)((double)ns_per_mib * (double)bytes / (1024.0 * 1024.0));
}

SIM_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMalloc_v3020), "cudaMalloc", 0);
	int device = isc_sim_current_device();

	if (err != cudaSuccess || !devPtr) {
		return isc_sim_leave(&c, err ? err : cudaErrorInvalidValue);
	}
	*devPtr = NULL;
	if (size == 0) {
		return isc_sim_leave(&c, cudaSuccess);
	}
	isc_sim_busy_wait(isc_sim_cfg.malloc_cost_ns +
			  isc_sim_per_mib(isc_sim_cfg.malloc_ns_per_mib, size));
	pthread_mutex_lock(&isc_sim_lock);
	*devPtr = device_alloc(size, device, false);
	pthread_mutex_unlock(&isc_sim_lock);
	if (!*devPtr) {
		return isc_sim_leave(&c, cudaErrorMemoryAllocation);
	}
	isc_sim_truth_mem("malloc", *devPtr, size, SIMGPU_MEM_DEVICE, device);
	return isc_sim_leave(&c, cudaSuccess);
}

/* Frees a device, pinned or managed allocation; cudaFree synchronises the device first. */
cudaError_t isc_sim_free_range(struct isc_sim_call *c, void *p, bool host, const char *what)
{
	struct isc_sim_range *r;
	uint64_t until;
	int device;
	size_t size;
	uint8_t kind;

	pthread_mutex_lock(&isc_sim_lock);
	r = isc_sim_range_find(p);
	if (!r || r->base != (uintptr_t)p || (host != (r->kind == SIM_ALLOC_HOST)) ||
	    r->kind == SIM_ALLOC_REGISTERED) {
		pthread_mutex_unlock(&isc_sim_lock);
		return cudaErrorInvalidValue;
	}
	device = r->device;
	until = isc_sim_devices[device].max_end;
	pthread_mutex_unlock(&isc_sim_lock);
	isc_sim_block(c, until, !isc_sim_device_blocking_sync(device));
	isc_sim_busy_wait(isc_sim_cfg.free_cost_ns);
	pthread_mutex_lock(&isc_sim_lock);
	r = isc_sim_range_find(p);
	if (!r) {
		pthread_mutex_unlock(&isc_sim_lock);
		return cudaErrorInvalidValue; /* freed by another thread meanwhile */
	}
	size = r->size;
	kind = r->kind;
	if (kind == SIM_ALLOC_DEVICE) {
		r->live = false;
		isc_sim_devices[device].mem_used -= size;
	} else {
		isc_sim_range_remove(r);
	}
	pthread_mutex_unlock(&isc_sim_lock);
	if (kind != SIM_ALLOC_DEVICE) {
		munmap(p, size);
	}
	isc_sim_truth_mem(what, p, size,
			  kind == SIM_ALLOC_DEVICE    ? SIMGPU_MEM_DEVICE
			  : kind == SIM_ALLOC_MANAGED ? SIMGPU_MEM_MANAGED
						      : SIMGPU_MEM_PINNED,
			  device);
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaFree(void *devPtr)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaFree_v3020), "cudaFree", 0);

	/* cudaFree(NULL) only initialises the context, as code often uses it for. */
	if (err == cudaSuccess && devPtr) {
		err = isc_sim_free_range(&c, devPtr, false, "free");
	}
	return isc_sim_leave(&c, err);
}

cudaError_t isc_sim_malloc_async(struct isc_sim_call *c, void **ptr, size_t size,
				 cudaStream_t stream, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	int device = isc_sim_current_device();

	if (!ptr) {
		return cudaErrorInvalidValue;
	}
	*ptr = NULL;
	isc_sim_busy_wait(isc_sim_cfg.api_cost_ns);
	pthread_mutex_lock(&isc_sim_lock);
	if (isc_sim_stream_resolve(stream, ptsz, &err) && size) {
		*ptr = device_alloc(size, device, true);
		if (!*ptr) {
			err = cudaErrorMemoryAllocation;
		}
	}
	pthread_mutex_unlock(&isc_sim_lock);
	if (*ptr) {
		isc_sim_truth_mem("malloc_async", *ptr, size, SIMGPU_MEM_DEVICE, device);
	}
	return err;
}

/* Stream-ordered: no device synchronisation. */
cudaError_t isc_sim_free_async(struct isc_sim_call *c, void *ptr, cudaStream_t stream, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct isc_sim_range *r;
	size_t size = 0;
	int device = 0;

	isc_sim_busy_wait(isc_sim_cfg.api_cost_ns);
	pthread_mutex_lock(&isc_sim_lock);
	r = isc_sim_range_find(ptr);
	if (!isc_sim_stream_resolve(stream, ptsz, &err)) {
		r = NULL;
	} else if (!r || r->kind != SIM_ALLOC_DEVICE || r->base != (uintptr_t)ptr) {
		err = cudaErrorInvalidValue;
		r = NULL;
	}
	if (r) {
		r->live = false;
		size = r->size;
		device = r->device;
		isc_sim_devices[device].mem_used -= size;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	if (r) {
		isc_sim_truth_mem("free_async", ptr, size, SIMGPU_MEM_DEVICE, device);
	}
	return err;
}

SIM_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMallocAsync_v11020), "cudaMallocAsync", 0);

	if (err == cudaSuccess) {
		err = isc_sim_malloc_async(&c, devPtr, size, hStream, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaFreeAsync_v11020), "cudaFreeAsync", 0);

	if (err == cudaSuccess && devPtr) {
		err = isc_sim_free_async(&c, devPtr, hStream, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaMemGetInfo_v3020), "cudaMemGetInfo", 0);
	uint64_t used;

	if (err != cudaSuccess) {
		return isc_sim_leave(&c, err);
	}
	pthread_mutex_lock(&isc_sim_lock);
	used = isc_sim_devices[isc_sim_current_device()].mem_used + RESERVED_PER_DEVICE;
	pthread_mutex_unlock(&isc_sim_lock);
	if (free) {
		*free = used < isc_sim_cfg.device_memory ? isc_sim_cfg.device_memory - used : 0;
	}
	if (total) {
		*total = isc_sim_cfg.device_memory;
	}
	return isc_sim_leave(&c, cudaSuccess);
}
