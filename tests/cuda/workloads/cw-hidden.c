/* SPDX-License-Identifier: MIT */
/*
 * Launches no interposer can see: the simulator's stand-ins for cuBLAS's private
 * static runtime and for Triton's driver-API launches. `only` makes no intercepted
 * call at all (CUPTI must then come from the driver's injection); `mixed` adds an
 * ordinary launch and a synchronisation. Prints hidden=<launches> and
 * injections=<InitializeInjection calls>. Exits 0 on the real runtime (no simulator).
 */
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "tests/cuda/workloads/cw.h"

void cw_visible_kernel(void);
void cw_visible_kernel(void)
{
}

typedef int (*hidden_fn)(int, const char *, uint64_t, unsigned, unsigned, unsigned, unsigned,
			 unsigned, unsigned, size_t, void *);

int main(int argc, char **argv)
{
	bool only = argc > 1 && strcmp(argv[1], "only") == 0;
	hidden_fn hidden = (hidden_fn)simgpu_lookup("simgpu_launch_hidden");
	int (*injections)(void) = (int (*)(void))simgpu_lookup("simgpu_injection_count");
	long n = 0;
	if (hidden == NULL) {
		cw_report("hidden", 0);
		return 0;
	}
	for (int i = 0; i < 3; i++) {
		hidden(SIMGPU_HIDDEN_STATIC_RUNTIME, "cublas_gemm", 30000, 16, 1, 1, 128, 1, 1, 0,
		       NULL);
		hidden(SIMGPU_HIDDEN_DRIVER, "triton_fused", 20000, 8, 1, 1, 256, 1, 1, 4096, NULL);
		n += 2;
	}
	if (only) {
		struct timespec ts = { 0, 5 * 1000 * 1000 }; /* the device finishes */
		nanosleep(&ts, NULL);
	} else {
		dim3 grid = { 2, 1, 1 }, block = { 32, 1, 1 };
		cw_register((const void *)cw_visible_kernel, "visible_kernel", 10000);
		cudaLaunchKernel((const void *)cw_visible_kernel, grid, block, NULL, 0, NULL);
		cudaDeviceSynchronize();
	}
	cw_report("hidden", n);
	cw_report("injections", injections ? injections() : -1);
	return 0;
}
