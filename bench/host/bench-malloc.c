/* SPDX-License-Identifier: MIT */
/*
 * malloc+free pairs in a tight loop: the hook's fast path against the allocator's
 * own (glibc's tcache pair is ~7 ns here). Prints "malloc_free_pair_ns <value>".
 * Usage: bench-malloc [PAIRS [SIZE]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 20000000;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 64;
	void *volatile sink;
	/* warm up the allocator and the hooks */
	for (long i = 0; i < 100000; i++) {
		sink = malloc(size);
		free(sink);
	}
	double best = 1e30;
	for (int round = 0; round < 5; round++) {
		double t0 = now_ns();
		for (long i = 0; i < pairs / 5; i++) {
			sink = malloc(size);
			free(sink);
		}
		double per = (now_ns() - t0) / (double)(pairs / 5);
		best = per < best ? per : best;
	}
	printf("malloc_free_pair_ns %.2f\n", best);
	return 0;
}
