/* SPDX-License-Identifier: MIT */
/*
 * The rest of the runtime API: devices and their H100-like properties, errors
 * and SIMGPU_NO_DEVICE, the launch family nvcc-generated code uses, launch
 * validation, and graphs captured from a stream and replayed.
 */
#include <string.h>

#include "tests/simgpu/nvcc-abi.h"
#include "tests/simgpu/tests/sim-test.h"

TestSuite(api);

Test(api, device_properties_are_h100_like)
{
	struct cudaDeviceProp p;
	int count = 0;
	int value = 0;

	CU(cudaGetDeviceCount(&count));
	cr_assert_eq(count, 1);
	CU(cudaGetDeviceProperties(&p, 0));
	cr_assert_eq(p.multiProcessorCount, 132);
	cr_assert_eq(p.major, 9);
	cr_assert_eq(p.minor, 0);
	cr_assert_eq(p.maxThreadsPerMultiProcessor, 2048);
	cr_assert_eq(p.maxBlocksPerMultiProcessor, 32);
	cr_assert_eq(p.regsPerMultiprocessor, 65536);
	cr_assert_eq(p.sharedMemPerMultiprocessor, 228 * 1024);
	cr_assert(strstr(p.name, "H100") != NULL);
	CU(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, 0));
	cr_assert_eq(value, 132);
	CU(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
	cr_assert_eq(value, 228 * 1024);
	cr_assert_eq(cudaGetDeviceProperties(&p, 1), cudaErrorInvalidDevice);
	cr_assert_eq(cudaDeviceGetAttribute(&value, (enum cudaDeviceAttr)100000, 0),
		     cudaErrorInvalidValue);
}

Test(api, versions_and_error_names)
{
	int v = 0;

	CU(cudaRuntimeGetVersion(&v));
	cr_assert_eq(v, 13000);
	CU(cudaDriverGetVersion(&v));
	cr_assert_geq(v, 13000);
	cr_assert_str_eq(cudaGetErrorName(cudaErrorNoDevice), "cudaErrorNoDevice");
	cr_assert_str_eq(cudaGetErrorName(cudaErrorInsufficientDriver),
			 "cudaErrorInsufficientDriver");
	cr_assert_str_eq(cudaGetErrorString(cudaSuccess), "no error");
	cr_assert_str_eq(cudaGetErrorString((cudaError_t)123456), "unrecognized error code");
}

