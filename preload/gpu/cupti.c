/* SPDX-License-Identifier: MIT */
/*
 * CUPTI: finding and loading libcupti, the injection entry point, subscribing,
 * enabling the activity kinds, flushing, and saying in the trace how it went.
 *
 * The order of start() follows what broke real tools: subscribe first (one CUPTI
 * subscriber per process up to CUDA 13.2: nsys, ncu and torch.profiler take it, and
 * we must then keep our hands off activity buffers that are theirs), system thread
 * ids, our clock before any kind is enabled, buffer callbacks, the kinds
 * (CONCURRENT_KERNEL, never KERNEL, which serialises the GPU), and an exit handler
 * registered now, so it runs before the runtime and CUPTI tear down.
 */
#include <cupti.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "preload/gpu/cupti-internal.h"
#include "preload/gpu/gpu-timeline.h"
#include "preload/hooks/cuda/cuda-family.h"
#include "preload/core/capture.h"
#include "preload/core/guard.h"
#include "preload/core/export.h"
#include "common/log.h"

_Static_assert(ISC_CUPTI_EXT_KIND == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2,
	       "gpu-timeline.h's kind");

struct isc_cupti_hot isc_cupti_hot;
struct isc_cupti_api isc_cupti;

enum status { ST_NOT_USED, ST_ACTIVE, ST_DISABLED, ST_UNAVAILABLE, ST_REFUSED, ST_MISMATCH };

static const char *const status_names[] = {
	"not_used", "active", "disabled", "unavailable", "refused", "version_mismatch",
};

static struct {
	_Atomic int started; /* 0 no, 1 starting, 2 done */
	_Atomic int starter; /* the thread that is starting it */
	enum status status;
	char reason[256];
	char library[PATH_MAX];
	char holder[128];
	char via[64];
	uint32_t version;
	bool ts_callback; /* our clock through the timestamp callback */
	int pid;	  /* the process that started CUPTI (not a fork child) */
	_Atomic bool exit_flushed;
	/* calibration: our clock = CUPTI's + offset, interpolated between two pairs */
	uint64_t c0, o0, c1, o1;
} st;

static void *lib;

/* ---- clock ---- */

static uint64_t CUPTIAPI timestamp_callback(void)
{
	return isc_now();
}

/* One (CUPTI, ours) pair, bracketed by two readings of our clock. */
static void sample_pair(uint64_t *cupti_ts, uint64_t *offset)
{
	uint64_t best = UINT64_MAX, c = 0, mid = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t a = isc_now(), t = 0;
		isc_cupti.get_timestamp(&t);
		uint64_t b = isc_now();
		if (b - a < best) {
			best = b - a;
			c = t;
			mid = a + (b - a) / 2;
		}
	}
	*cupti_ts = c;
	*offset = mid - c;
}

uint64_t isc_cupti_time(uint64_t t)
{
	if (st.ts_callback || t == 0) {
		return t;
	}
	if (st.c1 <= st.c0) {
		return t + st.o0;
	}
	double slope = ((double)st.o1 - (double)st.o0) / (double)(st.c1 - st.c0);
	return t + st.o0 + (uint64_t)(int64_t)(slope * (double)((int64_t)t - (int64_t)st.c0));
}

/* Called at every flush: a second pair keeps the calibration honest over long runs. */
static void recalibrate(void)
{
	if (!st.ts_callback && isc_cupti.get_timestamp) {
		sample_pair(&st.c1, &st.o1);
	}
}

/* ---- finding libcupti ---- */

struct runtime_dir {
	char dir[PATH_MAX];
	int major;
};

static int find_runtime(struct dl_phdr_info *info, size_t size, void *data)
{
	struct runtime_dir *r = data;
	(void)size;
	const char *name = info->dlpi_name;
	const char *base = name ? strrchr(name, '/') : NULL;
	if (base == NULL || strncmp(base + 1, "libcudart.so", 12) != 0) {
		return 0;
	}
	size_t n = (size_t)(base - name);
	if (n >= sizeof(r->dir)) {
		return 0;
	}
	memcpy(r->dir, name, n);
	r->dir[n] = '\0';
	if (base[13] == '.') {
		r->major = atoi(base + 14); /* libcudart.so.13 */
	}
	return 1;
}

static bool try_load(const char *path)
{
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib) {
		struct link_map *m = NULL;
		if (dlinfo(lib, RTLD_DI_LINKMAP, &m) == 0 && m && m->l_name && m->l_name[0]) {
			path = m->l_name;
		}
		isc_fmt(st.library, sizeof(st.library), "%s", path);
	}
	return lib != NULL;
}

/* Next to the runtime, in the toolkit's extras, in a pip wheel's sibling package,
 * under $CUDA_HOME, then the loader's search path. */
