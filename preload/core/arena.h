/* SPDX-License-Identifier: MIT */
/*
 * The library's own heap: what the library allocates, directly or inside the libc
 * functions it calls (fopen, opendir, dlopen, qsort, getpwuid...), never comes from
 * the program's allocator and never goes back to it.
 *
 * The malloc hooks (hooks/host/hook-malloc.c) serve every allocation made while the
 * thread's guard is raised (the library at work) from here, and hand every pointer of
 * this region back here whoever frees it. Otherwise glibc's heap would be another
 * program's: a large block of ours freed moves its dynamic mmap threshold, after which
 * the program's 200 KB buffers come from the heap instead of mmap.
 *
 * One region of address space reserved at the first allocation (PROT_NONE, made
 * readable page by page as it is used), blocks in power-of-two classes with a free
 * list each; the pages of a large freed block go back to the kernel. Thread-safe (one
 * spinlock); not async-signal-safe against itself: a signal handler of ours never
 * allocates.
 */
#ifndef ISC_ARENA_H
#define ISC_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* n bytes aligned to align (a power of two; 16 at least), or NULL: no region could be
 * reserved (the caller falls back) or it is full (errno ENOMEM). */
void *isc_arena_alloc(size_t n, size_t align);
void isc_arena_free(void *p);
/* Usable bytes of a block of ours. */
size_t isc_arena_usable(const void *p);

/* The region, [lo, lo + span), 0 before the first use: read by every free(), hence
 * hidden (a direct load, not one through the GOT) and its size stored, not computed. */
extern __attribute__((visibility("hidden"))) uintptr_t isc_arena_lo, isc_arena_span;

static inline bool isc_arena_owns(const void *p)
{
	return (uintptr_t)p - isc_arena_lo < isc_arena_span;
}

/* fork child: the lock may have been held by a thread that does not exist there. */
void isc_arena_fork_child(void);

#endif /* ISC_ARENA_H */
