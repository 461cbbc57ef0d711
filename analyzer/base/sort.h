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
 * a copied key array. Returns 0 or -ENOMEM.
 */
int isc_sort_by_key(const int64_t *key, size_t stride, uint32_t *idx, size_t n);
/* qsort of int64 values, ascending. */
void isc_sort_i64(int64_t *v, size_t n);

#endif /* ISC_SORT_H */
