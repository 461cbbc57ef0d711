/* SPDX-License-Identifier: MIT */
/*
 * Numbers as JSON text gives them. Timestamps are decimal microseconds with up to three
 * decimals on a clock of 10^15 us: a double cannot hold them to the nanosecond, so they
 * are converted digit by digit into integer nanoseconds.
 */
#ifndef ISC_JSONNUM_H
#define ISC_JSONNUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Integer literal to int64; false when it is not one or does not fit. */
bool isc_num_int(const char *s, size_t n, int64_t *out);
/* Any JSON number to double. */
double isc_num_double(const char *s, size_t n);
/* Microseconds to nanoseconds, exact for up to 3 decimals (rounded beyond); false on overflow. */
bool isc_num_us_to_ns(const char *s, size_t n, int64_t *out);

/* A double to int64, saturating (and NaN to 0): a plain cast of an out-of-range value is
 * undefined behaviour, and hostile input can hold any number. */
static inline int64_t isc_d2i(double v)
{
	if (!(v == v)) {
		return 0;
	}
	if (v >= 9.2e18) {
		return INT64_MAX;
	}
	if (v <= -9.2e18) {
		return INT64_MIN;
	}
	return (int64_t)v;
}

#endif /* ISC_JSONNUM_H */
