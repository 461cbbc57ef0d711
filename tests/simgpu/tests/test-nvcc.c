/* SPDX-License-Identifier: MIT */
/*
 * An nvcc-built program (nvcc-vecadd.cu, -cudart shared) runs unchanged on the
 * simulated runtime: its module and kernel registration and CUDA 13's
 * __cudaGetKernel/__cudaLaunchKernel launches work, and its kernels carry the
 * mangled names CUPTI would report.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/simgpu/tests/spawn.h"
#include "tests/simgpu/truth/truth-reader.h"

Test(nvcc, a_compiled_cuda_program_runs_on_the_simulator)
{
	char truth_path[] = "/tmp/simgpu-nvcc-XXXXXX";
	char truth_env[64];
	const char *argv[] = { SIMGPU_NVCC_PROGRAM, NULL };
	const char *env[] = { truth_env, "LD_LIBRARY_PATH=" SIMGPU_LIB_DIR, NULL };
	struct simgpu_truth *t = NULL;
	struct wl_run run;
	char err[256];
	int fd = mkstemp(truth_path);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(truth_env, sizeof(truth_env), "SIMGPU_TRUTH=%s", truth_path);
	cr_assert_eq(wl_spawn(argv, env, &run), 0);
	cr_assert_eq(run.status, 0, "%s", run.output);
	cr_assert(strstr(run.output, "nvcc-vecadd: cudaSuccess") != NULL, "%s", run.output);
	cr_assert_eq(simgpu_truth_create(truth_path, &t, err, sizeof(err)), 0, "%s", err);
	unlink(truth_path);
	cr_assert_eq(t->n_ops, 2);
	cr_assert_str_eq(t->ops[0].name, "_Z6vecAddPKfS0_Pfi");
	cr_assert_eq(t->ops[0].grid[0], 4096);
	cr_assert_eq(t->ops[0].block[0], 256);
	cr_assert_eq(t->ops[0].stream_id, 7u);
	cr_assert_eq(t->ops[1].block[0], 512);
	cr_assert_neq(t->ops[1].stream_id, 7u);
	simgpu_truth_destroy(t);
}
