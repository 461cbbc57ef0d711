/* SPDX-License-Identifier: MIT */
/*
 * Kernels: the registry (host function or cudaKernel_t handle -> name, modelled
 * duration, attributes) and the launch path every launch API shares. A kernel
 * takes the duration its workload registered with simgpu_kernel_register(), or
 * SIMGPU_KERNEL_DEFAULT_NS; the launch call itself busy-waits
 * SIMGPU_LAUNCH_COST_NS on the host, as real launches spend a few µs in the driver.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/simgpu/runtime/sim.h"

#define KERNEL_MAGIC 0x4b45524eu

struct slot {
	const void *key;
	struct CUkern_st *kernel;
};

static struct slot *table; /* open addressing; keys are host functions and handles */
static size_t table_cap;
static size_t table_used;
static uint64_t launch_seq;
static __thread uint64_t next_duration;

const char *isc_sim_intern(const char *s)
{
	const char *copy = strdup(s ? s : "");

	return copy ? copy : "";
}

static size_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

static struct slot *lookup_slot(const void *key)
{
	size_t i;

	if (!table_cap) {
		return NULL;
	}
	for (i = hash_ptr(key) & (table_cap - 1); table[i].key; i = (i + 1) & (table_cap - 1)) {
		if (table[i].key == key) {
			return &table[i];
		}
	}
	return &table[i];
}

static bool put(const void *key, struct CUkern_st *k);

static bool grow(void)
{
	struct slot *old = table;
	size_t old_cap = table_cap;
	size_t i;

	table_cap = old_cap ? old_cap * 2 : 256;
	table = calloc(table_cap, sizeof(*table));
	if (!table) {
		table = old;
		table_cap = old_cap;
		return false;
	}
	table_used = 0;
	for (i = 0; i < old_cap; i++) {
		if (old[i].key) {
			put(old[i].key, old[i].kernel);
		}
	}
	free(old);
	return true;
}

static bool put(const void *key, struct CUkern_st *k)
{
	struct slot *s;

	if ((table_used + 1) * 2 > table_cap && !grow()) {
		return false;
	}
	s = lookup_slot(key);
	if (!s->key) {
		table_used++;
	}
	s->key = key;
	s->kernel = k;
	return true;
}

/* Caller holds the lock. Handles map to themselves, so either form finds the kernel. */
static struct CUkern_st *find(const void *func_or_handle)
{
	struct slot *s = lookup_slot(func_or_handle);

	return s && s->key ? s->kernel : NULL;
}

static struct CUkern_st *create(const void *func, const char *name)
{
	struct CUkern_st *k = calloc(1, sizeof(*k));

	if (!k) {
		return NULL;
	}
	k->magic = KERNEL_MAGIC;
	k->func = func;
	k->name = isc_sim_intern(name);
	k->duration_ns = SIM_DURATION_DEFAULT; /* configuration may not be read yet */
	k->registers = 32;
	if (!put(func, k) || !put(k, k)) {
		free(k);
		return NULL;
	}
	return k;
}

/*
 * Creates the kernel of @p func named @p name, or by dladdr() when @p name is NULL.
 * dladdr() takes the loader lock: it runs before our lock is taken, since a
 * library constructor holding the loader lock may be registering kernels
 * (__cudaRegisterFunction) at that moment.
 */
struct CUkern_st *isc_sim_kernel_create(const void *func, const char *name)
{
	struct CUkern_st *k;
	char fallback[64];
	Dl_info info;

	if (!name && dladdr(func, &info) && info.dli_sname && info.dli_saddr == func) {
		name = info.dli_sname;
	} else if (!name) {
		snprintf(fallback, sizeof(fallback), "kernel_%p", func);
		name = fallback;
	}
	pthread_mutex_lock(&isc_sim_lock);
	k = find(func);
	if (!k) {
		k = create(func, name);
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return k;
}

/* Finds the kernel of @p func_or_handle, creating it (named by dladdr) when @p create. */
struct CUkern_st *isc_sim_kernel_get(const void *func_or_handle, bool create_it)
{
	struct CUkern_st *k;

