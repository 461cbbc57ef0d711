/* SPDX-License-Identifier: MIT */
/* System calls and waits: slow calls become events, every call is aggregated,
 * errno stays the program's, locks are timed only when contended. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/host/host-test.h"

TestSuite(syscalls, .init = host_setup, .fini = host_teardown, .timeout = 60);

Test(syscalls, slow_calls_are_events)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-syscalls"), "slow", NULL };
	yajl_val t = host_trace(argv, NULL, &r);
	yajl_val ns = isc_trace_find(t, "cpu_syscall", "nanosleep", 0);
	cr_assert_not_null(ns, "a 20 ms nanosleep is above the 10 us threshold");
	cr_assert_eq(isc_trace_int(ns, "metadata/syscall_number", -2), 35);
	cr_assert_str_eq(isc_trace_str(ns, "metadata/category"), "sleep");
	cr_assert_geq(isc_trace_num(ns, "duration_us", 0), 19900, "it slept at least 20 ms");
	cr_assert_null(isc_trace_get(ns, "metadata/fd"), "nanosleep has no fd");
	yajl_val poll = isc_trace_find(t, "cpu_syscall", "poll", 0);
	cr_assert_not_null(poll);
	cr_assert_str_eq(isc_trace_str(poll, "metadata/category"), "wait");
	cr_assert_eq(isc_trace_int(poll, "metadata/return_value", -1), 0, "it timed out");
	/* the blocking read of the pipe: fd, what it is, bytes asked, result */
	cr_assert_geq(host_count_meta(t, "cpu_syscall", "target", "pipe"), 1);
	yajl_val rd = NULL;
	for (size_t i = 0; (rd = isc_trace_find(t, "cpu_syscall", "read", i)); i++) {
		const char *target = isc_trace_str(rd, "metadata/target");
		if (target && strcmp(target, "pipe") == 0) {
			break;
		}
	}
	cr_assert_not_null(rd);
	cr_assert_eq(isc_trace_int(rd, "metadata/bytes", 0), 1);
	cr_assert_eq(isc_trace_int(rd, "metadata/return_value", 0), 1);
	cr_assert_str_eq(isc_trace_str(rd, "metadata/category"), "io");
	cr_assert_geq(isc_trace_int(rd, "metadata/fd", -1), 3);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* Calls in the latency histogram of name (aggregates.syscall_latency). */
static long long calls_in(yajl_val lat, const char *name)
{
	yajl_val b = isc_trace_get(lat, name);
	long long n = 0;
	for (size_t k = 0; b && YAJL_IS_ARRAY(b) && k < YAJL_GET_ARRAY(b)->len; k++) {
		n += YAJL_GET_INTEGER(YAJL_GET_ARRAY(YAJL_GET_ARRAY(b)->values[k])->values[2]);
	}
	return n;
}

