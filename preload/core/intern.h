/* SPDX-License-Identifier: MIT */
/*
 * The string table: names become 32-bit ids so that records stay fixed-size.
 *
 * Lock-free and malloc-free: entries are bump-allocated in an mmap'd arena and
 * published by a compare-and-swap into an open-addressing hash table. An id is the
 * entry's byte offset in the arena, so the id -> string lookup is an addition, and
 * the arena can be copied verbatim into the spill file (the collector writes the
 * published prefix; see isc_intern_published()).
 *
 * Interning costs a hash of the string and, when the name is new, a copy. Hooks
 * intern static names once at start; scope and kernel names are interned when
 * first seen. When the table is full, isc_intern() returns 0 and the caller records
 * an unnamed event (the overflow is counted).
 */
#ifndef ISC_INTERN_H
#define ISC_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "format/strings.h"

/* Maps the arena and the table; 0 or -ENOMEM. Idempotent. */
int isc_intern_init(uint64_t arena_bytes, uint32_t slots);

uint32_t isc_intern(const char *s, size_t n);
uint32_t isc_intern_cstr(const char *s);

/* The string of an id (NUL-terminated), or NULL. */
const char *isc_intern_get(uint32_t id, uint32_t *len);

/* End of the prefix of the arena in which every entry is complete. */
uint64_t isc_intern_published(void);
/* The arena base, for copying [from, isc_intern_published()) to the spill. */
const char *isc_intern_arena(void);
uint64_t isc_intern_overflows(void);

/* fork(): quiesce writers before, release after (see pthread_atfork in lifecycle.c). */
void isc_intern_fork_prepare(void);
void isc_intern_fork_release(void);

#endif /* ISC_INTERN_H */
