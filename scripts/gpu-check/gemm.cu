// Real-GPU workload for scripts/gpu-check.sh: cuBLAS GEMMs. cuBLAS launches through
// its own runtime, so the interposer does not see these kernels; CUPTI does.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

int main(void)
{
	const int n = 4096, reps = 20;
	float *a, *b, *c;
	cudaMalloc(&a, sizeof(float) * n * n);
	cudaMalloc(&b, sizeof(float) * n * n);
	cudaMalloc(&c, sizeof(float) * n * n);
	cudaMemset(a, 0, sizeof(float) * n * n);
	cudaMemset(b, 0, sizeof(float) * n * n);
	cublasHandle_t h;
	if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "cublasCreate failed\n");
		return 1;
	}
	const float one = 1.0f, zero = 0.0f;
	cudaEvent_t s, e;
	cudaEventCreate(&s);
	cudaEventCreate(&e);
	cudaEventRecord(s);
	for (int i = 0; i < reps; i++) {
		cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
	}
	cudaEventRecord(e);
	cudaEventSynchronize(e);
	float ms = 0;
	cudaEventElapsedTime(&ms, s, e);
	printf("events gemm_x%d_ms=%.3f tflops=%.1f\n", reps, ms,
	       2.0 * n * n * n * reps / (ms / 1e3) / 1e12);
	cublasDestroy(h);
	return 0;
}
