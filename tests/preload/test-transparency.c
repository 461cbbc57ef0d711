/* SPDX-License-Identifier: MIT */
/* The preload must not change what a program does; bad configuration is reported
 * once and ignored; an unwritable output directory loses nothing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tests/common/isc-test.h"

TestSuite(transparency, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 60);

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++) {
		n += *s == '\n';
	}
	return n;
}

Test(transparency, same_output_and_status)
{
	struct isc_run plain, traced;
	const char *argv[] = { isc_test_workload("wl-exit"), "42", NULL };
	cr_assert_eq(isc_test_run(argv, NULL, false, isc_test_dir(), &plain), 0);
	cr_assert_eq(isc_test_run(argv, NULL, true, isc_test_dir(), &traced), 0);
	cr_assert_eq(plain.status, traced.status);
	cr_assert_eq(WEXITSTATUS(traced.status), 42);
	cr_assert_str_eq(plain.out, traced.out);
	cr_assert_str_eq(plain.err, traced.err, "the preload printed: %s", traced.err);
	isc_run_free(&plain);
	isc_run_free(&traced);
}

Test(transparency, unwritable_output_one_line_and_fallback)
{
	struct isc_run plain, traced;
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "TMPDIR=%s", isc_test_dir());
	const char *argv[] = { isc_test_workload("wl-exit"), "3", NULL };
	const char *env[] = { "INFERSCOPE_OUTPUT=/nonexistent/dir/trace.json", tmp, NULL };
	cr_assert_eq(isc_test_run(argv, NULL, false, isc_test_dir(), &plain), 0);
	cr_assert_eq(isc_test_run(argv, env, true, isc_test_dir(), &traced), 0);
	cr_assert_eq(plain.status, traced.status);
	cr_assert_str_eq(plain.out, traced.out);
	/* the program's own stderr line, then exactly one line of ours naming the path */
	cr_assert_eq(count_lines(traced.err), count_lines(plain.err) + 1, "stderr: %s", traced.err);
	cr_assert(strstr(traced.err, "/nonexistent/dir"), "stderr: %s", traced.err);
	char path[4300];
	snprintf(path, sizeof(path), "%s/trace.json", isc_test_dir());
	yajl_val t = isc_test_load_json(path);
	cr_assert_not_null(t, "the trace went to $TMPDIR");
	cr_assert_eq(isc_trace_count(t, "cpu_call", "main"), 1);
	yajl_tree_free(t);
	isc_run_free(&plain);
	isc_run_free(&traced);
}

Test(transparency, bad_variable_is_reported_once_and_ignored)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-exit"), "0", NULL };
	const char *env[] = { "INFERSCOPE_MAX_MEMORY=12q", "INFERSCOPE_TICK=fast", NULL };
	cr_assert_eq(isc_test_run(argv, env, true, isc_test_dir(), &r), 0);
	cr_assert_eq(WEXITSTATUS(r.status), 0);
	cr_assert(strstr(r.err, "INFERSCOPE_MAX_MEMORY='12q'"), "stderr: %s", r.err);
	cr_assert(strstr(r.err, "INFERSCOPE_TICK='fast'"), "stderr: %s", r.err);
	cr_assert_eq(count_lines(r.err), 3, "two warnings and the program's line: %s", r.err);
	char path[4200];
	snprintf(path, sizeof(path), "%s/trace.json", isc_test_dir());
	yajl_val t = isc_test_load_json(path);
	cr_assert_not_null(t);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/configuration/INFERSCOPE_MAX_MEMORY"),
			 "256M", "the default is used and recorded");
	yajl_tree_free(t);
	isc_run_free(&r);
}

static void python_scopes_nest(const char *python);

/* On every CPython found (Debian's, pyenv's 3.8-3.13). */
Test(transparency, python_scopes_nest)
{
	const char *py;
	for (size_t i = 0; (py = isc_test_nth_path(ISC_PYTHONS, i)) != NULL; i++) {
		cr_log_info("python %s", py);
		python_scopes_nest(py);
	}
}

static void python_scopes_nest(const char *python)
{
	struct isc_run r;
	char pp[4200];
	snprintf(pp, sizeof(pp), "PYTHONPATH=%s", ISC_PYTHON_DIR);
	const char *argv[] = { python, ISC_WORKLOAD_DIR "/scopes.py", NULL };
	const char *env[] = { pp, NULL };
	cr_assert_eq(isc_test_run(argv, env, true, isc_test_dir(), &r), 0);
	cr_assert(strstr(r.out, "python active=True total=499500"), "out %s err %s", r.out, r.err);
	char path[4200];
	snprintf(path, sizeof(path), "%s/trace.json", isc_test_dir());
	yajl_val t = isc_test_load_json(path);
	cr_assert_not_null(t);
	yajl_val inner = isc_trace_find(t, "cpu_call", "inner", 0);
	yajl_val dec = isc_trace_find(t, "cpu_call", "decorated", 0);
	cr_assert_str_eq(isc_trace_str(inner, "metadata/parent_scope"), "decorated");
	cr_assert_str_eq(isc_trace_str(dec, "metadata/parent_scope"), "outer");
	cr_assert_eq(isc_trace_int(inner, "metadata/call_depth", -1), 2);
	cr_assert_str_eq(isc_trace_str(inner, "metadata/source"), "python");
	yajl_val done = isc_trace_find(t, "instant", "done", 0);
	cr_assert_eq(isc_trace_int(done, "metadata/user_metadata/total", 0), 499500);
	cr_assert_str_eq(isc_trace_str(done, "metadata/user_metadata/label"), "ok");
	cr_assert(isc_trace_str(t, "trace_metadata/python_version") != NULL);
	yajl_tree_free(t);
	isc_run_free(&r);
	unlink(path); /* the next interpreter writes its own */
}

Test(transparency, python_helper_is_a_noop_without_the_preload)
{
	char pp[4200];
	snprintf(pp, sizeof(pp), "PYTHONPATH=%s", ISC_PYTHON_DIR);
	const char *py;
	for (size_t i = 0; (py = isc_test_nth_path(ISC_PYTHONS, i)) != NULL; i++) {
		struct isc_run r;
		const char *argv[] = { py, ISC_WORKLOAD_DIR "/scopes.py", NULL };
		const char *env[] = { pp, NULL };
		cr_assert_eq(isc_test_run(argv, env, false, isc_test_dir(), &r), 0);
		cr_assert(strstr(r.out, "python active=False total=499500"), "%s: out %s", py,
			  r.out);
		cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", py);
		isc_run_free(&r);
	}
}
