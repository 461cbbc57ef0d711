/* SPDX-License-Identifier: MIT */
/*
 * For test-truth.c: launches a kernel, forks, launches two more in the child, and
 * exits normally from both processes, which write their ground truth at exit.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/simgpu/simgpu.h"

static char kernel;

static void launch(void)
{
	dim3 one = { 1, 1, 1 };

	cudaLaunchKernel(&kernel, one, one, NULL, 0, NULL);
	cudaDeviceSynchronize();
}

int main(void)
{
	pid_t child;
	int status = 0;

	simgpu_kernel_register(&kernel, "probe \"quoted\"\\name", 1000);
	launch();
	child = fork();
	if (child == 0) {
		launch();
		launch();
		return 0;
	}
	waitpid(child, &status, 0);
	printf("child %d\n", (int)child);
	return 0;
}
