/* SPDX-License-Identifier: MIT */
/*
 * The CUDA runtime functions whose arguments InferScope decodes (hand-written hooks,
 * hook-cuda-*.c), one row each: the name (also the exported symbol, listed again in
 * libinferscope.map) and what kind of call it is. Every other function the toolkit's
 * runtime headers declare gets a generated hook (gen-cuda-hooks.py, at build time:
 * cuda-gen-fns.h's ISC_CUDA_GEN_FUNCS rows, which follow these). The row's position is
 * the function's id: the index of its real-function pointer, of its per-thread
 * counters (thread.h) and of its interned name.
 *
 * Flags:
 *   B  the host waits for the device (synchronize, a synchronous copy, cudaFree)
 *   A  an asynchronous call (launches, ...Async): the trace marks it so
 *   P  a _ptsz/_ptds variant: a NULL stream means the per-thread default stream
 *   Q  forwarded only, never recorded (__cudaGetKernel runs once per launch site)
 */
#ifndef ISC_CUDA_FNS_H
#define ISC_CUDA_FNS_H

#include "preload/cuda-gen-fns.h" /* generated in the build folder */

enum {
	ISC_CF_B = 1u << 0,
	ISC_CF_A = 1u << 1,
	ISC_CF_P = 1u << 2,
	ISC_CF_Q = 1u << 3,
	ISC_CF_AP = ISC_CF_A | ISC_CF_P,
	ISC_CF_BP = ISC_CF_B | ISC_CF_P,
	ISC_CF_0 = 0,
};

