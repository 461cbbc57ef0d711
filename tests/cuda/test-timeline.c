/* SPDX-License-Identifier: MIT */
/*
 * The GPU timeline from CUPTI: launches the interposer never saw, CUPTI started by
 * the driver's injection, a refused subscription, a missing libcupti, dropped
 * records, records of threads that exited before their work ran.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "tests/cuda/cuda-check.h"

TestSuite(timeline, .init = cw_setup, .fini = cw_teardown, .timeout = 120);

static char truth_env[4300];

static const char *truth_var(void)
{
	snprintf(truth_env, sizeof(truth_env), "SIMGPU_TRUTH=%s", cw_path("truth.json"));
	return truth_env;
}

/* Every kernel named `name` is correlated with a CUPTI-only call named `call`. */
static size_t kernels_from(yajl_val t, const char *name, const char *call)
{
	size_t n = isc_trace_count(t, "gpu_kernel", name);
	for (size_t i = 0; i < n; i++) {
		yajl_val k = isc_trace_find(t, "gpu_kernel", name, i);
		yajl_val a = cw_api_by_corr(t, isc_trace_int(k, "metadata/correlation_id", -1));
		cr_assert_not_null(a, "%s #%zu has no host call", name, i);
		cr_assert_str_eq(isc_trace_str(a, "name"), call);
		cr_assert_str_eq(isc_trace_str(a, "metadata/source"), "cupti");
		cr_assert_eq(isc_trace_int(a, "metadata/thread_id", -1),
			     isc_trace_int(k, "metadata/thread_id", -2));
	}
	return n;
}

Test(timeline, launches_the_interposer_never_saw)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-hidden"), "mixed", NULL };
	const char *env[] = { truth_var(), NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_eq(cw_out(&r, "hidden"), 6);
	cr_assert_eq(kernels_from(t, "cublas_gemm", "cudaLaunchKernel"), 3, "static runtime");
	cr_assert_eq(kernels_from(t, "triton_fused", "cuLaunchKernel"), 3, "driver API");
	cr_assert_eq(cw_api_count(t, "cupti"), 6);
	cr_assert_eq(cw_api_count(t, "interposer"), 2, "the visible launch and the sync");
	cw_check_truth(t, cw_path("truth.json"));
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, the_driver_injection_starts_cupti)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-hidden"), "only", NULL };
	const char *env[] = { truth_var(), NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_eq(cw_out(&r, "injections"), 1, "InitializeInjection once: %s", r.out);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/started_by"), "driver's injection");
	cr_assert_eq(cw_api_count(t, "interposer"), 0, "no intercepted call was made");
	cr_assert_eq(kernels_from(t, "cublas_gemm", "cudaLaunchKernel"), 3);
	cr_assert_eq(kernels_from(t, "triton_fused", "cuLaunchKernel"), 3);
	cw_check_truth(t, cw_path("truth.json"));
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, a_refused_subscription_keeps_host_tracing)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { "SIMGPU_CUPTI_HOLDER=Nsight Systems", NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "refused");
	const char *holder = isc_trace_str(t, "trace_metadata/cupti/holder");
	cr_assert(holder && strstr(holder, "Nsight Systems"), "holder: %s", holder);
	const char *reason = isc_trace_str(t, "trace_metadata/cupti/reason");
	cr_assert(reason && strstr(reason, "Nsight Systems"), "reason: %s", reason);
	cr_assert_eq(cw_api_count(t, "interposer"), (size_t)cw_out(&r, "calls"));
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", NULL), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, a_missing_libcupti_keeps_host_tracing)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { "INFERSCOPE_CUPTI_LIB=/nonexistent/libcupti.so.13", NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "unavailable");
	const char *reason = isc_trace_str(t, "trace_metadata/cupti/reason");
	cr_assert(reason && strstr(reason, "/nonexistent/libcupti.so.13"), "reason: %s", reason);
	cr_assert_eq(cw_api_count(t, "interposer"), (size_t)cw_out(&r, "calls"));
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", NULL), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, a_libcupti_of_another_major_is_not_decoded)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { "INFERSCOPE_CUPTI_LIB=" CW_FAKE_CUPTI, NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "version_mismatch");
	cr_assert_eq(isc_trace_int(t, "trace_metadata/cupti/version", -1), 28);
	const char *reason = isc_trace_str(t, "trace_metadata/cupti/reason");
	cr_assert(reason && strstr(reason, "28") && strstr(reason, "13"), "reason: %s", reason);
	cr_assert_eq(cw_api_count(t, "interposer"), (size_t)cw_out(&r, "calls"));
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", NULL), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, calibrated_cupti_clock_matches_the_truth)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { truth_var(), "INFERSCOPE_CUPTI_CLOCK_CALLBACK=0", NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/timestamp_source"), "calibrated");
	cr_assert_eq(cw_check_truth(t, cw_path("truth.json")), 11, "within 1 us all the same");
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, cupti_off_by_configuration)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { "INFERSCOPE_CUPTI=0", NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "disabled");
	cr_assert_eq(cw_api_count(t, "interposer"), (size_t)cw_out(&r, "calls"));
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", NULL), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* Records CUPTI could not store are counted, and fewer GPU events are written. */
static void check_drops(yajl_val t, long long kernels, long long threads)
{
	long long dropped = isc_trace_int(t, "trace_metadata/cupti/dropped_records", -1);
	cr_assert_gt(dropped, 0, "the overflow is reported");
	cr_assert_lt((long long)isc_trace_count(t, "gpu_kernel", NULL), kernels);
	/* each thread's cudaStreamCreate, the launches, one cudaDeviceSynchronize */
	cr_assert_eq(cw_api_count(t, "interposer"), (size_t)(threads + kernels + 1),
		     "host side complete");
}

