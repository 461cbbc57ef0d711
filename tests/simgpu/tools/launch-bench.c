/* SPDX-License-Identifier: MIT */
/*
 * What one cudaLaunchKernel costs on the simulator besides its modelled busy
 * wait, so that measurements of an interposer on top of it can subtract it.
 * Run with SIMGPU_LAUNCH_COST_NS=0; pass "cupti" to have the simulated CUPTI
 * record every launch (RUNTIME + CONCURRENT_KERNEL), as a profiler would.
 *
 *   launch-bench [launches] [cupti]
 */
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char kernel;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max)
{
	*size = 8u << 20;
	*buffer = malloc(*size);
	*max = 0;
}

static void CUPTIAPI on_complete(CUcontext c, uint32_t s, uint8_t *buffer, size_t size,
				 size_t valid)
{
	free(buffer);
}

static int start_cupti(void)
{
	void *lib = dlopen(SIMGPU_CUPTI_PATH, RTLD_NOW);
	__typeof__(cuptiActivityRegisterCallbacks) *reg;
	__typeof__(cuptiActivityEnable) *enable;

	if (!lib) {
		fprintf(stderr, "%s\n", dlerror());
		return -1;
	}
	reg = (__typeof__(reg))dlsym(lib, "cuptiActivityRegisterCallbacks");
	enable = (__typeof__(enable))dlsym(lib, "cuptiActivityEnable");
	reg(on_request, on_complete);
	enable(CUPTI_ACTIVITY_KIND_RUNTIME);
	enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	bool cupti = argc > 2 && strcmp(argv[2], "cupti") == 0;
	dim3 one = { 1, 1, 1 };
	uint64_t start;
	uint64_t elapsed;
	long i;

	if (cupti && start_cupti() < 0) {
		return 1;
	}
	cudaFree(NULL);
	for (i = 0; i < 1000; i++) {
		cudaLaunchKernel(&kernel, one, one, NULL, 0, NULL);
	}
	start = now_ns();
	for (i = 0; i < n; i++) {
		cudaLaunchKernel(&kernel, one, one, NULL, 0, NULL);
	}
	elapsed = now_ns() - start;
	printf("cudaLaunchKernel%s: %.0f ns per call (%ld calls)\n", cupti ? " with CUPTI" : "",
	       (double)elapsed / (double)n, n);
	return 0;
}
