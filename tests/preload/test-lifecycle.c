/* SPDX-License-Identifier: MIT */
/* When traces are written: exit, _exit, exec, fork, signals, snapshots, windows. */
#include <criterion/criterion.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/common/isc-test.h"

TestSuite(lifecycle, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 60);

static void run_in_dir(const char *const argv[], const char *const env[], struct isc_run *r)
{
	cr_assert_eq(isc_test_run(argv, env, true, isc_test_dir(), r), 0);
}

static yajl_val load(const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", isc_test_dir(), name);
	yajl_val t = isc_test_load_json(path);
	cr_assert_not_null(t, "%s is missing or not JSON", path);
	return t;
}

static int count_files(const char *prefix, const char *suffix)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "ls -1 %s | grep -c '^%s.*%s$'", isc_test_dir(), prefix, suffix);
	FILE *p = popen(cmd, "r");
	int n = 0;
	if (p) {
		if (fscanf(p, "%d", &n) != 1) {
			n = 0;
		}
		pclose(p);
	}
	return n;
}

Test(lifecycle, events_of_exited_threads_survive)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-threads"), "8", "2000", NULL };
	run_in_dir(argv, NULL, &r);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "stderr: %s", r.err);
	yajl_val t = load("trace.json");
	/* every scope of every thread, no drops, nothing torn */
	cr_assert_eq(isc_trace_count(t, "cpu_call", "work"), 8 * 2000);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "step"), 8 * 2000);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "main_after_join"), 1);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/dropped_events/total", -1), 0);
	yajl_val step = isc_trace_find(t, "cpu_call", "step", 1234);
	cr_assert_str_eq(isc_trace_str(step, "metadata/parent_scope"), "work");
	cr_assert_eq(isc_trace_int(step, "metadata/call_depth", -1), 1);
	yajl_val threads = isc_trace_get(t, "trace_metadata/aggregates/threads");
	cr_assert(YAJL_IS_ARRAY(threads));
	cr_assert_geq(YAJL_GET_ARRAY(threads)->len, 9, "8 workers and main");
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* Without the preload the process ends (exit status 0) when its last thread does; the
 * library's collector thread must not keep it alive. */
Test(lifecycle, main_thread_leaving_first_still_ends_the_process)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-threads"), "4", "20000", "pthread_exit",
			       NULL };
	run_in_dir(argv, NULL, &r);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d, stderr: %s",
		  r.status, r.err);
	cr_assert(strstr(r.out, "main leaves first"), "stdout: %s", r.out);
	yajl_val t = load("trace.json");
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/end_reason"), "exit");
	cr_assert_eq(isc_trace_count(t, "cpu_call", "work"), 4 * 20000);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "main_after_join"), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

static void fork_in_thread(const char *python)
{
	struct isc_run r;
	const char *argv[] = { python, ISC_WORKLOAD_DIR "/fork-in-thread.py", NULL };
	cr_assert_eq(isc_test_run(argv, NULL, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: status %d, err %s",
		  python, r.status, r.err);
	cr_assert(strstr(r.out, "child status 0"), "%s: stdout %s, stderr %s", python, r.out,
		  r.err);
	isc_run_free(&r);
}

/* CPython's test_threading.test_main_thread_after_fork_from_nonmain_thread: the child's
 * only thread returns, and the child must end with it. */
Test(lifecycle, python_child_forked_from_a_thread_ends)
{
	const char *py;
	for (size_t i = 0; (py = isc_test_nth_path(ISC_PYTHONS, i)) != NULL; i++) {
		cr_log_info("python %s", py);
		fork_in_thread(py);
	}
}

static void fork_quiet(const char *python)
{
	struct isc_run r;
	const char *argv[] = { python, ISC_WORKLOAD_DIR "/fork-quiet.py", ISC_PYTHON_DIR, NULL };
	char xdg[4200];
	snprintf(xdg, sizeof(xdg), "XDG_RUNTIME_DIR=%s", isc_test_dir());
	const char *env[] = { xdg, NULL };
	unlink(isc_test_in_dir("trace.json")); /* the previous interpreter's: kept otherwise */
	run_in_dir(argv, env, &r);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: status %d, err %s",
		  python, r.status, r.err);
	cr_assert_str_eq(r.err, "", "%s: stderr '%s' (CPython >= 3.12 warns of threads)", python,
			 r.err);
	cr_assert(strstr(r.out, "library threads running True"), "%s: %s", python, r.out);
	for (int k = 0; k < 3; k++) {
		char line[128];
		snprintf(line, sizeof(line), "fork %d: parent saw 1 thread(s), child status %d", k,
			 10 + k);
		cr_assert(strstr(r.out, line), "%s: no '%s' in %s", python, line, r.out);
		snprintf(line, sizeof(line), "fork %d: library threads back True", k);
		cr_assert(strstr(r.out, line), "%s: no '%s' in %s", python, line, r.out);
	}
	glob_t g;
	char pattern[4200];
	snprintf(pattern, sizeof(pattern), "%s/inferscope/*.sock", isc_test_dir());
	cr_assert_eq(glob(pattern, 0, NULL, &g), GLOB_NOMATCH, "%s: a control socket is left: %s",
		     python, g.gl_pathc ? g.gl_pathv[0] : "");
	globfree(&g);
	yajl_val t = load("trace.json");
	cr_assert_eq(isc_trace_count(t, "cpu_call", "before"), 1);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "after_fork"), 3, "%s", python);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/dropped_events/total", -1), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* A single-threaded program that forks looks single-threaded to itself: the library's
 * threads stop around fork() and come back after (CPython's
 * test_threading.test_main_thread_after_fork fails on 3.12+ otherwise). */