Test(timeline, cupti_buffer_overflow_drops_and_counts)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-threads"), "2", "200", NULL };
	const char *env[] = { "SIMGPU_CUPTI_BUFFER_LIMIT=1", "INFERSCOPE_CUPTI_BUFFER_SIZE=8K",
			      NULL };
	yajl_val t = cw_run(argv, env, &r);
	check_drops(t, cw_out(&r, "kernels"), 2);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, our_buffer_cap_drops_and_counts)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-threads"), "2", "200", NULL };
	const char *env[] = { "INFERSCOPE_CUPTI_BUFFERS=1", "INFERSCOPE_CUPTI_BUFFER_SIZE=8K",
			      NULL };
	yajl_val t = cw_run(argv, env, &r);
	check_drops(t, cw_out(&r, "kernels"), 2);
	cr_assert_gt(isc_trace_int(t, "trace_metadata/cupti/buffers_refused", -1), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, records_outlive_the_threads_that_caused_them)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-threads"), "4", "5", NULL };
	const char *env[] = { truth_var(), NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_eq(cw_check_truth(t, cw_path("truth.json")), 20);
	long long tids[4] = { 0 };
	size_t n_tids = 0;
	for (size_t i = 0; i < 20; i++) {
		yajl_val k = isc_trace_find(t, "gpu_kernel", "slow_kernel", i);
		cr_assert_not_null(k);
		long long tid = isc_trace_int(k, "metadata/thread_id", -1);
		cr_assert_neq(tid, isc_trace_int(t, "trace_metadata/pid", -1), "a worker's");
		bool seen = false;
		for (size_t j = 0; j < n_tids; j++) {
			seen = seen || tids[j] == tid;
		}
		if (!seen) {
			cr_assert_lt(n_tids, 4);
			tids[n_tids++] = tid;
		}
	}
	cr_assert_eq(n_tids, 4, "four workers launched");
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* CUPTI's start takes time; threads whose first call comes meanwhile wait for it, or
 * their work would have no GPU records. */
Test(timeline, calls_during_cupti_start_are_recorded)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-threads"), "4", "3", NULL };
	const char *env[] = { truth_var(), "SIMGPU_CUPTI_SUBSCRIBE_MS=300", NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "active");
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", "slow_kernel"), 12);
	cr_assert_eq(cw_check_truth(t, cw_path("truth.json")), 12);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, _exit_still_delivers_the_gpu_records)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-threads"), "2", "3", "_exit", NULL };
	const char *env[] = { truth_var(), NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/end_reason"), "_exit");
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", "slow_kernel"), 6);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(timeline, graph_nodes_and_peer_copies)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-graph"), NULL };
	const char *env[] = { truth_var(), "SIMGPU_DEVICE_COUNT=2", NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_eq(cw_out(&r, "peer"), 1, "stdout: %s", r.out);
	cw_check_truth(t, cw_path("truth.json"));
	/* two launches of a three-node graph: each node kernel belongs to one launch */
	size_t n = isc_trace_count(t, "gpu_kernel", NULL);
	cr_assert_eq(n, 6);
	long long launches[2] = { -1, -1 };
	size_t per[2] = { 0, 0 };
	for (size_t i = 0; i < n; i++) {
		yajl_val k = isc_trace_find(t, "gpu_kernel", NULL, i);
		cr_assert_gt(isc_trace_int(k, "metadata/graph_id", 0), 0, "a graph node");
		long long c = isc_trace_int(k, "metadata/correlation_id", -1);
		cr_assert_str_eq(isc_trace_str(cw_api_by_corr(t, c), "name"), "cudaGraphLaunch");
		int slot = launches[0] == -1 || launches[0] == c ? 0 : 1;
		cr_assert(launches[slot] == -1 || launches[slot] == c, "a third launch?");
		launches[slot] = c;
		per[slot]++;
	}
	cr_assert(per[0] == 3 && per[1] == 3, "kernels per launch: %zu, %zu", per[0], per[1]);

	/* the peer copy, and the device each call ran on */
	yajl_val p = isc_trace_find(t, "d2d_copy", NULL, 0);
	cr_assert_not_null(p);
	cr_assert(YAJL_IS_TRUE(isc_trace_get(p, "metadata/peer")));
	cr_assert_eq(isc_trace_int(p, "metadata/src_device_id", -1), 0);
	cr_assert_eq(isc_trace_int(p, "metadata/dst_device_id", -1), 1);
	yajl_val call = cw_api_by_corr(t, isc_trace_int(p, "metadata/correlation_id", -1));
	cr_assert_str_eq(isc_trace_str(call, "name"), "cudaMemcpyPeer");
	cr_assert_str_eq(isc_trace_str(call, "metadata/direction"), "peer");
	cr_assert_eq(isc_trace_int(isc_trace_find(t, "cuda_api", "cudaMalloc", 0),
				   "metadata/device_id", -1),
		     1, "after cudaSetDevice(1)");
	cr_assert_eq(isc_trace_int(isc_trace_find(t, "cuda_api", "cudaMalloc", 1),
				   "metadata/device_id", -1),
		     0);
	yajl_val devs = isc_trace_get(t, "trace_metadata/cuda/devices");
	cr_assert(YAJL_IS_ARRAY(devs) && YAJL_GET_ARRAY(devs)->len == 2);
	yajl_tree_free(t);
	isc_run_free(&r);
}
