/* SPDX-License-Identifier: MIT */
/*
 * An "extension module": a shared library that links libcudart, loaded RTLD_LOCAL
 * by a program that does not (cw-dlopen, or Python's ctypes), as Python loads
 * extension modules. Its runtime is then outside the global scope, where
 * RTLD_NEXT cannot find it.
 */
#include <cuda_runtime_api.h>

#include "tests/cuda/workloads/cw.h"

int cw_ext_run(void) __attribute__((visibility("default")));

static void ext_kernel(void)
{
}

static char host[16384];

int cw_ext_run(void)
{
	void *d = NULL;
	cudaStream_t s = NULL;
	int prio = 0;
	dim3 grid = { 4, 1, 1 }, block = { 128, 1, 1 };
	int calls = 0;
	cw_register((const void *)ext_kernel, "ext_kernel", 15000);
	cudaMalloc(&d, sizeof(host)), calls++;
	/* calls only the generated hooks interpose */
	cudaStreamCreate(&s), calls++;
	cudaStreamGetPriority(s, &prio), calls++;
	cudaStreamDestroy(s), calls++;
	cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice), calls++;
	cudaLaunchKernel((const void *)ext_kernel, grid, block, NULL, 0, NULL), calls++;
	cudaDeviceSynchronize(), calls++;
	cudaFree(d), calls++;
	return calls;
}