Test(syscalls, every_call_is_aggregated)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-syscalls"), "count", "5000", NULL };
	yajl_val t = host_trace(argv, NULL, &r);
	cr_assert_geq(host_agg_sum(t, "syscalls/read/count"), 5000);
	cr_assert_geq(host_agg_sum(t, "syscalls/read/bytes"), 5000);
	long long events = host_agg_sum(t, "syscalls/read/events");
	cr_assert_eq((size_t)events, isc_trace_count(t, "cpu_syscall", "read"),
		     "the aggregate knows how many calls became events");
	cr_assert_lt(events, 2500, "most one-byte reads of /dev/zero are fast");
	/* the latency histograms hold every call the aggregates count, in ordered buckets
	 * that do not overlap, the last ending past the longest call */
	yajl_val lat = isc_trace_get(t, "trace_metadata/aggregates/syscall_latency");
	cr_assert(lat && YAJL_IS_OBJECT(lat), "aggregates.syscall_latency");
	for (size_t i = 0; i < YAJL_GET_OBJECT(lat)->len; i++) {
		const char *name = YAJL_GET_OBJECT(lat)->keys[i];
		yajl_val b = YAJL_GET_OBJECT(lat)->values[i];
		cr_assert(YAJL_IS_ARRAY(b) && YAJL_GET_ARRAY(b)->len > 0, "%s: buckets", name);
		long long calls = 0, prev_hi = 0, max_ns = 0;
		for (size_t k = 0; k < YAJL_GET_ARRAY(b)->len; k++) {
			yajl_val x = YAJL_GET_ARRAY(b)->values[k];
			cr_assert_eq(YAJL_GET_ARRAY(x)->len, 3, "%s: [low, high, calls]", name);
			long long lo = YAJL_GET_INTEGER(YAJL_GET_ARRAY(x)->values[0]);
			long long hi = YAJL_GET_INTEGER(YAJL_GET_ARRAY(x)->values[1]);
			long long n = YAJL_GET_INTEGER(YAJL_GET_ARRAY(x)->values[2]);
			cr_assert(lo >= prev_hi && hi > lo && n > 0,
				  "%s: bucket %zu [%lld, %lld) %lld", name, k, lo, hi, n);
			prev_hi = hi;
			calls += n;
		}
		char path[96];
		snprintf(path, sizeof(path), "syscalls/%s/count", name);
		cr_assert_eq(calls, host_agg_sum(t, path), "%s: every call in the histogram", name);
		yajl_val th = isc_trace_get(t, "trace_metadata/aggregates/threads");
		for (size_t k = 0; k < YAJL_GET_ARRAY(th)->len; k++) {
			snprintf(path, sizeof(path), "syscalls/%s/max_us", name);
			double m = isc_trace_num(YAJL_GET_ARRAY(th)->values[k], path, 0) * 1000;
			max_ns = (long long)m > max_ns ? (long long)m : max_ns;
		}
		cr_assert_geq(prev_hi, max_ns, "%s: the longest call is in a bucket", name);
	}
	cr_assert_geq(calls_in(lat, "read"), 5000);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* Each thread's histogram is allocated at its first call of a name: four threads, each its
 * own, all of their calls in the merged one, and each thread's count exact. */
