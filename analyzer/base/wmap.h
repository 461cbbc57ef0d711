/* SPDX-License-Identifier: MIT */
/*
 * A map from two 64-bit keys to a dense index (0, 1, 2... in the order of first sight),
 * for the stages that sum by frame or site, and for tables kept beside it in that order
 * (graph nodes by id and input). Open addressing, at most half full.
 */
#ifndef ISC_WMAP_H
#define ISC_WMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isc_wmap {
	uint64_t *k1, *k2;
	uint32_t *slot;
	size_t n, mask;
};
/* Index of (a, b), added when new (*added set); SIZE_MAX on allocation failure. */
size_t isc_wmap_get(struct isc_wmap *m, uint64_t a, uint64_t b, bool *added);
/* Index of (a, b), SIZE_MAX when it was never added. */
size_t isc_wmap_find(const struct isc_wmap *m, uint64_t a, uint64_t b);
void isc_wmap_free(struct isc_wmap *m);

#endif /* ISC_WMAP_H */
