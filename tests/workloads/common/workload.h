/* SPDX-License-Identifier: MIT */
/*
 * Shared by the scenario workloads (tests/workloads/README.md). A workload links
 * libcudart.so.13 by soname, so the same binary runs on the simulator (the build
 * tree's RUNPATH) or on the real runtime (LD_LIBRARY_PATH=/usr/local/cuda/lib64).
 * Every CUDA call goes through wl_cuda(): the first failure is printed with its
 * name and code, the GPU part stops, the CPU part carries on, and the workload
 * still exits with status 0. Simulator-only calls (kernel durations) are looked
 * up at run time and skipped if absent; phases are annotated with InferScope's
 * public API (<inferscope/inferscope.h>), a no-op without the preload.
 */
#ifndef WL_WORKLOAD_H
#define WL_WORKLOAD_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <inferscope/inferscope.h>

struct wl {
	const char *name;
	bool gpu;	   /* false once a CUDA call failed */
	cudaError_t error; /* the first failure */
	const char *failed_call;
	uint64_t start_ns;
};

/* Starts a workload: prints nothing, looks up the optional hooks. */
void wl_start(struct wl *w, const char *name);

/* True when @p err is cudaSuccess; otherwise reports the first failure and stops the GPU part. */
bool wl_cuda(struct wl *w, const char *call, cudaError_t err);
/* Makes @p call only while the GPU part runs. */
#define WL_CUDA(w, call) ((void)((w)->gpu && wl_cuda((w), #call, (call))))

/* Prints the summary line the tests read, and returns the exit status (0). */
int wl_finish(struct wl *w);

/* The simulated duration of a kernel (a no-op on the real runtime). */
void wl_kernel(const void *func, const char *name, uint64_t duration_ns);

/* Launches @p func with a 1-D configuration. */
bool wl_launch(struct wl *w, const void *func, unsigned grid, unsigned block, cudaStream_t s);

/* Tokenisation-like string work for @p cpu_ns of this thread's CPU time. */
uint64_t wl_tokenize(uint64_t cpu_ns);

uint64_t wl_now_ns(void);

/*
 * The fix a before/after pair applies (docs/causal-pairs.md): true when NAME is one of the
 * program's arguments. wl_knob_factor() reads "NAME=F" (a positive factor), else dflt.
 */
bool wl_knob(int argc, char **argv, const char *name);
double wl_knob_factor(int argc, char **argv, const char *name, double dflt);

#endif /* WL_WORKLOAD_H */
