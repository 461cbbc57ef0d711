/* SPDX-License-Identifier: MIT */
/*
 * The gate's bundled example (scripts/demo.sh gate, docs/ci.md): an inference loop
 * that uploads a request's input, runs three kernels and downloads the result, on the
 * simulated GPU. Host work stays negligible, so that two runs of the same code give
 * the same breakdown within a fraction of a point, even on a loaded machine.
 *
 *   example-serve              the main branch: pinned host buffers (cudaMallocHost),
 *                              copies overlap the queue, GPU compute ~80 %, gpu_bound
 *   example-serve --pageable   a pull request that allocates the buffers with malloc
 *                              (as dropping pin_memory=True does): the same copies now
 *                              run at pageable bandwidth and block the host, the GPU
 *                              computes ~55 % of the time
 *
 * The gate compares the second run with the first and fails: gpu_compute fell and
 * h2d_copy rose past their budgets, and the op diff shows the pinned copies replaced by
 * pageable ones.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tests/workloads/common/workload.h"

#define STEPS 60
#define IN_BYTES (16u << 20)
#define OUT_BYTES (2u << 20)

static const char embed;
static const char decoder;
static const char lm_head;

static bool alloc_host(struct wl *w, void **in, void **out, bool pageable)
{
	if (pageable) {
		*in = malloc(IN_BYTES);
		*out = malloc(OUT_BYTES);
	} else {
		WL_CUDA(w, cudaMallocHost(in, IN_BYTES));
		WL_CUDA(w, cudaMallocHost(out, OUT_BYTES));
	}
	if (*in != NULL) {
		memset(*in, 1, IN_BYTES);
	}
	return *in != NULL && *out != NULL;
}

/* One request; the host waits for the request before the previous one, so one is
 * always queued and host jitter does not leave the GPU idle. */
static void step(struct wl *w, cudaStream_t s, cudaEvent_t *done, int i, void *dev, void *in,
		 void *out)
{
	inferscope_range_push("request");
	if (i >= 2) {
		WL_CUDA(w, cudaEventSynchronize(done[i % 2]));
	}
	WL_CUDA(w, cudaMemcpyAsync(dev, in, IN_BYTES, cudaMemcpyHostToDevice, s));
	wl_launch(w, &embed, 256, 256, s);
	wl_launch(w, &decoder, 1024, 256, s);
	wl_launch(w, &lm_head, 512, 256, s);
	WL_CUDA(w, cudaMemcpyAsync(out, dev, OUT_BYTES, cudaMemcpyDeviceToHost, s));
	WL_CUDA(w, cudaEventRecord(done[i % 2], s));
	inferscope_range_pop();
}

int main(int argc, char **argv)
{
	bool pageable = argc > 1 && strcmp(argv[1], "--pageable") == 0;
	cudaStream_t stream = NULL;
	cudaEvent_t done[2] = { NULL, NULL };
	void *in = NULL, *out = NULL, *dev = NULL;
	struct wl w;

	wl_start(&w, pageable ? "serve_pageable" : "serve");
	wl_kernel(&embed, "embed_tokens", 300000);
	wl_kernel(&decoder, "decoder_layers", 3200000);
	wl_kernel(&lm_head, "lm_head", 500000);
	WL_CUDA(&w, cudaStreamCreate(&stream));
	WL_CUDA(&w, cudaEventCreate(&done[0]));
	WL_CUDA(&w, cudaEventCreate(&done[1]));
	WL_CUDA(&w, cudaMalloc(&dev, IN_BYTES));
	if (w.gpu && !alloc_host(&w, &in, &out, pageable)) {
		return 1;
	}
	for (int i = 0; i < STEPS && w.gpu; i++) {
		step(&w, stream, done, i, dev, in, out);
	}
	WL_CUDA(&w, cudaStreamSynchronize(stream));
	if (pageable) {
		free(in);
		free(out);
	}
	return wl_finish(&w);
}
