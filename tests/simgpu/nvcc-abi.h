/* SPDX-License-Identifier: MIT */
/*
 * The runtime entry points nvcc-generated host code calls, which the toolkit
 * declares only in C++ headers (crt/host_runtime.h, crt/device_functions.h).
 * Declared here for C, with the same prototypes: the simulator defines them and
 * tests drive them as a compiled `kernel<<<grid, block>>>()` would.
 */
#ifndef SIMGPU_NVCC_ABI_H
#define SIMGPU_NVCC_ABI_H

#include <cuda_runtime_api.h>

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
			    const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
		       const char *deviceName, int ext, size_t size, int constant, int global);
void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
			      const char *deviceName, int ext, size_t size, int constant,
			      int global);
char __cudaInitModule(void **fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
				     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
				       void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			       size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
				    size_t sharedMem, cudaStream_t stream);

#endif /* SIMGPU_NVCC_ABI_H */
