/* SPDX-License-Identifier: MIT */
/*
 * Small tables the CUDA hooks consult on their fast paths: stream numbers, kernel
 * names, pinned host ranges. Lookups never lock and never allocate. Inserts into the
 * pointer-keyed tables claim a slot with a compare-and-swap (open addressing, no
 * deletion); the pinned ranges change only in cudaMallocHost & co., under a mutex,
 * and readers retry around a sequence counter.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "preload/hooks/cuda/cuda-hook.h"
#include "preload/core/intern.h"

#define SLOTS 4096u	   /* per table; a full table answers "unknown" */
#define NO_NAME UINT32_MAX /* cached: dladdr found no symbol */

struct slot {
	_Atomic uintptr_t key;
	_Atomic uint32_t value; /* 0 while the inserter is filling it */
};

static struct slot streams[SLOTS];
static struct slot kernels[SLOTS];
static _Atomic uint32_t next_stream = 2;

static inline uint32_t hash_ptr(uintptr_t p)
{
	uint64_t h = (uint64_t)p * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (SLOTS - 1);
}

/* The value of key, or 0 when absent; *free_out gets the slot to claim. */
static uint32_t lookup(struct slot *t, uintptr_t key, struct slot **free_out)
{
	uint32_t i = hash_ptr(key);
	*free_out = NULL;
	for (uint32_t probe = 0; probe < SLOTS; probe++, i = (i + 1) & (SLOTS - 1)) {
		uintptr_t k = atomic_load_explicit(&t[i].key, memory_order_acquire);
		if (k == key) {
			uint32_t v;
			/* the inserter stores the value right after claiming the key */
			while ((v = atomic_load_explicit(&t[i].value, memory_order_acquire)) == 0) {
				__builtin_ia32_pause();
			}
			return v;
		}
		if (k == 0) {
			*free_out = &t[i];
			return 0;
		}
	}
	return 0;
}

/* Inserts key with value(key) unless present; returns the stored value (0 when full). */
static uint32_t insert(struct slot *t, uintptr_t key, uint32_t (*value)(uintptr_t key, void *ctx),
		       void *ctx)
{
	for (;;) {
		struct slot *s;
		uint32_t v = lookup(t, key, &s);
		if (v != 0 || s == NULL) {
			return v;
		}
		uintptr_t expected = 0;
		if (atomic_compare_exchange_strong(&s->key, &expected, key)) {
			v = value(key, ctx);
			atomic_store_explicit(&s->value, v, memory_order_release);
			return v;
		}
		/* lost the slot to another inserter: look again */
	}
}

static uint32_t new_stream_id(uintptr_t key, void *ctx)
{
	(void)key;
	(void)ctx;
	return atomic_fetch_add_explicit(&next_stream, 1, memory_order_relaxed);
}

uint32_t isc_cuda_stream_id(const void *stream, bool per_thread_variant)
{
	uintptr_t h = (uintptr_t)stream;
	struct slot *s;
	if (h == 0) {
		return per_thread_variant ? 1 : 0;
	}
	if (h == (uintptr_t)cudaStreamLegacy) {
		return 0;
	}
	if (h == (uintptr_t)cudaStreamPerThread) {
		return 1;
	}
	uint32_t v = lookup(streams, h, &s);
	if (v == 0) {
		v = insert(streams, h, new_stream_id, NULL);
	}
	return v ? v : ISC_STREAM_NONE;
}

/* The stub's symbol: once per function pointer, so never dladdr on the hot path. */
static uint32_t symbol_name(uintptr_t key, void *ctx)
{
	Dl_info info;
	uint32_t id = 0;
	(void)ctx;
	isc_guard_enter();
	if (dladdr((void *)key, &info) != 0 && info.dli_sname != NULL &&
	    info.dli_saddr == (void *)key) {
		id = isc_intern_cstr(info.dli_sname);
	}
	isc_guard_leave();
	return id ? id : NO_NAME;
}

