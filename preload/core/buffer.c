/* SPDX-License-Identifier: MIT */
#include "preload/core/buffer.h"
#include "preload/core/procfs.h"
#include "preload/core/threads.h"
#include "common/clock.h"
#include "common/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread struct isc_tls isc_tls ISC_TLS;

#define MAX_THREADS 65536u
/* The slots are reserved at once (NORESERVE, touched as threads come): under strict
 * overcommit the reservation itself is charged, so a slot stays small (thread.h). */
_Static_assert((uint64_t)MAX_THREADS * sizeof(struct isc_thread) <= (1ull << 30),
	       "the thread slots' reservation stays within 1 GiB");

static struct isc_chunk *region; /* the chunks, memory-cap bytes */
static uint32_t n_chunks;
static _Atomic uint32_t next_unused; /* bump index into region */
static _Atomic uint64_t free_head;   /* (tag << 32) | (index + 1) */
static _Atomic(struct isc_chunk *) full_head;
static _Atomic uint32_t in_use;
static _Atomic bool first_chunk_taken;

static struct isc_thread *slab;
static _Atomic uint32_t slab_next;
static _Atomic(struct isc_thread *) registry;
static _Atomic uint64_t orphan_drops[ISC_EV__COUNT];
static pthread_key_t exit_key;

/* Runs when a thread that recorded exits. Its chunk is released only once the
 * collector sees the thread really gone: destructors of other keys may still record. */
static void on_thread_exit(void *p)
{
	struct isc_thread *t = p;
	/* its name now, as it named itself after its first record (the trace's label) */
	prctl(PR_GET_NAME, t->comm, 0, 0, 0);
	atomic_store_explicit(&t->state, ISC_THREAD_EXITING, memory_order_release);
	if (isc_threads_last_of_program()) {
		/* The library's threads have descriptor tables of their own: once this
		 * thread has gone the program's table (its stdout) goes with it, and the
		 * collector's exit(0) would flush the program's buffers to nowhere. */
		exit(0);
	}
}

void (*isc_buffer_on_full)(void);
void (*isc_buffer_on_first_chunk)(void);
_Alignas(64) _Atomic int isc_collector_dozing;
void (*isc_buffer_on_rouse)(void);

void isc_buffer_rouse(void)
{
	if (atomic_exchange(&isc_collector_dozing, 0) && isc_buffer_on_rouse) {
		int saved = errno;
		isc_buffer_on_rouse();
		errno = saved;
	}
}

int isc_buffer_init(uint64_t max_memory)
{
	if (region != NULL) {
		return 0;
	}
	uint64_t n = max_memory / ISC_CHUNK_BYTES;
	if (n < 2) {
		n = 2;
	}
	if (n > UINT32_MAX / 2) {
		n = UINT32_MAX / 2;
	}
	/* NORESERVE and untouched: the cap costs address space, not memory, until used. */
	void *r = mmap(NULL, n * ISC_CHUNK_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED) {
		return -ENOMEM;
	}
	void *s = mmap(NULL, (size_t)MAX_THREADS * sizeof(struct isc_thread),
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s == MAP_FAILED) {
		munmap(r, n * ISC_CHUNK_BYTES);
		return -ENOMEM;
	}
	/* Keys below 32 live in the thread descriptor: pthread_setspecific then never
	 * allocates, which matters when a thread's first record is made in a malloc hook. */
	pthread_key_create(&exit_key, on_thread_exit);
	slab = s;
	n_chunks = (uint32_t)n;
	region = r;
	return 0;
}

bool isc_buffer_ready(void)
{
	return region != NULL;
}

struct isc_thread *isc_thread_attach(void)
{
	if (slab == NULL) {
		return NULL;
	}
	uint32_t i = atomic_fetch_add_explicit(&slab_next, 1, memory_order_relaxed);
	if (i >= MAX_THREADS) {
		return NULL;
	}
	struct isc_thread *t = &slab[i];
	/* The slab is fresh anonymous memory: already zero. */
	t->tid = (uint32_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, t->comm, 0, 0, 0);
	/* the CPU samples' baseline: a thread's samples weigh its CPU time from here on */
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) {
		t->sample_cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	t->sample_wall_ns = isc_now();
	struct isc_thread *head = atomic_load_explicit(&registry, memory_order_relaxed);
	do {
		t->next = head;
	} while (!atomic_compare_exchange_weak_explicit(&registry, &head, t, memory_order_release,
							memory_order_relaxed));
	isc_tls_self = t;
	pthread_setspecific(exit_key, t);
	return t;
}

