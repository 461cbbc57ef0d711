/* SPDX-License-Identifier: MIT */
/*
 * The exported launch family and what nvcc-generated code calls: module and
 * function registration at load time, the call configuration stack of `<<<>>>`,
 * and CUDA 13's __cudaGetKernel/__cudaLaunchKernel. Registration happens in
 * constructors before main, so it neither initialises the simulator nor makes
 * API records (CUPTI cannot be attached that early).
 */
#include <stdlib.h>
#include <string.h>

#include "tests/simgpu/runtime/sim.h"

#define CONFIG_DEPTH 16

struct call_config {
	dim3 grid;
	dim3 block;
	size_t smem;
	cudaStream_t stream;
};

static __thread struct call_config config_stack[CONFIG_DEPTH];
static __thread unsigned config_depth;

SIM_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
					size_t sharedMem, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaLaunchKernel_v7000), "cudaLaunchKernel", 0);

	if (err == cudaSuccess) {
		err = isc_sim_launch(&c, isc_sim_kernel_get(func, true), gridDim, blockDim,
				     sharedMem, stream, false);
	}
	return isc_sim_leave(&c, err);
}

cudaError_t isc_sim_launch_ex(struct isc_sim_call *c, const cudaLaunchConfig_t *config,
			      const void *func, bool ptsz)
{
	if (!config) {
		return cudaErrorInvalidValue;
	}
	return isc_sim_launch(c, isc_sim_kernel_get(func, true), config->gridDim, config->blockDim,
			      config->dynamicSmemBytes, config->stream, ptsz);
}

SIM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
					   void **args)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaLaunchKernelExC_v11060), "cudaLaunchKernelExC", 0);

	if (err == cudaSuccess) {
		err = isc_sim_launch_ex(&c, config, func, false);
	}
	return isc_sim_leave(&c, err);
}

/* A cudaKernel_t must be one this runtime handed out. */
static struct CUkern_st *handle_kernel(cudaKernel_t kernel)
{
	struct CUkern_st *k = isc_sim_kernel_get(kernel, false);

	return k == kernel ? k : NULL;
}

SIM_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
					  void **args, size_t sharedMem, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(__cudaLaunchKernel_v13000), "__cudaLaunchKernel", 0);

	if (err == cudaSuccess) {
		err = isc_sim_launch(&c, handle_kernel(kernel), gridDim, blockDim, sharedMem,
				     stream, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
					       void **args, size_t sharedMem, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(__cudaLaunchKernel_ptsz_v13000),
					"__cudaLaunchKernel_ptsz", 0);

	if (err == cudaSuccess) {
		err = isc_sim_launch(&c, handle_kernel(kernel), gridDim, blockDim, sharedMem,
				     stream, true);
	}
	return isc_sim_leave(&c, err);
}

static cudaError_t get_kernel(uint32_t cbid, const char *name, cudaKernel_t *out, const void *func)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, cbid, name, 0);
	struct CUkern_st *k;

	if (err == cudaSuccess) {
		k = func ? isc_sim_kernel_get(func, true) : NULL;
		if (!out || !k) {
			err = cudaErrorInvalidDeviceFunction;
		} else {
			*out = k;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	return get_kernel(SIM_CBID(__cudaGetKernel_v13000), "__cudaGetKernel", kernel, func);
}

SIM_EXPORT cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
	return get_kernel(SIM_CBID(cudaGetKernel_v12000), "cudaGetKernel", kernelPtr,
			  entryFuncAddr);
}

SIM_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
						struct CUstream_st *stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(__cudaPushCallConfiguration_v13000),
					"__cudaPushCallConfiguration", 0);

	if (config_depth == CONFIG_DEPTH) {
		err = cudaErrorInvalidConfiguration;
	} else {
		struct call_config *cfg = &config_stack[config_depth++];

		cfg->grid = gridDim;
		cfg->block = blockDim;
		cfg->smem = sharedMem;
		cfg->stream = stream;
	}
	return isc_sim_leave(&c, err) == cudaSuccess ? 0 : 1;
}

