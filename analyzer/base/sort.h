/* SPDX-License-Identifier: MIT */
/* Stable LSD radix sort of (key, index) pairs: the one sort the analyzer needs on millions. */
#ifndef ISC_SORT_H
#define ISC_SORT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Sorts idx[] (n entries) so that the keys they name are non-decreasing, keeping the
 * original order of equal keys. The key of index i is the int64_t at
 * (const char *)key + i * stride, so a field of an array of structs sorts in place of
 * a copied key array. On a million keys or more its passes take isc_par_threads()
 * threads (at most 16); the order is the same. Returns 0 or -ENOMEM.
 */
int isc_sort_by_key(const int64_t *key, size_t stride, uint32_t *idx, size_t n);
/* qsort of int64 values, ascending. */
void isc_sort_i64(int64_t *v, size_t n);
/* qsort(3) for arrays that may be empty: the C library declares its pointer nonnull, and
 * an empty array is often NULL (never allocated), which it must then never see. Every
 * sort of the analyzer goes through it. */
void isc_qsort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif /* ISC_SORT_H */
