/* SPDX-License-Identifier: MIT */
/*
 * Interval lists on the trace clock. Attribution works on unions of intervals, never on
 * sums of durations, so that overlapping events are counted once and the breakdown adds
 * up to the window exactly.
 */
#ifndef ISC_INTERVAL_H
#define ISC_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isc_iv {
	int64_t s, e;
};

struct isc_ivec {
	struct isc_iv *v;
	size_t n, cap;
};

void isc_ivec_free(struct isc_ivec *l);
/* Appends [s, e) clipped to [lo, hi); empty results are dropped. Returns 0 or -ENOMEM. */
int isc_ivec_add(struct isc_ivec *l, int64_t s, int64_t e, int64_t lo, int64_t hi);
/* Appends, merging with the last interval when they touch (input sorted by start). */
int isc_ivec_add_merge(struct isc_ivec *l, int64_t s, int64_t e);
/* Sorts by start (when not sorted already) and merges into a disjoint union. */
int isc_ivec_union(struct isc_ivec *l);
int64_t isc_ivec_total(const struct isc_ivec *l);
/* Time of [s, e) covered by a disjoint sorted list. */
int64_t isc_ivec_overlap(const struct isc_ivec *u, int64_t s, int64_t e);
/* out = a - b, both disjoint and sorted. Returns 0 or -ENOMEM. */
int isc_ivec_subtract(struct isc_ivec *out, const struct isc_ivec *a, const struct isc_ivec *b);
/* True when t lies inside the disjoint sorted list. */
bool isc_ivec_contains(const struct isc_ivec *u, int64_t t);

#endif /* ISC_INTERVAL_H */
