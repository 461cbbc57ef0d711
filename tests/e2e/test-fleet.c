/* SPDX-License-Identifier: MIT */
/*
 * Issue 14, "Done means", the flight recorder's part: a long-running server on the
 * simulated GPU under the library in continuous mode; `inferscope capture PID --steps
 * 20`; then SIGKILL. The window's trace has exactly 20 steps and the GPU work those
 * steps queued (3 kernels and 2 copies each, no more, no less); the last segments are
 * on disk, closed ones and the open .part, and inferscope-analyze reads each of them,
 * kernels included.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/common/isc-test.h"

TestSuite(fleet, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 240);

static pid_t start_server(FILE **out)
{
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		int e = open(isc_test_in_dir("server.err"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(e, 2);
		if (chdir(isc_test_dir()) != 0) {
			_exit(126);
		}
		setenv("LD_PRELOAD", isc_test_env("ISC_PRELOAD"), 1);
		setenv("XDG_RUNTIME_DIR", isc_test_dir(), 1);
		setenv("INFERSCOPE_MODE", "continuous", 1);
		setenv("INFERSCOPE_SEGMENT", "200ms", 1);
		setenv("INFERSCOPE_RETAIN", "5s", 1);
		const char *serve = isc_test_env("ISC_FLEET_SERVE");
		execl(serve, serve, "120", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*out = fdopen(p[0], "r");
	char line[64] = "";
	cr_assert_not_null(fgets(line, sizeof(line), *out), "the server did not start");
	cr_assert_eq(strncmp(line, "ready ", 6), 0, "%s", line);
	return pid;
}

static size_t count(yajl_val t, const char *type)
{
	return isc_trace_count(t, type, NULL);
}

/* inferscope-analyze FILE --format json: exit 0, and (kernels) the kernels named. */
static void analyze(const char *path, bool kernels)
{
	struct isc_run r;
	const char *argv[] = { isc_test_env("ISC_ANALYZE"), path, "--format", "json", NULL };
	cr_assert_eq(isc_test_run(argv, NULL, false, NULL, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: %s", path, r.err);
	cr_assert(!kernels || strstr(r.out, "decoder_layers") != NULL, "%s names the kernels",
		  path);
	isc_run_free(&r);
}

/* Steps, kernels and launches inferscope-analyze finds in the inputs, and how many
 * inputs it made of them. */
struct counts {
	long long inputs, steps, kernels, launches;
};

static long long stat_count(yajl_val root, const char *table, const char *name)
{
	const char *path[] = { "statistics", table, NULL };
	yajl_val rows = yajl_tree_get(root, path, yajl_t_array);
	long long n = 0;
	for (size_t i = 0; rows != NULL && i < YAJL_GET_ARRAY(rows)->len; i++) {
		yajl_val row = YAJL_GET_ARRAY(rows)->values[i];
		const char *rn = isc_trace_str(row, "name");
		if (name == NULL || (rn != NULL && strcmp(rn, name) == 0)) {
			n += isc_trace_int(row, "count", 0);
		}
	}
	return n;
}

static struct counts counts_of(const char *const *paths, size_t n)
{
	const char *argv[600] = { isc_test_env("ISC_ANALYZE"), "-f", "json", "--top", "100000" };
	size_t k = 5;
	for (size_t i = 0; i < n && k + 1 < 600; i++) {
		argv[k++] = paths[i];
	}
	argv[k] = NULL;
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, NULL, false, NULL, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
	char err[256];
	yajl_val root = yajl_tree_parse(r.out, err, sizeof(err));
	cr_assert_not_null(root, "%s", err);
	const char *ip[] = { "inputs", NULL };
	yajl_val inputs = yajl_tree_get(root, ip, yajl_t_array);
	struct counts c = {
		.inputs = inputs ? (long long)YAJL_GET_ARRAY(inputs)->len : 0,
		.steps = stat_count(root, "scopes", "step"),
		.kernels = stat_count(root, "kernels", NULL),
		.launches = stat_count(root, "cuda_api", "cudaLaunchKernel"),
	};
	if (n > 1 && c.inputs == 1) {
		const char *label = isc_trace_str(YAJL_GET_ARRAY(inputs)->values[0], "path");
		cr_assert(label != NULL && strstr(label, " segments)") != NULL, "%s", label);
	}
	yajl_tree_free(root);
	isc_run_free(&r);
	return c;
}

/* The segments of the killed pid given together (in reverse order, as a careless glob
 * might not) are one input holding exactly what the segments hold one by one. */
static void merged(pid_t pid)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "trace.%d.seg-", (int)pid);
	static char names[512][4200];
	const char *paths[512];
	size_t n = 0;
	DIR *d = opendir(isc_test_dir());
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 512) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
		    strstr(e->d_name, ".pb.gz") == NULL) {
			snprintf(names[n], sizeof(names[n]), "%s", isc_test_in_dir(e->d_name));
			n++;
		}
	}
	closedir(d);
	cr_assert_geq(n, 4);
	for (size_t i = 0; i < n; i++) {
		paths[i] = names[i];
	}
	for (size_t i = 0; i < n; i++) { /* descending names */
		for (size_t j = i + 1; j < n; j++) {
			if (strcmp(paths[j], paths[i]) > 0) {
				const char *x = paths[i];
				paths[i] = paths[j];
				paths[j] = x;
			}
		}
	}
	struct counts sum = { 0 };
	for (size_t i = 0; i < n; i++) {
		struct counts one = counts_of(&paths[i], 1);
		sum.steps += one.steps;
		sum.kernels += one.kernels;
		sum.launches += one.launches;
	}
	struct counts all = counts_of(paths, n);
	cr_expect_eq(all.inputs, 1, "%zu segments of one process: one input", n);
	cr_expect_eq(all.steps, sum.steps);
	cr_expect_eq(all.kernels, sum.kernels);
	cr_expect_eq(all.launches, sum.launches);
	cr_expect_gt(all.steps, 0);
}

