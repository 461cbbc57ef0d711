/* SPDX-License-Identifier: MIT */
/*
 * The duration clock of the system-call hooks (host.h, isc_sys_clock()).
 *
 * A short system call must cost at most 40 ns more under the preload, and two
 * clock_gettime calls are 32 of them here (16 ns each, vDSO). The invariant TSC is
 * read in 7 ns, so where the CPU has one and the kernel trusts it (its clocksource
 * is "tsc"), the hooks time calls in TSC cycles and convert to nanoseconds only
 * when something is written: at the threshold comparison (in cycles, precomputed)
 * and when an event or the aggregates are written. Timestamps in the trace stay
 * CLOCK_MONOTONIC (the slow path reads isc_now() and subtracts the duration).
 *
 * Calibration: a 100 µs spin against CLOCK_MONOTONIC at start (about 1e-4
 * relative error), refined on every collector tick over the whole run so far.
 * Elsewhere the clock is isc_now() itself and the unit is the nanosecond.
 */
#include <cpuid.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "preload/core/capture.h"
#include "preload/core/collector.h"
#include "common/config.h"
#include "preload/hooks/host/host.h"

#define SPIN_NS 100000u

static uint64_t base_ns, base_tsc;

static bool invariant_tsc(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8))) {
		return false;
	}
	char buf[32] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
	}
	return strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == '\0');
}

static uint64_t ns_to_units(uint64_t ns)
{
	if (ns == UINT64_MAX) {
		return UINT64_MAX;
	}
	double u = (double)ns / ((double)isc_sys.mult / 4294967296.0);
	return u >= 1.8e19 ? UINT64_MAX : (uint64_t)u;
}

/* The threshold and the capture window in clock units, after each calibration. */
static void derive(void)
{
	isc_sys.threshold = ns_to_units(isc_config.syscall_threshold_ns);
	if (!isc_sys.tsc) {
		isc_sys.from = isc_capture.from_ns;
		isc_sys.until = isc_capture.until_ns;
		return;
	}
	uint64_t from = isc_capture.from_ns, until = isc_capture.until_ns;
	isc_sys.from = from > base_ns ? base_tsc + ns_to_units(from - base_ns) : 0;
	isc_sys.until = until == UINT64_MAX ? UINT64_MAX : base_tsc + ns_to_units(until - base_ns);
}

static void calibrate(uint64_t now_ns, uint64_t now_tsc)
{
	if (now_tsc <= base_tsc || now_ns <= base_ns) {
		return;
	}
	double m = (double)(now_ns - base_ns) / (double)(now_tsc - base_tsc) * 4294967296.0;
	__atomic_store_n(&isc_sys.mult, (uint64_t)m, __ATOMIC_RELAXED);
	derive();
}

static void tick(uint64_t now)
{
	(void)now;
	calibrate(isc_now(), __rdtsc());
}

uint64_t isc_sys_units_to_ns(uint64_t units)
{
	return (uint64_t)(((unsigned __int128)units * isc_sys.mult) >> 32);
}

void isc_host_clock_init(void)
{
	isc_sys.mult = 1ull << 32; /* nanoseconds: one unit is 1 ns */
	isc_sys.tsc = invariant_tsc();
	if (!isc_sys.tsc) {
		derive();
		return;
	}
	base_ns = isc_now();
	base_tsc = __rdtsc();
	uint64_t ns;
	do {
		ns = isc_now();
	} while (ns - base_ns < SPIN_NS);
	calibrate(ns, __rdtsc());
	isc_collector_add_tick(tick);
}
