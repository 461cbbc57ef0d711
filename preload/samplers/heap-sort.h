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

static inline void isc_hs_swap(unsigned char *a, size_t i, size_t j, size_t size)
{
	unsigned char t[64];
	memcpy(t, a + i * size, size);
	memcpy(a + i * size, a + j * size, size);
	memcpy(a + j * size, t, size);
}

static inline void isc_hs_sift(unsigned char *a, size_t i, size_t n, size_t size)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n) {
			return;
		}
		if (c + 1 < n && isc_hs_key(a, c + 1, size) > isc_hs_key(a, c, size)) {
			c++;
		}
		if (isc_hs_key(a, i, size) >= isc_hs_key(a, c, size)) {
			return;
		}
		isc_hs_swap(a, i, c, size);
		i = c;
	}
}

/* Sorts n elements of size bytes (8 to 64) at base by their leading uint64_t, ascending. */
static inline void isc_heap_sort_u64(void *base, size_t n, size_t size)
{
	unsigned char *a = base;
	for (size_t i = n / 2; i-- > 0;) {
		isc_hs_sift(a, i, n, size);
	}
	for (size_t k = n; k-- > 1;) {
		isc_hs_swap(a, 0, k, size);
		isc_hs_sift(a, 0, k, size);
	}
}

#endif /* ISC_HEAP_SORT_H */
