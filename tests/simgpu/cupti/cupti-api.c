/* SPDX-License-Identifier: MIT */
/*
 * The simulated CUPTI's set-up, its link to the simulated runtime, the hooks the
 * runtime calls on every API call and operation, timestamps, version and result
 * strings. A CUPTI that finds no simulated runtime (the real libcudart is loaded,
 * or none) accepts every call and records nothing.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/simgpu/cupti/cupti-sim.h"

struct isc_cupti_state isc_cupti;

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

uint64_t isc_cupti_now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The offset from CLOCK_MONOTONIC to @p clock, from the narrowest of a few
 * bracketed samples. Without a timestamp callback CUPTI stamps records with
 * CLOCK_REALTIME on Linux, as the real one documents; with one, GPU-side
 * timestamps are converted into the callback's clock like this.
 */
static int64_t calibrate(uint64_t (*clock)(void))
{
	uint64_t best = UINT64_MAX;
	int64_t offset = 0;
	int i;

	for (i = 0; i < 5; i++) {
		uint64_t a = isc_cupti_now_mono();
		uint64_t c = clock();
		uint64_t b = isc_cupti_now_mono();

		if (b - a < best) {
			best = b - a;
			offset = (int64_t)c - (int64_t)(a + (b - a) / 2);
		}
	}
	return offset;
}

uint64_t isc_cupti_ts(uint64_t mono_ns)
{
	return (uint64_t)((int64_t)mono_ns + isc_cupti.ts_offset);
}

static void prepare_fork(void)
{
	pthread_mutex_lock(&isc_cupti.lock);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&isc_cupti.lock);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *text = getenv(name);
	char *end = NULL;
	unsigned long long v;

	if (!text || !text[0]) {
		return def;
	}
	v = strtoull(text, &end, 10);
	if (*end || text[0] == '-') {
		fprintf(stderr, "simgpu: %s=%s is not valid; using %llu\n", name, text,
			(unsigned long long)def);
		return def;
	}
	return v;
}

static void setup(void)
{
	pthread_mutexattr_t attr;
	const char *holder = getenv("SIMGPU_CUPTI_HOLDER");

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&isc_cupti.lock, &attr);
	pthread_mutexattr_destroy(&attr);
	isc_cupti.ts_offset = calibrate(now_realtime);
	isc_cupti.buffer_limit = env_u64("SIMGPU_CUPTI_BUFFER_LIMIT", 0);
	isc_cupti.flush_period_ms = (uint32_t)env_u64("SIMGPU_CUPTI_FLUSH_MS", 100);
	isc_cupti.subscribe_ms = (uint32_t)env_u64("SIMGPU_CUPTI_SUBSCRIBE_MS", 0);
	isc_cupti.refuse_resource = env_u64("SIMGPU_CUPTI_NO_RESOURCE", 0) != 0;
	if (holder && holder[0]) {
		snprintf(isc_cupti.holder, sizeof(isc_cupti.holder), "%s", holder);
	}
	pthread_atfork(prepare_fork, after_fork, after_fork);
}

void isc_cupti_setup(void)
{
	pthread_once(&setup_once, setup);
}

bool isc_cupti_enabled(CUpti_ActivityKind kind)
{
	return (unsigned)kind < ISC_CUPTI_KINDS &&
	       atomic_load_explicit(&isc_cupti.enabled[kind], memory_order_relaxed);
}

/* ---- the hooks the runtime calls (see sim-tool.h) ---- */

/*
 * The callback's clock at mono_ns. The pair (our clock, the callback's) is read with our
 * clock on both sides and the tightest of a few tries kept: a preemption between two
 * reads would otherwise shift the result by its whole length (milliseconds on a loaded
 * machine), as a calibration of two clocks would be.
 */
static uint64_t tool_time_at(CUpti_TimestampCallbackFunc cb, uint64_t mono_ns)
{
	uint64_t best_gap = UINT64_MAX, tool = 0, at = 0;
	for (int i = 0; i < 16 && best_gap > 2000; i++) {
		uint64_t a = isc_cupti_now_mono();
		uint64_t t = cb();
		uint64_t b = isc_cupti_now_mono();
		if (b - a < best_gap) {
			best_gap = b - a;
			tool = t;
			at = a + (b - a) / 2;
		}
	}
	return tool - (at - mono_ns);
}

/*
 * Host-side timestamps come from the callback when one is registered. The call
 * began a little earlier (the first one of a process includes initialisation),
 * so the reading is moved back by the time elapsed since.
 */
static void hook_api_enter(struct simgpu_api *call)
{
	CUpti_TimestampCallbackFunc cb = isc_cupti.ts_cb;

	call->tool_start = cb ? tool_time_at(cb, call->start_ns) : isc_cupti_ts(call->start_ns);
	isc_cupti_callback(call, CUPTI_API_ENTER);
}

static void hook_api_exit(struct simgpu_api *call)
{
	CUpti_TimestampCallbackFunc cb = isc_cupti.ts_cb;

	call->tool_end = cb ? cb() : isc_cupti_ts(call->end_ns);
	isc_cupti_callback(call, CUPTI_API_EXIT);
	isc_cupti_record_api(call);
}

static void hook_runtime_ready(void)
{
	isc_cupti_record_devices();
}

static const struct simgpu_tool tool_ops = {
	.abi = SIMGPU_TOOL_ABI,
	.api_enter = hook_api_enter,
	.api_exit = hook_api_exit,
	.op = isc_cupti_record_op,
	.sync = isc_cupti_record_sync,
	.runtime_ready = hook_runtime_ready,
	.graph_node = isc_cupti_graph_callback,
};

