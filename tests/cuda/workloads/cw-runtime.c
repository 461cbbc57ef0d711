/* SPDX-License-Identifier: MIT */
/*
 * One call of each family the interposer covers, in an order whose GPU work the
 * tests can predict: allocations, pageable/pinned/registered copies, every launch
 * entry point (cudaLaunchKernel, its _ptsz variant, the __cudaGetKernel +
 * __cudaLaunchKernel pair that CUDA 13's <<<>>> compiles to, cudaLaunchKernelExC),
 * memsets, events and synchronisation. On the real runtime without a GPU every call
 * fails and the program still exits 0. Prints calls=<intercepted calls made>.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuda/workloads/cw.h"

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				 cudaStream_t stream);
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			       size_t sharedMem, cudaStream_t stream);

/* Stand-ins for nvcc's host stubs; exported (-rdynamic) so their names resolve. */
void cw_kernel_a(void);
void cw_kernel_b(void);
void cw_kernel_a(void)
{
}
void cw_kernel_b(void)
{
}

#define MIB (1u << 20)

static char pageable[64 * 1024];
static char registered[64 * 1024] __attribute__((aligned(4096)));

int main(void)
{
	long calls = 0;
	void *d = NULL, *h = NULL;
	cudaStream_t s = NULL;
	cudaEvent_t ev = NULL;
	cudaKernel_t k = NULL;
	dim3 grid = { 8, 2, 1 }, block = { 256, 1, 1 };

	cw_register((const void *)cw_kernel_a, "kernel_a", 40000);
	cw_register((const void *)cw_kernel_b, "kernel_b", 25000);
	cudaStreamCreate(&s), calls++; /* generated hooks */
	cudaEventCreate(&ev), calls++;

	cudaSetDevice(0), calls++;
	cudaMalloc(&d, MIB), calls++;
	cudaMallocHost(&h, MIB), calls++;
	cudaHostRegister(registered, sizeof(registered), 0), calls++;

	cudaMemcpy(d, pageable, sizeof(pageable), cudaMemcpyHostToDevice), calls++;
	cudaMemcpyAsync(d, h, MIB, cudaMemcpyHostToDevice, s), calls++;
	cudaMemcpyAsync_ptsz(d, registered, sizeof(registered), cudaMemcpyHostToDevice, NULL);
	calls++;

	cudaLaunchKernel((const void *)cw_kernel_a, grid, block, NULL, 0, s), calls++;
	cudaLaunchKernel_ptsz((const void *)cw_kernel_a, grid, block, NULL, 1024, NULL), calls++;
	if (__cudaGetKernel(&k, (const void *)cw_kernel_b) != cudaSuccess) {
		k = NULL;
	}
	__cudaLaunchKernel(k, grid, block, NULL, 0, s), calls++;
	cudaLaunchConfig_t cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDim = grid;
	cfg.blockDim = block;
	cfg.stream = s;
	cudaLaunchKernelExC(&cfg, (const void *)cw_kernel_b, NULL), calls++;

	cudaMemsetAsync(d, 0, 4096, s), calls++;
	cudaMemset(d, 1, 4096), calls++;
	cudaMemcpy2DAsync(d, 1024, h, 1024, 512, 64, cudaMemcpyHostToDevice, s), calls++;
	cudaEventRecord(ev, s), calls++;
	cudaEventSynchronize(ev), calls++;
	cudaStreamSynchronize(s), calls++;
	cudaMemcpy(pageable, d, sizeof(pageable), cudaMemcpyDeviceToHost), calls++;
	cudaDeviceSynchronize(), calls++;

	cudaHostUnregister(registered), calls++;
	cudaFreeHost(h), calls++;
	cudaFree(d), calls++;
	cw_report("calls", calls);
	return 0;
}