	pthread_mutex_lock(&isc_sim_lock);
	k = find(func_or_handle);
	pthread_mutex_unlock(&isc_sim_lock);
	if (k || !create_it || !func_or_handle) {
		return k;
	}
	return isc_sim_kernel_create(func_or_handle, NULL);
}

uint64_t isc_sim_kernel_duration(const struct CUkern_st *k)
{
	return k->duration_ns == SIM_DURATION_DEFAULT ? isc_sim_cfg.kernel_default_ns
						      : k->duration_ns;
}

uint64_t isc_sim_take_next_duration(void)
{
	uint64_t d = next_duration;

	next_duration = 0;
	return d;
}

static cudaError_t check_config(dim3 grid, dim3 block, size_t smem)
{
	uint64_t threads = (uint64_t)block.x * block.y * block.z;

	if (!grid.x || !grid.y || !grid.z || !threads) {
		return cudaErrorInvalidConfiguration;
	}
	if (threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64 || grid.y > 65535 ||
	    grid.z > 65535 || grid.x > 2147483647u) {
		return cudaErrorInvalidConfiguration;
	}
	if (smem > 227u * 1024u) {
		return cudaErrorInvalidValue;
	}
	return cudaSuccess;
}

static void fill_kernel_op(struct simgpu_op *op, const struct isc_sim_call *c,
			   const struct CUkern_st *k, dim3 grid, dim3 block, size_t smem)
{
	op->type = SIMGPU_OP_KERNEL;
	op->correlation_id = c->api.correlation_id;
	op->name = k->name;
	op->peer_device = -1;
	op->thread_id = c->api.thread_id;
	op->async = 1;
	op->api_domain = c->api.domain;
	op->hidden = c->api.hidden;
	op->grid[0] = grid.x;
	op->grid[1] = grid.y;
	op->grid[2] = grid.z;
	op->block[0] = block.x;
	op->block[1] = block.y;
	op->block[2] = block.z;
	op->dynamic_smem = (uint32_t)smem;
	op->static_smem = k->static_smem;
	op->registers = k->registers;
}

cudaError_t isc_sim_launch(struct isc_sim_call *c, struct CUkern_st *k, dim3 grid, dim3 block,
			   size_t smem, cudaStream_t stream, bool ptsz)
{
	struct simgpu_op op = { 0 };
	cudaError_t err;
	struct CUstream_st *s;
	uint64_t duration;

	if (!k) {
		return cudaErrorInvalidDeviceFunction;
	}
	c->api.symbol = k->name;
	err = check_config(grid, block, smem);
	if (err != cudaSuccess) {
		return err;
	}
	isc_sim_busy_wait(isc_sim_cfg.launch_cost_ns);
	duration = isc_sim_take_next_duration();
	fill_kernel_op(&op, c, k, grid, block, smem);
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (!s) {
		pthread_mutex_unlock(&isc_sim_lock);
		return err;
	}
	if (!s->capture && isc_sim_stream_slot(s) > isc_sim_now()) {
		/* A full launch queue: the call returns once the slot's kernel has ended. */
		uint64_t free_at = isc_sim_stream_slot(s);

		pthread_mutex_unlock(&isc_sim_lock);
		isc_sim_wait_until(free_at, true);
		pthread_mutex_lock(&isc_sim_lock);
		s = isc_sim_stream_resolve(stream, ptsz, &err);
		if (!s) {
			pthread_mutex_unlock(&isc_sim_lock);
			return err;
		}
	}
	if (!duration) {
		duration = isc_sim_kernel_duration(k);
	}
	op.stream_id = s->id;
	op.device = s->device;
	op.enqueue_ns = isc_sim_now();
	if (s->capture) {
		struct simgpu_graph_node created;
		bool added = isc_sim_capture_add(s, &op, duration, &created);

		pthread_mutex_unlock(&isc_sim_lock);
		if (added) {
			isc_sim_notify_graph_node(&created);
		}
		return cudaSuccess;
	}
	op.launch_seq = ++launch_seq;
	op.end_ns = isc_sim_schedule(s, SIM_ENGINE_KERNEL,
				     op.enqueue_ns + isc_sim_cfg.launch_latency_ns, duration,
				     &op.start_ns);
	isc_sim_stream_slot_take(s, op.end_ns);
	isc_sim_truth_op(&op);
	pthread_mutex_unlock(&isc_sim_lock);
	isc_sim_notify_op(&op);
	return cudaSuccess;
}

/* Graph replays number their kernels too (CUPTI gridId). Caller holds the lock. */
uint64_t isc_sim_next_launch_seq(void)
{
	return ++launch_seq;
}

SIM_EXPORT int simgpu_kernel_register_ex(const void *func, const char *name, uint64_t duration_ns,
					 uint32_t registers_per_thread,
					 uint32_t static_shared_bytes)
{
	struct CUkern_st *k;
	const char *copy;

	if (!func || !name || !name[0]) {
		return -22;
	}
	k = isc_sim_kernel_get(func, false);
	if (!k) {
		k = isc_sim_kernel_create(func, name);
	}
	if (!k) {
		return -12;
	}
	pthread_mutex_lock(&isc_sim_lock);
	copy = strcmp(k->name, name) == 0 ? k->name : NULL;
	pthread_mutex_unlock(&isc_sim_lock);
	if (!copy) {
		copy = isc_sim_intern(name);
	}
	pthread_mutex_lock(&isc_sim_lock);
	k->name = copy; /* an old name stays valid: records may point at it */
	k->duration_ns = duration_ns;
	k->registers = registers_per_thread ? registers_per_thread : k->registers;
	k->static_smem = static_shared_bytes;
	k->user_registered = true;
	pthread_mutex_unlock(&isc_sim_lock);
	return 0;
}

SIM_EXPORT int simgpu_kernel_register(const void *func, const char *name, uint64_t duration_ns)
{
	return simgpu_kernel_register_ex(func, name, duration_ns, 0, 0);
}

SIM_EXPORT void simgpu_next_kernel_duration(uint64_t ns)
{
	next_duration = ns;
}
