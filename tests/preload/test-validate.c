/* SPDX-License-Identifier: MIT */
/* Traces the library writes validate against the format: a C program with nested
 * scopes and marks from many threads, a Python script with the scope helper, a fork
 * child's file, and a trace rebuilt from a killed process's spill. */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/common/isc-test.h"

TestSuite(validate, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 60);

/* inferscope-analyze --validate on every file matching pattern in isc_test_dir(); returns how many. */
static size_t validate_all(const char *pattern)
{
	char full[4200];
	glob_t g;
	snprintf(full, sizeof(full), "%s/%s", isc_test_dir(), pattern);
	cr_assert_eq(glob(full, 0, NULL, &g), 0, "no %s written", pattern);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct isc_run r;
		const char *argv[] = { ISC_ANALYZE_PATH, "--validate", g.gl_pathv[i], NULL };
		cr_assert_eq(isc_test_run(argv, NULL, false, isc_test_dir(), &r), 0);
		cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: %s%s",
			  g.gl_pathv[i], r.out, r.err);
		cr_assert(strstr(r.out, "valid"), "%s", r.out);
		isc_run_free(&r);
	}
	size_t n = g.gl_pathc;
	globfree(&g);
	return n;
}

static void run(const char *const argv[], const char *const env[])
{
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, env, true, isc_test_dir(), &r), 0);
	isc_run_free(&r);
}

Test(validate, c_scopes_from_many_threads)
{
	const char *argv[] = { isc_test_workload("wl-threads"), "4", "500", NULL };
	run(argv, NULL);
	cr_assert_eq(validate_all("trace.json"), 1);
}

Test(validate, python_scopes_and_marks)
{
	char pp[4200];
	snprintf(pp, sizeof(pp), "PYTHONPATH=%s", ISC_PYTHON_DIR);
	const char *py;
	for (size_t i = 0; (py = isc_test_nth_path(ISC_PYTHONS, i)) != NULL; i++) {
		cr_log_info("python %s", py);
		const char *argv[] = { py, ISC_WORKLOAD_DIR "/scopes.py", NULL };
		const char *env[] = { pp, NULL };
		run(argv, env);
		cr_assert_eq(validate_all("trace.json"), 1, "%s", py);
		char path[4200];
		snprintf(path, sizeof(path), "%s/trace.json", isc_test_dir());
		unlink(path); /* the next interpreter writes its own */
	}
}

Test(validate, parent_and_fork_child)
{
	const char *argv[] = { isc_test_workload("wl-fork"), "exit", NULL };
	run(argv, NULL);
	cr_assert_eq(validate_all("trace*.json"), 2);
}

Test(validate, snapshot_and_final_trace)
{
	const char *argv[] = { isc_test_workload("wl-signal"), "USR2", NULL };
	const char *env[] = { "INFERSCOPE_SNAPSHOT_SIGNAL=SIGUSR2", NULL };
	run(argv, env);
	cr_assert_eq(validate_all("trace*.json"), 2);
}