struct isc_thread *isc_registry_first(void)
{
	return atomic_load_explicit(&registry, memory_order_acquire);
}

/* Lock-free pop with a generation tag against ABA: chunks are never unmapped, so a
 * stale next_free read is harmless - the tagged CAS then fails and we retry. */
static struct isc_chunk *free_pop(void)
{
	uint64_t old = atomic_load_explicit(&free_head, memory_order_acquire);
	for (;;) {
		uint32_t idx1 = (uint32_t)old;
		if (idx1 == 0) {
			return NULL;
		}
		struct isc_chunk *c = &region[idx1 - 1];
		uint64_t next = ((old >> 32) + 1) << 32 | c->next_free;
		if (atomic_compare_exchange_weak_explicit(
			    &free_head, &old, next, memory_order_acq_rel, memory_order_acquire)) {
			return c;
		}
	}
}

void isc_chunk_release(struct isc_chunk *c)
{
	uint64_t old = atomic_load_explicit(&free_head, memory_order_acquire);
	uint64_t next;
	do {
		c->next_free = (uint32_t)old;
		next = ((old >> 32) + 1) << 32 | (c->index + 1);
	} while (!atomic_compare_exchange_weak_explicit(
		&free_head, &old, next, memory_order_acq_rel, memory_order_acquire));
	atomic_fetch_sub_explicit(&in_use, 1, memory_order_relaxed);
}

static struct isc_chunk *chunk_get(uint32_t tid)
{
	struct isc_chunk *c = free_pop();
	if (c == NULL) {
		uint32_t i = atomic_fetch_add_explicit(&next_unused, 1, memory_order_relaxed);
		if (i >= n_chunks) {
			/* keep the bump index from wrapping on a long run of drops */
			atomic_store_explicit(&next_unused, n_chunks, memory_order_relaxed);
			return NULL;
		}
		c = &region[i];
		c->index = i;
	}
	c->tid = tid;
	c->spilled = 0;
	c->next_full = NULL;
	atomic_store_explicit(&c->full, 0, memory_order_relaxed);
	atomic_store_explicit(&c->head, 0, memory_order_release);
	atomic_fetch_add_explicit(&in_use, 1, memory_order_relaxed);
	return c;
}

static void full_push(struct isc_chunk *c)
{
	atomic_store_explicit(&c->full, 1, memory_order_release);
	struct isc_chunk *head = atomic_load_explicit(&full_head, memory_order_relaxed);
	do {
		c->next_full = head;
	} while (!atomic_compare_exchange_weak_explicit(&full_head, &head, c, memory_order_release,
							memory_order_relaxed));
}

struct isc_chunk *isc_full_take(void)
{
	return atomic_exchange_explicit(&full_head, NULL, memory_order_acquire);
}

struct isc_chunk *isc_full_peek(void)
{
	return atomic_load_explicit(&full_head, memory_order_acquire);
}

struct isc_event *isc_event_reserve_slow(struct isc_thread *t, unsigned kind, unsigned n)
{
	if (kind >= ISC_EV__COUNT) {
		kind = ISC_EV_NONE;
	}
	if (t == NULL || n == 0 || n > ISC_CHUNK_RECORDS) {
		atomic_fetch_add_explicit(&orphan_drops[kind], 1, memory_order_relaxed);
		return NULL;
	}
	if (region == NULL) {
		t->dropped[kind]++;
		return NULL;
	}
	struct isc_chunk *old = atomic_load_explicit(&t->chunk, memory_order_relaxed);
	if (old != NULL) {
		atomic_store_explicit(&t->chunk, NULL, memory_order_release);
		full_push(old);
		if (isc_buffer_on_full) {
			isc_buffer_on_full();
		}
	}
	struct isc_chunk *c = chunk_get(t->tid);
	if (c == NULL) {
		t->dropped[kind]++;
		return NULL;
	}
	atomic_store_explicit(&t->chunk, c, memory_order_release);
	if (!atomic_load_explicit(&first_chunk_taken, memory_order_relaxed) &&
	    !atomic_exchange(&first_chunk_taken, true) && isc_buffer_on_first_chunk) {
		isc_buffer_on_first_chunk();
	}
	return &c->rec[0];
}