Test(lifecycle, single_threaded_program_stays_single_threaded_across_fork)
{
	const char *py;
	for (size_t i = 0; (py = isc_test_nth_path(ISC_PYTHONS, i)) != NULL; i++) {
		cr_log_info("python %s", py);
		fork_quiet(py);
	}
}

/* The library never calls a function the program may have replaced (bash's getenv)
 * from a thread of its own: the collector's tick did, and crashed bash 1 run in 20. */
Test(lifecycle, no_call_to_the_programs_getenv_from_our_threads)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-own-getenv"), NULL };
	run_in_dir(argv, NULL, &r);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d, stderr: %s",
		  r.status, r.err);
	cr_assert(strstr(r.out, "foreign getenv 0\n"), "stdout: %s", r.out);
	isc_run_free(&r);
}

Test(lifecycle, fork_child_writes_its_own_file)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-fork"), "exit", NULL };
	run_in_dir(argv, NULL, &r);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "stderr: %s", r.err);
	int child = 0;
	cr_assert_eq(sscanf(r.out, "child %d", &child), 1, "stdout: %s", r.out);
	char name[64];
	snprintf(name, sizeof(name), "trace.%d.json", child);
	yajl_val c = load(name);
	yajl_val p = load("trace.json");
	cr_assert_eq(isc_trace_count(c, "cpu_call", "child"), 5);
	cr_assert_eq(isc_trace_count(p, "cpu_call", "child"), 0, "the parent's file is intact");
	cr_assert_eq(isc_trace_count(p, "cpu_call", "parent"), 1);
	cr_assert_eq(isc_trace_int(c, "trace_metadata/pid", 0), child);
	cr_assert_eq(isc_trace_int(c, "trace_metadata/root_pid", 0),
		     isc_trace_int(p, "trace_metadata/pid", 1));
	yajl_tree_free(c);
	yajl_tree_free(p);
	isc_run_free(&r);
}

Test(lifecycle, fork_child_leaving_with__exit_flushes)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-fork"), "_exit", NULL };
	run_in_dir(argv, NULL, &r);
	cr_assert(strstr(r.out, "parent saw 7"), "stdout: %s", r.out);
	int child = 0;
	cr_assert_eq(sscanf(r.out, "child %d", &child), 1);
	char name[64];
	snprintf(name, sizeof(name), "trace.%d.json", child);
	yajl_val c = load(name);
	cr_assert_eq(isc_trace_count(c, "cpu_call", "child"), 5);
	cr_assert_str_eq(isc_trace_str(c, "trace_metadata/end_reason"), "_exit");
	yajl_tree_free(c);
	isc_run_free(&r);
}

Test(lifecycle, idle_fork_child_writes_nothing)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-fork"), "idle", NULL };
	run_in_dir(argv, NULL, &r);
	cr_assert_eq(count_files("trace", "\\.json"), 1, "only the parent's trace");
	cr_assert_eq(count_files("", "\\.spill"), 0, "no spill left behind");
	isc_run_free(&r);
}

Test(lifecycle, busy_fork_child_without_annotations_writes_its_file)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-fork"), "busy", NULL };
	run_in_dir(argv, NULL, &r);
	int child = 0;
	cr_assert_eq(sscanf(r.out, "child %d", &child), 1, "stdout: %s", r.out);
	char name[64];
	snprintf(name, sizeof(name), "trace.%d.json", child);
	yajl_val c = load(name);
	cr_assert_eq(isc_trace_count(c, "cpu_call", "child"), 0, "no annotations of its own");
	cr_assert_eq(isc_trace_int(c, "trace_metadata/pid", 0), child);
	yajl_tree_free(c);
	isc_run_free(&r);
}

/* An exec into an image that records: tests/preload/test-exec-chain.c. */

