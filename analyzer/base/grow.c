/* SPDX-License-Identifier: MIT */
#include "analyzer/base/grow.h"

#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t isc_grow_cap(size_t cap, size_t need, size_t first)
{
	size_t c = cap > 0 ? cap : (first > 0 ? first : 1);
	while (c < need) {
		if (c > SIZE_MAX / 2) {
			return SIZE_MAX;
		}
		c *= 2;
	}
	return c;
}

static size_t mem_bound;
/* Signed: a block allocated elsewhere and resized here is uncounted once, which may take
 * the count below zero (it then errs low by that block) but never wraps it. */
static ptrdiff_t mem_used;
static void (*mem_over)(size_t want, size_t bound);

void isc_mem_bound(size_t bound, void (*over)(size_t want, size_t bound))
{
	mem_bound = bound;
	mem_over = over;
}

size_t isc_mem_used(void)
{
	ptrdiff_t used = __atomic_load_n(&mem_used, __ATOMIC_RELAXED);
	return used > 0 ? (size_t)used : 0;
}

/* Whether a block of have bytes may become one of want bytes. The analysis runs on two
 * threads: the count is atomic, the check a moment's estimate. */
static bool mem_fits(size_t have, size_t want)
{
	if (mem_bound == 0 || want <= have) {
		return true;
	}
	size_t used = isc_mem_used();
	if (want - have <= mem_bound && used <= mem_bound - (want - have)) {
		return true;
	}
	if (mem_over != NULL) {
		mem_over(used > SIZE_MAX - (want - have) ? SIZE_MAX : used + (want - have),
			 mem_bound);
	}
	return false;
}

/* The count moves from have to now bytes (each below PTRDIFF_MAX: allocated blocks). */
static void mem_count(size_t have, size_t now)
{
	__atomic_add_fetch(&mem_used, (ptrdiff_t)now - (ptrdiff_t)have, __ATOMIC_RELAXED);
}

int isc_resize(void *arr, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size) {
		return -ENOMEM;
	}
	/* arr holds a T *: copied through its bytes, which every pointer type shares with
	 * void * on the platforms we build for, without an aliasing cast. */
	void *old;
	memcpy(&old, arr, sizeof(old));
	size_t have = old != NULL ? malloc_usable_size(old) : 0;
	void *p = NULL;
	if (n * size == 0) {
		free(old);
	} else if (!mem_fits(have, n * size) || (p = realloc(old, n * size)) == NULL) {
		return -ENOMEM;
	}
	mem_count(have, p != NULL ? malloc_usable_size(p) : 0);
	memcpy(arr, &p, sizeof(p));
	return 0;
}

void *isc_mem_calloc(size_t n, size_t size)
{
	if ((size != 0 && n > SIZE_MAX / size) || !mem_fits(0, n * size)) {
		return NULL;
	}
	void *p = calloc(n, size);
	if (p != NULL) {
		mem_count(0, malloc_usable_size(p));
	}
	return p;
}

void isc_mem_free(void *p)
{
	if (p != NULL) {
		mem_count(malloc_usable_size(p), 0);
		free(p);
	}
}

int isc_grow_slow(void *arr, size_t *cap, size_t need, size_t size, size_t first)
{
	if (need <= *cap) {
		return 0;
	}
	size_t c = isc_grow_cap(*cap, need, first);
	if (c == SIZE_MAX || isc_resize(arr, c, size) < 0) {
		return -ENOMEM;
	}
	*cap = c;
	return 0;
}

void isc_mem_big_blocks(void)
{
	/* A fixed threshold: glibc no longer moves it (nor the heap's trim threshold). */
	mallopt(M_MMAP_THRESHOLD, (int)ISC_BIG_BLOCK);
}
