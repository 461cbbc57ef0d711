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
 *
 * Fixed (argument "graph", the change launch.tiny-kernels simulates): the step's 1,000
 * launches are captured once in a CUDA graph, and each step is one cudaGraphLaunch.
 */
#include "tests/workloads/common/workload.h"

static const char add;
static const char mul;
static const char gelu;
static const char cast;

static void launch_step(struct wl *w, const void *const *kernels, cudaStream_t s)
{
	int i;

	for (i = 0; i < 1000 && w->gpu; i++) {
		wl_launch(w, kernels[i % 4], 8, 128, s);
	}
}

int main(int argc, char **argv)
{
	const void *kernels[] = { &add, &mul, &gelu, &cast };
	bool graph = wl_knob(argc, argv, "graph");
	cudaStream_t stream = NULL;
	cudaGraph_t g = NULL;
	cudaGraphExec_t exec = NULL;
	struct wl w;
	int step;

	wl_start(&w, "launch_bound");
	wl_kernel(&add, "elementwise_add", 1000);
	wl_kernel(&mul, "elementwise_mul", 1000);
	wl_kernel(&gelu, "gelu_fwd", 1500);
	wl_kernel(&cast, "cast_fp32_bf16", 1200);
	if (graph) {
		/* Capture needs a stream of its own (the legacy stream cannot be captured). */
		WL_CUDA(&w, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
		WL_CUDA(&w, cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
		launch_step(&w, kernels, stream);
		WL_CUDA(&w, cudaStreamEndCapture(stream, &g));
		WL_CUDA(&w, cudaGraphInstantiate(&exec, g, 0));
	}
	for (step = 0; step < 60 && w.gpu; step++) {
		inferscope_range_push("step");
		if (graph) {
			WL_CUDA(&w, cudaGraphLaunch(exec, stream));
		} else {
			launch_step(&w, kernels, stream);
		}
		WL_CUDA(&w, cudaStreamSynchronize(stream));
		inferscope_range_pop();
	}
	return wl_finish(&w);
}