Test(lifecycle, failed_exec_keeps_errno_and_recording)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-exec"), "missing", NULL };
	run_in_dir(argv, NULL, &r);
	cr_assert(strstr(r.out, "exec failed errno=2"), "ENOENT preserved: %s", r.out);
	yajl_val t = load("trace.json");
	cr_assert_eq(isc_trace_count(t, "cpu_call", "before_exec"), 1);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "after_failed_exec"), 1);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(lifecycle, sigterm_with_opt_in_handler_writes_and_dies_of_sigterm)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-signal"), "TERM", NULL };
	const char *env[] = { "INFERSCOPE_HANDLE_SIGNALS=1", NULL };
	run_in_dir(argv, env, &r);
	cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM, "status %x", r.status);
	yajl_val t = load("trace.json");
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/end_reason"), "signal");
	cr_assert_eq(isc_trace_count(t, "cpu_call", "before_signal"), 1);
	yajl_val open = isc_trace_find(t, "cpu_call", "open_when_killed", 0);
	cr_assert_not_null(open);
	cr_assert(YAJL_IS_TRUE(isc_trace_get(open, "metadata/unterminated")));
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(lifecycle, sigkill_leaves_a_spill_file)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-signal"), "KILL", NULL };
	run_in_dir(argv, NULL, &r);
	cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
	cr_assert_eq(count_files("trace\\.", "\\.spill"), 1);
	cr_assert_eq(count_files("trace\\.json", ""), 0);
	isc_run_free(&r);
}

Test(lifecycle, snapshot_signal_writes_a_snapshot_and_goes_on)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-signal"), "USR2", NULL };
	const char *env[] = { "INFERSCOPE_SNAPSHOT_SIGNAL=SIGUSR2", NULL };
	run_in_dir(argv, env, &r);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "stderr: %s", r.err);
	yajl_val snap = load("trace.snapshot-1.json");
	yajl_val full = load("trace.json");
	cr_assert(YAJL_IS_FALSE(isc_trace_get(snap, "trace_metadata/complete")));
	cr_assert_eq(isc_trace_count(snap, "cpu_call", "before_signal"), 1);
	cr_assert_eq(isc_trace_count(snap, "cpu_call", "after_snapshot"), 0);
	cr_assert_eq(isc_trace_count(full, "cpu_call", "after_snapshot"), 1);
	cr_assert_eq(isc_trace_count(full, "cpu_call", "open_when_killed"), 1,
		     "a scope open at the snapshot is written once in the final trace");
	cr_assert(YAJL_IS_TRUE(isc_trace_get(full, "trace_metadata/complete")));
	yajl_tree_free(snap);
	yajl_tree_free(full);
	isc_run_free(&r);
}

Test(lifecycle, api_capture_window_and_flush)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-capture"), NULL };
	const char *env[] = { "INFERSCOPE_START_PAUSED=1", NULL };
	run_in_dir(argv, env, &r);
	cr_assert(strstr(r.out, "flush=0"), "stdout: %s stderr: %s", r.out, r.err);
	yajl_val t = load("trace.json");
	cr_assert_eq(isc_trace_count(t, "cpu_call", "inside"), 1);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "outside_before"), 0);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "outside_after"), 0);
	cr_assert_eq(isc_trace_count(t, "instant", "capture_start"), 1);
	yajl_val w = isc_trace_get(t, "trace_metadata/capture/windows");
	cr_assert(YAJL_IS_ARRAY(w) && YAJL_GET_ARRAY(w)->len == 1);
	yajl_val snap = load("trace.snapshot-1.json");
	cr_assert_eq(isc_trace_count(snap, "cpu_call", "inside"), 1);
	yajl_tree_free(t);
	yajl_tree_free(snap);
	isc_run_free(&r);
}

Test(lifecycle, delay_excludes_early_events)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-threads"), "1", "10", NULL };
	const char *env[] = { "INFERSCOPE_DELAY=1h", NULL };
	run_in_dir(argv, env, &r);
	yajl_val t = load("trace.json");
	cr_assert_eq(isc_trace_count(t, "cpu_call", NULL), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/*
 * An idle process costs its collector next to nothing: once nothing is recorded it
 * dozes instead of ticking every INFERSCOPE_TICK (10 ms). Counted, not timed: the
 * trailer says how often the collector woke up. A Python start-up, then three idle
 * seconds: 300 ticks for a collector that never dozes.
 */
Test(lifecycle, an_idle_process_lets_the_collector_doze)
{
	struct isc_run r;
	const char *argv[] = { ISC_PYTHON3, "-c",
			       "import time\n"
			       "time.sleep(3)\n",
			       NULL };
	run_in_dir(argv, NULL, &r);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "stderr: %s", r.err);
	yajl_val t = load("trace.json");
	long long wakeups = isc_trace_int(t, "trace_metadata/collector_wakeups", -1);
	double ms = isc_trace_num(t, "trace_metadata/duration_ms", 0);
	cr_assert_gt(wakeups, 0, "the collector ran");
	cr_assert_geq(ms, 3000, "the run lasted the sleep");
	/* at most one tick in two over the run (the start-up's ticks included) */
	cr_assert_lt(wakeups, (long long)(ms / 10 / 2), "%lld wakeups in %.0f ms", wakeups, ms);
	yajl_tree_free(t);
	isc_run_free(&r);
}
