/* SPDX-License-Identifier: MIT */
/*
 * CUPTI's buffers and what we do with a completed one, on whichever thread CUPTI
 * calls us (its worker, or the thread that forces a flush).
 *
 * A completed buffer is read in three passes: the EXTERNAL_CORRELATION records
 * (our id and thread for a CUPTI correlation id), then the API records (runtime and
 * driver calls, with their thread: the calls only CUPTI saw, such as cuBLAS's private
 * runtime or Triton's driver launches), then the GPU records, each written on the
 * spot with the correlation id and thread of its host call. A GPU record whose host
 * call is not known yet (its API record sits in a buffer not delivered yet) waits in
 * a pending list, retried after every buffer and written anyway at the final flush.
 *
 * Nothing here calls CUDA or blocks on a lock the flusher holds: the one mutex is
 * ours and never held while calling CUPTI. Memory comes from mmap, not malloc.
 */
#include <cupti.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "common/config.h"
#include "preload/gpu/cupti-internal.h"
#include "preload/gpu/gpu-timeline.h"
#include "preload/gpu/gpu-devices.h"
#include "preload/core/intern.h"

#define MAP_SLOTS (1u << 17) /* correlation ids in flight; CUPTI's ids only grow */
#define PENDING_MAX (1u << 16)
#define MAX_BUFFERS 4096

enum { API_NONE = 0, API_RUNTIME = 1, API_DRIVER = 2 };

struct centry {
	uint32_t cc;	 /* CUPTI's correlation id; 0 = empty */
	uint8_t ext;	 /* an EXTERNAL_CORRELATION record gave ours and tid */
	uint8_t api;	 /* API_* record seen */
	uint8_t emitted; /* the CUPTI-only cuda_api event is written */
	uint8_t pad;
	uint32_t tid;
	uint32_t name;
	uint64_t ours;
	uint64_t start, end;
	int32_t result;
	uint32_t pad2;
};

static struct centry *map;
static struct isc_staged *pending;
static uint32_t n_pending;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* buffer pool: at most isc_config.cupti_buffers mappings, reused */
static void *free_buffers[MAX_BUFFERS];
static unsigned n_free, n_mapped;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static struct isc_cupti_stats stats;

/* capture windows, refreshed per buffer, for records of calls we did not intercept */
static uint64_t windows[64][2];
static size_t n_windows;

