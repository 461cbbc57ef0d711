/* SPDX-License-Identifier: MIT */
/*
 * Ids: one relaxed atomic counter for scope and correlation ids (unique within a
 * process's trace; a fork child continues the parent's sequence, so ids stay unique
 * when the analyzer merges their traces).
 */
#ifndef ISC_IDS_H
#define ISC_IDS_H

#include <stdatomic.h>
#include <stdint.h>

extern _Atomic uint64_t isc_id_counter;

static inline uint64_t isc_next_id(void)
{
	return atomic_fetch_add_explicit(&isc_id_counter, 1, memory_order_relaxed) + 1;
}

#endif /* ISC_IDS_H */
