/* SPDX-License-Identifier: MIT */
/*
 * Launches: cudaLaunchKernel, __cudaLaunchKernel (what CUDA 13's <<<>>> calls, after
 * __cudaGetKernel once per launch site), cudaLaunchKernelExC, cooperative launches,
 * host functions and graph launches, each with its _ptsz variant.
 *
 * A launch record names its kernel through the host stub's symbol, looked up once
 * per function pointer (cuda-tables.c); a cudaKernel_t handle is named after the stub
 * __cudaGetKernel was given for it. Names stay as the linker sees them (mangled C++),
 * as CUPTI reports them too.
 */
#include <cuda_runtime_api.h>

#include "preload/hooks/cuda/cuda-hook.h"

/* Prototypes the CUDA headers only give C++ (crt/device_functions.h) or builds with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM: the same as their plain function's. */
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			       size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
				    size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
				     void **args);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
					     void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);

static void describe(struct isc_launch_payload *l, const void *func, dim3 g, dim3 b, size_t smem)
{
	l->kernel = isc_kernel_name(func);
	l->grid[0] = g.x;
	l->grid[1] = g.y;
	l->grid[2] = g.z;
	l->block[0] = b.x;
	l->block[1] = b.y;
	l->block[2] = b.z;
	l->shared_bytes = smem > UINT32_MAX ? UINT32_MAX : (uint32_t)smem;
}

/* cudaLaunchKernel, cudaLaunchCooperativeKernel and __cudaLaunchKernel share a shape
 * (a cudaKernel_t is a pointer like a stub). */
typedef cudaError_t launch_fn(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
			      cudaStream_t stream);

static cudaError_t launch(unsigned fn, const void *caller, const void *func, dim3 grid, dim3 block,
			  void **args, size_t smem, cudaStream_t stream)
{
	struct isc_cuda_call c;
	launch_fn *real = (launch_fn *)isc_cuda_real(fn, caller);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	if (!isc_cuda_enter(&c, fn)) {
		return real(func, grid, block, args, smem, stream);
	}
	cudaError_t r = real(func, grid, block, args, smem, stream);
	struct isc_launch_payload l;
	describe(&l, func, grid, block, smem);
	struct isc_cuda_info info = { .stream = stream, .has_stream = true };
	isc_cuda_finish(&c, r, &info, &l);
	return r;
}

ISC_CUDA_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
					     void **args, size_t sharedMem, cudaStream_t stream)
{
	return launch(ISC_FN_cudaLaunchKernel, RA, func, gridDim, blockDim, args, sharedMem,
		      stream);
}

ISC_CUDA_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
						  void **args, size_t sharedMem,
						  cudaStream_t stream)
{
	return launch(ISC_FN_cudaLaunchKernel_ptsz, RA, func, gridDim, blockDim, args, sharedMem,
		      stream);
}

ISC_CUDA_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
					       void **args, size_t sharedMem, cudaStream_t stream)
{
	return launch(ISC_FN___cudaLaunchKernel, RA, kernel, gridDim, blockDim, args, sharedMem,
		      stream);
}

ISC_CUDA_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
						    dim3 blockDim, void **args, size_t sharedMem,
						    cudaStream_t stream)
{
	return launch(ISC_FN___cudaLaunchKernel_ptsz, RA, kernel, gridDim, blockDim, args,
		      sharedMem, stream);
}

ISC_CUDA_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim,
							dim3 blockDim, void **args,
							size_t sharedMem, cudaStream_t stream)
{
	return launch(ISC_FN_cudaLaunchCooperativeKernel, RA, func, gridDim, blockDim, args,
		      sharedMem, stream);
}

ISC_CUDA_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
							     dim3 blockDim, void **args,
							     size_t sharedMem, cudaStream_t stream)
{
	return launch(ISC_FN_cudaLaunchCooperativeKernel_ptsz, RA, func, gridDim, blockDim, args,
		      sharedMem, stream);
}

/* Forwarded only: it runs once per launch site; we learn which stub a handle is. */
ISC_CUDA_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	__typeof__(__cudaGetKernel) *real = isc_cuda_real(ISC_FN___cudaGetKernel, RA);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	cudaError_t r = real(kernel, func);
	if (r == cudaSuccess && kernel != NULL && atomic_load(&isc_cuda_on) && !isc_guarded()) {
		isc_kernel_alias(*kernel, func);
	}
	return r;
}