int isc_cupti_records_init(void)
{
	map = mmap(NULL, MAP_SLOTS * sizeof(*map), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	pending = mmap(NULL, PENDING_MAX * sizeof(*pending), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED || pending == MAP_FAILED) {
		return -ENOMEM;
	}
	return 0;
}

void isc_cupti_stats(struct isc_cupti_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}

/* ---- buffers ---- */

void CUPTIAPI isc_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *b = NULL;
	unsigned cap = (unsigned)isc_config.cupti_buffers;
	pthread_mutex_lock(&pool_lock);
	if (n_free > 0) {
		b = free_buffers[--n_free];
	} else if (n_mapped < cap && n_mapped < MAX_BUFFERS) {
		b = mmap(NULL, isc_config.cupti_buffer_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		b = b == MAP_FAILED ? NULL : b;
		n_mapped += b != NULL;
	}
	pthread_mutex_unlock(&pool_lock);
	if (b == NULL) {
		/* at the cap: CUPTI drops what it cannot store, and counts it */
		__atomic_fetch_add(&stats.buffers_refused, 1, __ATOMIC_RELAXED);
	}
	*buffer = b;
	*size = b ? isc_config.cupti_buffer_size : 0;
	*max_records = 0;
}

static void release_buffer(uint8_t *b)
{
	pthread_mutex_lock(&pool_lock);
	if (n_free < MAX_BUFFERS) {
		free_buffers[n_free++] = b;
	}
	pthread_mutex_unlock(&pool_lock);
}

/* ---- API names ---- */

static bool issues_work(const char *n)
{
	static const char *const prefixes[] = {
		"cudaLaunch",
		"__cudaLaunch",
		"cudaMemcpy",
		"cudaMemset",
		"cudaGraphLaunch",
		"cudaDeviceSynchronize",
		"cudaStreamSynchronize",
		"cudaEventSynchronize",
		"cudaStreamWaitEvent",
		"cuLaunch",
		"cuMemcpy",
		"cuMemset",
		"cuGraphLaunch",
		"cuCtxSynchronize",
		"cuStreamSynchronize",
		"cuEventSynchronize",
		"cuStreamWaitEvent",
		NULL,
	};
	for (unsigned i = 0; prefixes[i]; i++) {
		if (strncmp(n, prefixes[i], strlen(prefixes[i])) == 0) {
			return true;
		}
	}
	return false;
}

#define NAME_CACHE 1024
#define NAME_WORK 0x80000000u
static _Atomic uint32_t name_cache[2][NAME_CACHE]; /* name id | NAME_WORK; 0 unknown */

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the name the interposer uses. */
static size_t strip_version(const char *n)
{
	size_t len = strlen(n), d = len;
	while (d > 0 && n[d - 1] >= '0' && n[d - 1] <= '9') {
		d--;
	}
	if (len - d >= 4 && d >= 2 && n[d - 1] == 'v' && n[d - 2] == '_') {
		return d - 2;
	}
	return len;
}

uint32_t isc_cupti_api_name(CUpti_CallbackDomain domain, uint32_t cbid, bool *work)
{
	unsigned dom = domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0;
	uint32_t v = cbid < NAME_CACHE
			     ? atomic_load_explicit(&name_cache[dom][cbid], memory_order_relaxed)
			     : 0;
	if (v == 0) {
		const char *n = NULL;
		if (isc_cupti.get_callback_name == NULL ||
		    isc_cupti.get_callback_name(domain, cbid, &n) != CUPTI_SUCCESS || n == NULL) {
			*work = false;
			return 0;
		}
		v = isc_intern(n, strip_version(n)) | (issues_work(n) ? NAME_WORK : 0);
		if (cbid < NAME_CACHE) {
			atomic_store_explicit(&name_cache[dom][cbid], v, memory_order_relaxed);
		}
	}
	*work = (v & NAME_WORK) != 0;
	return v & ~NAME_WORK;
}

/* ---- correlation ---- */

static struct centry *entry(uint32_t cc, bool create)
{
	struct centry *e = &map[cc & (MAP_SLOTS - 1)];
	if (e->cc != cc) {
		if (!create) {
			return NULL;
		}
		memset(e, 0, sizeof(*e));
		e->cc = cc;
	}
	return e;
}

static bool in_window(uint64_t ts)
{
	for (size_t i = 0; i < n_windows; i++) {
		if (ts >= windows[i][0] && ts < windows[i][1]) {
			return true;
		}
	}
	return false;
}

/*
 * Whether a call only CUPTI saw made the host wait, from its name: the synchronise
 * calls, and copies and memsets without "Async" (synchronous with respect to the host
 * in CUDA's "API synchronization behavior", device-to-device aside, which CUPTI's API
 * record cannot tell us).
 */
static bool blocks_host(uint32_t name_id)
{
	static const char *const sync_prefixes[] = { "cudaMemcpy", "cudaMemset", "cuMemcpy",
						     "cuMemset", NULL };
	const char *n = isc_intern_get(name_id, NULL);
	if (n == NULL) {
		return false;
	}
	if (strstr(n, "Synchronize") != NULL) {
		return true;
	}
	for (unsigned i = 0; sync_prefixes[i]; i++) {
		if (strncmp(n, sync_prefixes[i], strlen(sync_prefixes[i])) == 0) {
			return strstr(n, "Async") == NULL;
		}
	}
	return false;
}

/* A call only CUPTI saw, as a cuda_api event. */
static void emit_api(struct centry *e)
{
	struct isc_event *r = isc_event_reserve(ISC_EV_CUDA_API, 1);
	e->emitted = 1;
	if (r == NULL) {
		return;
	}
	memset(r, 0, sizeof(*r));
	r->ts = e->start;
	r->dur = e->end > e->start ? e->end - e->start : 0;
	r->tid = e->tid;
	r->kind = ISC_EV_CUDA_API;
	r->flags = ISC_EVF_CUPTI | (blocks_host(e->name) ? ISC_EVF_BLOCKED : 0);
	r->name = e->name;
	r->u.cuda_api.correlation_id = ISC_CUPTI_CORR_BASE + e->cc;
	r->u.cuda_api.stream_id = ISC_STREAM_NONE;
	r->u.cuda_api.result = e->result;
	isc_event_commit(1);
}

static void on_external(const CUpti_ActivityExternalCorrelation *x)
{
	if (x->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 || x->correlationId == 0) {
		return;
	}
	struct centry *e = entry(x->correlationId, true);
	e->ext = 1;
	e->ours = x->externalId & ISC_EXT_CORR_MASK;
	e->tid = (uint32_t)(x->externalId >> ISC_EXT_CORR_BITS);
}

static void on_api(const CUpti_ActivityAPI *a, bool driver)
{
	bool work;
	struct centry *e = entry(a->correlationId, true);
	if (e->ext || a->correlationId == 0 || (driver && e->api == API_RUNTIME)) {
		return; /* intercepted, or a driver call inside a runtime call */
	}
	uint32_t name = isc_cupti_api_name(
		driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &work);
	if (!work) {
		return;
	}
	e->api = driver ? API_DRIVER : API_RUNTIME;
	e->tid = a->threadId;
	e->name = name;
	e->start = isc_cupti_time(a->start);
	e->end = isc_cupti_time(a->end);
	e->result = (int32_t)a->returnValue;
	if (!driver && !e->emitted && in_window(e->start)) {
		emit_api(e);
	}
}

/* Fills the host side of s; false while it is unknown (and not final). */
static bool resolve(struct isc_staged *s, bool final)
{
	struct centry *e = s->cc && !s->resolved ? entry(s->cc, false) : NULL;
	uint64_t corr;
	uint32_t tid;
	if (s->resolved) {
		return true;
	}
	if (e && e->ext) {
		corr = e->ours;
		tid = e->tid;
	} else if (e && e->api) {
		if (!in_window(s->ev[0].ts)) {
			s->n = 0; /* outside the capture window: dropped on purpose */
			return true;
		}
		if (!e->emitted) {
			emit_api(e); /* a driver launch the runtime never made (Triton) */
		}
		corr = ISC_CUPTI_CORR_BASE + s->cc;
		tid = e->tid;
	} else if (final || s->cc == 0) {
		corr = s->cc ? ISC_CUPTI_CORR_BASE + s->cc : 0;
		tid = 0;
		stats.unresolved++;
	} else {
		return false;
	}
	s->ev[0].u.raw[0] = corr;
	for (unsigned i = 0; i < s->n; i++) {
		s->ev[i].tid = tid;
	}
	s->resolved = 1;
	return true;
}

/* The kernel's occupancy needs its device's limits (a DEVICE record). */
static bool device_ready(struct isc_staged *s, bool final)
{
	struct isc_gpu_device d;
	if (!s->kernel) {
		return true;
	}
	if (!isc_gpu_device_get(s->ev[0].aux, &d)) {
		return final;
	}
	const struct isc_kernel_ext_payload *x = &s->ev[1].u.gpu_kernel_ext;
	uint32_t threads = x->block[0] * x->block[1] * x->block[2];
	s->ev[0].u.gpu_kernel.occupancy = isc_gpu_occupancy(
		&d, threads, s->ev[0].u.gpu_kernel.registers, x->static_shared + x->dynamic_shared);
	return true;
}

static void write_staged(const struct isc_staged *s)
{
	if (s->n == 0) {
		return;
	}
	struct isc_event *r = isc_event_reserve(s->ev[0].kind, s->n);
	if (r) {
		memcpy(r, s->ev, s->n * sizeof(*r));
		isc_event_commit(s->n);
	}
}

/* Writes s now if it can be; otherwise keeps it for later (or, with the pending list
 * full, writes what is known). */
static void place(struct isc_staged *s, bool final)
{
	bool full = n_pending >= PENDING_MAX;
	bool host = resolve(s, final || full);
	if (host && device_ready(s, final || full)) {
		write_staged(s);
	} else {
		pending[n_pending++] = *s;
	}
}

static void retry_pending(bool final)
{
	uint32_t kept = 0, n = n_pending;
	n_pending = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct isc_staged s = pending[i];
		if (resolve(&s, final) && device_ready(&s, final)) {
			write_staged(&s);
		} else {
			pending[kept++] = s;
		}
	}
	n_pending = kept;
}

