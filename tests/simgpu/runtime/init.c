/* SPDX-License-Identifier: MIT */
/*
 * Initialisation (what the driver's cuInit does for the real runtime), the
 * CUDA_INJECTION64_PATH protocol, the link to the simulated CUPTI, and the frame
 * every API function runs in: correlation id, thread id, last error, ground truth.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/simgpu/runtime/sim.h"

pthread_mutex_t isc_sim_lock = PTHREAD_MUTEX_INITIALIZER;
const struct simgpu_tool *_Atomic isc_sim_tool;

enum {
	INIT_NONE = 0,
	INIT_RUNNING,
	INIT_DONE,
};

static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t init_lock; /* recursive: see isc_sim_init() */
static _Atomic int init_state;
static cudaError_t init_result;
static _Atomic int injection_calls;
static _Atomic uint32_t next_correlation = 1;

static __thread uint32_t cached_tid;
static __thread cudaError_t last_error;

static void prepare_fork(void)
{
	pthread_mutex_lock(&isc_sim_lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&isc_sim_lock);
}

/* The child's only thread is the one that forked: its cached tid is the parent's. */
static void after_fork_child(void)
{
	pthread_mutex_unlock(&isc_sim_lock);
	cached_tid = 0;
}

static void load_config(void)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&init_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	isc_sim_config_load();
	pthread_atfork(prepare_fork, after_fork_parent, after_fork_child);
}

uint32_t isc_sim_tid(void)
{
	if (cached_tid == 0) {
		cached_tid = (uint32_t)syscall(SYS_gettid);
	}
	return cached_tid;
}

void isc_sim_injection(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	int (*init_fn)(void);
	void *lib;

	if (!path || !path[0]) {
		return;
	}
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "simgpu: CUDA_INJECTION64_PATH: %s\n", dlerror());
		return;
	}
	init_fn = (int (*)(void))dlsym(lib, "InitializeInjection");
	if (!init_fn) {
		fprintf(stderr, "simgpu: %s has no InitializeInjection\n", path);
		return;
	}
	atomic_fetch_add(&injection_calls, 1);
	isc_sim_debug("calling InitializeInjection of %s", path);
	init_fn();
}

/* A simulated CUPTI already loaded (by the injection library, say) attaches now. */
static void connect_cupti(void)
{
	void *lib = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
	simgpu_cupti_connect_fn connect;

	if (!lib) {
		return;
	}
	connect = (simgpu_cupti_connect_fn)dlsym(lib, SIMGPU_CUPTI_CONNECT);
	if (connect) {
		connect();
	}
	dlclose(lib);
}

/*
 * Runs once per process, at the first call that needs the driver. The lock is
 * recursive because InitializeInjection may call CUDA (or CUPTI, which calls
 * back here) on this thread: such calls proceed, other threads wait.
 */
cudaError_t isc_sim_init(void)
{
	const struct simgpu_tool *tool;

	if (atomic_load_explicit(&init_state, memory_order_acquire) == INIT_DONE) {
		return init_result;
	}
	pthread_once(&config_once, load_config);
	pthread_mutex_lock(&init_lock);
	if (atomic_load(&init_state) != INIT_NONE) {
		cudaError_t err = atomic_load(&init_state) == INIT_DONE ? init_result : cudaSuccess;

		pthread_mutex_unlock(&init_lock);
		return err;
	}
	atomic_store(&init_state, INIT_RUNNING);
	init_result = isc_sim_cfg.no_device ? cudaErrorNoDevice : cudaSuccess;
	isc_sim_devices_init();
	isc_sim_truth_init();
	isc_sim_injection();
	connect_cupti();
	atomic_store_explicit(&init_state, INIT_DONE, memory_order_release);
	pthread_mutex_unlock(&init_lock);
	tool = atomic_load_explicit(&isc_sim_tool, memory_order_acquire);
	if (tool && init_result == cudaSuccess) {
		tool->runtime_ready();
	}
	return init_result;
}

bool isc_sim_initialised(void)
{
	return atomic_load_explicit(&init_state, memory_order_acquire) == INIT_DONE &&
	       init_result == cudaSuccess;
}

void isc_sim_set_last_error(cudaError_t err)
{
	last_error = err;
}

cudaError_t isc_sim_get_last_error(bool reset)
{
	cudaError_t err = last_error;

	if (reset) {
		last_error = cudaSuccess;
	}
	return err;
}

