/* SPDX-License-Identifier: MIT */
/*
 * Recording: per-thread chunks with one writer each.
 *
 * A chunk is ISC_CHUNK_BYTES of records carved from one mmap'd region whose size is
 * the memory cap (INFERSCOPE_MAX_MEMORY). A thread appends to its current chunk with
 * plain stores and publishes with a release store of the chunk's head, so a reader
 * (the collector) that loads the head with acquire sees complete records only. A
 * full chunk goes onto a lock-free list that the collector drains to the spill file,
 * then returns the chunk to a free list. When no chunk is free and the region is
 * used up, events are dropped and counted per thread and per kind - never
 * overwritten.
 *
 * Recording an event:
 *
 *	struct isc_event *ev = isc_event_reserve(ISC_EV_SYSCALL, 1);
 *	if (ev) {
 *		ev->ts = ...;		// fill every field you use; the slot is not zeroed
 *		isc_event_commit(1);
 *	}
 *
 * reserve(kind, n) returns n consecutive slots of the caller's current chunk, so a
 * head record and its continuations are never split between chunks.
 */
#ifndef ISC_BUFFER_H
#define ISC_BUFFER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/record.h"
#include "preload/core/guard.h"
#include "preload/core/thread.h"

#define ISC_CHUNK_BYTES (64u * 1024u)
#define ISC_CHUNK_RECORDS (ISC_CHUNK_BYTES / sizeof(struct isc_event) - 1)

struct isc_chunk {
	_Atomic uint32_t head;	     /* records published by the owner */
	uint32_t spilled;	     /* records already written to the spill (collector) */
	uint32_t tid;		     /* owner */
	uint32_t index;		     /* position in the region */
	struct isc_chunk *next_full; /* full list link */
	uint32_t next_free;	     /* free list link: index + 1, 0 = end */
	_Atomic uint32_t full;	     /* the owner moved on; the collector owns it now */
	char pad[sizeof(struct isc_event) - 32];
	struct isc_event rec[ISC_CHUNK_RECORDS];
};

_Static_assert(sizeof(struct isc_chunk) == ISC_CHUNK_BYTES, "a chunk is one allocation unit");

/* Maps the chunk region and the thread slab; 0 or -ENOMEM. */
int isc_buffer_init(uint64_t max_memory);
bool isc_buffer_ready(void);

/* The calling thread's state, created on first use (NULL when the slab is full). */
struct isc_thread *isc_thread_attach(void);

static inline struct isc_thread *isc_thread_self(void)
{
	struct isc_thread *t = isc_tls_self;
	if (__builtin_expect(t != NULL, 1)) {
		return t;
	}
	return isc_thread_attach();
}

struct isc_event *isc_event_reserve_slow(struct isc_thread *t, unsigned kind, unsigned n);

static inline struct isc_event *isc_event_reserve(unsigned kind, unsigned n)
{
	struct isc_thread *t = isc_thread_self();
	if (__builtin_expect(t == NULL, 0)) {
		return isc_event_reserve_slow(NULL, kind, n);
	}
	struct isc_chunk *c = atomic_load_explicit(&t->chunk, memory_order_relaxed);
	if (__builtin_expect(c != NULL, 1)) {
		/* The owner is the only writer of head: a relaxed load of our own store. */
		uint32_t h = atomic_load_explicit(&c->head, memory_order_relaxed);
		if (__builtin_expect(h + n <= ISC_CHUNK_RECORDS, 1)) {
			return &c->rec[h];
		}
	}
	return isc_event_reserve_slow(t, kind, n);
}

/*
 * The collector dozes while nothing is recorded (collector.c): this is set meanwhile (a
 * cache line of its own, written only as a doze starts or ends), and the first commit
 * that finds it set calls isc_buffer_rouse, which clears it and wakes the collector
 * through isc_buffer_on_rouse (a futex wake; async-signal-safe, errno kept).
 */
extern _Atomic int isc_collector_dozing;
extern void (*isc_buffer_on_rouse)(void);
void isc_buffer_rouse(void);

/* Publishes the n slots returned by the last reserve on this thread. */
static inline void isc_event_commit(unsigned n)
{
	struct isc_thread *t = isc_tls_self;
	struct isc_chunk *c = atomic_load_explicit(&t->chunk, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&c->head, memory_order_relaxed);
	/* Release: the collector's acquire load of head sees the records' contents. */
	atomic_store_explicit(&c->head, h + n, memory_order_release);
	t->recorded++;
	/* an idle process's collector dozes: the first record wakes it (above) */
	if (__builtin_expect(atomic_load_explicit(&isc_collector_dozing, memory_order_relaxed),
			     0)) {
		isc_buffer_rouse();
	}
}

/*
 * The sample chunk of thread t (its own signal handler only): n slots, or NULL when
 * memory is exhausted (the caller counts the loss). Never starts the collector: it
 * runs in a signal handler. Commit publishes them.
 */
struct isc_event *isc_event_reserve_sample(struct isc_thread *t, unsigned n);
void isc_event_commit_sample(struct isc_thread *t, unsigned n);

/* Registry walk (collector, flush): threads in reverse order of attachment. */
struct isc_thread *isc_registry_first(void);
/* Each live thread's name as it is now (/proc/self/task/TID/comm; async-signal-safe):
 * a thread renamed after its first record is labelled by its last name. */
void isc_thread_names_refresh(void);

/* Full chunks, taken all at once by the collector (oldest last). */
struct isc_chunk *isc_full_take(void);
/* The same list left in place (counting what is not written yet). */
struct isc_chunk *isc_full_peek(void);
/* Returns a chunk whose records were spilled to the free list. */
void isc_chunk_release(struct isc_chunk *c);

/* Drops not attributable to a thread (slab full), by kind. */
uint64_t isc_buffer_orphan_drops(unsigned kind);
/* Chunks in use right now, and the most ever in use. */
uint32_t isc_buffer_chunks_in_use(void);
uint32_t isc_buffer_chunks_total(void);

/* The collector wants a nudge when chunks fill up faster than it ticks. */
extern void (*isc_buffer_on_full)(void);
/* Called once, on the first chunk any thread takes: the collector starts there. */
extern void (*isc_buffer_on_first_chunk)(void);
/* The next chunk taken by a hook calls isc_buffer_on_first_chunk again. */
void isc_buffer_rearm_first_chunk(void);

/*
 * fork() child: forget every other thread and every chunk (their events are the
 * parent's and stay in the parent's trace); the calling thread keeps its struct with
 * counters zeroed and its open scopes.
 */
void isc_buffer_reset_after_fork(void);

#endif /* ISC_BUFFER_H */
