/* SPDX-License-Identifier: MIT */
/*
 * Work the interposer sees only as one call: a CUDA graph captured from a stream and
 * launched twice (three kernels each), and a peer copy between two devices (run with
 * SIMGPU_DEVICE_COUNT=2; with one device the peer part is skipped). Prints
 * graph_launches=2 and peer=<0|1>.
 */
#include <cuda_runtime_api.h>

#include "tests/cuda/workloads/cw.h"

void cw_node_a(void);
void cw_node_b(void);
void cw_node_a(void)
{
}
void cw_node_b(void)
{
}

static void graph(void)
{
	cudaStream_t s = NULL;
	cudaGraph_t g = NULL;
	cudaGraphExec_t exec = NULL;
	dim3 grid = { 4, 1, 1 }, block = { 128, 1, 1 };
	cudaStreamCreate(&s);
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	cudaLaunchKernel((const void *)cw_node_a, grid, block, NULL, 0, s);
	cudaLaunchKernel((const void *)cw_node_b, grid, block, NULL, 0, s);
	cudaLaunchKernel((const void *)cw_node_a, grid, block, NULL, 0, s);
	cudaStreamEndCapture(s, &g);
	cudaGraphInstantiate(&exec, g, 0);
	for (int i = 0; i < 2; i++) {
		cudaGraphLaunch(exec, s);
	}
	cudaStreamSynchronize(s);
	cw_report("graph_launches", 2);
}

static void peer(void)
{
	int n = 0;
	void *d0 = NULL, *d1 = NULL;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
		cw_report("peer", 0);
		return;
	}
	cudaSetDevice(1);
	cudaMalloc(&d1, 1 << 20);
	cudaSetDevice(0);
	cudaMalloc(&d0, 1 << 20);
	cudaMemcpyPeer(d1, 1, d0, 0, 1 << 20);
	cudaDeviceSynchronize();
	cw_report("peer", 1);
}

int main(void)
{
	cw_register((const void *)cw_node_a, "node_a", 20000);
	cw_register((const void *)cw_node_b, "node_b", 30000);
	graph();
	peer();
	return 0;
}
