/* SPDX-License-Identifier: MIT */
#include "preload/core/intern.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

static char *arena;
static uint64_t arena_cap;
static _Atomic uint64_t arena_top = ISC_INTERN_FIRST;
static _Atomic uint32_t *slots;
static uint32_t slot_mask;
static _Atomic uint32_t slot_used;
static _Atomic uint64_t overflows;
static _Atomic uint64_t published_upto = ISC_INTERN_FIRST;

/* fork quiescence: inserts in flight, and a flag that holds new ones back */
static _Atomic unsigned inflight;
static _Atomic bool forking;

int isc_intern_init(uint64_t arena_bytes, uint32_t nslots)
{
	if (arena != NULL) {
		return 0;
	}
	/* NORESERVE: only the pages that hold names ever become resident. */
	void *a = mmap(NULL, arena_bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a == MAP_FAILED) {
		return -ENOMEM;
	}
	void *t = mmap(NULL, (size_t)nslots * sizeof(uint32_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED) {
		munmap(a, arena_bytes);
		return -ENOMEM;
	}
	arena_cap = arena_bytes;
	slots = t;
	slot_mask = nslots - 1;
	arena = a;
	return 0;
}

/* FNV-1a: short names, no alignment assumptions, good enough spread for a table
 * that is kept under 3/4 full. */
static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h ? h : 1;
}

static struct isc_intern_entry *entry_at(uint64_t off)
{
	return (struct isc_intern_entry *)(arena + off);
}

static bool same(uint32_t id, uint32_t h, const char *s, size_t n)
{
	struct isc_intern_entry *e = entry_at(id);
	return e->hash == h && (e->len_ready & ~ISC_INTERN_READY) == n && memcmp(e->s, s, n) == 0;
}

/* Copies the string into a new arena entry and marks it complete; 0 when full. */
static uint32_t append(uint32_t h, const char *s, size_t n)
{
	uint32_t size = isc_intern_entry_size((uint32_t)n);
	uint64_t off = atomic_fetch_add_explicit(&arena_top, size, memory_order_relaxed);
	if (off + size > arena_cap || off > UINT32_MAX - size) {
		return 0;
	}
	struct isc_intern_entry *e = entry_at(off);
	e->hash = h;
	memcpy(e->s, s, n);
	e->s[n] = '\0';
	/* Release: whoever sees READY (the collector copying the arena) sees the bytes. */
	atomic_store_explicit((_Atomic uint32_t *)&e->len_ready, (uint32_t)n | ISC_INTERN_READY,
			      memory_order_release);
	return (uint32_t)off;
}

static uint32_t lookup_or_insert(const char *s, size_t n)
{
	uint32_t h = hash(s, n);
	uint32_t mine = 0;

	for (uint32_t i = h & slot_mask, probes = 0; probes <= slot_mask;
	     i = (i + 1) & slot_mask, probes++) {
		uint32_t id = atomic_load_explicit(&slots[i], memory_order_acquire);
		if (id == 0) {
			if (mine == 0) {
				if (atomic_load_explicit(&slot_used, memory_order_relaxed) >
				    slot_mask / 4 * 3) {
					return 0;
				}
				mine = append(h, s, n);
				if (mine == 0) {
					return 0;
				}
			}
			if (atomic_compare_exchange_strong_explicit(&slots[i], &id, mine,
								    memory_order_acq_rel,
								    memory_order_acquire)) {
				atomic_fetch_add_explicit(&slot_used, 1, memory_order_relaxed);
				return mine;
			}
			/* Lost the race for this slot: id is the winner; compare below. A
			 * duplicate arena entry of ours stays unreferenced, which is harmless. */
		}
		if (same(id, h, s, n)) {
			return id;
		}
	}
	return 0;
}

uint32_t isc_intern(const char *s, size_t n)
{
	if (arena == NULL || s == NULL) {
		return 0;
	}
	if (n > ISC_INTERN_MAX_LEN) {
		n = ISC_INTERN_MAX_LEN;
	}
	for (;;) {
		while (atomic_load_explicit(&forking, memory_order_acquire)) {
			sched_yield();
		}
		atomic_fetch_add_explicit(&inflight, 1, memory_order_acq_rel);
		if (!atomic_load_explicit(&forking, memory_order_acquire)) {
			break;
		}
		atomic_fetch_sub_explicit(&inflight, 1, memory_order_release);
	}
	uint32_t id = lookup_or_insert(s, n);
	atomic_fetch_sub_explicit(&inflight, 1, memory_order_release);
	if (id == 0) {
		atomic_fetch_add_explicit(&overflows, 1, memory_order_relaxed);
	}
	return id;
}

uint32_t isc_intern_cstr(const char *s)
{
	return s ? isc_intern(s, strlen(s)) : 0;
}

const char *isc_intern_get(uint32_t id, uint32_t *len)
{
	if (arena == NULL || id < ISC_INTERN_FIRST || id >= atomic_load(&arena_top)) {
		return NULL;
	}
	struct isc_intern_entry *e = entry_at(id);
	uint32_t lr = atomic_load_explicit((_Atomic uint32_t *)&e->len_ready, memory_order_acquire);
	if (!(lr & ISC_INTERN_READY)) {
		return NULL;
	}
	if (len) {
		*len = lr & ~ISC_INTERN_READY;
	}
	return e->s;
}

uint64_t isc_intern_published(void)
{
	if (arena == NULL) {
		return ISC_INTERN_FIRST;
	}
	/* Walk forward over complete entries. Only the collector and the flush call this
	 * (serially), so the watermark needs no compare-and-swap. */
	uint64_t off = atomic_load_explicit(&published_upto, memory_order_relaxed);
	uint64_t top = atomic_load_explicit(&arena_top, memory_order_acquire);
	if (top > arena_cap) {
		top = arena_cap;
	}
	while (off + sizeof(struct isc_intern_entry) <= top) {
		struct isc_intern_entry *e = entry_at(off);
		uint32_t lr = atomic_load_explicit((_Atomic uint32_t *)&e->len_ready,
						   memory_order_acquire);
		if (!(lr & ISC_INTERN_READY)) {
			break;
		}
		off += isc_intern_entry_size(lr & ~ISC_INTERN_READY);
	}
	atomic_store_explicit(&published_upto, off, memory_order_relaxed);
	return off;
}

const char *isc_intern_arena(void)
{
	return arena;
}

uint64_t isc_intern_overflows(void)
{
	return atomic_load(&overflows);
}

void isc_intern_fork_prepare(void)
{
	atomic_store_explicit(&forking, true, memory_order_release);
	while (atomic_load_explicit(&inflight, memory_order_acquire) != 0) {
		sched_yield();
	}
}

void isc_intern_fork_release(void)
{
	atomic_store_explicit(&forking, false, memory_order_release);
}
