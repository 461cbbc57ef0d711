// SPDX-License-Identifier: MIT
// A program built by nvcc the ordinary way (`<<<>>>` launches, module and kernel
// registration emitted by the compiler), linked with -cudart shared so that it can
// run on the simulated runtime. test-nvcc.c runs it and reads its ground truth.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void vecAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		c[i] = a[i] + b[i];
	}
}

int main()
{
	const int n = 1 << 20;
	cudaStream_t stream;
	float *a, *b, *c;
	cudaError_t err = cudaMalloc(&a, n * sizeof(float));

	if (err != cudaSuccess) {
		std::printf("nvcc-vecadd: cudaMalloc failed: %s\n", cudaGetErrorName(err));
		return 0;
	}
	cudaMalloc(&b, n * sizeof(float));
	cudaMalloc(&c, n * sizeof(float));
	cudaStreamCreate(&stream);
	vecAdd<<<n / 256, 256>>>(a, b, c, n);
	vecAdd<<<n / 512, 512, 0, stream>>>(a, b, c, n);
	err = cudaDeviceSynchronize();
	std::printf("nvcc-vecadd: %s\n", cudaGetErrorName(err));
	return 0;
}
