/* SPDX-License-Identifier: MIT */
/*
 * Virtual host time (libsimgpu-vtime.so, README.md "Virtual host time"): the main
 * thread's sleeps move CLOCK_MONOTONIC on without waiting, its CPU work moves it by the
 * CPU time spent, it never goes back, and other threads sleep for real. Only lower
 * bounds, and one upper bound with a margin of seconds (a skipped 10 s sleep).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long value(const char *out, const char *name)
{
	const char *p = strstr(out, name);
	cr_assert_not_null(p, "%s missing in: %s", name, out);
	return atoll(p + strlen(name) + 1);
}

Test(vtime, sleeps_skip_cpu_counts_threads_sleep)
{
	char cmd[2048], out[1024];
	snprintf(cmd, sizeof(cmd), "LD_PRELOAD=%s %s", SIMGPU_VTIME_PATH, SIMGPU_VTIME_PROBE);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	cr_assert_eq(pclose(p), 0, "%s", out);
	cr_expect_geq(value(out, "sleep_virtual"), 10000000000LL);
	cr_expect_lt(value(out, "sleep_real"), 5000000000LL, "a 10 s sleep was not skipped");
	cr_expect_geq(value(out, "abs_virtual"), 5000000000LL);
	/* The clock runs up to RESYNC_NS (50 us, vtime.c) on wall time past the last read of
	 * the CPU clock: a preemption in that stretch before the spin's first read is wall
	 * time the spin's CPU time then does not add again. */
	cr_expect_geq(value(out, "spin_virtual"), 20000000LL - 50000, "20 ms of CPU time");
	cr_expect_eq(value(out, "backwards"), 0);
	cr_expect_geq(value(out, "thread_real"), 50000000LL, "another thread sleeps for real");
}
