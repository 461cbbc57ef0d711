/* SPDX-License-Identifier: MIT */
/*
 * No descriptor of the library is visible to the program in steady state, and what
 * daemons do to descriptors they did not open (close_range, closing 0-1023, dup2 over
 * every one, RLIMIT_NOFILE of 8) loses no event recorded before or after.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tests/common/isc-test.h"

TestSuite(daemon_fds, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 240);

/* Enough events to fill chunks and make the collector spill during the run. */
#define N 20000

static void run_mode(const char *mode)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-daemon-fds"), mode, "20000", NULL };
	cr_assert_eq(isc_test_run(argv, NULL, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d, stderr: %s",
		  r.status, r.err);
	char done[64];
	snprintf(done, sizeof(done), "done %s\n", mode);
	cr_assert_str_eq(r.out, done, "the program's output is its own");
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t, "stderr: %s", r.err);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "before"), N);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "after"), N);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/dropped_events/total", -1), 0);
	cr_assert(YAJL_IS_TRUE(isc_trace_get(t, "trace_metadata/complete")));
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(daemon_fds, close_range_3_to_max)
{
	run_mode("close_range");
}

Test(daemon_fds, close_0_to_1023_in_a_loop)
{
	run_mode("close_loop");
}

Test(daemon_fds, dup2_over_every_descriptor)
{
	run_mode("dup2_all");
}

Test(daemon_fds, rlimit_nofile_8)
{
	run_mode("rlimit8");
}

Test(daemon_fds, no_descriptor_of_ours_in_steady_state)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-daemon-fds"), "list", "20000", NULL };
	cr_assert_eq(isc_test_run(argv, NULL, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "stderr: %s", r.err);
	cr_assert_str_eq(r.out, "extra fds: 0\n", "descriptors the program can see: %s", r.out);
	/* and the events recorded before the listing were spilled on the way */
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_eq(isc_trace_count(t, "cpu_call", "before"), N);
	yajl_tree_free(t);
	isc_run_free(&r);
}

static void python_fds(const char *python, bool block_spill);

/* On every CPython found (Debian's, pyenv's 3.8-3.13). */
Test(daemon_fds, no_descriptor_of_ours_in_a_python_process)
{
	const char *py;
	for (size_t i = 0; (py = isc_test_nth_path(ISC_PYTHONS, i)) != NULL; i++) {
		cr_log_info("python %s", py);
		python_fds(py, false);
	}
}

/* No spill file can be made: nothing of ours in the program's table either, and the
 * trace is whole at exit (python_fds, block_spill). */
Test(daemon_fds, no_spill_file_no_descriptor_either)
{
	python_fds(ISC_PYTHON3, true);
}

static const char fds_code[] =
	"import os, time, inferscope\n"
	"def fds():\n"
	"    out = {}\n"
	"    for f in os.listdir('/proc/self/fd'):\n"
	"        try:\n"
	"            out[int(f)] = os.readlink('/proc/self/fd/' + f)\n"
	"        except OSError:\n"
	"            pass\n"
	"    return out\n"
	"start = fds()\n"
	"for i in range(3000):\n"
	"    with inferscope.scope('py'):\n"
	"        pass\n"
	"time.sleep(0.06)\n"
	"print(sorted((f, t) for f, t in fds().items() if f not in start or\n"
	"    any(w in t for w in ('.spill', 'trace', 'inferscope'))))\n";

/*
 * block_spill: a shell takes the spill file's name (trace.PID.spill, PID its own and
 * then Python's: it execs it) with a directory, then execs the preloaded interpreter:
 * no spill file can be made, and the records must stay in the event buffers (a memfd
 * would be a descriptor the program sees) until the trace is written at exit.
 */
static void python_fds(const char *python, bool block_spill)
{
	struct isc_run r;
	char py[4200], code[sizeof(fds_code) + 8];
	snprintf(py, sizeof(py), "PY=%s", python);
	snprintf(code, sizeof(code), "CODE=%s", fds_code);
	const char *direct[] = { python, "-c", fds_code, NULL };
	const char *shell[] = { "/bin/sh", "-c",
				"mkdir \"trace.$$.spill\" && export LD_PRELOAD=\"$P\" && "
				"exec \"$PY\" -c \"$CODE\"",
				NULL };
	const char *env[] = { "PYTHONPATH=" ISC_PYTHON_DIR, "P=" ISC_PRELOAD_PATH, py, code, NULL };
	cr_assert_eq(
		isc_test_run(block_spill ? shell : direct, env, !block_spill, isc_test_dir(), &r),
		0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "stderr: %s", r.err);
	/* listdir's own descriptor is closed by the time readlink looks; the ones the
	 * test runner leaks into its children are there at start */
	cr_assert_str_eq(r.out, "[]\n", "%s: descriptors the program can see: %s", python, r.out);
	if (block_spill) {
		cr_assert(strstr(r.err, "events stay in memory"), "stderr: %s", r.err);
		char rm[4200];
		snprintf(rm, sizeof(rm), "rmdir %s/trace.*.spill", isc_test_dir());
		cr_assert_eq(system(rm), 0, "the shell's directory is left");
	}
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_eq(isc_trace_count(t, "cpu_call", "py"), 3000, "%s", python);
	yajl_tree_free(t);
	isc_run_free(&r);
	unlink(isc_test_in_dir("trace.json"));
}
