/* SPDX-License-Identifier: MIT */
/*
 * Scenario: CPU-preprocessing bound.
 * Verdict: cpu_bound. Top suggestion: tokenisation (scope "tokenize") dominates the
 * end-to-end time while the GPU idles; move it off the critical path (a faster or
 * parallel tokenizer, tokenise the next batch while the GPU runs this one).
 *
 * Each of 40 batches spends 9 ms of CPU time tokenising (string splitting,
 * normalisation, hashing, subword matching), then runs a short inference: a pinned
 * 256 KiB upload, three kernels (~0.6 ms) and a download. GPU busy ~6 %.
 *
 * Fixed (argument "tokenize=F"): tokenising takes F x its CPU time (host.cpu-preprocessing
 * simulates 'tokenize' k x faster, k parallel workers).
 *
 * Argument "norm" (with "norm=F": F x the rows): after tokenising, each batch normalises
 * 64 rows one by one in a scope `norm`, as the PyTorch pair's row-by-row normalisation
 * does on a GPU (docs/causal-pairs.md): per row 5 us of host work and two launches of
 * 20 us kernels, and after every 16 rows a cudaStreamSynchronize (a value read back). The
 * scope's cost is mostly the GPU work its host code waits for. "no-norm": the scope left
 * out (the change `--what-if 'scope:norm*0'` stands for).
 */
#include <stdio.h>

#include "tests/workloads/common/workload.h"

static const char embed;
static const char transformer;
static const char lm_head;
static const char row_mean;
static const char row_scale;

static void normalise_rows(struct wl *w, int rows, cudaStream_t s)
{
	int r;

	inferscope_range_push("norm");
	for (r = 0; r < rows && w->gpu; r++) {
		wl_tokenize(5000);
		wl_launch(w, &row_mean, 1, 256, s);
		wl_launch(w, &row_scale, 1, 256, s);
		if (r % 16 == 15 || r == rows - 1) {
			WL_CUDA(w, cudaStreamSynchronize(s));
		}
	}
	inferscope_range_pop();
}

static void batch_done(int batch)
{
	struct inferscope_kv kv[] = {
		INFERSCOPE_KV_I("batch", batch),
		INFERSCOPE_KV_I("size", 32),
	};

	inferscope_mark_kv("batch_done", kv, 2);
}

int main(int argc, char **argv)
{
	double tokenize = wl_knob_factor(argc, argv, "tokenize", 1.0);
	bool norm = wl_knob(argc, argv, "norm") && !wl_knob(argc, argv, "no-norm");
	int rows = (int)(64 * wl_knob_factor(argc, argv, "norm", 1.0) + 0.5);
	cudaStream_t stream = NULL;
	void *ids_host = NULL;
	void *ids_dev = NULL;
	uint64_t checksum = 0;
	struct wl w;
	int batch;

	wl_start(&w, "cpu_preprocess");
	wl_kernel(&embed, "embedding_lookup", 80000);
	wl_kernel(&transformer, "transformer_block", 450000);
	wl_kernel(&lm_head, "lm_head", 60000);
	wl_kernel(&row_mean, "row_mean", 20000);
	wl_kernel(&row_scale, "row_scale", 20000);
	WL_CUDA(&w, cudaStreamCreate(&stream));
	WL_CUDA(&w, cudaMallocHost(&ids_host, 256 << 10));
	WL_CUDA(&w, cudaMalloc(&ids_dev, 256 << 10));
	for (batch = 0; batch < 40; batch++) {
		inferscope_range_push("tokenize");
		checksum += wl_tokenize((uint64_t)(9000000 * tokenize));
		inferscope_range_pop();
		if (norm) {
			normalise_rows(&w, rows, stream);
		}
		inferscope_range_push("infer");
		WL_CUDA(&w, cudaMemcpyAsync(ids_dev, ids_host, 256 << 10, cudaMemcpyHostToDevice,
					    stream));
		wl_launch(&w, &embed, 64, 256, stream);
		wl_launch(&w, &transformer, 132, 512, stream);
		wl_launch(&w, &lm_head, 32, 256, stream);
		WL_CUDA(&w,
			cudaMemcpyAsync(ids_host, ids_dev, 4096, cudaMemcpyDeviceToHost, stream));
		WL_CUDA(&w, cudaStreamSynchronize(stream));
		inferscope_range_pop();
		batch_done(batch);
	}
	printf("cpu_preprocess: checksum %llu\n", (unsigned long long)checksum);
	return wl_finish(&w);
}
