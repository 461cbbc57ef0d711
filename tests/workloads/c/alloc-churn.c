/* SPDX-License-Identifier: MIT */
/*
 * Scenario: cudaMalloc/cudaFree every iteration.
 * Verdict: cpu_bound (the host spends its time in the allocator while the GPU
 * idles; cudaFree also synchronises the device). Top suggestion: device
 * allocation in the steady state: reuse buffers (a caching allocator) or use
 * stream-ordered cudaMallocAsync pools.
 *
 * 1,000 iterations of cudaMalloc(256 MiB), a pinned 1 MiB upload, a 100 µs kernel
 * and cudaFree.
 *
 * Fixed (argument "reuse", the change alloc.device-steady-state simulates): one
 * buffer allocated before the loop and freed after it.
 */
#include "tests/workloads/common/workload.h"

static const char compute;

int main(int argc, char **argv)
{
	bool reuse = wl_knob(argc, argv, "reuse");
	void *kept = NULL;
	void *host = NULL;
	struct wl w;
	int i;

	wl_start(&w, "alloc_churn");
	wl_kernel(&compute, "conv2d_fwd", 100000);
	WL_CUDA(&w, cudaMallocHost(&host, 1 << 20));
	if (reuse) {
		WL_CUDA(&w, cudaMalloc(&kept, 256u << 20));
	}
	for (i = 0; i < 1000 && w.gpu; i++) {
		void *dev = NULL;

		inferscope_range_push("iteration");
		if (reuse) {
			dev = kept;
		} else {
			WL_CUDA(&w, cudaMalloc(&dev, 256u << 20));
		}
		WL_CUDA(&w, cudaMemcpyAsync(dev, host, 1 << 20, cudaMemcpyHostToDevice, NULL));
		wl_launch(&w, &compute, 264, 256, NULL);
		if (!reuse) {
			WL_CUDA(&w, cudaFree(dev));
		}
		inferscope_range_pop();
	}
	if (reuse) {
		WL_CUDA(&w, cudaFree(kept));
	}
	return wl_finish(&w);
}
