/* SPDX-License-Identifier: MIT */
/*
 * In-place heapsort of an array of structures by the uint64_t each one begins with, for
 * the symboliser's tables (symbols by address, line sequences by start): no allocation,
 * since the trace may be written at exit with the heap in any state (qsort may call
 * malloc). Inline, so that the element size is a constant where it is called.
 */
#ifndef ISC_HEAP_SORT_H
#define ISC_HEAP_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t isc_hs_key(const unsigned char *a, size_t i, size_t size)
{
	uint64_t k;
	memcpy(&k, a + i * size, sizeof(k));
	return k;
}

/* Places the element e in the heap of n from the hole at i down: each larger child on its
 * way moves up one level, e is written once at the end (the moves of swapping it down
 * level by level, so the same order, ties included, with a third of the copies). */
static inline void isc_hs_sift(unsigned char *a, size_t i, size_t n, size_t size,
			       const unsigned char *e)
{
	uint64_t k = isc_hs_key(e, 0, size);
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n) {
			break;
		}
		uint64_t kc = isc_hs_key(a, c, size);
		if (c + 1 < n) {
			uint64_t kr = isc_hs_key(a, c + 1, size);
			if (kr > kc) {
				c++;
				kc = kr;
			}
		}
		if (k >= kc) {
			break;
		}
		memcpy(a + i * size, a + c * size, size);
		i = c;
	}
	memcpy(a + i * size, e, size);
}

/* Sorts n elements of size bytes (8 to 64) at base by their leading uint64_t, ascending. */
static inline void isc_heap_sort_u64(void *base, size_t n, size_t size)
{
	unsigned char *a = base, e[64];
	for (size_t i = n / 2; i-- > 0;) {
		memcpy(e, a + i * size, size);
		isc_hs_sift(a, i, n, size, e);
	}
	for (size_t k = n; k-- > 1;) {
		/* the largest to the end, the last element sifted down from the root */
		memcpy(e, a + k * size, size);
		memcpy(a + k * size, a, size);
		isc_hs_sift(a, 0, k, size, e);
	}
}

#endif /* ISC_HEAP_SORT_H */
