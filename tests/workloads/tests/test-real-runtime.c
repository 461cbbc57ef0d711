/* SPDX-License-Identifier: MIT */
/*
 * The same workload binaries on the toolkit's real libcudart.so.13 (suite 'cuda').
 * Without a GPU driver every CUDA call fails (cudaErrorInsufficientDriver, 35, or
 * cudaErrorNoDevice, 100, where a driver but no device exists): each workload must
 * say which call failed, stop its GPU part, and still exit with status 0. On a
 * machine with a working driver the run must simply succeed.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tests/simgpu/tests/spawn.h"

static bool driver_present(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (lib) {
		dlclose(lib);
	}
	return lib != NULL;
}

static void run(const char *name, bool python)
{
	const char *env[] = { "LD_LIBRARY_PATH=" WL_CUDA_LIBDIR, "WORKLOAD_EXT=" WL_EXT,
			      "PYTHONPATH=" WL_PYTHONPATH, "SIMGPU_TRUTH=", NULL };
	const char *argv[3] = { NULL, NULL, NULL };
	char summary[128];
	char exe[512];
	char script[512];
	struct wl_run r;
	size_t i;

	if (python) {
		snprintf(script, sizeof(script), "%s/%s.py", WL_PY_DIR, name);
		for (i = strlen(WL_PY_DIR) + 1; script[i]; i++) {
			script[i] = script[i] == '-' ? '_' : script[i];
		}
		argv[0] = WL_PYTHON;
		argv[1] = script;
	} else {
		snprintf(exe, sizeof(exe), "%s/wl-%s", WL_BUILD_DIR, name);
		argv[0] = exe;
	}
	cr_assert_eq(wl_spawn(argv, env, &r), 0);
	cr_assert_eq(r.status, 0, "%s exited %d:\n%s", argv[argv[1] ? 1 : 0], r.status, r.output);
	snprintf(summary, sizeof(summary), ": gpu=");
	cr_assert(strstr(r.output, summary) != NULL, "no summary line:\n%s", r.output);
	if (!driver_present()) {
		cr_assert(strstr(r.output, "gpu=unavailable") != NULL, "%s", r.output);
		cr_assert(strstr(r.output, " failed: cudaError") != NULL,
			  "the failing call is not named:\n%s", r.output);
		cr_assert(strstr(r.output, "code=35") || strstr(r.output, "code=100"), "%s",
			  r.output);
	}
	cr_log_info("%s%s: %s", name, python ? " (python)" : "", r.output);
}

TestSuite(real_runtime, .timeout = 60);

Test(real_runtime, cpu_preprocess_c)
{
	run("cpu-preprocess", false);
}
Test(real_runtime, cpu_preprocess_python)
{
	run("cpu-preprocess", true);
}
Test(real_runtime, gpu_bound_c)
{
	run("gpu-bound", false);
}
Test(real_runtime, gpu_bound_python)
{
	run("gpu-bound", true);
}
Test(real_runtime, copy_pageable_c)
{
	run("copy-pageable", false);
}
Test(real_runtime, copy_pageable_python)
{
	run("copy-pageable", true);
}
Test(real_runtime, launch_bound_c)
{
	run("launch-bound", false);
}
Test(real_runtime, launch_bound_python)
{
	run("launch-bound", true);
}
Test(real_runtime, sync_every_kernel_c)
{
	run("sync-every-kernel", false);
}
Test(real_runtime, sync_every_kernel_python)
{
	run("sync-every-kernel", true);
}
Test(real_runtime, alloc_churn_c)
{
	run("alloc-churn", false);
}
Test(real_runtime, alloc_churn_python)
{
	run("alloc-churn", true);
}
Test(real_runtime, io_wait_c)
{
	run("io-wait", false);
}
Test(real_runtime, io_wait_python)
{
	run("io-wait", true);
}
Test(real_runtime, balanced_c)
{
	run("balanced", false);
}
Test(real_runtime, balanced_python)
{
	run("balanced", true);
}
