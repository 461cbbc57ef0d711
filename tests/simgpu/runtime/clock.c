/* SPDX-License-Identifier: MIT */
/*
 * Time on the virtual device: CLOCK_MONOTONIC nanoseconds, the clock InferScope
 * records with, so that simulated GPU intervals and host events share one axis.
 */
#include <errno.h>
#include <time.h>

#include "tests/simgpu/runtime/sim.h"

uint64_t isc_sim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* The host-side cost of a call: real launches spend a few µs of CPU in the driver. */
void isc_sim_busy_wait(uint64_t ns)
{
	uint64_t until;

	if (ns == 0) {
		return;
	}
	until = isc_sim_now() + ns;
	while (isc_sim_now() < until) {
		cpu_relax();
	}
}

/*
 * Blocks until the virtual device reaches @p t_ns. The default (spin-then-yield)
 * synchronisation of the real runtime spins; sleeping for all but the last
 * SIMGPU_SPIN_NS keeps the CPU cost low and still wakes on time, since the
 * kernel may add up to 50 µs of timer slack to a sleep. Blocking-sync waits
 * (cudaDeviceScheduleBlockingSync, cudaEventBlockingSync) only sleep, and wake
 * late by that slack, as the real ones do.
 */
void isc_sim_wait_until(uint64_t t_ns, bool spin)
{
	uint64_t now = isc_sim_now();
	uint64_t window = spin ? isc_sim_cfg.spin_ns : 0;

	if (now >= t_ns) {
		return;
	}
	if (t_ns - now > window) {
		uint64_t wake = t_ns - window;
		struct timespec ts = {
			.tv_sec = (time_t)(wake / 1000000000u),
			.tv_nsec = (long)(wake % 1000000000u),
		};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
			continue;
		}
	}
	while (isc_sim_now() < t_ns) {
		cpu_relax();
	}
}
