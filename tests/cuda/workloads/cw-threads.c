/* SPDX-License-Identifier: MIT */
/*
 * Threads that launch kernels and exit before the GPU has run them: the kernels'
 * records reach CUPTI's buffers after their threads are gone, and must still carry
 * the launching thread. Usage: cw-threads THREADS KERNELS_PER_THREAD [_exit]; with
 * _exit the process leaves without exit handlers, as multiprocessing children do.
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/cuda/workloads/cw.h"

void cw_slow_kernel(void);
void cw_slow_kernel(void)
{
}

static int per_thread = 4;

static void *worker(void *arg)
{
	cudaStream_t s = NULL;
	dim3 grid = { 1, 1, 1 }, block = { 64, 1, 1 };
	(void)arg;
	cudaStreamCreate(&s);
	for (int i = 0; i < per_thread; i++) {
		cudaLaunchKernel((const void *)cw_slow_kernel, grid, block, NULL, 0, s);
	}
	return NULL; /* no synchronisation: the work outlives the thread */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	per_thread = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t t[64];
	n = n > 64 ? 64 : n;
	cw_register((const void *)cw_slow_kernel, "slow_kernel", 300000);
	for (int i = 0; i < n; i++) {
		pthread_create(&t[i], NULL, worker, NULL);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
	}
	cudaDeviceSynchronize();
	cw_report("kernels", (long)n * per_thread);
	if (argc > 3 && strcmp(argv[3], "_exit") == 0) {
		_exit(0);
	}
	return 0;
}
