/* SPDX-License-Identifier: MIT */
/*
 * Shared by the CUDA suite's workloads: they link libcudart.so.13 by soname (the
 * simulator through their RUNPATH, the real runtime through LD_LIBRARY_PATH) and
 * reach the simulator's own functions only when they are there.
 */
#ifndef CW_H
#define CW_H

#include <stdint.h>
#include <stdio.h>

#include "tests/simgpu/simgpu.h"

/* The simulated duration of a kernel; nothing on the real runtime. */
static inline void cw_register(const void *fn, const char *name, uint64_t ns)
{
	int (*reg)(const void *, const char *, uint64_t) = (int (*)(
		const void *, const char *, uint64_t))simgpu_lookup("simgpu_kernel_register");
	if (reg) {
		reg(fn, name, ns);
	}
}

/* Every workload says how many intercepted calls it made, for the tests to count. */
static inline void cw_report(const char *what, long n)
{
	printf("%s=%ld\n", what, n);
	fflush(stdout);
}

#endif /* CW_H */
