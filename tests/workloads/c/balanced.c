/* SPDX-License-Identifier: MIT */
/*
 * Scenario: balanced, with preprocessing overlapped with GPU work.
 * Verdict: balanced. Top suggestion: no single bottleneck: host preprocessing
 * (~2 ms a batch) and GPU work (~2 ms a batch) already overlap, so speeding up
 * only one side gains little; look at both (or at larger batches).
 *
 * 120 batches, double-buffered: the host tokenises batch i+1 while the GPU runs
 * batch i (pinned upload, three kernels, download) on its own stream; an event
 * per buffer guards its reuse.
 *
 * Fixed (argument "tokenize=F"): tokenising takes F x its CPU time (--what-if
 * 'scope:preprocess*F': one side faster gains little).
 */
#include "tests/workloads/common/workload.h"

#define BATCHES 120

static const char encoder;
static const char decoder;
static const char sampler;

int main(int argc, char **argv)
{
	double tokenize = wl_knob_factor(argc, argv, "tokenize", 1.0);
	cudaStream_t stream = NULL;
	cudaEvent_t done[2] = { NULL, NULL };
	void *host[2] = { NULL, NULL };
	void *dev = NULL;
	struct wl w;
	int b;

	wl_start(&w, "balanced");
	wl_kernel(&encoder, "encoder_fwd", 900000);
	wl_kernel(&decoder, "decoder_fwd", 900000);
	wl_kernel(&sampler, "sampler", 100000);
	WL_CUDA(&w, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	for (b = 0; b < 2; b++) {
		WL_CUDA(&w, cudaMallocHost(&host[b], 1 << 20));
		WL_CUDA(&w, cudaEventCreateWithFlags(&done[b], cudaEventDisableTiming));
	}
	WL_CUDA(&w, cudaMalloc(&dev, 16 << 20));
	for (b = 0; b < BATCHES; b++) {
		int slot = b % 2;

		if (b >= 2) {
			WL_CUDA(&w, cudaEventSynchronize(done[slot]));
		}
		inferscope_range_push("preprocess");
		wl_tokenize((uint64_t)(2000000 * tokenize));
		inferscope_range_pop();
		if (!w.gpu) {
			continue;
		}
		WL_CUDA(&w,
			cudaMemcpyAsync(dev, host[slot], 1 << 20, cudaMemcpyHostToDevice, stream));
		wl_launch(&w, &encoder, 132, 256, stream);
		wl_launch(&w, &decoder, 132, 256, stream);
		wl_launch(&w, &sampler, 8, 256, stream);
		WL_CUDA(&w, cudaMemcpyAsync(host[slot], dev, 4096, cudaMemcpyDeviceToHost, stream));
		WL_CUDA(&w, cudaEventRecord(done[slot], stream));
	}
	WL_CUDA(&w, cudaStreamSynchronize(stream));
	return wl_finish(&w);
}
