/* SPDX-License-Identifier: MIT */
/*
 * CUDA_INJECTION64_PATH, honoured the way the driver honours it: on the first
 * call that initialises CUDA, before any operation runs, exactly once per
 * process; calls that never initialise the driver do not trigger it.
 */
#include <cupti.h>
#include <dlfcn.h>

#include "tests/simgpu/tests/sim-test.h"

TestSuite(injection);

static void *probe(void)
{
	void *lib = dlopen(SIMGPU_PROBE_PATH, RTLD_NOW | RTLD_NOLOAD);

	cr_assert_not_null(lib, "the runtime did not load the injection library");
	return lib;
}

Test(injection, called_once_before_the_first_operation)
{
	int (*calls)(void);
	long (*ops_at_init)(void);
	int count;
	int v;

	setenv("CUDA_INJECTION64_PATH", SIMGPU_PROBE_PATH, 1);
	kernel(0, "k", 1000);
	CU(cudaRuntimeGetVersion(&v));
	cr_assert_null(dlopen(SIMGPU_PROBE_PATH, RTLD_NOW | RTLD_NOLOAD),
		       "cudaRuntimeGetVersion does not initialise the driver");
	launch(0, NULL);
	CU(cudaGetDeviceCount(&count));
	launch(0, NULL);
	calls = (int (*)(void))dlsym(probe(), "probe_calls");
	ops_at_init = (long (*)(void))dlsym(probe(), "probe_ops_at_init");
	cr_assert_eq(calls(), 1);
	cr_assert_eq(ops_at_init(), 0);
	cr_assert_eq(simgpu_injection_count(), 1);
	cr_assert_eq(simgpu_op_count(), 2);
}

Test(injection, cupti_started_inside_the_injection_sees_the_first_call)
{
	long (*records)(uint32_t);
	int count;

	setenv("CUDA_INJECTION64_PATH", SIMGPU_PROBE_PATH, 1);
	setenv("PROBE_CUPTI", SIMGPU_CUPTI_PATH, 1);
	CU(cudaGetDeviceCount(&count));
	CU(cudaGetDeviceCount(&count));
	records = (long (*)(uint32_t))dlsym(probe(), "probe_api_records");
	cr_assert_eq(records(CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020), 2);
}

Test(injection, a_broken_injection_path_is_reported_and_ignored)
{
	int count;

	setenv("CUDA_INJECTION64_PATH", "/nonexistent/libnothing.so", 1);
	CU(cudaGetDeviceCount(&count));
	cr_assert_eq(count, 1);
	cr_assert_eq(simgpu_injection_count(), 0);
}
