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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

/*
 * The library's own timeouts (waiting for the collector to stop, for CUPTI's start,
 * for a snapshot) run on the kernel's clock and sleep in the kernel, by system call:
 * a program that interposes clock_gettime or nanosleep (libfaketime, the simulated
 * GPU's virtual time) moves its own clock, never how long we wait.
 */
static inline uint64_t isc_kernel_now(void)
{
	struct timespec ts = { 0, 0 };

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void isc_kernel_sleep(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	syscall(SYS_nanosleep, &ts, NULL);
}

#endif /* ISC_CLOCK_H */
