/* SPDX-License-Identifier: MIT */
/*
 * The scenario workloads (tests/workloads), C and Python, under the preload: on the
 * simulated GPU each yields a complete trace whose GPU timeline is the simulator's
 * ground truth (every operation within 1 us, every GPU event correlated with the
 * call that issued it, nothing dropped); on the real runtime without a GPU each
 * still exits normally with its failed calls recorded.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuda/cuda-check.h"

TestSuite(scenarios, .init = cw_setup, .fini = cw_teardown, .timeout = 240);

static int by_value(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* Every cuda_api event has its own correlation id. */
static void check_unique_correlation(yajl_val t)
{
	size_t n = isc_trace_count(t, "cuda_api", NULL), k = 0;
	long long *ids = calloc(n + 1, sizeof(*ids));
	yajl_val events = isc_trace_events(t);
	for (size_t i = 0; i < YAJL_GET_ARRAY(events)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(events)->values[i];
		const char *type = isc_trace_str(e, "type");
		if (type && strcmp(type, "cuda_api") == 0) {
			ids[k++] = isc_trace_int(e, "metadata/correlation_id", -1);
		}
	}
	qsort(ids, k, sizeof(*ids), by_value);
	for (size_t i = 1; i < k; i++) {
		cr_assert_neq(ids[i], ids[i - 1], "correlation id %lld used twice", ids[i]);
	}
	free(ids);
}

/* The interpreter for the k-th scenario: the scenarios take the interpreters found in
 * turn (a full cross product would take minutes), so that every CPython found records
 * at least one scenario and every scenario runs under one of them. */
static const char *python_for(unsigned k)
{
	size_t n = 0;
	while (isc_test_nth_path(CW_PYTHONS, n) != NULL) {
		n++;
	}
	return n ? isc_test_nth_path(CW_PYTHONS, k % n) : CW_PYTHON3;
}

static void run_sim(const char *name, int python_k)
{
	struct isc_run r;
	char truth[4300], exe[4096], script[4096];
	snprintf(truth, sizeof(truth), "SIMGPU_TRUTH=%s", cw_path("truth.json"));
	const char *argv[3] = { exe, NULL, NULL };
	if (python_k >= 0) {
		snprintf(exe, sizeof(exe), "%s", python_for((unsigned)python_k));
		cr_log_info("%s under %s", name, exe);
		snprintf(script, sizeof(script), "%s/%s.py", CW_WL_PY_DIR, name);
		for (char *p = script + strlen(CW_WL_PY_DIR) + 1; *p; p++) {
			*p = *p == '-' ? '_' : *p;
		}
		argv[1] = script;
	} else {
		snprintf(exe, sizeof(exe), "%s/wl-%s", CW_WL_BUILD_DIR, name);
	}
	const char *env[] = { truth, "WORKLOAD_EXT=" CW_WL_EXT, "PYTHONPATH=" CW_PYTHONPATH, NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_not_null(strstr(r.out, "gpu=ok"), "%s: %s", name, r.out);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "active");
	cr_assert_eq(isc_trace_int(t, "trace_metadata/cupti/dropped_records", -1), 0);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/cupti/unresolved_records", -1), 0);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/dropped_events/total", -1), 0);
	cr_assert_gt(cw_api_count(t, "interposer"), 0);
	cr_assert_gt(cw_check_truth(t, cw_path("truth.json")), 0);
	check_unique_correlation(t);
	yajl_tree_free(t);
	isc_run_free(&r);
}

static void run_real(const char *name)
{
	struct isc_run r;
	char exe[4096], libpath[4200];
	if (CW_CUDA_LIBDIR[0] == '\0') {
		cr_skip_test("no CUDA toolkit libraries in this build");
	}
	snprintf(exe, sizeof(exe), "%s/wl-%s", CW_WL_BUILD_DIR, name);
	snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s", CW_CUDA_LIBDIR);
	const char *argv[] = { exe, NULL };
	const char *env[] = { libpath, NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_not_null(strstr(r.out, "gpu=unavailable"), "%s: %s", name, r.out);
	/* every call fails, but those that return a string (recorded with 0) */
	yajl_val events = isc_trace_events(t);
	for (size_t i = 0; i < YAJL_GET_ARRAY(events)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(events)->values[i];
		const char *type = isc_trace_str(e, "type");
		const char *n = isc_trace_str(e, "name");
		if (type && strcmp(type, "cuda_api") == 0 && strncmp(n, "cudaGetError", 12) != 0) {
			long long rc = isc_trace_int(e, "metadata/return_code", 0);
			cr_assert(rc == 35 || rc == 100, "%s returned %lld",
				  isc_trace_str(e, "name"), rc);
		}
	}
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", NULL), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

#define SCENARIO(id, name, k)              \
	Test(scenarios, id##_c)            \
	{                                  \
		run_sim(name, -1);         \
	}                                  \
	Test(scenarios, id##_python)       \
	{                                  \
		run_sim(name, k);          \
	}                                  \
	Test(scenarios, id##_real_runtime) \
	{                                  \
		run_real(name);            \
	}

SCENARIO(cpu_preprocess, "cpu-preprocess", 0)
SCENARIO(gpu_bound, "gpu-bound", 1)
SCENARIO(copy_pageable, "copy-pageable", 2)
SCENARIO(launch_bound, "launch-bound", 3)
SCENARIO(sync_every_kernel, "sync-every-kernel", 4)
SCENARIO(alloc_churn, "alloc-churn", 5)
SCENARIO(io_wait, "io-wait", 6)
SCENARIO(balanced, "balanced", 7)
