/* SPDX-License-Identifier: MIT */
/*
 * The host program's signals, descriptors and allocator stay its own under the preload:
 * the sampler's signal never reaches a daemon that reads its signals from a signalfd,
 * no descriptor of the library is ever in the program's table after start-up, and the
 * program's allocator behaves as it does without the library, and a program whose
 * libraries bring a large static TLS leaves the library's threads their stacks.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/common/isc-test.h"

TestSuite(host_safety, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 240);

static void run_ok(const char *const argv[], const char *const env[], bool preload,
		   struct isc_run *r)
{
	cr_assert_eq(isc_test_run(argv, env, preload, isc_test_dir(), r), 0);
	cr_assert(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0, "status %d, stderr: %s",
		  r->status, r->err);
}

/* Blocks every signal, reads a signalfd while two threads compute: without the preload
 * it reads none, with it none either, and the trace says which threads went unsampled
 * and why. */
Test(host_safety, signalfd_daemon_reads_no_signal_of_ours)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-sigfd"), "300", NULL };
	run_ok(argv, NULL, false, &r);
	cr_assert_str_eq(r.out, "signals 0 last 0 pending 0\n");
	isc_run_free(&r);

	const char *env[] = { "INFERSCOPE_CPU_SAMPLE=100", NULL };
	run_ok(argv, env, true, &r);
	cr_assert_str_eq(r.out, "signals 0 last 0 pending 0\n", "stderr: %s", r.err);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t, "stderr: %s", r.err);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/sampling/unsampled_threads", -1), 2,
		     "the main thread and its worker block the signal");
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/sampling/unsampled_reason"),
			 "signal_blocked");
	cr_assert_eq(isc_trace_int(t, "trace_metadata/sampling/samples", -1), 0);
	yajl_tree_free(t);
	isc_run_free(&r);

	/* and the analyzer says so in its data quality */
	const char *an[] = { ISC_ANALYZE_PATH, isc_test_in_dir("trace.json"), NULL };
	cr_assert_eq(isc_test_run(an, NULL, false, isc_test_dir(), &r), 0);
	cr_assert(strstr(r.out, "threads not sampled (input 1): 2 (signal_blocked)"), "report: %s",
		  r.out);
	isc_run_free(&r);
}

/* Three threads list /proc/self/fd in a tight loop while the library spills, writes
 * snapshots and the exit's trace, and children (posix_spawn, fork + exec) list
 * theirs: no descriptor of ours is ever seen. */
Test(host_safety, no_descriptor_of_ours_ever_in_the_program_table)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-fdwatch"), "parent", "20", NULL };
	run_ok(argv, NULL, true, &r);
	cr_assert_str_eq(r.out, "done\n", "descriptors the program saw: %.2000s", r.out);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t, "stderr: %s", r.err);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "work"), 20 * 5000);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* The allocator a program sees is the one it has without the library: the same 200 KB
 * block from mmap, the same mallinfo2 and heap top, sampling on or off. */
Test(host_safety, allocator_state_is_the_programs_own)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-allocstate"), NULL };
	run_ok(argv, NULL, false, &r);
	char *native = strdup(r.out);
	isc_run_free(&r);
	cr_assert(strncmp(native, "mmapped 1 ", 10) == 0, "without the library: %s", native);
	const char *on[] = { "INFERSCOPE_CPU_SAMPLE=100", NULL };
	const char *off[] = { "INFERSCOPE_CPU_SAMPLE=0", NULL };
	const char *const *envs[] = { on, off };
	for (int i = 0; i < 2; i++) {
		run_ok(argv, envs[i], true, &r);
		cr_assert_str_eq(r.out, native, "with the library (%s):\n%s\nwithout:\n%s",
				 envs[i][0], r.out, native);
		isc_run_free(&r);
	}
	free(native);
}

/* A program that brings 120 KiB of static TLS (cuBLAS brings 106 KiB) runs as it does
 * without the library: the library's threads have their stacks beyond it. */
Test(host_safety, static_tls_leaves_our_threads_their_stacks)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-bigtls"), NULL };
	run_ok(argv, NULL, false, &r);
	char *native = strdup(r.out);
	isc_run_free(&r);
	cr_assert(strncmp(native, "ok ", 3) == 0, "without the library: %s", native);
	run_ok(argv, NULL, true, &r);
	cr_assert_str_eq(r.out, native, "stderr: %s", r.err);
	cr_assert_null(strstr(r.err, "cannot start"), "every thread of ours started: %s", r.err);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t, "stderr: %s", r.err);
	yajl_val threads = isc_trace_get(t, "trace_metadata/aggregates/threads");
	cr_assert_not_null(threads);
	long long calls = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(threads)->len; i++) {
		calls += isc_trace_int(YAJL_GET_ARRAY(threads)->values[i], "malloc/calls", 0);
	}
	cr_assert_geq(calls, 1000, "the worker's 1,000 allocations are counted: %lld", calls);
	yajl_tree_free(t);
	isc_run_free(&r);
	free(native);
}

