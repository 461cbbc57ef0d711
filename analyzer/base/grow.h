/* SPDX-License-Identifier: MIT */
/*
 * Growable arrays: the one place where the analyzer's arrays get bigger. An array is a
 * pointer and a capacity in elements (size_t) beside its count; appending doubles the
 * capacity, so n appends copy O(n) elements. Sizes that would overflow are refused like
 * a failed allocation, and a failure leaves the array as it was (the caller still owns
 * and frees it).
 *
 *	if (ISC_GROW(l->v, l->cap, l->n + 1, 256) < 0)
 *		return -ENOMEM;
 *	l->v[l->n++] = x;
 */
#ifndef ISC_GROW_H
#define ISC_GROW_H

#include <stddef.h>

/* The capacity that holds need elements: cap doubled (from first when cap is 0) until it
 * does. Returns cap when it already holds them; SIZE_MAX when doubling would overflow. */
size_t isc_grow_cap(size_t cap, size_t need, size_t first);

/* Resizes the array at arr (the address of a T * of any type T, passed as void *) to n
 * elements of size bytes. Returns 0, or -ENOMEM with the array unchanged. */
int isc_resize(void *arr, size_t n, size_t size);

/* Room for need elements in the array at arr whose capacity is *cap: both grow together.
 * Returns 0 (at once when there is room already), or -ENOMEM with both unchanged. */
int isc_grow_slow(void *arr, size_t *cap, size_t need, size_t size, size_t first);
static inline int isc_grow(void *arr, size_t *cap, size_t need, size_t size, size_t first)
{
	return need <= *cap ? 0 : isc_grow_slow(arr, cap, need, size, first);
}

/*
 * The bound on the analyzer's memory (--max-memory). Every array that grows through
 * isc_resize (the events, the string tables, the analysis' tables) and every block of
 * isc_mem_calloc is counted at the allocator's usable size, and given back when freed
 * through isc_resize(..., 0) or isc_mem_free (arrays freed with free() stay counted: the
 * count errs high). A growth that would take the count above the bound calls over(want,
 * bound), want the count it would have made (the command prints why and exits 3), then
 * fails as if memory had run out. bound 0: none (the library's default).
 */
void isc_mem_bound(size_t bound, void (*over)(size_t want, size_t bound));
/* Bytes counted now. */
size_t isc_mem_used(void);
/* n * size bytes, zeroed and counted; NULL when they do not fit the bound or memory. */
void *isc_mem_calloc(size_t n, size_t size);
/* Frees a block of isc_mem_calloc or an array of isc_resize, and uncounts it. */
void isc_mem_free(void *p);

/*
 * Once at the start of a program: blocks of ISC_BIG_BLOCK bytes or more (the arrays that
 * grow with the number of events) are mapped on their own and given back to the system
 * when freed. glibc otherwise raises its threshold to the size of each mapped block freed
 * (up to 32 MiB), and the next stage's arrays land in the heap, where a block freed stays
 * part of the peak and one grown by doubling leaves its old copy behind as a hole. A
 * smaller threshold costs a page fault per page of every transient array (the sorts'),
 * which this machine's virtualised page tables make dear (docs/benchmarks.md).
 */
#define ISC_BIG_BLOCK ((size_t)16 << 20)
void isc_mem_big_blocks(void);

/* The same on an array named directly: ISC_GROW(t->ev, t->cap, t->n + 1, 4096). */
#define ISC_GROW(arr, cap, need, first) isc_grow(&(arr), &(cap), (need), sizeof(*(arr)), (first))
#define ISC_RESIZE(arr, n) isc_resize(&(arr), (n), sizeof(*(arr)))

#endif /* ISC_GROW_H */
