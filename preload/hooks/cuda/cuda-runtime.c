/* SPDX-License-Identifier: MIT */
/*
 * The CUDA runtime family: finding the real functions, starting lazily on the first
 * call, the per-thread aggregates and the trace's `cuda` metadata.
 *
 * Nothing CUDA happens before the application's first CUDA call: the constructor
 * only sets the injection variables. The first intercepted call resolves its real
 * function and starts CUPTI (gpu-timeline.h) before the call goes on, so that even the
 * first call is correlated with its GPU work. The runtime and driver versions are asked
 * for once that call has returned (the first record): asking before it would start the
 * runtime before the application does, and whatever the runtime's start leaves behind
 * (errno, for one) would then differ from a run without us.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "preload/hooks/cuda/cuda-family.h"
#include "preload/hooks/cuda/cuda-hook.h"
#include "preload/gpu/gpu-devices.h"
#include "preload/core/intern.h"
#include "common/log.h"

#define ISC_CUDA_FN_NAME(name, flags) [ISC_FN_##name] = #name,
const char *const isc_cuda_fn_names[ISC_CUDA_FN_COUNT] = { ISC_CUDA_FUNCS(
	ISC_CUDA_FN_NAME) ISC_CUDA_GEN_FUNCS(ISC_CUDA_FN_NAME) };
#define ISC_CUDA_FN_FLAGS(name, flags) [ISC_FN_##name] = ISC_CF_##flags,
const unsigned char isc_cuda_fn_flags[ISC_CUDA_FN_COUNT] = { ISC_CUDA_FUNCS(
	ISC_CUDA_FN_FLAGS) ISC_CUDA_GEN_FUNCS(ISC_CUDA_FN_FLAGS) };

void *_Atomic isc_cuda_real_fns[ISC_CUDA_FN_COUNT];
_Atomic bool isc_cuda_on;
static _Atomic uint32_t fn_ids[ISC_CUDA_FN_COUNT];

uint32_t isc_cuda_fn_id(unsigned fn)
{
	uint32_t id = atomic_load_explicit(&fn_ids[fn], memory_order_relaxed);
	if (__builtin_expect(id == 0, 0)) {
		/* two threads may both intern it: the same string, the same id */
		id = isc_intern_cstr(isc_cuda_fn_names[fn]);
		atomic_store_explicit(&fn_ids[fn], id, memory_order_relaxed);
	}
	return id;
}

static struct dl_find_object self; /* our own mapping, to never resolve to ourselves */
static _Atomic bool started;
static int runtime_version, driver_version;
_Atomic bool isc_cuda_versions_pending; /* set by start(), cleared by the first record */
static cudaError_t (*runtime_version_fn)(int *), (*driver_version_fn)(int *);
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static void *pinned_lib; /* the runtime found through a caller, kept loaded */

static bool is_ours(const void *p)
{
	return p >= self.dlfo_map_start && p < self.dlfo_map_end;
}

/* Keeps the library that defines p loaded: we call into it from now on. */
static void pin(const void *p)
{
	struct dl_find_object o;
	if (_dl_find_object((void *)p, &o) != 0 || o.dlfo_link_map == NULL) {
		return;
	}
	pthread_mutex_lock(&pin_lock);
	if (pinned_lib == NULL) {
		pinned_lib = dlopen(o.dlfo_link_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
	}
	pthread_mutex_unlock(&pin_lock);
}

/*
 * The runtime the caller links: a module loaded RTLD_LOCAL (Python extensions) is
 * not in the global scope, so RTLD_NEXT misses it, but a handle to the caller's
 * object searches its own dependencies. _dl_find_object costs nanoseconds where
 * dladdr costs microseconds, and this runs once per function anyway.
 */
static void *find_in_caller(const char *name, const void *caller)
{
	struct dl_find_object o;
	if (caller == NULL || _dl_find_object((void *)caller, &o) != 0 || o.dlfo_link_map == NULL) {
		return NULL;
	}
	const char *path = o.dlfo_link_map->l_name;
	if (path == NULL || path[0] == '\0') {
		return NULL; /* the main program: its scope is the global one */
	}
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	void *p = h ? dlsym(h, name) : NULL;
	if (h) {
		dlclose(h); /* the caller is running: it stays loaded */
	}
	return p && !is_ours(p) ? p : NULL;
}

struct loaded_search {
	const char *name;
	void *found;
};

static int search_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded_search *s = data;
	(void)size;
	if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libcudart.so") == NULL) {
		return 0;
	}
	void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	void *p = h ? dlsym(h, s->name) : NULL;
	if (h) {
		dlclose(h);
	}
	if (p && !is_ours(p)) {
		s->found = p;
		return 1;
	}
	return 0;
}