SIM_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
						  void *stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(__cudaPopCallConfiguration_v13000),
					"__cudaPopCallConfiguration", 0);

	if (config_depth == 0) {
		err = cudaErrorMissingConfiguration;
	} else {
		struct call_config *cfg = &config_stack[--config_depth];

		*gridDim = cfg->grid;
		*blockDim = cfg->block;
		*sharedMem = cfg->smem;
		*(cudaStream_t *)stream = cfg->stream;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaFuncGetName_v12030), "cudaFuncGetName", 0);
	struct CUkern_st *k = err == cudaSuccess ? isc_sim_kernel_get(func, false) : NULL;

	if (err == cudaSuccess) {
		if (!name) {
			err = cudaErrorInvalidValue;
		} else if (!k) {
			err = cudaErrorInvalidDeviceFunction;
		} else {
			*name = k->name;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaFuncGetAttributes_v3020),
					"cudaFuncGetAttributes", 0);
	struct CUkern_st *k = err == cudaSuccess ? isc_sim_kernel_get(func, false) : NULL;

	if (err == cudaSuccess) {
		if (!attr) {
			err = cudaErrorInvalidValue;
		} else if (!k) {
			err = cudaErrorInvalidDeviceFunction;
		} else {
			memset(attr, 0, sizeof(*attr));
			attr->sharedSizeBytes = k->static_smem;
			attr->numRegs = (int)k->registers;
			attr->maxThreadsPerBlock = 1024;
			attr->ptxVersion = 90;
			attr->binaryVersion = 90;
			attr->maxDynamicSharedSizeBytes = 48 * 1024 - (int)k->static_smem;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr,
					    int value)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaFuncSetAttribute_v9000), "cudaFuncSetAttribute", 0);

	if (err == cudaSuccess && !isc_sim_kernel_get(func, true)) {
		err = cudaErrorInvalidDeviceFunction;
	}
	return isc_sim_leave(&c, err);
}

/* Theoretical occupancy from the H100 per-SM limits: threads, registers, shared memory. */
static int occupancy(const struct CUkern_st *k, int block, size_t dyn_smem)
{
	int warps = (block + 31) / 32;
	int by_threads = 2048 / (warps * 32);
	int regs_per_warp = (((int)k->registers * 32) + 255) / 256 * 256;
	int by_regs = regs_per_warp ? 65536 / (regs_per_warp * warps) : 32;
	size_t smem = k->static_smem + dyn_smem + 1024;
	int by_smem = (int)((228u * 1024u) / smem);
	int n = 32;

	n = by_threads < n ? by_threads : n;
	n = by_regs < n ? by_regs : n;
	return by_smem < n ? by_smem : n;
}

SIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
								     const void *func,
								     int blockSize,
								     size_t dynamicSMemSize)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000),
			      "cudaOccupancyMaxActiveBlocksPerMultiprocessor", 0);
	struct CUkern_st *k = err == cudaSuccess ? isc_sim_kernel_get(func, true) : NULL;

	if (err == cudaSuccess) {
		if (!numBlocks || blockSize <= 0 || blockSize > 1024) {
			err = cudaErrorInvalidValue;
		} else if (!k) {
			err = cudaErrorInvalidDeviceFunction;
		} else {
			*numBlocks = occupancy(k, blockSize, dynamicSMemSize);
		}
	}
	return isc_sim_leave(&c, err);
}

/* ---- what nvcc's generated host code calls at load time ---- */

SIM_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
	void **handle = calloc(1, sizeof(void *));

	if (handle) {
		*handle = fatCubin;
	}
	return handle;
}

SIM_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
}

SIM_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	free(fatCubinHandle);
}

/* The device name is the mangled one, which is what CUPTI reports for kernels. */
SIM_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
				       const char *deviceName, int thread_limit, uint3 *tid,
				       uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
	struct CUkern_st *k = isc_sim_kernel_get(hostFun, false);
	const char *name;

	if (!k) {
		isc_sim_kernel_create(hostFun, deviceName);
		return;
	}
	pthread_mutex_lock(&isc_sim_lock);
	name = k->user_registered ? NULL : k->name;
	pthread_mutex_unlock(&isc_sim_lock);
	if (name && strcmp(name, deviceName) != 0) {
		name = isc_sim_intern(deviceName);
		pthread_mutex_lock(&isc_sim_lock);
		k->name = name;
		pthread_mutex_unlock(&isc_sim_lock);
	}
}

SIM_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
				  const char *deviceName, int ext, size_t size, int constant,
				  int global)
{
}

/* Managed variables are reached through a host pointer: give it real memory. */
SIM_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
					 char *deviceAddress, const char *deviceName, int ext,
					 size_t size, int constant, int global)
{
	if (hostVarPtrAddress && !*hostVarPtrAddress) {
		*hostVarPtrAddress = calloc(1, size ? size : 1);
	}
}

SIM_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
	return 1;
}