static void disk_run(const char *mode, struct isc_run *r)
{
	const char *argv[] = { isc_test_workload("wl-diskfull"), mode, "20000", NULL };
	run_ok(argv, NULL, true, r);
	char done[64];
	snprintf(done, sizeof(done), "done %s\n", mode);
	cr_assert_str_eq(r->out, done, "the program's output is its own");
}

/* The spill cannot grow for a while (a file-size limit, as a full disk): the records
 * wait in memory and are written once it can; none is lost. */
Test(host_safety, spill_write_failure_is_retried)
{
	struct isc_run r;
	disk_run("fsize_lift", &r);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t, "stderr: %s", r.err);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "during"), 20000);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "after"), 20000);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/dropped_events/total", -1), 0);
	cr_assert_null(isc_trace_get(t, "trace_metadata/unwritten"), "nothing was lost");
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* The limit stays: the spill keeps what fitted, the trace says how many records never
 * reached it and why, and the analyzer shows the loss. */
Test(host_safety, what_cannot_be_written_is_counted)
{
	struct isc_run r;
	disk_run("fsize_stay", &r);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t, "stderr: %s", r.err);
	long long lost = isc_trace_int(t, "trace_metadata/unwritten/events", 0);
	size_t kept =
		isc_trace_count(t, "cpu_call", "during") + isc_trace_count(t, "cpu_call", "after");
	cr_assert_lt(kept, 40000, "a 64 KiB file cannot hold them all");
	cr_assert_geq((size_t)lost + kept, 40000, "kept %zu, counted as lost %lld", kept, lost);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/unwritten/reason"), "file too large");
	yajl_tree_free(t);
	isc_run_free(&r);

	const char *an[] = { ISC_ANALYZE_PATH, isc_test_in_dir("trace.json"), NULL };
	cr_assert_eq(isc_test_run(an, NULL, false, isc_test_dir(), &r), 0);
	char want[128];
	snprintf(want, sizeof(want),
		 "data lost (input 1): %lld events never written (file too large)", lost);
	cr_assert(strstr(r.out, want), "report: %s", r.out);
	isc_run_free(&r);
}

/* RLIMIT_NOFILE of 3 after start-up: the library's descriptors live in tables of its
 * own, where the program's limit still leaves room: the trace is whole. */
Test(host_safety, rlimit_nofile_3_loses_nothing)
{
	struct isc_run r;
	disk_run("nofile3", &r);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t, "stderr: %s", r.err);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "before"), 20000);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "after"), 20000);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* A 2 MiB tmpfs as the output directory (where the test may mount one): the disk
 * fills while the collector spills; neither the trace nor much of the spill fits, and
 * what never reached a file is counted beside the spill, which the analyzer reads with
 * the count. */
Test(host_safety, disk_full_loss_is_counted_beside_the_spill)
{
	char dir[4200];
	snprintf(dir, sizeof(dir), "%s/small", isc_test_dir());
	cr_assert_eq(mkdir(dir, 0700), 0);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=2m") != 0) {
		cr_skip_test("cannot mount a tmpfs here (%s): the file-size limit tests stand in",
			     strerror(errno));
	}
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-threads"), "4", "200000", NULL };
	int rc = isc_test_run(argv, NULL, true, dir, &r);
	char sidecar[4600] = "", spill[4600] = "";
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		size_t n = strlen(e->d_name);
		if (n > 10 && strcmp(e->d_name + n - 10, ".lost.json") == 0) {
			snprintf(sidecar, sizeof(sidecar), "%s/%s", dir, e->d_name);
		} else if (n > 6 && strcmp(e->d_name + n - 6, ".spill") == 0) {
			snprintf(spill, sizeof(spill), "%s/%s", dir, e->d_name);
		}
	}
	if (d) {
		closedir(d);
	}
	yajl_val lost = sidecar[0] ? isc_test_load_json(sidecar) : NULL;
	long long events = lost ? isc_trace_int(lost, "unwritten/events", 0) : 0;
	const char *reason = lost ? isc_trace_str(lost, "unwritten/reason") : NULL;
	char *reason_copy = reason ? strdup(reason) : NULL;
	if (lost) {
		yajl_tree_free(lost);
	}
	struct isc_run a = { 0 };
	const char *an[] = { ISC_ANALYZE_PATH, spill, NULL };
	int arc = spill[0] ? isc_test_run(an, NULL, false, isc_test_dir(), &a) : -1;
	umount2(dir, MNT_DETACH);
	cr_assert_eq(rc, 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d: %s", r.status,
		  r.err);
	cr_assert_str_eq(r.out, "threads done\n", "the program's output is its own");
	cr_assert(sidecar[0] && spill[0], "files: sidecar '%s', spill '%s'; stderr: %s", sidecar,
		  spill, r.err);
	cr_assert_gt(events, 0);
	cr_assert_str_eq(reason_copy, "no space left on device");
	cr_assert_eq(arc, 0);
	char want[160];
	snprintf(want, sizeof(want),
		 "data lost (input 1): %lld events never written (no space left on device)",
		 events);
	cr_assert(strstr(a.out, want), "report: %s\nstderr: %s", a.out, a.err);
	free(reason_copy);
	isc_run_free(&a);
	isc_run_free(&r);
}