/* Any symbol of the process's CUDA runtime, from the caller's point of view. */
static void *resolve_symbol(const char *name, const void *caller)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p && is_ours(p)) {
		p = NULL;
	}
	if (p == NULL) {
		p = find_in_caller(name, caller);
		if (p == NULL) {
			struct loaded_search s = { name, NULL };
			dl_iterate_phdr(search_loaded, &s);
			p = s.found;
		}
		if (p) {
			pin(p);
		}
	}
	return p;
}

/* First CUDA call of the process: versions, then the GPU timeline. Every resolving
 * thread goes through isc_cupti_start(), which returns only once the timeline is on
 * (or has failed): a thread that lost the race must not make its call unseen. */
static void start(const void *caller)
{
	if (!atomic_exchange(&started, true)) {
		runtime_version_fn =
			(cudaError_t(*)(int *))resolve_symbol("cudaRuntimeGetVersion", caller);
		driver_version_fn =
			(cudaError_t(*)(int *))resolve_symbol("cudaDriverGetVersion", caller);
		atomic_store_explicit(&isc_cuda_versions_pending, true, memory_order_release);
	}
	isc_cupti_start("first CUDA runtime call");
}

/* After the first recorded call (cuda-record.c, guard held, errno saved). */
void isc_cuda_query_versions(void)
{
	if (!atomic_exchange(&isc_cuda_versions_pending, false)) {
		return;
	}
	int v = 0;
	if (runtime_version_fn && runtime_version_fn(&v) == cudaSuccess) {
		runtime_version = v;
	}
	v = 0;
	if (driver_version_fn && driver_version_fn(&v) == cudaSuccess) {
		driver_version = v;
	}
}

void *isc_cuda_resolve(unsigned fn, const void *caller)
{
	static _Atomic bool complained;
	/* runs before the real call, once per function: dlsym, dlopen and CUPTI's start
	 * must not leave the real call another errno than the application's */
	int saved = errno;
	isc_guard_enter();
	void *p = resolve_symbol(isc_cuda_fn_names[fn], caller);
	if (p && isc_core_ready() && atomic_load(&isc_cuda_on)) {
		start(caller);
	}
	if (p) {
		/* published after start(): a thread that finds the pointer finds CUPTI on */
		atomic_store_explicit(&isc_cuda_real_fns[fn], p, memory_order_release);
	} else if (!atomic_exchange(&complained, true)) {
		isc_error("%s: no CUDA runtime in this process implements it; returning "
			  "cudaErrorInitializationError",
			  isc_cuda_fn_names[fn]);
	}
	isc_guard_leave();
	errno = saved;
	return p;
}

/* ---- the report (trailer.c writes it) ---- */

bool isc_cuda_report(struct isc_cuda_report *r)
{
	r->used = atomic_load(&started) || isc_gpu_device_count() > 0;
	if (r->used && driver_version == 0) {
		/* libcuda is loaded whenever CUPTI saw a device */
		int (*get)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
		if (get && get(&driver_version) != 0) {
			driver_version = 0;
		}
	}
	r->runtime_version = runtime_version;
	r->driver_version = driver_version;
	r->n_devices = 0;
	for (uint32_t id = 0; id < ISC_GPU_MAX_DEVICES; id++) {
		if (isc_gpu_device_get(id, &r->devices[r->n_devices])) {
			r->n_devices++;
		}
	}
	isc_cupti_report(&r->cupti);
	r->n_functions = ISC_CUDA_FN_COUNT;
	r->function_names = isc_cuda_fn_names;
	return true;
}

void isc_hooks_cuda_fork_child(void)
{
	struct isc_thread *t = isc_tls_self;
	if (t) {
		if (t->cuda.calls != NULL) { /* kept: the child's own calls go there */
			memset(t->cuda.calls, 0, ISC_CUDA_FN_MAX * sizeof(*t->cuda.calls));
		}
		t->cuda.depth = 0;
	}
	isc_cuda_tables_reset();
	isc_cupti_after_fork();
}

/* Sets var to our absolute path unless the user (or another tool) set it. */
void isc_cuda_set_injection_var(const char *var)
{
	Dl_info info;
	char path[PATH_MAX];
	const char *now = getenv(var);
	if (now != NULL && now[0] != '\0') {
		return;
	}
	if (dladdr((void *)isc_cuda_set_injection_var, &info) == 0 || info.dli_fname == NULL ||
	    realpath(info.dli_fname, path) == NULL) {
		isc_error("cannot find the path of libinferscope.so; %s is not set", var);
		return;
	}
	setenv(var, path, 0);
}

void isc_hooks_cuda_flush(void)
{
	isc_cupti_flush();
}

void isc_hooks_cuda_flush_completed(void)
{
	isc_cupti_flush_completed();
}

void isc_hooks_cuda_init(void)
{
	_dl_find_object((void *)isc_hooks_cuda_init, &self);
	if (isc_config.cupti) {
		isc_cuda_set_injection_var("CUDA_INJECTION64_PATH");
	}
	atomic_store(&isc_cuda_on, isc_config.hook_cuda);
}