Test(syscalls, every_threads_calls_are_in_the_histogram)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-syscalls"), "threads", "4", "3000", NULL };
	yajl_val t = host_trace(argv, NULL, &r);
	yajl_val th = isc_trace_get(t, "trace_metadata/aggregates/threads");
	int workers = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(th)->len; i++) {
		workers += isc_trace_int(YAJL_GET_ARRAY(th)->values[i], "syscalls/read/count", 0) ==
			   3000;
	}
	cr_assert_eq(workers, 4, "four threads with 3000 reads each");
	yajl_val lat = isc_trace_get(t, "trace_metadata/aggregates/syscall_latency");
	cr_assert_eq(calls_in(lat, "read"), host_agg_sum(t, "syscalls/read/count"));
	cr_assert_geq(calls_in(lat, "read"), 4 * 3000);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(syscalls, threshold_zero_records_every_call)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-syscalls"), "count", "3000", NULL };
	const char *env[] = { "INFERSCOPE_SYSCALL_THRESHOLD=0", NULL };
	yajl_val t = host_trace(argv, env, &r);
	size_t reads = isc_trace_count(t, "cpu_syscall", "read");
	cr_assert_geq(reads, 3000);
	cr_assert_eq(host_agg_sum(t, "syscalls/read/count"), (long long)reads);
	cr_assert_eq(host_agg_sum(t, "syscalls/read/events"), (long long)reads);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(syscalls, files_and_descriptors)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-syscalls"), "io", host_dir, NULL };
	const char *env[] = { "INFERSCOPE_SYSCALL_THRESHOLD=0", NULL };
	yajl_val t = host_trace(argv, env, &r);
	cr_assert(strstr(r.out, "io done, pread 8"), "%s", r.out);
	static const char *const names[] = { "open",  "openat", "write", "fsync",
					     "pread", "close",	"read",	 NULL };
	for (int i = 0; names[i]; i++) {
		cr_expect_geq(isc_trace_count(t, "cpu_syscall", names[i]), 1, "no %s", names[i]);
	}
	yajl_val fs = isc_trace_find(t, "cpu_syscall", "fsync", 0);
	cr_assert_str_eq(isc_trace_str(fs, "metadata/category"), "fs");
	cr_assert_str_eq(isc_trace_str(fs, "metadata/target"), "file");
	yajl_val pr = isc_trace_find(t, "cpu_syscall", "pread", 0);
	cr_assert_eq(isc_trace_int(pr, "metadata/bytes", 0), 64);
	cr_assert_eq(isc_trace_int(pr, "metadata/return_value", 0), 8);
	cr_assert_str_eq(isc_trace_str(pr, "metadata/target"), "file");
	cr_assert_eq(isc_trace_int(pr, "metadata/syscall_number", -1), 17);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(syscalls, errno_is_the_programs)
{
	struct isc_run plain, traced;
	const char *argv[] = { isc_test_workload("wl-syscalls"), "errors", NULL };
	const char *env[] = { "INFERSCOPE_SYSCALL_THRESHOLD=0", NULL };
	cr_assert_eq(isc_test_run(argv, NULL, false, host_dir, &plain), 0);
	cr_assert_eq(isc_test_run(argv, env, true, host_dir, &traced), 0);
	cr_assert_str_eq(plain.out, traced.out);
	cr_assert_eq(plain.status, traced.status);
	cr_assert(strstr(traced.out, "read(-1): -1 Bad file descriptor"), "%s", traced.out);
	cr_assert(strstr(traced.out, "errno kept 1"), "%s", traced.out);
	char path[4200];
	snprintf(path, sizeof(path), "%s/trace.json", host_dir);
	yajl_val t = isc_test_load_json(path);
	cr_assert_not_null(t);
	yajl_val rd = isc_trace_find(t, "cpu_syscall", "read", 0);
	cr_assert_eq(isc_trace_int(rd, "metadata/errno", 0), 9, "EBADF");
	cr_assert_eq(isc_trace_int(rd, "metadata/return_value", 0), -1);
	yajl_val op = isc_trace_find(t, "cpu_syscall", "open", 0);
	cr_assert_eq(isc_trace_int(op, "metadata/errno", 0), 2, "ENOENT");
	cr_assert_geq(host_agg_sum(t, "syscalls/close/errors"), 1);
	yajl_tree_free(t);
	isc_run_free(&plain);
	isc_run_free(&traced);
}

Test(syscalls, contended_waits_are_events)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-syscalls"), "waits", NULL };
	yajl_val t = host_trace(argv, NULL, &r);
	static const char *const names[] = { "pthread_mutex_lock", "pthread_cond_wait", "sem_wait",
					     NULL };
	for (int i = 0; names[i]; i++) {
		yajl_val e = isc_trace_find(t, "cpu_syscall", names[i], 0);
		cr_assert_not_null(e, "no %s event", names[i]);
		cr_assert_eq(isc_trace_int(e, "metadata/syscall_number", 0), -1, "futex-based");
		cr_assert_str_eq(isc_trace_str(e, "metadata/category"), "wait");
		cr_assert_eq(isc_trace_int(e, "metadata/return_value", -1), 0);
		cr_assert_geq(isc_trace_num(e, "duration_us", 0), 1000, "%s waited", names[i]);
	}
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(syscalls, uncontended_locks_cost_nothing)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-syscalls"), "uncontended", NULL };
	const char *env[] = { "INFERSCOPE_SYSCALL_THRESHOLD=0", NULL };
	yajl_val t = host_trace(argv, env, &r);
	cr_assert_eq(isc_trace_count(t, "cpu_syscall", "pthread_mutex_lock"), 0);
	cr_assert_eq(host_agg_sum(t, "syscalls/pthread_mutex_lock/count"), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(syscalls, off_means_off)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-syscalls"), "slow", NULL };
	const char *env[] = { "INFERSCOPE_SYSCALLS=0", NULL };
	yajl_val t = host_trace(argv, env, &r);
	cr_assert_eq(isc_trace_count(t, "cpu_syscall", NULL), 0);
	cr_assert_null(isc_trace_get(t, "trace_metadata/aggregates/threads/0/syscalls"));
	yajl_tree_free(t);
	isc_run_free(&r);
}
