/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the simulator's test suites. They link the simulated runtime
 * directly (they only ever run on it) and call simgpu_* without a lookup.
 * Criterion runs every test in a fresh process, so each test sets its SIMGPU_*
 * variables before its first CUDA call and starts from a clean device.
 */
#ifndef SIMGPU_SIM_TEST_H
#define SIMGPU_SIM_TEST_H

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tests/simgpu/simgpu.h"
#include "tests/simgpu/truth/truth-reader.h"

#define CU(call)                                                                                \
	do {                                                                                    \
		cudaError_t cu_err_ = (call);                                                   \
		cr_assert_eq(cu_err_, cudaSuccess, "%s: %s", #call, cudaGetErrorName(cu_err_)); \
	} while (0)

/* Kernels are plain addresses to the simulator: any unique address will do. */
static char sim_test_kernels[16];
#define KERNEL(i) ((const void *)&sim_test_kernels[i])

static inline void kernel(int i, const char *name, uint64_t duration_ns)
{
	cr_assert_eq(simgpu_kernel_register(KERNEL(i), name, duration_ns), 0);
}

static inline void launch(int i, cudaStream_t stream)
{
	dim3 grid = { 4, 1, 1 };
	dim3 block = { 128, 1, 1 };

	CU(cudaLaunchKernel(KERNEL(i), grid, block, NULL, 0, stream));
}

static inline struct simgpu_op op_at(size_t i)
{
	struct simgpu_op op;

	cr_assert_eq(simgpu_op_get(i, &op), 0, "no operation %zu (%zu executed)", i,
		     simgpu_op_count());
	return op;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The ground truth so far, through the JSON file and its reader. */
static inline struct simgpu_truth *truth_now(void)
{
	char path[] = "/tmp/simgpu-truth-XXXXXX";
	struct simgpu_truth *t = NULL;
	char err[256];
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(simgpu_truth_write(path), 0);
	cr_assert_eq(simgpu_truth_create(path, &t, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	return t;
}

#endif /* SIMGPU_SIM_TEST_H */