Test(api, no_device_fails_every_call_cleanly)
{
	int count = 5;
	void *p = NULL;
	int v = 0;

	setenv("SIMGPU_NO_DEVICE", "1", 1);
	cr_assert_eq(cudaGetDeviceCount(&count), cudaErrorNoDevice);
	cr_assert_eq(count, 0);
	cr_assert_eq(cudaMalloc(&p, 16), cudaErrorNoDevice);
	cr_assert_eq(cudaStreamSynchronize(NULL), cudaErrorNoDevice);
	cr_assert_eq(
		cudaLaunchKernel(KERNEL(0), (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL),
		cudaErrorNoDevice);
	cr_assert_eq(cudaPeekAtLastError(), cudaErrorNoDevice);
	CU(cudaRuntimeGetVersion(&v));
	cr_assert_eq(simgpu_op_count(), 0);
}

Test(api, launch_configuration_is_validated)
{
	dim3 one = { 1, 1, 1 };
	dim3 too_big = { 2048, 1, 1 };
	dim3 zero = { 0, 1, 1 };

	cr_assert_eq(cudaLaunchKernel(KERNEL(0), one, too_big, NULL, 0, NULL),
		     cudaErrorInvalidConfiguration);
	cr_assert_eq(cudaLaunchKernel(KERNEL(0), zero, one, NULL, 0, NULL),
		     cudaErrorInvalidConfiguration);
	cr_assert_eq(cudaLaunchKernel(NULL, one, one, NULL, 0, NULL),
		     cudaErrorInvalidDeviceFunction);
	cr_assert_eq(cudaLaunchKernel(KERNEL(0), one, one, NULL, 0, (cudaStream_t)0x1234),
		     cudaErrorInvalidResourceHandle);
	cr_assert_eq(simgpu_op_count(), 0);
}

/* What `kernel<<<grid, block, 0, stream>>>()` compiles to with CUDA 13's nvcc. */
Test(api, nvcc_launch_sequence)
{
	static char stub;
	void **module = __cudaRegisterFatBinary(NULL);
	cudaKernel_t handle = NULL;
	dim3 grid = { 8, 2, 1 };
	dim3 block = { 256, 1, 1 };
	dim3 g;
	dim3 b;
	size_t smem;
	cudaStream_t stream;
	const char *name = NULL;

	__cudaRegisterFunction(module, &stub, (char *)"_Z6vecAddPfS_S_i", "_Z6vecAddPfS_S_i", -1,
			       NULL, NULL, NULL, NULL, NULL);
	__cudaRegisterFatBinaryEnd(module);
	cr_assert_eq(__cudaPushCallConfiguration(grid, block, 1024, NULL), 0);
	CU(__cudaGetKernel(&handle, &stub));
	CU(__cudaPopCallConfiguration(&g, &b, &smem, &stream));
	cr_assert_eq(g.x, 8);
	cr_assert_eq(smem, 1024);
	CU(__cudaLaunchKernel(handle, g, b, NULL, smem, stream));
	cr_assert_str_eq(op_at(0).name, "_Z6vecAddPfS_S_i", "CUPTI reports mangled names");
	cr_assert_eq(op_at(0).grid[1], 2);
	cr_assert_eq(op_at(0).dynamic_smem, 1024);
	CU(cudaFuncGetName(&name, &stub));
	cr_assert_str_eq(name, "_Z6vecAddPfS_S_i");
	cr_assert_eq(__cudaPopCallConfiguration(&g, &b, &smem, &stream),
		     cudaErrorMissingConfiguration);
	cr_assert_eq(__cudaLaunchKernel((cudaKernel_t)&stub, g, b, NULL, 0, NULL),
		     cudaErrorInvalidDeviceFunction, "a cudaKernel_t must come from the runtime");
	__cudaUnregisterFatBinary(module);
}

Test(api, workload_names_win_over_module_names)
{
	static char stub;
	void **module = __cudaRegisterFatBinary(NULL);

	kernel(0, "ignored", 1000);
	cr_assert_eq(simgpu_kernel_register(&stub, "gemm_fp16", 50000), 0);
	__cudaRegisterFunction(module, &stub, (char *)"_Z4gemmv", "_Z4gemmv", -1, NULL, NULL, NULL,
			       NULL, NULL);
	CU(cudaLaunchKernel(&stub, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL));
	cr_assert_str_eq(op_at(0).name, "gemm_fp16");
	cr_assert_eq(op_at(0).end_ns - op_at(0).start_ns, 50000);
	__cudaUnregisterFatBinary(module);
}

Test(api, launch_ex_and_occupancy)
{
	cudaLaunchConfig_t config;
	int blocks = 0;

	memset(&config, 0, sizeof(config));
	config.gridDim = (dim3){ 132, 1, 1 };
	config.blockDim = (dim3){ 1024, 1, 1 };
	config.dynamicSmemBytes = 4096;
	cr_assert_eq(simgpu_kernel_register_ex(KERNEL(0), "big", 1000, 64, 16384), 0);
	CU(cudaLaunchKernelExC(&config, KERNEL(0), NULL));
	cr_assert_eq(op_at(0).registers, 64);
	cr_assert_eq(op_at(0).static_smem, 16384);
	cr_assert_eq(op_at(0).dynamic_smem, 4096);
	/* 64 registers x 1024 threads = all 65536 registers of an SM: one block */
	CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, KERNEL(0), 1024, 4096));
	cr_assert_eq(blocks, 1);
}

