/* SPDX-License-Identifier: MIT */
/*
 * The added cost of an intercepted CUDA call (docs/benchmarks.md): bench-cuda-calls
 * runs against the simulated runtime with its host-side costs set to zero, in four
 * ways side by side, alternating, ROUNDS times:
 *   native       no preload
 *   interposer   the preload with CUPTI off: the hooks alone
 *   cupti        no InferScope, a bare CUPTI client enabling the same activity kinds
 *                (bench-cupti-client.so): what CUPTI itself costs
 *   both         the preload with CUPTI
 * The medians and the differences (interposer - native, both - cupti) are printed as
 * a markdown table, on the loop thread's CPU clock (robust on a shared machine) and
 * on the wall clock.
 *
 * Usage: bench-cuda [CALLS_PER_RUN [ROUNDS]]
 */
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_ROUNDS 32
#define MODES 4

/* Hand-written hooks, then generated ones (gen-cuda-hooks.py): cudaStreamGetPriority has
 * cudaStreamQuery's shape (a stream, recorded), cudaGetDevice none. */
static const char *const functions[] = { "cudaLaunchKernel",	  "cudaMemsetAsync",
					 "cudaMemcpyAsync",	  "cudaStreamQuery",
					 "cudaStreamGetPriority", "cudaGetDevice" };

/* One run of the timed loop: ns per call on the wall and CPU clocks; false on failure. */
static bool run(const char *fn, const char *calls, int mode, const char *dir, double *wall,
		double *cpu)
{
	char out[4200], preload[4200];
	snprintf(out, sizeof(out), "INFERSCOPE_OUTPUT=%s/bench.json", dir);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s",
		 mode == 2 ? BENCH_CUPTI_CLIENT : BENCH_PRELOAD);
	const char *env[] = { "SIMGPU_LAUNCH_COST_NS=0",
			      "SIMGPU_API_COST_NS=0",
			      "SIMGPU_LAUNCH_LATENCY_NS=0",
			      "SIMGPU_COPY_LATENCY_NS=0",
			      out,
			      "BENCH_CUPTI_LIB=" BENCH_CUPTI_LIB,
			      mode > 0 ? preload : NULL,
			      mode == 1 ? "INFERSCOPE_CUPTI=0" : NULL,
			      NULL };
	char *envp[16];
	int k = 0;
	for (int i = 0; i < 8; i++) {
		if (env[i]) {
			envp[k++] = (char *)env[i];
		}
	}
	envp[k] = NULL;
	const char *argv[] = { BENCH_CALLS, fn, calls, NULL };
	int fds[2];
	pid_t pid;
	posix_spawn_file_actions_t fa;
	if (pipe(fds) != 0) {
		return false;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	int rc = posix_spawn(&pid, BENCH_CALLS, &fa, NULL, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	char buf[64] = "";
	ssize_t n = rc == 0 ? read(fds[0], buf, sizeof(buf) - 1) : -1;
	close(fds[0]);
	int status = 0;
	if (rc == 0) {
		waitpid(pid, &status, 0);
	}
	buf[n > 0 ? n : 0] = '\0';
	return rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	       sscanf(buf, "%lf %lf", wall, cpu) == 2;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	const char *calls = argc > 1 ? argv[1] : "100000";
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	char dir[] = "/tmp/bench-cuda-XXXXXX";
	rounds = rounds < 1 ? 1 : rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds;
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	printf("| call | clock | native ns | interposer ns | bare CUPTI ns | "
	       "InferScope + CUPTI ns | added by the interposer | added on top of CUPTI |\n"
	       "|---|---|---|---|---|---|---|---|\n");
	for (size_t f = 0; f < sizeof(functions) / sizeof(functions[0]); f++) {
		double v[2][MODES][MAX_ROUNDS], m[2][MODES];
		for (int r = 0; r < rounds; r++) {
			for (int mode = 0; mode < MODES; mode++) {
				if (!run(functions[f], calls, mode, dir, &v[0][mode][r],
					 &v[1][mode][r])) {
					fprintf(stderr, "bench-cuda: %s failed\n", functions[f]);
					return 1;
				}
			}
		}
		for (int c = 1; c >= 0; c--) {
			for (int mode = 0; mode < MODES; mode++) {
				m[c][mode] = median(v[c][mode], rounds);
			}
			printf("| %s | %s | %.1f | %.1f | %.1f | %.1f | %+.1f | %+.1f |\n",
			       functions[f], c ? "cpu" : "wall", m[c][0], m[c][1], m[c][2], m[c][3],
			       m[c][1] - m[c][0], m[c][3] - m[c][2]);
		}
		fflush(stdout);
	}
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}
