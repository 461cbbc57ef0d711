/* SPDX-License-Identifier: MIT */
/*
 * Exec chains are one program: wrappers that replace themselves with the program (a
 * pyenv shim, a shim script, env, sh -c 'exec ...', os.execv, a chain of three) leave
 * one trace.json whose identity is the final image and which holds every event of
 * every image, the earlier ones as start-up segments (trace_metadata.exec_chain).
 * Nothing depends on how much CPU a wrapper used.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/common/isc-test.h"

TestSuite(exec_chain, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 120);

/* The Python program at the end of every chain: N scopes, its pid on stdout. */
#define PY_SCOPES 7
static const char py_program[] = "import os, inferscope\n"
				 "for i in range(7):\n"
				 "    with inferscope.scope('py_work'):\n"
				 "        sum(range(1000))\n"
				 "print('final pid', os.getpid())\n";

static const char *py_env[] = { "PYTHONPATH=" ISC_PYTHON_DIR, NULL };

static int count_traces(void)
{
	DIR *d = opendir(isc_test_dir());
	int n = 0;
	struct dirent *e;
	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, "trace", 5) == 0 &&
		    (strstr(e->d_name, ".spill") ||
		     (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0))) {
			n++;
		}
	}
	closedir(d);
	return n;
}

/* Spill files left in dir: every image that ended wrote its trace or removed them. */
static int count_spills(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	cr_assert_not_null(d, "%s", dir);
	while ((e = readdir(d)) != NULL) {
		n += strstr(e->d_name, ".spill") != NULL;
	}
	closedir(d);
	return n;
}