#define ISC_CUDA_FUNCS(X)                                    \
	/* launches (hook-cuda-launch.c) */                  \
	X(cudaLaunchKernel, A)                               \
	X(cudaLaunchKernel_ptsz, AP)                         \
	X(__cudaLaunchKernel, A)                             \
	X(__cudaLaunchKernel_ptsz, AP)                       \
	X(cudaLaunchKernelExC, A)                            \
	X(cudaLaunchKernelExC_ptsz, AP)                      \
	X(cudaLaunchCooperativeKernel, A)                    \
	X(cudaLaunchCooperativeKernel_ptsz, AP)              \
	X(cudaLaunchHostFunc, A)                             \
	X(cudaLaunchHostFunc_ptsz, AP)                       \
	X(cudaGraphLaunch, A)                                \
	X(cudaGraphLaunch_ptsz, AP)                          \
	X(__cudaGetKernel, Q)                                \
	/* copies (hook-cuda-copy.c) */                      \
	X(cudaMemcpy, B)                                     \
	X(cudaMemcpy_ptds, BP)                               \
	X(cudaMemcpyAsync, A)                                \
	X(cudaMemcpyAsync_ptsz, AP)                          \
	X(cudaMemcpy2D, B)                                   \
	X(cudaMemcpy2D_ptds, BP)                             \
	X(cudaMemcpy2DAsync, A)                              \
	X(cudaMemcpy2DAsync_ptsz, AP)                        \
	X(cudaMemcpy3D, B)                                   \
	X(cudaMemcpy3D_ptds, BP)                             \
	X(cudaMemcpy3DAsync, A)                              \
	X(cudaMemcpy3DAsync_ptsz, AP)                        \
	X(cudaMemcpyPeer, B)                                 \
	X(cudaMemcpyPeerAsync, A)                            \
	X(cudaMemcpy3DPeer, B)                               \
	X(cudaMemcpy3DPeer_ptds, BP)                         \
	X(cudaMemcpy3DPeerAsync, A)                          \
	X(cudaMemcpy3DPeerAsync_ptsz, AP)                    \
	X(cudaMemcpyToSymbol, B)                             \
	X(cudaMemcpyToSymbol_ptds, BP)                       \
	X(cudaMemcpyFromSymbol, B)                           \
	X(cudaMemcpyFromSymbol_ptds, BP)                     \
	X(cudaMemcpyToSymbolAsync, A)                        \
	X(cudaMemcpyToSymbolAsync_ptsz, AP)                  \
	X(cudaMemcpyFromSymbolAsync, A)                      \
	X(cudaMemcpyFromSymbolAsync_ptsz, AP)                \
	X(cudaMemcpy2DToArray, B)                            \
	X(cudaMemcpy2DToArray_ptds, BP)                      \
	X(cudaMemcpy2DFromArray, B)                          \
	X(cudaMemcpy2DFromArray_ptds, BP)                    \
	X(cudaMemcpy2DToArrayAsync, A)                       \
	X(cudaMemcpy2DToArrayAsync_ptsz, AP)                 \
	X(cudaMemcpy2DFromArrayAsync, A)                     \
	X(cudaMemcpy2DFromArrayAsync_ptsz, AP)               \
	X(cudaMemcpyBatchAsync, A)                           \
	X(cudaMemcpyBatchAsync_ptsz, AP)                     \
	/* memsets (hook-cuda-copy.c) */                     \
	X(cudaMemset, 0)                                     \
	X(cudaMemset_ptds, P)                                \
	X(cudaMemsetAsync, A)                                \
	X(cudaMemsetAsync_ptsz, AP)                          \
	X(cudaMemset2D, 0)                                   \
	X(cudaMemset2D_ptds, P)                              \
	X(cudaMemset2DAsync, A)                              \
	X(cudaMemset2DAsync_ptsz, AP)                        \
	X(cudaMemset3D, 0)                                   \
	X(cudaMemset3D_ptds, P)                              \
	X(cudaMemset3DAsync, A)                              \
	X(cudaMemset3DAsync_ptsz, AP)                        \
	/* allocation (hook-cuda-memory.c) */                \
	X(cudaMalloc, 0)                                     \
	X(cudaFree, B)                                       \
	X(cudaMallocAsync, A)                                \
	X(cudaMallocAsync_ptsz, AP)                          \
	X(cudaFreeAsync, A)                                  \
	X(cudaFreeAsync_ptsz, AP)                            \
	X(cudaMallocFromPoolAsync, A)                        \
	X(cudaMallocFromPoolAsync_ptsz, AP)                  \
	X(cudaMallocManaged, 0)                              \
	X(cudaMallocPitch, 0)                                \
	X(cudaMalloc3D, 0)                                   \
	X(cudaMallocHost, 0)                                 \
	X(cudaHostAlloc, 0)                                  \
	X(cudaFreeHost, B)                                   \
	X(cudaHostRegister, 0)                               \
	X(cudaHostUnregister, 0)                             \
	/* synchronisation and control (hook-cuda-sync.c) */ \
	X(cudaDeviceSynchronize, B)                          \
	X(cudaStreamSynchronize, B)                          \
	X(cudaStreamSynchronize_ptsz, BP)                    \
	X(cudaEventSynchronize, B)                           \
	X(cudaStreamWaitEvent, 0)                            \
	X(cudaStreamWaitEvent_ptsz, P)                       \
	X(cudaStreamQuery, 0)                                \
	X(cudaStreamQuery_ptsz, P)                           \
	X(cudaEventQuery, 0)                                 \
	X(cudaEventRecord, A)                                \
	X(cudaEventRecord_ptsz, AP)                          \
	X(cudaEventRecordWithFlags, A)                       \
	X(cudaEventRecordWithFlags_ptsz, AP)                 \
	X(cudaSetDevice, 0)                                  \
	X(cudaProfilerStart, 0)                              \
	X(cudaProfilerStop, 0)

enum isc_cuda_fn {
#define ISC_CUDA_FN_ENUM(name, flags) ISC_FN_##name,
	ISC_CUDA_FUNCS(ISC_CUDA_FN_ENUM) ISC_CUDA_GEN_FUNCS(ISC_CUDA_FN_ENUM)
#undef ISC_CUDA_FN_ENUM
		ISC_CUDA_FN_COUNT
};

/* Function names and flags, indexed by enum isc_cuda_fn (cuda-runtime.c). */
extern const char *const isc_cuda_fn_names[ISC_CUDA_FN_COUNT];
extern const unsigned char isc_cuda_fn_flags[ISC_CUDA_FN_COUNT];

#endif /* ISC_CUDA_FNS_H */