static cudaError_t launch_ex(unsigned fn, const void *caller, const cudaLaunchConfig_t *config,
			     const void *func, void **args)
{
	struct isc_cuda_call c;
	__typeof__(cudaLaunchKernelExC) *real = isc_cuda_real(fn, caller);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	if (config == NULL || !isc_cuda_enter(&c, fn)) {
		return real(config, func, args);
	}
	cudaError_t r = real(config, func, args);
	struct isc_launch_payload l;
	describe(&l, func, config->gridDim, config->blockDim, config->dynamicSmemBytes);
	struct isc_cuda_info info = { .stream = config->stream, .has_stream = true };
	isc_cuda_finish(&c, r, &info, &l);
	return r;
}

ISC_CUDA_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
						void **args)
{
	return launch_ex(ISC_FN_cudaLaunchKernelExC, RA, config, func, args);
}

ISC_CUDA_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
						     const void *func, void **args)
{
	return launch_ex(ISC_FN_cudaLaunchKernelExC_ptsz, RA, config, func, args);
}

static cudaError_t host_func(unsigned fn, const void *caller, cudaStream_t stream, cudaHostFn_t hfn,
			     void *user)
{
	struct isc_cuda_call c;
	__typeof__(cudaLaunchHostFunc) *real = isc_cuda_real(fn, caller);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	if (!isc_cuda_enter(&c, fn)) {
		return real(stream, hfn, user);
	}
	cudaError_t r = real(stream, hfn, user);
	struct isc_cuda_info info = { .stream = stream, .has_stream = true };
	isc_cuda_leave(&c, r, &info);
	return r;
}

ISC_CUDA_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return host_func(ISC_FN_cudaLaunchHostFunc, RA, stream, fn, userData);
}

ISC_CUDA_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn,
						    void *userData)
{
	return host_func(ISC_FN_cudaLaunchHostFunc_ptsz, RA, stream, fn, userData);
}

static cudaError_t graph_launch(unsigned fn, const void *caller, cudaGraphExec_t exec,
				cudaStream_t stream)
{
	struct isc_cuda_call c;
	__typeof__(cudaGraphLaunch) *real = isc_cuda_real(fn, caller);
	if (real == NULL) {
		return ISC_CUDA_NO_RUNTIME;
	}
	if (!isc_cuda_enter(&c, fn)) {
		return real(exec, stream);
	}
	cudaError_t r = real(exec, stream);
	struct isc_cuda_info info = { .stream = stream, .has_stream = true };
	isc_cuda_leave(&c, r, &info);
	return r;
}

ISC_CUDA_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	return graph_launch(ISC_FN_cudaGraphLaunch, RA, graphExec, stream);
}

ISC_CUDA_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	return graph_launch(ISC_FN_cudaGraphLaunch_ptsz, RA, graphExec, stream);
}

/* Exported as hidden versions of libcudart's symbol versions (cuda-hook.h). */
ISC_CUDA_VERSIONED(cudaLaunchKernel)
ISC_CUDA_VERSIONED(cudaLaunchKernel_ptsz)
ISC_CUDA_VERSIONED(__cudaLaunchKernel)
ISC_CUDA_VERSIONED(__cudaLaunchKernel_ptsz)
ISC_CUDA_VERSIONED(cudaLaunchCooperativeKernel)
ISC_CUDA_VERSIONED(cudaLaunchCooperativeKernel_ptsz)
ISC_CUDA_VERSIONED(__cudaGetKernel)
ISC_CUDA_VERSIONED(cudaLaunchKernelExC)
ISC_CUDA_VERSIONED(cudaLaunchKernelExC_ptsz)
ISC_CUDA_VERSIONED(cudaLaunchHostFunc)
ISC_CUDA_VERSIONED(cudaLaunchHostFunc_ptsz)
ISC_CUDA_VERSIONED(cudaGraphLaunch)
ISC_CUDA_VERSIONED(cudaGraphLaunch_ptsz)
