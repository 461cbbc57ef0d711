/* SPDX-License-Identifier: MIT */
/*
 * The runtime interposer: every family recorded with what the trace promises,
 * checked against the simulator's ground truth; the real runtime without a GPU;
 * INFERSCOPE_CUDA=0; a process that never uses CUDA.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/cuda/cuda-check.h"

TestSuite(runtime, .init = cw_setup, .fini = cw_teardown, .timeout = 120);

static yajl_val api(yajl_val t, const char *name, size_t i)
{
	yajl_val e = isc_trace_find(t, "cuda_api", name, i);
	cr_assert_not_null(e, "no cuda_api event %s #%zu", name, i);
	return e;
}

static const char *meta_str(yajl_val e, const char *key)
{
	char path[128];
	snprintf(path, sizeof(path), "metadata/%s", key);
	const char *s = isc_trace_str(e, path);
	return s ? s : "(absent)";
}

static bool meta_bool(yajl_val e, const char *key)
{
	char path[128];
	snprintf(path, sizeof(path), "metadata/%s", key);
	return YAJL_IS_TRUE(isc_trace_get(e, path));
}

Test(runtime, every_family_matches_the_ground_truth)
{
	struct isc_run r;
	char truth[4200], env_truth[4300];
	snprintf(truth, sizeof(truth), "%s", cw_path("truth.json"));
	snprintf(env_truth, sizeof(env_truth), "SIMGPU_TRUTH=%s", truth);
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { env_truth, NULL };
	yajl_val t = cw_run(argv, env, &r);

	long long calls = cw_out(&r, "calls");
	cr_assert_gt(calls, 0);
	cr_assert_eq(cw_api_count(t, "interposer"), (size_t)calls);
	cr_assert_eq(cw_api_count(t, "cupti"), 0, "every call was intercepted");
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "active");
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/timestamp_source"), "callback");
	cr_assert_eq(isc_trace_int(t, "trace_metadata/cupti/dropped_records", -1), 0);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/cupti/unresolved_records", -1), 0);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cuda/runtime_version"), "13.0");
	cr_assert_eq(cw_check_truth(t, truth), 11, "3 copies in, 1 out, 2D, 4 kernels, 2 memsets");
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* What each cuda_api event says beyond its time: direction, memory, stream, names. */
Test(runtime, calls_carry_what_they_did)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	yajl_val t = cw_run(argv, NULL, &r);

	/* copies: direction, host memory, blocking */
	yajl_val c = api(t, "cudaMemcpy", 0);
	cr_assert_str_eq(meta_str(c, "direction"), "h2d");
	cr_assert_str_eq(meta_str(c, "host_memory"), "pageable");
	cr_assert(meta_bool(c, "blocked"));
	cr_assert_eq(isc_trace_int(c, "metadata/bytes", -1), 64 * 1024);
	c = api(t, "cudaMemcpyAsync", 0);
	cr_assert_str_eq(meta_str(c, "host_memory"), "pinned", "from cudaMallocHost");
	cr_assert_not(meta_bool(c, "blocked"));
	cr_assert_geq(isc_trace_int(c, "metadata/stream_id", -1), 2, "a created stream");
	c = api(t, "cudaMemcpyAsync_ptsz", 0);
	cr_assert_str_eq(meta_str(c, "host_memory"), "pinned", "from cudaHostRegister");
	cr_assert_eq(isc_trace_int(c, "metadata/stream_id", -1), 1, "per-thread default stream");
	cr_assert_str_eq(meta_str(api(t, "cudaMemcpy", 1), "direction"), "d2h");
	cr_assert(meta_bool(api(t, "cudaStreamSynchronize", 0), "blocked"));

	/* launches: names from the stub, and from the stub behind a cudaKernel_t */
	yajl_val l = api(t, "cudaLaunchKernel", 0);
	cr_assert_str_eq(meta_str(l, "kernel"), "cw_kernel_a");
	yajl_val grid = isc_trace_get(l, "metadata/grid_dim");
	cr_assert(YAJL_IS_ARRAY(grid) && YAJL_GET_ARRAY(grid)->len == 3);
	cr_assert_eq(YAJL_GET_INTEGER(YAJL_GET_ARRAY(grid)->values[0]), 8);
	cr_assert_str_eq(meta_str(api(t, "__cudaLaunchKernel", 0), "kernel"), "cw_kernel_b");
	cr_assert_str_eq(meta_str(api(t, "cudaLaunchKernelExC", 0), "kernel"), "cw_kernel_b");
	cr_assert_eq(isc_trace_int(api(t, "cudaLaunchKernel_ptsz", 0),
				   "metadata/shared_memory_bytes", -1),
		     1024);
	cr_assert(meta_bool(l, "async"));
	cr_assert_eq(isc_trace_count(t, "cuda_api", "__cudaGetKernel"), 0, "forwarded only");

	/* allocations carry their pointers */
	cr_assert_str_neq(meta_str(api(t, "cudaMalloc", 0), "ptr"), "(absent)");
	cr_assert_str_eq(meta_str(api(t, "cudaFree", 0), "ptr"),
			 meta_str(api(t, "cudaMalloc", 0), "ptr"));

	/* the device record gives occupancy; aggregates count exactly */
	yajl_val k = isc_trace_find(t, "gpu_kernel", "kernel_a", 0);
	cr_assert_not_null(k);
	double occ = isc_trace_num(k, "metadata/occupancy", -1);
	cr_assert(occ > 0 && occ <= 1, "occupancy %f", occ);
	yajl_val devs = isc_trace_get(t, "trace_metadata/cuda/devices");
	cr_assert(YAJL_IS_ARRAY(devs) && YAJL_GET_ARRAY(devs)->len == 1);
	cr_assert_gt(isc_trace_int(YAJL_GET_ARRAY(devs)->values[0], "sm_count", 0), 0);
	yajl_val threads = isc_trace_get(t, "trace_metadata/aggregates/threads");
	long long memcpys = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(threads)->len; i++) {
		memcpys += isc_trace_int(YAJL_GET_ARRAY(threads)->values[i],
					 "cuda_api/cudaMemcpy/count", 0);
	}
	cr_assert_eq(memcpys, 2);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(runtime, real_runtime_without_gpu_fails_cleanly)
{
	struct isc_run r;
	char libpath[4200];
	if (CW_CUDA_LIBDIR[0] == '\0') {
		cr_skip_test("no CUDA toolkit libraries in this build");
	}
	snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s", CW_CUDA_LIBDIR);
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { libpath, NULL };
	yajl_val t = cw_run(argv, env, &r);

	long long calls = cw_out(&r, "calls");
	cr_assert_eq(cw_api_count(t, "interposer"), (size_t)calls);
	size_t n35 = 0;
	for (size_t i = 0; i < (size_t)calls; i++) {
		yajl_val e = isc_trace_find(t, "cuda_api", NULL, i);
		long long rc = isc_trace_int(e, "metadata/return_code", 0);
		cr_assert_neq(rc, 0, "%s succeeded without a GPU", isc_trace_str(e, "name"));
		n35 += rc == 35;
	}
	cr_assert_gt(n35, 0, "cudaErrorInsufficientDriver on a machine without a driver");
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", NULL), 0);
	cr_assert_str_neq(isc_trace_str(t, "trace_metadata/cupti/status"), "active");
	cr_assert_not_null(isc_trace_str(t, "trace_metadata/cupti/reason"));
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(runtime, hooks_off_leave_the_gpu_timeline_to_cupti)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { "INFERSCOPE_CUDA=0", NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_eq(cw_api_count(t, "interposer"), 0);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/started_by"), "driver's injection");
	size_t kernels = isc_trace_count(t, "gpu_kernel", NULL);
	cr_assert_eq(kernels, 4);
	for (size_t i = 0; i < kernels; i++) {
		yajl_val k = isc_trace_find(t, "gpu_kernel", NULL, i);
		yajl_val a = cw_api_by_corr(t, isc_trace_int(k, "metadata/correlation_id", -1));
		cr_assert_not_null(a, "kernel %zu without its call", i);
		cr_assert_str_eq(isc_trace_str(a, "metadata/source"), "cupti");
	}
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(runtime, harmless_in_a_process_without_cuda)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-nocuda"), NULL };
	yajl_val t = cw_run(argv, NULL, &r);

	cr_assert_eq(cw_out(&r, "cuda_mappings"), 0, "no CUDA library mapped:\n%s", r.out);
	char expect[4200];
	snprintf(expect, sizeof(expect), "injection=%s\n", isc_test_preload());
	cr_assert_not_null(strstr(r.out, expect), "CUDA_INJECTION64_PATH names us: %s", r.out);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "not_used");
	cr_assert_null(isc_trace_get(t, "trace_metadata/cuda"));
	cr_assert_eq(isc_trace_count(t, "cuda_api", NULL), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(runtime, another_tool_owning_the_injection_variable)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { "CUDA_INJECTION64_PATH=/nonexistent/libothertool.so", NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "active");
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/started_by"),
			 "first CUDA runtime call");
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", NULL), 4);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* Calls the rules point at carry the stack of the call (issue 12): a copy from
 * pageable memory, a synchronisation, a sampled launch; an async copy from pinned
 * memory that did not wait does not. */
Test(runtime, rule_points_carry_stacks)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	yajl_val t = cw_run(argv, NULL, &r);
	const char *const pointed[] = { "cudaMemcpy", "cudaStreamSynchronize", "cudaLaunchKernel" };
	yajl_val stacks = isc_trace_get(t, "stacks/stacks");
	for (size_t i = 0; i < sizeof(pointed) / sizeof(pointed[0]); i++) {
		yajl_val c = api(t, pointed[i], 0);
		long long id = isc_trace_int(c, "stack_id", 0);
		cr_assert_gt(id, 0, "%s carries a stack", pointed[i]);
		cr_assert(YAJL_IS_ARRAY(stacks) && (size_t)id <= YAJL_GET_ARRAY(stacks)->len);
		yajl_val fr = isc_trace_get(YAJL_GET_ARRAY(stacks)->values[id - 1], "frames");
		cr_assert(YAJL_IS_ARRAY(fr) && YAJL_GET_ARRAY(fr)->len >= 2, "%s", pointed[i]);
	}
	cr_assert_eq(isc_trace_int(api(t, "cudaMemcpyAsync", 0), "stack_id", 0), 0,
		     "an async copy from pinned memory is not a rule's concern");
	yajl_tree_free(t);
	isc_run_free(&r);
}