/* ---- a completed buffer ---- */

static void pass(uint8_t *buf, size_t valid, int which)
{
	CUpti_Activity *rec = NULL;
	struct isc_staged s;
	while (isc_cupti.get_next_record(buf, valid, &rec) == CUPTI_SUCCESS) {
		if (which == 0) {
			stats.records++;
			if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
				on_external((const CUpti_ActivityExternalCorrelation *)rec);
			} else if (rec->kind == CUPTI_ACTIVITY_KIND_DEVICE) {
				isc_cupti_decode_device(rec);
			}
		} else if (which == 1) {
			if (rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME ||
			    rec->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
				on_api((const CUpti_ActivityAPI *)rec,
				       rec->kind == CUPTI_ACTIVITY_KIND_DRIVER);
			} else if (rec->kind == CUPTI_ACTIVITY_KIND_OVERHEAD) {
				const CUpti_ActivityOverhead3 *o = (const void *)rec;
				stats.overhead_ns += o->end > o->start ? o->end - o->start : 0;
			}
		} else if (isc_cupti_decode_gpu(rec, &s)) {
			if (s.incomplete) {
				stats.incomplete++; /* no time to place it at */
			} else {
				place(&s, false);
			}
		}
	}
}

void CUPTIAPI isc_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					 size_t size, size_t valid)
{
	size_t dropped = 0;
	(void)size;
	if (buffer == NULL) {
		return;
	}
	isc_tls_guard++;
	pthread_mutex_lock(&lock);
	n_windows = isc_capture_windows(windows, 64, UINT64_MAX);
	for (int which = 0; which < 3 && valid > 0; which++) {
		pass(buffer, valid, which);
	}
	retry_pending(false);
	if (isc_cupti.get_num_dropped && isc_cupti.get_num_dropped(ctx, stream, &dropped) == 0) {
		stats.dropped += dropped;
	}
	stats.buffers++;
	pthread_mutex_unlock(&lock);
	release_buffer(buffer);
	isc_tls_guard--;
}

void isc_cupti_records_drain(void)
{
	isc_tls_guard++;
	pthread_mutex_lock(&lock);
	n_windows = isc_capture_windows(windows, 64, UINT64_MAX);
	retry_pending(true);
	pthread_mutex_unlock(&lock);
	isc_tls_guard--;
}
