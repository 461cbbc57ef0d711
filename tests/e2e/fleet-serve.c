/* SPDX-License-Identifier: MIT */
/*
 * A long-running server on the simulated GPU for the flight recorder's end-to-end test
 * (issue 14, "Done means"): steps ("step" scopes) that upload a request, run three
 * kernels and download the result, then synchronise, until it is killed or its time
 * is up. Usage: fleet-serve SECONDS. Prints "ready <pid>" after the first step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/workloads/common/workload.h"

#define IN_BYTES (1u << 20)
#define OUT_BYTES (256u << 10)

static const char embed;
static const char decoder;
static const char lm_head;

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 60;
	cudaStream_t stream = NULL;
	void *in = NULL, *out = NULL, *dev = NULL;
	struct wl w;

	wl_start(&w, "fleet_serve");
	wl_kernel(&embed, "embed_tokens", 100000);
	wl_kernel(&decoder, "decoder_layers", 800000);
	wl_kernel(&lm_head, "lm_head", 200000);
	WL_CUDA(&w, cudaStreamCreate(&stream));
	WL_CUDA(&w, cudaMalloc(&dev, IN_BYTES));
	WL_CUDA(&w, cudaMallocHost(&in, IN_BYTES));
	WL_CUDA(&w, cudaMallocHost(&out, OUT_BYTES));
	uint64_t end = wl_now_ns() + (uint64_t)(secs * 1e9);
	for (unsigned long i = 0; w.gpu && wl_now_ns() < end; i++) {
		inferscope_range_push("step");
		WL_CUDA(&w, cudaMemcpyAsync(dev, in, IN_BYTES, cudaMemcpyHostToDevice, stream));
		wl_launch(&w, &embed, 64, 256, stream);
		wl_launch(&w, &decoder, 256, 256, stream);
		wl_launch(&w, &lm_head, 128, 256, stream);
		WL_CUDA(&w, cudaMemcpyAsync(out, dev, OUT_BYTES, cudaMemcpyDeviceToHost, stream));
		WL_CUDA(&w, cudaStreamSynchronize(stream));
		inferscope_range_pop();
		if (i == 0) {
			printf("ready %d\n", (int)getpid());
			fflush(stdout);
		}
	}
	return wl_finish(&w);
}
