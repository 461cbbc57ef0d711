/* SPDX-License-Identifier: MIT */
/*
 * The one clock: CLOCK_MONOTONIC in nanoseconds.
 *
 * Every timestamp in a trace (host records, GPU records through CUPTI's timestamp
 * callback, counter samples) comes from this function, so the analyzer never has
 * to align clock domains. clock_gettime(CLOCK_MONOTONIC) is a vDSO call (~16 ns
 * here, no syscall) and is async-signal-safe. Swapping in a calibrated TSC later
 * means changing this function only.
 */
#ifndef ISC_CLOCK_H
#define ISC_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t isc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t isc_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* ISC_CLOCK_H */
