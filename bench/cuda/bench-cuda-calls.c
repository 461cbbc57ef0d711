/* SPDX-License-Identifier: MIT */
/*
 * The timed loop of bench-cuda: N calls of one runtime function against the
 * simulated runtime, after a warm-up that also starts whatever the preload starts
 * lazily. Prints the mean nanoseconds per call, on the wall clock and on the
 * thread's CPU clock (which a shared machine's other processes do not inflate).
 * Usage: bench-cuda-calls FUNCTION N.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/simgpu/simgpu.h"

static void bench_kernel(void)
{
}

static void *pinned;
static void *device;

static cudaError_t call(int which)
{
	static const dim3 one = { 1, 1, 1 };
	switch (which) {
	case 0:
		return cudaLaunchKernel((const void *)bench_kernel, one, one, NULL, 0, NULL);
	case 1:
		return cudaMemsetAsync(device, 0, 64, NULL);
	case 2:
		return cudaMemcpyAsync(device, pinned, 64, cudaMemcpyHostToDevice, NULL);
	case 3:
		return cudaStreamQuery(NULL);
	case 4: {
		int priority;
		return cudaStreamGetPriority(NULL, &priority);
	}
	default: {
		int current;
		return cudaGetDevice(&current);
	}
	}
}

static double now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "cudaLaunchKernel",      "cudaMemsetAsync",
					     "cudaMemcpyAsync",	      "cudaStreamQuery",
					     "cudaStreamGetPriority", "cudaGetDevice" };
	int which = 3;
	long n = argc > 2 ? atol(argv[2]) : 100000;
	for (int i = 0; argc > 1 && i < 6; i++) {
		which = strcmp(argv[1], names[i]) == 0 ? i : which;
	}
	int (*reg)(const void *, const char *, uint64_t) = (int (*)(
		const void *, const char *, uint64_t))simgpu_lookup("simgpu_kernel_register");
	if (reg == NULL) {
		fprintf(stderr, "bench-cuda-calls: needs the simulated runtime\n");
		return 2;
	}
	reg((const void *)bench_kernel, "bench_kernel", 50);
	cudaMalloc(&device, 4096);
	cudaMallocHost(&pinned, 4096);
	for (int i = 0; i < 2000; i++) {
		call(which);
	}
	cudaDeviceSynchronize();
	double w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < n; i++) {
		call(which);
	}
	double c1 = now_ns(CLOCK_THREAD_CPUTIME_ID), w1 = now_ns(CLOCK_MONOTONIC);
	cudaDeviceSynchronize();
	printf("%.1f %.1f\n", (w1 - w0) / (double)n, (c1 - c0) / (double)n);
	return 0;
}