uint32_t isc_kernel_name(const void *func)
{
	struct slot *s;
	if (func == NULL) {
		return 0;
	}
	uint32_t v = lookup(kernels, (uintptr_t)func, &s);
	if (v == 0) {
		v = insert(kernels, (uintptr_t)func, symbol_name, NULL);
	}
	return v == NO_NAME ? 0 : v;
}

static uint32_t alias_value(uintptr_t key, void *ctx)
{
	(void)key;
	return *(const uint32_t *)ctx;
}

void isc_kernel_alias(const void *handle, const void *stub)
{
	if (handle == NULL || handle == stub) {
		return;
	}
	uint32_t name = isc_kernel_name(stub);
	struct slot *s;
	if (lookup(kernels, (uintptr_t)handle, &s) == 0) {
		uint32_t v = name ? name : NO_NAME;
		insert(kernels, (uintptr_t)handle, alias_value, &v);
	}
}

/* ---- pinned host ranges ---- */

#define PINNED_MAX 8192u

struct range {
	uint64_t base;
	uint64_t end;
};

static struct range pinned[PINNED_MAX]; /* sorted by base, disjoint */
static _Atomic uint32_t n_pinned;
static _Atomic uint32_t pinned_seq; /* odd while a writer changes the array */
static pthread_mutex_t pinned_lock = PTHREAD_MUTEX_INITIALIZER;

/* First index whose base is > a (reader and writer). */
static uint32_t upper_bound(uint64_t a, uint32_t n)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (__atomic_load_n(&pinned[mid].base, __ATOMIC_RELAXED) <= a) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

bool isc_pinned_contains(const void *p)
{
	uint64_t a = (uintptr_t)p;
	if (atomic_load_explicit(&n_pinned, memory_order_acquire) == 0) {
		return false;
	}
	for (;;) {
		uint32_t s0 = atomic_load_explicit(&pinned_seq, memory_order_acquire);
		if (s0 & 1) {
			__builtin_ia32_pause();
			continue;
		}
		uint32_t n = atomic_load_explicit(&n_pinned, memory_order_relaxed);
		uint32_t i = n > PINNED_MAX ? 0 : upper_bound(a, n);
		bool in = i > 0 && a < __atomic_load_n(&pinned[i - 1].end, __ATOMIC_RELAXED);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&pinned_seq, memory_order_relaxed) == s0) {
			return in;
		}
	}
}

static void write_begin(void)
{
	pthread_mutex_lock(&pinned_lock);
	atomic_fetch_add_explicit(&pinned_seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void write_end(void)
{
	atomic_fetch_add_explicit(&pinned_seq, 1, memory_order_release);
	pthread_mutex_unlock(&pinned_lock);
}

void isc_pinned_add(const void *base, uint64_t size)
{
	uint64_t a = (uintptr_t)base;
	if (base == NULL || size == 0) {
		return;
	}
	write_begin();
	uint32_t n = atomic_load_explicit(&n_pinned, memory_order_relaxed);
	uint32_t i = upper_bound(a, n);
	if (n < PINNED_MAX && !(i > 0 && pinned[i - 1].base == a)) {
		for (uint32_t k = n; k > i; k--) {
			pinned[k] = pinned[k - 1];
		}
		pinned[i].base = a;
		pinned[i].end = a + size;
		atomic_store_explicit(&n_pinned, n + 1, memory_order_relaxed);
	}
	write_end();
}

void isc_pinned_remove(const void *base)
{
	uint64_t a = (uintptr_t)base;
	write_begin();
	uint32_t n = atomic_load_explicit(&n_pinned, memory_order_relaxed);
	uint32_t i = upper_bound(a, n);
	if (i > 0 && pinned[i - 1].base == a) {
		for (uint32_t k = i - 1; k + 1 < n; k++) {
			pinned[k] = pinned[k + 1];
		}
		atomic_store_explicit(&n_pinned, n - 1, memory_order_relaxed);
	}
	write_end();
}

void isc_cuda_tables_reset(void)
{
	/* fork() may have caught another thread inside a write */
	pthread_mutex_init(&pinned_lock, NULL);
	atomic_store(&pinned_seq, 0);
}