cudaError_t isc_sim_enter(struct isc_sim_call *c, uint32_t cbid, const char *name, unsigned flags)
{
	const struct simgpu_tool *tool;
	cudaError_t err = cudaSuccess;

	memset(c, 0, sizeof(*c));
	c->api.cbid = cbid;
	c->api.domain = flags & SIM_CALL_DRIVER ? SIMGPU_DOMAIN_DRIVER : SIMGPU_DOMAIN_RUNTIME;
	c->api.hidden = (flags & SIM_CALL_HIDDEN) != 0;
	c->api.name = name;
	c->api.start_ns = isc_sim_now();
	if (flags & SIM_CALL_NO_INIT) {
		pthread_once(&config_once, load_config);
	} else {
		err = isc_sim_init();
	}
	c->api.correlation_id =
		atomic_fetch_add_explicit(&next_correlation, 1, memory_order_relaxed);
	c->api.thread_id = isc_sim_tid();
	c->api.pthread_id = (uint64_t)pthread_self();
	tool = atomic_load_explicit(&isc_sim_tool, memory_order_acquire);
	if (tool) {
		tool->api_enter(&c->api);
	}
	return err;
}

cudaError_t isc_sim_leave(struct isc_sim_call *c, cudaError_t err)
{
	const struct simgpu_tool *tool;

	c->api.result = err;
	c->api.end_ns = isc_sim_now();
	if (err != cudaSuccess && err != cudaErrorNotReady && !c->quiet) {
		last_error = err;
	}
	isc_sim_truth_api(c);
	tool = atomic_load_explicit(&isc_sim_tool, memory_order_acquire);
	if (tool) {
		tool->api_exit(&c->api);
	}
	return err;
}

/* The host waits inside call @p c until the device reaches @p until. */
void isc_sim_block(struct isc_sim_call *c, uint64_t until, bool spin)
{
	uint64_t now = isc_sim_now();

	if (until <= now) {
		return;
	}
	if (c->wait_to == 0) {
		c->wait_from = now;
	}
	isc_sim_wait_until(until, spin);
	c->wait_to = isc_sim_now();
}

void isc_sim_notify_op(const struct simgpu_op *op)
{
	const struct simgpu_tool *tool = atomic_load_explicit(&isc_sim_tool, memory_order_acquire);

	if (tool) {
		tool->op(op);
	}
}

void isc_sim_notify_sync(const struct isc_sim_call *c, uint32_t type, uint32_t stream_id,
			 uint32_t event_id, int device)
{
	const struct simgpu_tool *tool = atomic_load_explicit(&isc_sim_tool, memory_order_acquire);
	struct simgpu_sync sync = {
		.type = type,
		.correlation_id = c->api.correlation_id,
		.stream_id = stream_id,
		.event_id = event_id,
		.device = device,
		.start_ns = c->api.start_ns,
		.end_ns = isc_sim_now(),
	};

	if (tool) {
		tool->sync(&sync);
	}
}

/* ---- the runtime's side of the private CUPTI interface ---- */

static int rt_device_count(void)
{
	return isc_sim_initialised() ? isc_sim_cfg.device_count : 0;
}

static void rt_serialize_kernels(bool on)
{
	pthread_mutex_lock(&isc_sim_lock);
	isc_sim_serialize_kernels = on;
	pthread_mutex_unlock(&isc_sim_lock);
}

static const struct simgpu_runtime runtime_ops = {
	.abi = SIMGPU_TOOL_ABI,
	.initialised = isc_sim_initialised,
	.device_count = rt_device_count,
	.device_props = isc_sim_fill_props,
	.now = isc_sim_now,
	.serialize_kernels = rt_serialize_kernels,
	.graph_node_id = isc_sim_graph_node_id,
	.graph_id = isc_sim_graph_id,
};

SIM_EXPORT const struct simgpu_runtime *simgpu_tool_attach(const struct simgpu_tool *tool)
{
	if (tool && tool->abi != SIMGPU_TOOL_ABI) {
		return NULL;
	}
	atomic_store_explicit(&isc_sim_tool, tool, memory_order_release);
	return &runtime_ops;
}

SIM_EXPORT int simgpu_injection_count(void)
{
	return atomic_load(&injection_calls);
}
