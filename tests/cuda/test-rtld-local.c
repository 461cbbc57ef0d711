/* SPDX-License-Identifier: MIT */
/*
 * A module that links libcudart, loaded RTLD_LOCAL (as Python loads extension
 * modules): RTLD_NEXT does not see its runtime, and the hooks must find it through
 * their caller. A call that reached no runtime would return 3 without any GPU work.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "tests/cuda/cuda-check.h"

TestSuite(rtld_local, .init = cw_setup, .fini = cw_teardown, .timeout = 120);

static void check_sim(yajl_val t, const struct isc_run *r)
{
	cr_assert_eq(cw_out(r, "calls"), 8, "stdout: %s", r->out);
	cr_assert_eq(cw_api_count(t, "interposer"), 8);
	cr_assert_eq(isc_trace_count(t, "cuda_api", "cudaStreamGetPriority"), 1, "generated hook");
	for (size_t i = 0; i < 8; i++) {
		yajl_val e = isc_trace_find(t, "cuda_api", NULL, i);
		cr_assert_eq(isc_trace_int(e, "metadata/return_code", -1), 0, "%s",
			     isc_trace_str(e, "name"));
	}
	cw_check_truth(t, cw_path("truth.json"));
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", "ext_kernel"), 1);
}

Test(rtld_local, c_program_dlopens_a_module)
{
	struct isc_run r;
	char truth[4300];
	snprintf(truth, sizeof(truth), "SIMGPU_TRUTH=%s", cw_path("truth.json"));
	const char *argv[] = { isc_test_workload("cw-dlopen"), CW_EXT_PATH, NULL };
	const char *env[] = { truth, NULL };
	yajl_val t = cw_run(argv, env, &r);
	check_sim(t, &r);
	yajl_tree_free(t);
	isc_run_free(&r);
}

static void python_ctypes(const char *python);

/* On every CPython found (Debian's, pyenv's 3.8-3.13). */
Test(rtld_local, python_ctypes_loads_a_module)
{
	const char *py;
	for (size_t i = 0; (py = isc_test_nth_path(CW_PYTHONS, i)) != NULL; i++) {
		cr_log_info("python %s", py);
		python_ctypes(py);
		unlink(cw_path("trace.json"));
		unlink(cw_path("truth.json"));
	}
}

static void python_ctypes(const char *python)
{
	struct isc_run r;
	char truth[4300];
	snprintf(truth, sizeof(truth), "SIMGPU_TRUTH=%s", cw_path("truth.json"));
	const char *argv[] = { python, "-c",
			       "import ctypes, sys\n"
			       "m = ctypes.CDLL(sys.argv[1])  # RTLD_LOCAL, as extension modules\n"
			       "print('calls=%d' % m.cw_ext_run())\n",
			       CW_EXT_PATH, NULL };
	const char *env[] = { truth, NULL };
	yajl_val t = cw_run(argv, env, &r);
	check_sim(t, &r);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(rtld_local, module_on_the_real_runtime)
{
	struct isc_run r;
	char libpath[4200];
	if (CW_CUDA_LIBDIR[0] == '\0') {
		cr_skip_test("no CUDA toolkit libraries in this build");
	}
	snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s", CW_CUDA_LIBDIR);
	const char *argv[] = { isc_test_workload("cw-dlopen"), CW_EXT_PATH, NULL };
	const char *env[] = { libpath, NULL };
	yajl_val t = cw_run(argv, env, &r);
	cr_assert_eq(cw_api_count(t, "interposer"), 8);
	cr_assert_eq(isc_trace_count(t, "cuda_api", "cudaStreamCreate"), 1, "generated hook");
	for (size_t i = 0; i < 8; i++) {
		yajl_val e = isc_trace_find(t, "cuda_api", NULL, i);
		cr_assert_eq(isc_trace_int(e, "metadata/return_code", -1), 35,
			     "the real runtime answered %s", isc_trace_str(e, "name"));
	}
	yajl_tree_free(t);
	isc_run_free(&r);
}