static void write_file(const char *name, const char *text, mode_t mode)
{
	const char *path = isc_test_in_dir(name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
}

static const char *arg_at(yajl_val cmd, size_t i)
{
	return YAJL_IS_ARRAY(cmd) && i < YAJL_GET_ARRAY(cmd)->len
		       ? YAJL_GET_STRING(YAJL_GET_ARRAY(cmd)->values[i])
		       : NULL;
}

/*
 * Runs argv under the preload in the test directory and checks the one trace:
 * identity of the final (Python) image, all its events, the earlier images as
 * exec_chain entries whose events say their segment. Returns the chain's length.
 */
static size_t check_chain_files(const char *const argv[], const char *const env[], size_t min_chain,
				bool one_file)
{
	struct isc_run r;
	write_file("prog.py", py_program, 0644);
	cr_assert_eq(isc_test_run(argv, env, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d, stderr: %s",
		  r.status, r.err);
	int pid = 0;
	const char *line = strstr(r.out, "final pid ");
	cr_assert(line && sscanf(line, "final pid %d", &pid) == 1, "stdout: %s", r.out);
	if (one_file) {
		cr_assert_eq(count_traces(), 1, "one file for the whole chain (stderr: %s)", r.err);
	}
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t);

	/* identity: the final image */
	cr_assert_eq(isc_trace_int(t, "trace_metadata/pid", 0), pid);
	const char *exe = isc_trace_str(t, "trace_metadata/executable");
	cr_assert(exe && strstr(strrchr(exe, '/'), "python"), "executable %s", exe);
	yajl_val cmd = isc_trace_get(t, "trace_metadata/command_line");
	const char *last = arg_at(cmd, YAJL_IS_ARRAY(cmd) ? YAJL_GET_ARRAY(cmd)->len - 1 : 0);
	cr_assert(last && strstr(last, "prog.py"), "command line ends with the program: %s", last);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/end_reason"), "exit");

	/* every event of the program, none tagged as start-up */
	cr_assert_eq(isc_trace_count(t, "cpu_call", "py_work"), PY_SCOPES);
	for (size_t i = 0; i < PY_SCOPES; i++) {
		yajl_val e = isc_trace_find(t, "cpu_call", "py_work", i);
		cr_assert_null(isc_trace_get(e, "metadata/exec_segment"));
	}
	cr_assert_eq(isc_trace_int(t, "trace_metadata/dropped_events/total", -1), 0);

	/* the wrappers: start-up segments, in order, before the program started */
	yajl_val chain = isc_trace_get(t, "trace_metadata/exec_chain");
	cr_assert(YAJL_IS_ARRAY(chain), "exec_chain is missing");
	size_t n = YAJL_GET_ARRAY(chain)->len;
	cr_assert_geq(n, min_chain);
	double start = isc_trace_num(t, "trace_metadata/start_us", 0), prev_end = 0;
	for (size_t i = 0; i < n; i++) {
		yajl_val s = YAJL_GET_ARRAY(chain)->values[i];
		cr_assert_eq(isc_trace_int(s, "segment", -1), (long long)i);
		cr_assert_eq(isc_trace_int(s, "pid", 0), pid);
		cr_assert_str_eq(isc_trace_str(s, "end_reason"), "exec");
		double s0 = isc_trace_num(s, "start_us", -1), s1 = isc_trace_num(s, "end_us", -1);
		cr_assert(s0 >= prev_end && s1 >= s0 && s1 <= start, "segment %zu: %f..%f", i, s0,
			  s1);
		prev_end = s1;
	}
	/* no event says a segment the chain does not have */
	yajl_val ev = isc_trace_events(t);
	for (size_t i = 0; i < YAJL_GET_ARRAY(ev)->len; i++) {
		long long seg =
			isc_trace_int(YAJL_GET_ARRAY(ev)->values[i], "metadata/exec_segment", -1);
		cr_assert(seg < (long long)n, "event %zu in segment %lld of %zu", i, seg, n);
	}
	yajl_tree_free(t);
	isc_run_free(&r);
	return n;
}

static size_t check_chain(const char *const argv[], const char *const env[], size_t min_chain)
{
	return check_chain_files(argv, env, min_chain, true);
}

Test(exec_chain, shim_script_that_execs_the_interpreter)
{
	char shim[4200];
	snprintf(shim, sizeof(shim), "#!/bin/bash\nexec \"%s\" \"$@\"\n", ISC_PYTHON3);
	write_file("python3", shim, 0755);
	const char *argv[] = { isc_test_in_dir("python3"), "prog.py", NULL };
	cr_assert_eq(check_chain(argv, py_env, 1), 1);
}

Test(exec_chain, busy_shim_is_still_start_up)
{
	/* a wrapper that used far more than the CPU that makes a descendant "worth a
	 * file" (100 ms): the program is still trace.json's identity */
	char shim[4200];
	snprintf(shim, sizeof(shim),
		 "#!/bin/bash\ni=0\nwhile [ $i -lt 300000 ]; do i=$((i+1)); done\n"
		 "exec \"%s\" \"$@\"\n",
		 ISC_PYTHON3);
	write_file("python3", shim, 0755);
	const char *argv[] = { isc_test_in_dir("python3"), "prog.py", NULL };
	cr_assert_eq(check_chain(argv, py_env, 1), 1);
}

Test(exec_chain, env)
{
	const char *argv[] = { "/usr/bin/env", "PYTHONDONTWRITEBYTECODE=1", ISC_PYTHON3, "prog.py",
			       NULL };
	cr_assert_eq(check_chain(argv, py_env, 1), 1);
}

Test(exec_chain, sh_c_exec)
{
	const char *argv[] = { "/bin/sh", "-c", "exec \"$0\" prog.py", ISC_PYTHON3, NULL };
	cr_assert_eq(check_chain(argv, py_env, 1), 1);
}

/* os.execv of the running interpreter, on every CPython found. */
Test(exec_chain, python_os_execv)
{
	write_file("first.py",
		   "import os, sys, inferscope\n"
		   "with inferscope.scope('before_execv'):\n"
		   "    pass\n"
		   "os.execv(sys.executable, [sys.executable, 'prog.py'])\n",
		   0644);
	const char *py;
	for (size_t i = 0; (py = isc_test_nth_path(ISC_PYTHONS, i)) != NULL; i++) {
		cr_log_info("python %s", py);
		const char *argv[] = { py, "first.py", NULL };
		cr_assert_eq(check_chain(argv, py_env, 1), 1, "%s", py);
		yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
		/* the first image's own event, in its segment */
		cr_assert_eq(isc_trace_count(t, "cpu_call", "before_execv"), 1, "%s", py);
		yajl_val e = isc_trace_find(t, "cpu_call", "before_execv", 0);
		cr_assert_eq(isc_trace_int(e, "metadata/exec_segment", -1), 0);
		yajl_tree_free(t);
		unlink(isc_test_in_dir("trace.json"));
	}
}

Test(exec_chain, chain_of_three)
{
	/* sh -> env -> a shim script -> the interpreter */
	char shim[4200];
	snprintf(shim, sizeof(shim), "#!/bin/bash\nexec \"%s\" \"$@\"\n", ISC_PYTHON3);
	write_file("python3", shim, 0755);
	const char *argv[] = { "/bin/sh", "-c", "exec /usr/bin/env \"$0\" prog.py",
			       isc_test_in_dir("python3"), NULL };
	size_t n = check_chain(argv, py_env, 3);
	cr_assert_eq(n, 3, "sh, env and the shim before the program");
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	yajl_val chain = isc_trace_get(t, "trace_metadata/exec_chain");
	const char *first =
		arg_at(isc_trace_get(YAJL_GET_ARRAY(chain)->values[0], "command_line"), 0);
	const char *second =
		arg_at(isc_trace_get(YAJL_GET_ARRAY(chain)->values[1], "command_line"), 0);
	cr_assert_str_eq(first, "/bin/sh");
	cr_assert_str_eq(second, "/usr/bin/env");
	yajl_tree_free(t);
}

Test(exec_chain, real_pyenv_shim)
{
	const char *shim = "/root/.pyenv/shims/python3";
	if (access(shim, X_OK) != 0) {
		cr_skip_test("no pyenv shim at %s", shim);
	}
	const char *argv[] = { shim, "prog.py", NULL };
	/* the shim is bash running pyenv's libexec scripts: at least that one image. Its
	 * $(...) subshells are children of their own, which may write files beside, but
	 * leave no spill (some cd elsewhere and exec readlink: the spill they hand over
	 * must be found and removed there). */
	check_chain_files(argv, py_env, 1, false);
	cr_assert_eq(count_spills(isc_test_dir()), 0);
}

/* A wrapper that changes directory before the exec: the program's image finds the
 * spill the wrapper left, and the trace lands where the run started. */
Test(exec_chain, wrapper_that_changes_directory)
{
	cr_assert_eq(mkdir(isc_test_in_dir("elsewhere"), 0755), 0);
	char sub[4200], prog[4200];
	snprintf(sub, sizeof(sub), "%s", isc_test_in_dir("elsewhere"));
	snprintf(prog, sizeof(prog), "%s", isc_test_in_dir("prog.py"));
	const char *argv[] = { "/bin/sh", "-c", "cd \"$1\" && exec \"$0\" \"$2\"", ISC_PYTHON3, sub,
			       prog,	  NULL };
	cr_assert_eq(check_chain(argv, py_env, 1), 1);
	cr_assert_eq(count_spills(sub), 0);
	cr_assert_not(isc_test_exists(isc_test_in_dir("elsewhere/trace.json")));
}

Test(exec_chain, c_program_execs_itself)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-exec"), NULL };
	cr_assert_eq(isc_test_run(argv, NULL, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "stderr: %s", r.err);
	cr_assert_eq(count_traces(), 1);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_eq(isc_trace_count(t, "cpu_call", "before_exec"), 1);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "after_exec"), 1);
	cr_assert_eq(isc_trace_int(isc_trace_find(t, "cpu_call", "before_exec", 0),
				   "metadata/exec_segment", -1),
		     0);
	cr_assert_eq(isc_trace_int(isc_trace_find(t, "cpu_call", "after_exec", 0),
				   "metadata/exec_segment", -1),
		     -1);
	/* scope ids go on across the exec: one trace, no id twice */
	long long a = isc_trace_int(isc_trace_find(t, "cpu_call", "before_exec", 0),
				    "metadata/scope_id", 0);
	long long b = isc_trace_int(isc_trace_find(t, "cpu_call", "after_exec", 0),
				    "metadata/scope_id", 0);
	cr_assert(a > 0 && b > a, "scope ids %lld then %lld", a, b);
	yajl_tree_free(t);
	isc_run_free(&r);
}