/* Attaches to the simulated runtime if it is loaded; cheap once attached. */
bool isc_cupti_connect(void)
{
	simgpu_tool_attach_fn attach;
	const struct simgpu_runtime *rt;
	void *lib;

	isc_cupti_setup();
	if (isc_cupti.rt) {
		return true;
	}
	lib = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD);
	if (!lib) {
		return false;
	}
	attach = (simgpu_tool_attach_fn)dlsym(lib, SIMGPU_TOOL_ATTACH);
	dlclose(lib);
	rt = attach ? attach(&tool_ops) : NULL;
	if (!rt) {
		return false;
	}
	pthread_mutex_lock(&isc_cupti.lock);
	isc_cupti.rt = rt;
	if (isc_cupti.kernels_serialised) {
		rt->serialize_kernels(true);
	}
	pthread_mutex_unlock(&isc_cupti.lock);
	isc_cupti_record_devices();
	return true;
}

/* Called by the simulated runtime once it is initialised (see init.c there). */
CUPTI_EXPORT void simgpu_cupti_connect(void);
CUPTI_EXPORT void simgpu_cupti_connect(void)
{
	isc_cupti_connect();
}

/* ---- version, results, timestamps ---- */

CUPTI_EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

static const char *const result_names[] = {
	"CUPTI_SUCCESS",
	"CUPTI_ERROR_INVALID_PARAMETER",
	"CUPTI_ERROR_INVALID_DEVICE",
	"CUPTI_ERROR_INVALID_CONTEXT",
	"CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID",
	"CUPTI_ERROR_INVALID_EVENT_ID",
	"CUPTI_ERROR_INVALID_EVENT_NAME",
	"CUPTI_ERROR_INVALID_OPERATION",
	"CUPTI_ERROR_OUT_OF_MEMORY",
	"CUPTI_ERROR_HARDWARE",
	"CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT",
	"CUPTI_ERROR_API_NOT_IMPLEMENTED",
	"CUPTI_ERROR_MAX_LIMIT_REACHED",
	"CUPTI_ERROR_NOT_READY",
	"CUPTI_ERROR_NOT_COMPATIBLE",
	"CUPTI_ERROR_NOT_INITIALIZED",
	"CUPTI_ERROR_INVALID_METRIC_ID",
	"CUPTI_ERROR_INVALID_METRIC_NAME",
	"CUPTI_ERROR_QUEUE_EMPTY",
	"CUPTI_ERROR_INVALID_HANDLE",
	"CUPTI_ERROR_INVALID_STREAM",
	"CUPTI_ERROR_INVALID_KIND",
	"CUPTI_ERROR_INVALID_EVENT_VALUE",
	"CUPTI_ERROR_DISABLED",
	"CUPTI_ERROR_INVALID_MODULE",
	"CUPTI_ERROR_INVALID_METRIC_VALUE",
	"CUPTI_ERROR_HARDWARE_BUSY",
	"CUPTI_ERROR_NOT_SUPPORTED",
	"CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED",
	"CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE",
	"CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES",
	"CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS",
	"CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED",
	"CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED",
	"CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE",
	"CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
	"CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED",
	"CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE",
	"CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED",
	"CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
	"CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES",
	"CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED",
	"CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED",
	"CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED",
	"CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED",
	"CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED",
	"CUPTI_ERROR_INVALID_CHIP_NAME",
};

CUPTI_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	if (!str) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	if ((unsigned)result < sizeof(result_names) / sizeof(result_names[0])) {
		*str = result_names[result];
	} else if (result == CUPTI_ERROR_UNKNOWN) {
		*str = "CUPTI_ERROR_UNKNOWN";
	} else {
		*str = NULL;
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	CUpti_TimestampCallbackFunc cb;

	if (!timestamp) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	isc_cupti_setup();
	cb = isc_cupti.ts_cb;
	*timestamp = cb ? cb() : now_realtime();
	return CUPTI_SUCCESS;
}

static CUpti_TimestampCallbackFunc calibrating;

static uint64_t call_calibrating(void)
{
	return calibrating();
}

/*
 * GPU-side timestamps are converted into the callback's clock with an offset
 * taken now; host-side (API) timestamps come from the callback itself.
 */
CUPTI_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	int64_t offset;

	if (!f) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	isc_cupti_setup();
	pthread_mutex_lock(&isc_cupti.lock);
	calibrating = f;
	offset = calibrate(call_calibrating);
	isc_cupti.ts_offset = offset;
	isc_cupti.ts_cb = f;
	pthread_mutex_unlock(&isc_cupti.lock);
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT &&
	    type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
		return CUPTI_ERROR_NOT_SUPPORTED;
	}
	isc_cupti_setup();
	isc_cupti.tid_type = type;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
	if (!type) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	*type = isc_cupti.tid_type;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
	if (!deviceId) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	*deviceId = 0;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
	if (!contextId) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	*contextId = 1;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiGetLastError(void)
{
	return CUPTI_SUCCESS;
}

/* ---- graph ids (what GPU records carry in graphNodeId and graphId) ---- */

CUPTI_EXPORT CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *nodeId)
{
	const struct simgpu_runtime *rt = isc_cupti.rt;

	if (!node || !nodeId) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	if (!rt) {
		return CUPTI_ERROR_NOT_INITIALIZED;
	}
	return rt->graph_node_id(node, nodeId) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUPTI_EXPORT CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *pId)
{
	const struct simgpu_runtime *rt = isc_cupti.rt;

	if (!graph || !pId) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	if (!rt) {
		return CUPTI_ERROR_NOT_INITIALIZED;
	}
	return rt->graph_id(graph, pId) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}