struct isc_event *isc_event_reserve_sample(struct isc_thread *t, unsigned n)
{
	if (t == NULL || region == NULL || n == 0 || n > ISC_CHUNK_RECORDS) {
		return NULL;
	}
	struct isc_chunk *c = atomic_load_explicit(&t->sample_chunk, memory_order_relaxed);
	if (c != NULL) {
		uint32_t h = atomic_load_explicit(&c->head, memory_order_relaxed);
		if (h + n <= ISC_CHUNK_RECORDS) {
			return &c->rec[h];
		}
		/* Lock-free list and free-list CAS: safe in a signal handler. */
		atomic_store_explicit(&t->sample_chunk, NULL, memory_order_release);
		full_push(c);
		if (isc_buffer_on_full) {
			isc_buffer_on_full(); /* a futex wake at most */
		}
	}
	c = chunk_get(t->tid);
	if (c == NULL) {
		return NULL;
	}
	atomic_store_explicit(&t->sample_chunk, c, memory_order_release);
	return &c->rec[0];
}

void isc_event_commit_sample(struct isc_thread *t, unsigned n)
{
	struct isc_chunk *c = atomic_load_explicit(&t->sample_chunk, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&c->head, memory_order_relaxed);
	atomic_store_explicit(&c->head, h + n, memory_order_release);
	if (atomic_load_explicit(&isc_collector_dozing, memory_order_relaxed)) {
		isc_buffer_rouse(); /* async-signal-safe: an exchange and a futex wake */
	}
}

uint64_t isc_buffer_orphan_drops(unsigned kind)
{
	return kind < ISC_EV__COUNT ? atomic_load(&orphan_drops[kind]) : 0;
}

uint32_t isc_buffer_chunks_in_use(void)
{
	return atomic_load(&in_use);
}

uint32_t isc_buffer_chunks_total(void)
{
	return n_chunks;
}

void isc_buffer_rearm_first_chunk(void)
{
	atomic_store(&first_chunk_taken, false);
}

void isc_buffer_reset_after_fork(void)
{
	struct isc_thread *self = isc_tls_self;

	atomic_store(&next_unused, 0);
	atomic_store(&free_head, 0);
	atomic_store(&full_head, NULL);
	atomic_store(&in_use, 0);
	atomic_store(&first_chunk_taken, false);
	atomic_store(&registry, NULL);
	for (unsigned k = 0; k < ISC_EV__COUNT; k++) {
		atomic_store(&orphan_drops[k], 0);
	}
	if (self == NULL) {
		return;
	}
	/* Keep the slab slot (the TLS pointer refers to it) but start it over: its
	 * counters described the parent. Open scopes stay: the child is inside them. */
	atomic_store(&self->chunk, NULL);
	atomic_store(&self->sample_chunk, NULL);
	self->samples = self->samples_lost = 0;
	self->py_tstate = 0;
	self->next = NULL;
	self->tid = (uint32_t)syscall(SYS_gettid);
	atomic_store(&self->state, ISC_THREAD_LIVE);
	self->recorded = 0;
	memset(self->dropped, 0, sizeof(self->dropped));
	self->alloc_bytes = 0;
	for (uint32_t i = 0; i < self->depth && i < ISC_SCOPE_MAX; i++) {
		self->scopes[i].alloc_at_open = 0;
	}
	atomic_store(&registry, self);
}

void isc_thread_names_refresh(void)
{
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		if (atomic_load_explicit(&t->state, memory_order_acquire) != ISC_THREAD_LIVE) {
			continue; /* its tid may be another thread's now: the name at its exit */
		}
		char path[48], comm[sizeof(t->comm) + 1];
		isc_fmt(path, sizeof(path), "/proc/self/task/%u/comm", t->tid);
		size_t n = isc_slurp(path, comm, sizeof(comm));
		while (n > 0 && comm[n - 1] == '\n') {
			comm[--n] = '\0';
		}
		if (n > 0) {
			memcpy(t->comm, comm, n + 1 < sizeof(t->comm) ? n + 1 : sizeof(t->comm));
			t->comm[sizeof(t->comm) - 1] = '\0';
		}
	}
}
