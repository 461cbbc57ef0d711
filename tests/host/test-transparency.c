/* SPDX-License-Identifier: MIT */
/* Real programs behave the same under the preload: exit status, output, errno
 * behaviour - with the default configuration and with everything turned up. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tests/host/host-test.h"

TestSuite(host_transparency, .init = host_setup, .fini = host_teardown, .timeout = 120);

/* Everything recorded: every allocation and system call, stacks on all of them. */
static const char *const loud[] = { "INFERSCOPE_MALLOC_SAMPLE=0", "INFERSCOPE_SYSCALL_THRESHOLD=0",
				    "INFERSCOPE_STACKS=16", NULL };

static void same_as_plain(const char *const argv[], const char *const env[], int status)
{
	struct isc_run plain, quiet, noisy, off;
	cr_assert_eq(isc_test_run(argv, env, false, host_dir, &plain), 0);
	cr_assert(WIFEXITED(plain.status) && WEXITSTATUS(plain.status) == status,
		  "plain run: %d %s", plain.status, plain.err);
	/* each run its own trace.json: the library names a second run's trace on stderr */
	char trace[4200];
	snprintf(trace, sizeof(trace), "%s/trace.json", host_dir);
	unlink(trace);
	cr_assert_eq(isc_test_run(argv, env, true, host_dir, &quiet), 0);
	unlink(trace);
	char extra[8][4200];
	const char *env2[16];
	size_t n = 0;
	for (; env && env[n] && n < 8; n++) {
		snprintf(extra[n], sizeof(extra[n]), "%s", env[n]);
		env2[n] = extra[n];
	}
	for (size_t i = 0; loud[i]; i++) {
		env2[n++] = loud[i];
	}
	env2[n] = NULL;
	cr_assert_eq(isc_test_run(argv, env2, true, host_dir, &noisy), 0);
	/* and as a pass-through: every hook forwards without recording */
	env2[n] = "INFERSCOPE_ENABLE=0";
	env2[n + 1] = NULL;
	cr_assert_eq(isc_test_run(argv, env2, true, host_dir, &off), 0);
	struct isc_run *runs[] = { &quiet, &noisy, &off };
	static const char *const what[] = { "default", "loud", "disabled" };
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(runs[i]->status, plain.status, "%s run: status %d, stderr %s", what[i],
			     runs[i]->status, runs[i]->err);
		cr_assert_str_eq(runs[i]->out, plain.out, "%s run", what[i]);
		cr_assert_str_eq(runs[i]->err, plain.err, "%s run", what[i]);
	}
	isc_run_free(&plain);
	isc_run_free(&quiet);
	isc_run_free(&noisy);
	isc_run_free(&off);
}

Test(host_transparency, threads_fork_exec_signals)
{
	const char *argv[] = { isc_test_workload("wl-mix"), NULL };
	same_as_plain(argv, NULL, 3);
}

Test(host_transparency, cpp_exceptions)
{
	if (!ISC_HAVE_CPP) {
		cr_skip_test("no C++ compiler at configure time");
	}
	const char *argv[] = { isc_test_workload("wl-exceptions"), NULL };
	same_as_plain(argv, NULL, 0);
}

static void python_file_and_socket_io(const char *python);

/* On every CPython found (Debian's, pyenv's 3.8-3.13). */
Test(host_transparency, python_file_and_socket_io)
{
	const char *py;
	for (size_t i = 0; (py = isc_test_nth_path(ISC_PYTHONS, i)) != NULL; i++) {
		cr_log_info("python %s", py);
		python_file_and_socket_io(py);
	}
}

static void python_file_and_socket_io(const char *python)
{
	char script[4200];
	snprintf(script, sizeof(script), "%s/pyio.py", ISC_WORKLOAD_DIR);
	const char *argv[] = { python, script, host_dir, NULL };
	same_as_plain(argv, NULL, 0);

	struct isc_run r;
	yajl_val t = host_trace(argv, NULL, &r);
	cr_assert(strstr(r.out, "socket 300 LINE 0 L LINE 299"), "%s", r.out);
	cr_assert(strstr(r.out, "refused ECONNREFUSED"), "%s", r.out);
	cr_assert_geq(host_agg_sum(t, "syscalls/recv/count"), 300);
	cr_assert_geq(host_agg_sum(t, "syscalls/send/count"), 300);
	cr_assert_geq(host_agg_sum(t, "syscalls/connect/count"), 2);
	cr_assert_geq(host_agg_sum(t, "syscalls/connect/errors"), 1, "the refused connect");
	cr_assert_geq(host_agg_sum(t, "syscalls/accept/count") +
			      host_agg_sum(t, "syscalls/accept4/count"),
		      1);
	cr_assert_geq(host_agg_sum(t, "syscalls/write/bytes"), 1 << 20, "the 1 MiB file");
	cr_assert_gt(host_agg_sum(t, "malloc/calls"), 1000);
	cr_assert_not_null(isc_trace_get(t, "trace_metadata/python_version"));
	yajl_tree_free(t);
	isc_run_free(&r);
}