static bool load_library(void)
{
	struct runtime_dir rt = { "", CUPTI_API_VERSION / 10000 };
	char path[PATH_MAX];
	if (isc_config.cupti_lib[0]) {
		return try_load(isc_config.cupti_lib);
	}
	dl_iterate_phdr(find_runtime, &rt);
	const char *home = getenv("CUDA_HOME");
	const char *const rel[] = { "%s/libcupti.so.%d", "%s/../extras/CUPTI/lib64/libcupti.so.%d",
				    "%s/../../cuda_cupti/lib/libcupti.so.%d" };
	for (unsigned i = 0; rt.dir[0] && i < sizeof(rel) / sizeof(rel[0]); i++) {
		isc_fmt(path, sizeof(path), rel[i], rt.dir, rt.major);
		if (access(path, R_OK) == 0 && try_load(path)) {
			return true;
		}
	}
	const char *const abs[] = { "%s/extras/CUPTI/lib64/libcupti.so.%d",
				    "%s/lib64/libcupti.so.%d" };
	for (unsigned i = 0; home && home[0] && i < 2; i++) {
		isc_fmt(path, sizeof(path), abs[i], home, rt.major);
		if (access(path, R_OK) == 0 && try_load(path)) {
			return true;
		}
	}
	isc_fmt(path, sizeof(path), "libcupti.so.%d", rt.major);
	return try_load(path) || try_load("libcupti.so");
}

#define SYM(field, name) (*(void **)&isc_cupti.field = dlsym(lib, name))

static bool bind(void)
{
	SYM(get_version, "cuptiGetVersion");
	SYM(subscribe_v2, "cuptiSubscribe_v2");
	SYM(subscribe, "cuptiSubscribe");
	SYM(set_thread_id_type, "cuptiSetThreadIdType");
	SYM(register_timestamp, "cuptiActivityRegisterTimestampCallback");
	SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
	SYM(enable, "cuptiActivityEnable");
	SYM(enable_runtime_api, "cuptiActivityEnableRuntimeApi");
	SYM(enable_driver_api, "cuptiActivityEnableDriverApi");
	SYM(flush_all, "cuptiActivityFlushAll");
	SYM(get_next_record, "cuptiActivityGetNextRecord");
	SYM(get_num_dropped, "cuptiActivityGetNumDroppedRecords");
	SYM(push, "cuptiActivityPushExternalCorrelationId");
	SYM(pop, "cuptiActivityPopExternalCorrelationId");
	SYM(get_timestamp, "cuptiGetTimestamp");
	SYM(get_callback_name, "cuptiGetCallbackName");
	SYM(get_result_string, "cuptiGetResultString");
	SYM(enable_callback, "cuptiEnableCallback");
	SYM(graph_node_id, "cuptiGetGraphNodeId");
	SYM(graph_id, "cuptiGetGraphId");
	return isc_cupti.get_version && (isc_cupti.subscribe_v2 || isc_cupti.subscribe) &&
	       isc_cupti.register_callbacks && isc_cupti.enable && isc_cupti.flush_all &&
	       isc_cupti.get_next_record && isc_cupti.push && isc_cupti.pop;
}

/* ---- starting ---- */

static const char *result_string(CUptiResult r)
{
	const char *s = NULL;
	if (isc_cupti.get_result_string == NULL || isc_cupti.get_result_string(r, &s) != 0 || !s) {
		return "unknown CUPTI error";
	}
	return s;
}

static void fail(enum status s, const char *what, CUptiResult r)
{
	st.status = s;
	isc_fmt(st.reason, sizeof(st.reason), "%s: %s (%d)", what, result_string(r), (int)r);
}

static bool subscribe(CUpti_SubscriberHandle *sub)
{
	CUptiResult r;
	if (isc_cupti.subscribe_v2) {
		CUpti_SubscriberParams p = { CUpti_SubscriberParams_STRUCT_SIZE, "InferScope",
					     st.holder, sizeof(st.holder) };
		r = isc_cupti.subscribe_v2(sub, isc_cupti_callback, NULL, &p);
	} else {
		r = isc_cupti.subscribe(sub, isc_cupti_callback, NULL);
	}
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		st.status = ST_REFUSED;
		if (st.holder[0] == '\0') {
			isc_fmt(st.holder, sizeof(st.holder), "another CUPTI client (unnamed)");
		}
		isc_fmt(st.reason, sizeof(st.reason),
			"CUPTI is held by %s (one subscriber per process): no GPU timeline, "
			"host-side tracing goes on",
			st.holder);
		return false;
	}
	if (r != CUPTI_SUCCESS) {
		st.holder[0] = '\0';
		fail(ST_UNAVAILABLE, "cuptiSubscribe", r);
		return false;
	}
	return true;
}

