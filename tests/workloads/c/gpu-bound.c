/* SPDX-License-Identifier: MIT */
/*
 * Scenario: GPU-compute bound.
 * Verdict: gpu_bound. Top suggestion: the GPU is busy almost all the time and
 * gemm_bf16_large takes most of it: optimise the dominant kernels (tensor-core
 * precision, fusion, a better GEMM configuration); host-side changes gain nothing.
 *
 * 60 steps, each a pinned 1 MiB upload, four kernels (5.8 ms) queued back to back
 * and a download. The host waits for the step before the previous one (an event per
 * step), so one step of work is always queued: host jitter - a loaded CI machine -
 * does not leave the GPU idle, as in a real pipeline that keeps the device fed.
 * GPU busy ~98 %.
 *
 * Fixed (argument "gemm=F"): gemm_bf16_large runs F x its time (--what-if
 * 'kernel:gemm_bf16_large*F').
 *
 * Argument "queue": the host does not wait for the step before the previous one but
 * queues all the work at once; with a launch queue of limited depth
 * (SIMGPU_QUEUE_DEPTH) its launches then block on a full queue, as a GPU-bound
 * training loop's do.
 *
 * Argument "prep" (with "prep=F": F x): 1 ms of host preprocessing (scope `prep`) per
 * step before its launches - host work that a GPU-bound run hides, so that halving it
 * (the host-side change of a before/after pair) gains nothing.
 */
#include "tests/workloads/common/workload.h"

static const char gemm;
static const char attention;
static const char layernorm;

int main(int argc, char **argv)
{
	double gemm_f = wl_knob_factor(argc, argv, "gemm", 1.0);
	bool queue = wl_knob(argc, argv, "queue");
	double prep_f = wl_knob_factor(argc, argv, "prep", wl_knob(argc, argv, "prep") ? 1.0 : 0);
	cudaStream_t stream = NULL;
	cudaEvent_t done[2] = { NULL, NULL };
	void *host = NULL;
	void *dev = NULL;
	struct wl w;
	int step;

	wl_start(&w, "gpu_bound");
	wl_kernel(&gemm, "gemm_bf16_large", (uint64_t)(2000000 * gemm_f));
	wl_kernel(&attention, "flash_attention_fwd", 1500000);
	wl_kernel(&layernorm, "layernorm_fwd", 300000);
	WL_CUDA(&w, cudaStreamCreate(&stream));
	WL_CUDA(&w, cudaMallocHost(&host, 1 << 20));
	WL_CUDA(&w, cudaMalloc(&dev, 64 << 20));
	WL_CUDA(&w, cudaEventCreate(&done[0]));
	WL_CUDA(&w, cudaEventCreate(&done[1]));
	for (step = 0; step < 60 && w.gpu; step++) {
		inferscope_range_push("step");
		if (step >= 2 && !queue) {
			WL_CUDA(&w, cudaEventSynchronize(done[step % 2]));
		}
		if (prep_f > 0) {
			inferscope_range_push("prep");
			wl_tokenize((uint64_t)(1000000 * prep_f));
			inferscope_range_pop();
		}
		WL_CUDA(&w, cudaMemcpyAsync(dev, host, 1 << 20, cudaMemcpyHostToDevice, stream));
		wl_launch(&w, &gemm, 528, 256, stream);
		wl_launch(&w, &attention, 264, 128, stream);
		wl_launch(&w, &gemm, 528, 256, stream);
		wl_launch(&w, &layernorm, 132, 1024, stream);
		WL_CUDA(&w, cudaMemcpyAsync(host, dev, 1 << 20, cudaMemcpyDeviceToHost, stream));
		WL_CUDA(&w, cudaEventRecord(done[step % 2], stream));
		inferscope_range_pop();
	}
	if (w.gpu) {
		WL_CUDA(&w, cudaStreamSynchronize(stream));
	}
	return wl_finish(&w);
}
