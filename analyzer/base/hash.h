/* SPDX-License-Identifier: MIT */
/* The 64-bit finaliser of MurmurHash3: every bit of x reaches every bit of the result,
 * so the low bits index open-addressing tables (ids, correlation ids, string ids). */
#ifndef ISC_HASH_H
#define ISC_HASH_H

#include <stdint.h>

static inline uint64_t isc_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

#endif /* ISC_HASH_H */