static void enable_api_kind(CUpti_ActivityKind kind, CUpti_CallbackDomain domain, uint32_t n,
			    CUptiResult (*one)(CUpti_CallbackId, uint8_t))
{
	bool fine = one != NULL && isc_cupti.get_callback_name != NULL;
	for (uint32_t cbid = 1; fine && cbid < n; cbid++) {
		bool work = false;
		isc_cupti_api_name(domain, cbid, &work);
		if (work && one(cbid, 1) != CUPTI_SUCCESS) {
			fine = false;
		}
	}
	if (!fine) {
		isc_cupti.enable(kind); /* all of them: the decoder filters */
	}
}

static bool enable_kinds(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_DEVICE,
		CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2,
		CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		CUPTI_ACTIVITY_KIND_OVERHEAD,
	};
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		CUptiResult r = isc_cupti.enable(kinds[i]);
		/* DEVICE and OVERHEAD are nice to have; the timeline kinds are not */
		if (r != CUPTI_SUCCESS && kinds[i] != CUPTI_ACTIVITY_KIND_DEVICE &&
		    kinds[i] != CUPTI_ACTIVITY_KIND_OVERHEAD) {
			fail(ST_UNAVAILABLE, "cuptiActivityEnable", r);
			return false;
		}
	}
	enable_api_kind(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_CB_DOMAIN_RUNTIME_API,
			CUPTI_RUNTIME_TRACE_CBID_SIZE, isc_cupti.enable_runtime_api);
	enable_api_kind(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_CB_DOMAIN_DRIVER_API,
			CUPTI_DRIVER_TRACE_CBID_SIZE, isc_cupti.enable_driver_api);
	return true;
}

static void flush_at_exit(void)
{
	if (atomic_load(&isc_cupti_hot.active) && syscall(SYS_getpid) == st.pid &&
	    !atomic_exchange(&st.exit_flushed, true)) {
		isc_tls_guard++;
		isc_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		recalibrate();
		isc_tls_guard--;
	}
}

static void start_locked(void)
{
	CUptiResult r;
	if (!load_library()) {
		st.status = ST_UNAVAILABLE;
		const char *e = dlerror();
		isc_fmt(st.reason, sizeof(st.reason), "libcupti not loaded: %s",
			e ? e : "not found next to the CUDA runtime nor on the search path");
		return;
	}
	if (!bind()) {
		st.status = ST_UNAVAILABLE;
		isc_fmt(st.reason, sizeof(st.reason), "%s lacks the activity API", st.library);
		return;
	}
	isc_cupti.get_version(&st.version);
	if (st.version / 10000 != CUPTI_API_VERSION / 10000) {
		st.status = ST_MISMATCH;
		isc_fmt(st.reason, sizeof(st.reason),
			"CUPTI API version %u; this build decodes the records of CUPTI %d.x",
			st.version, CUPTI_API_VERSION / 10000);
		return;
	}
	if (isc_cupti_records_init() < 0) {
		st.status = ST_UNAVAILABLE;
		isc_fmt(st.reason, sizeof(st.reason), "no memory for the correlation tables");
		return;
	}
	CUpti_SubscriberHandle sub;
	if (!subscribe(&sub)) {
		return;
	}
	if (isc_cupti.set_thread_id_type) {
		isc_cupti.set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	}
	st.ts_callback = isc_config.cupti_clock_callback && isc_cupti.register_timestamp &&
			 isc_cupti.register_timestamp(timestamp_callback) == CUPTI_SUCCESS;
	if (!st.ts_callback && isc_cupti.get_timestamp) {
		sample_pair(&st.c0, &st.o0);
	}
	r = isc_cupti.register_callbacks(isc_cupti_buffer_requested, isc_cupti_buffer_completed);
	if (r != CUPTI_SUCCESS) {
		fail(ST_UNAVAILABLE, "cuptiActivityRegisterCallbacks", r);
		return;
	}
	if (!enable_kinds()) {
		return;
	}
	isc_cupti_graphs_start(sub);
	st.pid = (int)syscall(SYS_getpid);
	atexit(flush_at_exit);
	isc_cupti_hot.push = (int (*)(int, uint64_t))(void *)isc_cupti.push;
	isc_cupti_hot.pop = (int (*)(int, uint64_t *))(void *)isc_cupti.pop;
	st.status = ST_ACTIVE;
	atomic_store_explicit(&isc_cupti_hot.active, true, memory_order_release);
	isc_info("CUPTI %u active (%s), started by the %s", st.version, st.library, st.via);
}

