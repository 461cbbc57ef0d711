/* SPDX-License-Identifier: MIT */
/*
 * Cost of a scope through the public API (push + pop), run with and without the
 * preload by bench/run-core.sh. Usage: bench-scopes [SCOPES]
 */
#include <inferscope/inferscope.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	double t0 = now();
	for (long i = 0; i < n; i++) {
		inferscope_range_push("bench_scope");
		inferscope_range_pop();
	}
	double t1 = now();
	printf("scopes n=%ld active=%d ns_per_scope=%.1f\n", n, inferscope_active(),
	       (t1 - t0) * 1e9 / n);
	return 0;
}