Test(api, graphs_replay_captured_work)
{
	struct simgpu_truth *t;
	cudaGraphExec_t exec;
	cudaGraph_t graph;
	cudaStream_t s;
	enum cudaStreamCaptureStatus status;
	void *dev;
	void *pinned;
	size_t i;

	kernel(0, "layer_a", 20000);
	kernel(1, "layer_b", 30000);
	CU(cudaStreamCreate(&s));
	CU(cudaMalloc(&dev, 4096));
	CU(cudaMallocHost(&pinned, 4096));
	CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CU(cudaStreamIsCapturing(s, &status));
	cr_assert_eq(status, cudaStreamCaptureStatusActive);
	CU(cudaMemcpyAsync(dev, pinned, 4096, cudaMemcpyHostToDevice, s));
	launch(0, s);
	launch(1, s);
	CU(cudaStreamEndCapture(s, &graph));
	cr_assert_eq(simgpu_op_count(), 0, "captured work does not run");
	cr_assert_eq(cudaStreamBeginCapture(NULL, cudaStreamCaptureModeGlobal),
		     cudaErrorStreamCaptureUnsupported);
	CU(cudaGraphInstantiate(&exec, graph, 0));
	CU(cudaGraphLaunch(exec, s));
	CU(cudaGraphLaunch(exec, s));
	CU(cudaStreamSynchronize(s));
	t = truth_now();
	cr_assert_eq(t->n_ops, 6);
	for (i = 0; i < 6; i++) {
		cr_assert_neq(t->ops[i].graph_id, 0);
		cr_assert_eq(t->ops[i].graph_node_id, t->ops[i % 3].graph_node_id);
		cr_assert_eq(t->ops[i].correlation_id, t->ops[i < 3 ? 0 : 3].correlation_id);
		if (i) {
			cr_assert_geq(t->ops[i].start_ns, t->ops[i - 1].end_ns);
		}
	}
	cr_assert_neq(t->ops[0].correlation_id, t->ops[3].correlation_id);
	cr_assert_eq(t->ops[0].type, SIMGPU_OP_MEMCPY);
	cr_assert_str_eq(t->ops[2].name, "layer_b");
	cr_assert_str_eq(simgpu_truth_api_by_correlation(t, t->ops[3].correlation_id)->name,
			 "cudaGraphLaunch");
	CU(cudaGraphExecDestroy(exec));
	CU(cudaGraphDestroy(graph));
	simgpu_truth_destroy(t);
}

Test(api, hidden_launches_skip_the_exported_symbol)
{
	struct simgpu_truth *t;
	const struct simgpu_truth_api *call;

	cr_assert_eq(simgpu_launch_hidden(SIMGPU_HIDDEN_DRIVER, "triton_matmul", 40000, 4, 1, 1,
					  128, 1, 1, 0, NULL),
		     cudaSuccess);
	cr_assert_eq(simgpu_launch_hidden(SIMGPU_HIDDEN_STATIC_RUNTIME, "cublas_gemm", 50000, 4, 1,
					  1, 128, 1, 1, 0, NULL),
		     cudaSuccess);
	t = truth_now();
	cr_assert_eq(t->n_ops, 2);
	call = simgpu_truth_api_by_correlation(t, t->ops[0].correlation_id);
	cr_assert_str_eq(call->name, "cuLaunchKernel");
	cr_assert_eq(call->domain, SIMGPU_DOMAIN_DRIVER);
	cr_assert(call->hidden);
	cr_assert_eq(t->ops[0].end_ns - t->ops[0].start_ns, 40000);
	cr_assert(t->ops[1].hidden);
	cr_assert_eq(t->ops[1].api_domain, SIMGPU_DOMAIN_RUNTIME);
	simgpu_truth_destroy(t);
}