Test(fleet, capture_20_steps_then_sigkill)
{
	FILE *out;
	pid_t pid = start_server(&out);
	usleep(500000); /* a few segments closed before the window */
	char spid[16], xdg[4200];
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	snprintf(xdg, sizeof(xdg), "XDG_RUNTIME_DIR=%s", isc_test_dir());
	const char *argv[] = { isc_test_env("ISC_LAUNCHER"),
			       "capture",
			       spid,
			       "--steps",
			       "20",
			       "-o",
			       "window.json",
			       NULL };
	const char *env[] = { xdg, NULL };
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, env, false, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "capture: %s", r.err);
	isc_run_free(&r);
	usleep(300000);
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	fclose(out);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	yajl_val t = isc_test_load_json(isc_test_in_dir("window.json"));
	cr_assert_not_null(t);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "step"), 20);
	cr_assert_eq(count(t, "gpu_kernel"), 60, "the 20 steps' kernels, all delivered");
	cr_assert_eq(count(t, "h2d_copy") + count(t, "d2h_copy"), 40);
	cr_assert_eq(isc_trace_count(t, "cuda_api", "cudaStreamSynchronize"), 20);
	yajl_tree_free(t);
	analyze(isc_test_in_dir("window.json"), true);

	/* the recorder's files after SIGKILL: closed segments and the open one */
	char trace[64];
	snprintf(trace, sizeof(trace), "trace.%d.json", (int)pid);
	cr_assert(!isc_test_exists(isc_test_in_dir(trace)));
	DIR *d = opendir(isc_test_dir());
	struct dirent *e;
	char last[256] = "";
	int closed = 0, parts = 0;
	while ((e = readdir(d)) != NULL) {
		if (strstr(e->d_name, ".spill.part")) {
			parts++;
			/* may be a few ms old, never empty: shown with its header (the
			 * recorder's segments_appear_whole) */
			analyze(isc_test_in_dir(e->d_name), false);
		} else if (e->d_name[0] != '.' /* a staged one is hidden */ &&
			   strstr(e->d_name, ".seg-") && strstr(e->d_name, ".spill")) {
			closed++;
			if (strcmp(e->d_name, last) > 0) {
				snprintf(last, sizeof(last), "%s", e->d_name);
			}
		}
	}
	closedir(d);
	/* one open segment, or none where the kill fell inside a rotation (between the
	 * closed segment's rename and the next one's showing): seen in CI under a CPU hog */
	cr_assert_leq(parts, 1, "%d open segments", parts);
	cr_assert(closed >= 3, "%d closed segments", closed);
	analyze(isc_test_in_dir(last), true); /* the GPU timeline is in the segments */
	merged(pid);
}
