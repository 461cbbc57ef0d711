/* SPDX-License-Identifier: MIT */
/*
 * Scenario: copy bound, from pageable host memory.
 * Verdict: memory_bound. Top suggestion: pinned memory for host-to-device copies
 * (cudaMallocHost / cudaHostRegister): the 32 MiB uploads come from malloc'd
 * pageable memory, run at a fraction of the pinned bandwidth and block the host.
 *
 * 40 iterations of a 32 MiB pageable upload (cudaMemcpy), a 0.4 ms kernel and an
 * 8 MiB pageable download. Copies take ~85 % of the time.
 *
 * Fixed (argument "pinned", the change copy.pageable simulates): the same copies from
 * cudaMallocHost buffers.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/workloads/common/workload.h"

static const char preprocess;

int main(int argc, char **argv)
{
	size_t in_bytes = 32u << 20;
	size_t out_bytes = 8u << 20;
	bool pinned = wl_knob(argc, argv, "pinned");
	char *input = NULL;
	char *output = NULL;
	void *dev = NULL;
	struct wl w;
	int i;

	wl_start(&w, "copy_pageable");
	if (pinned) {
		WL_CUDA(&w, cudaMallocHost((void **)&input, in_bytes));
		WL_CUDA(&w, cudaMallocHost((void **)&output, out_bytes));
		pinned = w.gpu; /* without a GPU, pageable memory for the CPU part */
	}
	if (!pinned) {
		input = malloc(in_bytes);
		output = malloc(out_bytes);
	}
	if (!input || !output) {
		return 1;
	}
	memset(input, 1, in_bytes);
	wl_kernel(&preprocess, "normalize_images", 400000);
	WL_CUDA(&w, cudaMalloc(&dev, in_bytes));
	for (i = 0; i < 40 && w.gpu; i++) {
		inferscope_range_push("batch");
		WL_CUDA(&w, cudaMemcpy(dev, input, in_bytes, cudaMemcpyHostToDevice));
		wl_launch(&w, &preprocess, 1024, 256, NULL);
		WL_CUDA(&w, cudaMemcpy(output, dev, out_bytes, cudaMemcpyDeviceToHost));
		inferscope_range_pop();
	}
	if (pinned) {
		WL_CUDA(&w, cudaFreeHost(input));
		WL_CUDA(&w, cudaFreeHost(output));
	} else {
		free(input);
		free(output);
	}
	return wl_finish(&w);
}
