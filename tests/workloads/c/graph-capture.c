/* SPDX-License-Identifier: MIT */
/*
 * Mechanism: a CUDA graph captured from two functions and replayed (not a scenario with a
 * verdict of its own; tests/cuda/test-graphs.c and tests/analyzer/test-graph-nodes.c check
 * that each replayed operation is charged to the function that captured it).
 *
 * On one capturing stream, capture_attention() issues an `attention` kernel (20 us) and a
 * 64 KiB memset; capture_mlp() issues an `mlp` kernel (30 us), a 64 KiB device-to-device
 * copy and a second `mlp` kernel. The graph (5 nodes) is instantiated once and launched
 * N times on the same stream, then the host waits for the stream. Every replayed
 * operation carries its cudaGraphLaunch's correlation id and the id of its node in the
 * executable graph.
 *
 * Arguments:
 *   launches=N   graph launches (default 8)
 *   clone        instantiate a cudaGraphClone of the captured graph (its nodes are then
 *                two copies away from the captured ones)
 *
 * The capturing functions are never inlined and never end in a tail call, so a stack
 * taken inside them names them; they call the runtime directly (not through wl_launch),
 * so they are the innermost frame of the program on those stacks.
 */
#include "tests/workloads/common/workload.h"

static const char attention;
static const char mlp;

void capture_attention(struct wl *w, cudaStream_t s, void *buf);
void capture_mlp(struct wl *w, cudaStream_t s, void *buf);

#define NODE_BYTES (1u << 16)

__attribute__((noinline)) void capture_attention(struct wl *w, cudaStream_t s, void *buf)
{
	dim3 grid = { 8, 1, 1 }, block = { 128, 1, 1 };
	WL_CUDA(w, cudaLaunchKernel(&attention, grid, block, NULL, 0, s));
	WL_CUDA(w, cudaMemsetAsync(buf, 0, NODE_BYTES, s));
	__asm__ volatile("" ::: "memory"); /* no tail call: this frame stays on the stack */
}

__attribute__((noinline)) void capture_mlp(struct wl *w, cudaStream_t s, void *buf)
{
	dim3 grid = { 16, 1, 1 }, block = { 256, 1, 1 };
	WL_CUDA(w, cudaLaunchKernel(&mlp, grid, block, NULL, 0, s));
	WL_CUDA(w, cudaMemcpyAsync((char *)buf + NODE_BYTES, buf, NODE_BYTES,
				   cudaMemcpyDeviceToDevice, s));
	WL_CUDA(w, cudaLaunchKernel(&mlp, grid, block, NULL, 0, s));
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int launches = (int)wl_knob_factor(argc, argv, "launches", 8.0);
	bool clone = wl_knob(argc, argv, "clone");
	cudaStream_t s = NULL;
	cudaGraph_t g = NULL, c = NULL;
	cudaGraphExec_t exec = NULL;
	void *buf = NULL;
	struct wl w;

	wl_start(&w, "graph_capture");
	wl_kernel(&attention, "attention", 20000);
	wl_kernel(&mlp, "mlp", 30000);
	WL_CUDA(&w, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	WL_CUDA(&w, cudaMalloc(&buf, 2 * NODE_BYTES));
	WL_CUDA(&w, cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	capture_attention(&w, s, buf);
	capture_mlp(&w, s, buf);
	WL_CUDA(&w, cudaStreamEndCapture(s, &g));
	if (clone) {
		WL_CUDA(&w, cudaGraphClone(&c, g));
	}
	WL_CUDA(&w, cudaGraphInstantiate(&exec, clone ? c : g, 0));
	for (int i = 0; i < launches && w.gpu; i++) {
		WL_CUDA(&w, cudaGraphLaunch(exec, s));
	}
	WL_CUDA(&w, cudaStreamSynchronize(s));
	WL_CUDA(&w, cudaGraphExecDestroy(exec));
	WL_CUDA(&w, cudaGraphDestroy(g));
	if (c != NULL) {
		WL_CUDA(&w, cudaGraphDestroy(c));
	}
	WL_CUDA(&w, cudaFree(buf));
	return wl_finish(&w);
}
