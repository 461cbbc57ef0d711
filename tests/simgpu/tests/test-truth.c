/* SPDX-License-Identifier: MIT */
/*
 * The ground-truth file: written at exit by every process (a forked child next to
 * its parent's file, never over it), and read back with clear errors on bad input.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/simgpu/tests/spawn.h"
#include "tests/simgpu/truth/truth-reader.h"

TestSuite(truth);

Test(truth, parent_and_forked_child_write_their_own_files)
{
	char path[] = "/tmp/simgpu-truth-fork-XXXXXX";
	char child_path[64];
	char truth_env[64];
	const char *argv[] = { SIMGPU_TRUTH_PROBE, NULL };
	const char *env[] = { truth_env, NULL };
	struct simgpu_truth *parent = NULL;
	struct simgpu_truth *child = NULL;
	struct wl_run run;
	char err[256];
	int child_pid = 0;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(truth_env, sizeof(truth_env), "SIMGPU_TRUTH=%s", path);
	cr_assert_eq(wl_spawn(argv, env, &run), 0);
	cr_assert_eq(run.status, 0, "%s", run.output);
	cr_assert_eq(sscanf(run.output, "child %d", &child_pid), 1, "%s", run.output);
	snprintf(child_path, sizeof(child_path), "%s.%d", path, child_pid);
	cr_assert_eq(simgpu_truth_create(path, &parent, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(simgpu_truth_create(child_path, &child, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(parent->n_ops, 1);
	cr_assert_eq(child->n_ops, 3, "the child inherits the parent's history");
	cr_assert_eq(child->pid, child_pid);
	cr_assert_str_eq(parent->ops[0].name, "probe \"quoted\"\\name", "names are escaped");
	cr_assert_eq(parent->device_count, 1);
	cr_assert_gt(parent->n_api, 0);
	unlink(path);
	unlink(child_path);
	simgpu_truth_destroy(parent);
	simgpu_truth_destroy(child);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(truth, bad_input_gets_a_clear_error)
{
	char path[] = "/tmp/simgpu-truth-bad-XXXXXX";
	struct simgpu_truth *t = (struct simgpu_truth *)1;
	char err[256];
	int fd = mkstemp(path);

	close(fd);
	cr_assert_lt(simgpu_truth_create("/nonexistent/truth.json", &t, err, sizeof(err)), 0);
	cr_assert_null(t);
	cr_assert(strstr(err, "/nonexistent/truth.json") != NULL, "%s", err);
	write_file(path, "{\"ops\": [");
	cr_assert_lt(simgpu_truth_create(path, &t, err, sizeof(err)), 0);
	cr_assert(strstr(err, path) != NULL, "%s", err);
	write_file(path, "{\"simgpu_truth\": 2, \"ops\": []}");
	cr_assert_lt(simgpu_truth_create(path, &t, err, sizeof(err)), 0);
	cr_assert(strstr(err, "version 1") != NULL, "%s", err);
	write_file(path,
		   "{\"simgpu_truth\": 1, \"ops\": [{\"type\": \"kernel\", \"extra\": [1]}]}");
	cr_assert_eq(simgpu_truth_create(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t->n_ops, 1, "unknown fields are ignored");
	simgpu_truth_destroy(t);
	simgpu_truth_destroy(NULL);
	unlink(path);
}