/* Another thread is starting CUPTI: its activity kinds are not enabled yet, and a call
 * made now would leave no GPU record. Wait, bounded: a start that hangs (a lock inside
 * the driver or the loader that this thread holds) costs a stall, never a deadlock. */
static void wait_for_start(void)
{
	uint64_t deadline = isc_kernel_now() + 5 * 1000000000ull;
	while (atomic_load_explicit(&st.started, memory_order_acquire) == 1) {
		if (isc_kernel_now() > deadline) {
			isc_error("CUPTI's start on thread %d takes over 5 s: going on without it",
				  atomic_load(&st.starter));
			return;
		}
		isc_kernel_sleep(100000);
	}
}

/* Once per process. A caller on another thread returns when the start has finished,
 * so that its next CUDA call is recorded; the starting thread itself (the driver calls
 * InitializeInjection inside the cuInit that CUPTI's start makes) returns at once. */
void isc_cupti_start(const char *via)
{
	int expected = 0;
	if (!isc_core_ready()) {
		return;
	}
	if (!atomic_compare_exchange_strong(&st.started, &expected, 1)) {
		if (expected == 1 && atomic_load(&st.starter) != (int)syscall(SYS_gettid)) {
			isc_tls_guard++;
			wait_for_start();
			isc_tls_guard--;
		}
		return;
	}
	atomic_store(&st.starter, (int)syscall(SYS_gettid));
	isc_tls_guard++;
	isc_fmt(st.via, sizeof(st.via), "%s", via);
	if (!isc_config.cupti) {
		st.status = ST_DISABLED;
		isc_fmt(st.reason, sizeof(st.reason), "INFERSCOPE_CUPTI=0");
	} else {
		start_locked();
	}
	if (st.status != ST_ACTIVE) {
		isc_info("no GPU timeline: %s", st.reason);
	}
	atomic_store(&st.started, 2);
	isc_tls_guard--;
}

void isc_cupti_after_fork(void)
{
	/* CUDA and CUPTI do not survive fork(): the child's calls are forwarded, and its
	 * trace says why it has no GPU timeline. */
	if (atomic_load(&st.started) == 0) {
		return;
	}
	atomic_store(&isc_cupti_hot.active, false);
	st.status = ST_UNAVAILABLE;
	isc_fmt(st.reason, sizeof(st.reason), "a fork() child: CUPTI belongs to the parent");
}

/* The driver calls this inside cuInit when CUDA_INJECTION64_PATH names us. */
ISC_EXPORT int InitializeInjection(void)
{
	isc_cupti_start("driver's injection");
	return 1;
}

const char *isc_cupti_status(void)
{
	return status_names[st.status];
}

/* ---- flush and trace ---- */

/* Every flush (exit, _exit, exec, signal, snapshot): deliver what CUPTI holds. After
 * the exit handler ran, CUPTI may already be finalised: leave it alone then. */
void isc_cupti_flush(void)
{
	if (!atomic_load(&isc_cupti_hot.active) || syscall(SYS_getpid) != st.pid) {
		return;
	}
	if (!atomic_load(&st.exit_flushed)) {
		isc_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		recalibrate();
	}
	isc_cupti_records_drain();
}

/* While the process runs on (the flight recorder's tick): CUPTI's buffers whose records
 * are all complete, however full, and nothing more. A forced flush would also hand
 * over the activities still in flight, with their timestamps zeroed and never again
 * delivered: a kernel that ran with no time. */
void isc_cupti_flush_completed(void)
{
	if (!atomic_load(&isc_cupti_hot.active) || syscall(SYS_getpid) != st.pid ||
	    atomic_load(&st.exit_flushed)) {
		return;
	}
	isc_cupti.flush_all(0);
	isc_cupti_records_drain();
}

void isc_cupti_report(struct isc_cupti_report *r)
{
	struct isc_cupti_stats s = { 0 };
	r->status = status_names[st.status];
	r->active = st.status == ST_ACTIVE;
	r->refused = st.status == ST_REFUSED;
	r->reason = st.status == ST_NOT_USED ? "no intercepted CUDA call, and the driver never "
					       "loaded the injection"
		    : r->active		     ? NULL
					     : st.reason;
	r->library = st.library;
	r->holder = st.holder;
	r->started_by = st.via;
	r->version = st.version;
	r->ts_callback = st.ts_callback;
	if (r->active) {
		isc_cupti_stats(&s);
	}
	/* a record handed over in flight without timestamps is lost all the same */
	r->dropped = s.dropped + s.incomplete;
	r->buffers = s.buffers;
	r->buffers_refused = s.buffers_refused;
	r->records = s.records;
	r->unresolved = s.unresolved;
	r->overhead_ns = s.overhead_ns;
	isc_cupti_graphs_report(r);
}
