/* SPDX-License-Identifier: MIT */
/*
 * Scenario: launch bound (thousands of tiny kernels).
 * Verdict: cpu_bound (the host spends its time launching; the GPU idles between
 * kernels). Top suggestion: many tiny kernels: capture the step with CUDA Graphs
 * or fuse the element-wise kernels.
 *
 * 60 steps of 1,000 launches of 1-1.5 µs element-wise kernels, one stream
 * synchronisation per step: ~60,000 launches; each launch costs the host a few µs
 * (SIMGPU_LAUNCH_COST_NS), more than the kernel runs.
 */
#include "tests/workloads/common/workload.h"

static const char add;
static const char mul;
static const char gelu;
static const char cast;

int main(void)
{
	const void *kernels[] = { &add, &mul, &gelu, &cast };
	struct wl w;
	int step;
	int i;

	wl_start(&w, "launch_bound");
	wl_kernel(&add, "elementwise_add", 1000);
	wl_kernel(&mul, "elementwise_mul", 1000);
	wl_kernel(&gelu, "gelu_fwd", 1500);
	wl_kernel(&cast, "cast_fp32_bf16", 1200);
	for (step = 0; step < 60 && w.gpu; step++) {
		inferscope_range_push("step");
		for (i = 0; i < 1000 && w.gpu; i++) {
			wl_launch(&w, kernels[i % 4], 8, 128, NULL);
		}
		WL_CUDA(&w, cudaStreamSynchronize(NULL));
		inferscope_range_pop();
	}
	return wl_finish(&w);
}
