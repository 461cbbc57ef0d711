/* SPDX-License-Identifier: MIT */
/* The malloc family: exact counters, sampled and large events, errno, scopes, other
 * allocators preloaded beside us. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/host/host-test.h"

TestSuite(malloc, .init = host_setup, .fini = host_teardown, .timeout = 60);

static yajl_val find_memory(yajl_val t, const char *op, long long bytes)
{
	for (size_t i = 0;; i++) {
		yajl_val e = isc_trace_find(t, "memory_event", op, i);
		if (e == NULL || isc_trace_int(e, "metadata/bytes", -1) == bytes) {
			return e;
		}
	}
}

Test(malloc, every_operation_is_an_event_with_sampling_off)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "family", NULL };
	const char *env[] = { "INFERSCOPE_MALLOC_SAMPLE=0", NULL };
	yajl_val t = host_trace(argv, env, &r);
	static const char *const ops[] = {
		"malloc",	  "calloc",	   "realloc",  "reallocarray",
		"posix_memalign", "aligned_alloc", "memalign", "valloc",
		"pvalloc",	  "free",	   NULL
	};
	for (int i = 0; ops[i]; i++) {
		cr_expect_geq(isc_trace_count(t, "memory_event", ops[i]), 1, "no %s event", ops[i]);
	}
	yajl_val m = find_memory(t, "malloc", 1000);
	cr_assert_not_null(m, "malloc(1000) was not recorded");
	cr_assert_eq(isc_trace_int(m, "metadata/weight", 0), 1000, "unsampled: weight = size");
	cr_assert_str_eq(isc_trace_str(m, "metadata/operation"), "malloc");
	cr_assert(strncmp(isc_trace_str(m, "metadata/ptr"), "0x", 2) == 0);
	cr_assert_not_null(find_memory(t, "calloc", 1000), "calloc(10, 100) is 1000 bytes");
	cr_assert_not_null(find_memory(t, "reallocarray", 7000));
	cr_assert_not_null(find_memory(t, "posix_memalign", 4096));
	/* the scope sees what its thread allocated while it was open */
	yajl_val s = isc_trace_find(t, "cpu_call", "family", 0);
	long long bytes = isc_trace_int(s, "metadata/allocations_bytes", -1);
	long long asked = 1000 + 1000 + 5000 + 7000 + 4096 + 128 + 100 + 100 + 100;
	cr_assert(bytes >= asked && bytes < asked + 4096, "allocations_bytes %lld", bytes);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(malloc, errno_and_results_are_the_programs)
{
	struct isc_run plain, traced;
	const char *argv[] = { isc_test_workload("wl-alloc"), "errno", NULL };
	cr_assert_eq(isc_test_run(argv, NULL, false, host_dir, &plain), 0);
	cr_assert_eq(isc_test_run(argv, NULL, true, host_dir, &traced), 0);
	cr_assert_str_eq(plain.out, traced.out);
	cr_assert_eq(plain.status, traced.status);
	cr_assert(strstr(traced.out, "malloc(huge): Cannot allocate memory"), "%s", traced.out);
	cr_assert(strstr(traced.out, "calloc(overflow): Cannot allocate memory"), "%s", traced.out);
	cr_assert(strstr(traced.out, "posix_memalign(bad alignment): Invalid argument, errno "
				     "kept: 1"),
		  "%s", traced.out);
	cr_assert(strstr(traced.out, "malloc(16) keeps errno: 1"), "%s", traced.out);
	isc_run_free(&plain);
	isc_run_free(&traced);
}

Test(malloc, per_thread_counters_are_exact)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "threads", "4", "5000", "100", NULL };
	yajl_val t = host_trace(argv, NULL, &r);
	yajl_val th = isc_trace_get(t, "trace_metadata/aggregates/threads");
	int exact = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(th)->len; i++) {
		yajl_val a = YAJL_GET_ARRAY(th)->values[i];
		/* a worker: its pointer array, 5000 blocks, all freed again */
		if (isc_trace_int(a, "malloc/calls", 0) == 5001 &&
		    isc_trace_int(a, "malloc/frees", 0) == 5001 &&
		    isc_trace_int(a, "malloc/bytes_requested", 0) == 5000 * 100 + 5000 * 8 &&
		    isc_trace_int(a, "malloc/live_bytes", -1) == 0 &&
		    isc_trace_int(a, "malloc/peak_live_bytes", 0) >= 5000 * 100) {
			exact++;
		}
	}
	cr_assert_eq(exact, 4, "four workers with exact counters");
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* The malloc records of blocks of `bytes`: how many, and their weights summed in *weights
 * (the bytes they stand for). */
static size_t sampled_mallocs(yajl_val t, long long bytes, double *weights)
{
	size_t n = 0;
	for (size_t i = 0;; i++) {
		yajl_val e = isc_trace_find(t, "memory_event", "malloc", i);
		if (e == NULL) {
			return n;
		}
		if (isc_trace_int(e, "metadata/bytes", 0) == bytes) {
			*weights += isc_trace_num(e, "metadata/weight", 0);
			n++;
		}
	}
}

Test(malloc, poisson_sampling_estimates_the_bytes)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "sample", "200000", "64", NULL };
	const char *env[] = { "INFERSCOPE_MALLOC_SAMPLE=4096", NULL };
	yajl_val t = host_trace(argv, env, &r);
	double weights = 0;
	size_t n = sampled_mallocs(t, 64, &weights);
	/* 12.8 MB in 64-byte blocks at a 4 KiB mean: ~3125 samples (sd ~56), each
	 * standing for ~4128 bytes */
	cr_assert(n > 2500 && n < 3750, "%zu samples", n);
	cr_assert(weights > 12.8e6 * 0.85 && weights < 12.8e6 * 1.15, "estimate %.0f", weights);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* The counters count every call; records are only the sampled ones, as many as the counters
 * say were sampled: 200,000 blocks of 64 bytes at a 64 KiB mean are ~195 samples. */
Test(malloc, counters_exact_records_sampled)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "sample", "200000", "64", NULL };
	const char *env[] = { "INFERSCOPE_MALLOC_SAMPLE=64K", NULL };
	yajl_val t = host_trace(argv, env, &r);
	yajl_val th = isc_trace_get(t, "trace_metadata/aggregates/threads");
	int loop = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(th)->len; i++) {
		yajl_val a = YAJL_GET_ARRAY(th)->values[i];
		/* the loop's thread: its 200,000 pairs and stdio's few blocks */
		long long calls = isc_trace_int(a, "malloc/calls", 0);
		loop += calls >= 200000 && calls < 200010 &&
			isc_trace_int(a, "malloc/frees", 0) >= 200000;
	}
	cr_assert_eq(loop, 1, "one thread counted every pair");
	/* sampled_events counts every memory record (a NUMA migration too) */
	size_t records = isc_trace_count(t, "memory_event", "malloc");
	cr_assert_eq((long long)isc_trace_count(t, "memory_event", NULL),
		     host_agg_sum(t, "malloc/sampled_events"),
		     "a record for each sampled allocation, none for the rest");
	cr_assert(records > 120 && records < 280, "%zu sampled of 200,000", records);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* The countdown holds at most the threshold - 1 bytes (hook-malloc.c): reaching that cap is
 * no sample. 12.8 MB in 64-byte blocks at a 256 KiB mean are ~49 samples (sd 7), whatever
 * the 4 KiB threshold's ~3,100 caps reached on the way. */
Test(malloc, a_threshold_below_the_mean_samples_at_the_mean)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "sample", "200000", "64", NULL };
	const char *env[] = { "INFERSCOPE_MALLOC_SAMPLE=256K", "INFERSCOPE_MALLOC_THRESHOLD=4K",
			      NULL };
	yajl_val t = host_trace(argv, env, &r);
	double weights = 0;
	size_t n = sampled_mallocs(t, 64, &weights);
	cr_assert(n >= 20 && n <= 85, "%zu samples", n);
	cr_assert(weights > 12.8e6 * 0.5 && weights < 12.8e6 * 1.6, "estimate %.0f", weights);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* Large allocations after the hooks' fast path took over (the first 64 blocks are checked
 * on the general one): every one an event of its own weight, and its release too. */
Test(malloc, every_large_allocation_is_an_event_on_the_fast_path)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "sample", "3000", "5000", NULL };
	const char *env[] = { "INFERSCOPE_MALLOC_THRESHOLD=4K", NULL };
	yajl_val t = host_trace(argv, env, &r);
	size_t n = 0, frees = 0;
	for (size_t i = 0;; i++) {
		yajl_val e = isc_trace_find(t, "memory_event", "malloc", i);
		if (e == NULL) {
			break;
		}
		if (isc_trace_int(e, "metadata/bytes", 0) == 5000) {
			cr_assert_eq(isc_trace_int(e, "metadata/weight", 0), 5000);
			n++;
		}
	}
	for (size_t i = 0; isc_trace_find(t, "memory_event", "free", i) != NULL; i++) {
		frees += isc_trace_int(isc_trace_find(t, "memory_event", "free", i),
				       "metadata/bytes", 0) >= 5000;
	}
	cr_assert_eq(n, 3000, "%zu of the 3,000 allocations of 5000 bytes recorded", n);
	cr_assert_eq(frees, 3000, "%zu of their releases", frees);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(malloc, large_allocations_are_always_events)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "large", NULL };
	yajl_val t = host_trace(argv, NULL, &r);
	yajl_val m = find_memory(t, "malloc", 8 << 20);
	cr_assert_not_null(m, "an 8 MiB malloc is above the 1 MiB default threshold");
	cr_assert_eq(isc_trace_int(m, "metadata/weight", 0), 8 << 20);
	yajl_val f = isc_trace_find(t, "memory_event", "free", 0);
	cr_assert_not_null(f, "its release too");
	cr_assert_geq(isc_trace_int(f, "metadata/bytes", 0), 8 << 20);
	yajl_val s = isc_trace_find(t, "cpu_call", "large", 0);
	cr_assert_geq(isc_trace_int(s, "metadata/allocations_bytes", 0), 8 << 20);
	cr_assert_geq(isc_trace_count(t, "counter", "live_heap"), 1, "a live-heap track");
	yajl_val c = isc_trace_find(t, "counter", "live_heap", 0);
	cr_assert_eq(isc_trace_int(c, "metadata/thread_id", -1), 0, "process-wide");
	cr_assert_str_eq(isc_trace_str(c, "metadata/unit"), "bytes");
	cr_assert_not_null(isc_trace_get(t, "trace_metadata/heap/peak_live_bytes_sampled"));
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(malloc, off_means_off)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "large", NULL };
	const char *env[] = { "INFERSCOPE_MALLOC=0", NULL };
	yajl_val t = host_trace(argv, env, &r);
	cr_assert_eq(isc_trace_count(t, "memory_event", "malloc"), 0);
	cr_assert_eq(isc_trace_count(t, "memory_event", "free"), 0);
	cr_assert_null(isc_trace_get(t, "trace_metadata/aggregates/threads/0/malloc"));
	yajl_val s = isc_trace_find(t, "cpu_call", "large", 0);
	cr_assert_eq(isc_trace_int(s, "metadata/allocations_bytes", -1), 0);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* Runs the threads workload with LD_PRELOAD=preload (ours included or not), in order. */
static void run_with(const char *preload, struct isc_run *r)
{
	char env0[8400];
	const char *argv[] = { isc_test_workload("wl-alloc"), "threads", "4", "2000", "64", NULL };
	snprintf(env0, sizeof(env0), "LD_PRELOAD=%s", preload);
	const char *env[] = { env0, NULL };
	cr_assert_eq(isc_test_run(argv, env, false, host_dir, r), 0);
}

static void other_allocator(const char *soname)
{
	const char *found = host_find_lib(soname);
	if (found == NULL) {
		cr_skip_test("%s is not installed (Debian: libjemalloc2, libtcmalloc-minimal4)",
			     soname);
	}
	char lib[4096], both[8400];
	snprintf(lib, sizeof(lib), "%s", found);
	struct isc_run plain, ours_first, theirs_first;
	run_with(lib, &plain);
	cr_assert(WIFEXITED(plain.status) && WEXITSTATUS(plain.status) == 0, "%s", plain.err);
	snprintf(both, sizeof(both), "%s:%s", isc_test_preload(), lib);
	run_with(both, &ours_first);
	snprintf(both, sizeof(both), "%s:%s", lib, isc_test_preload());
	run_with(both, &theirs_first);
	cr_assert_eq(ours_first.status, plain.status, "%s", ours_first.err);
	cr_assert_eq(theirs_first.status, plain.status, "%s", theirs_first.err);
	cr_assert_str_eq(ours_first.out, plain.out);
	cr_assert_str_eq(theirs_first.out, plain.out);
	isc_run_free(&plain);
	isc_run_free(&ours_first);
	isc_run_free(&theirs_first);
}

static void counted_in_front(const char *soname)
{
	const char *found = host_find_lib(soname);
	if (found == NULL) {
		cr_skip_test("%s is not installed", soname);
	}
	char both[8400];
	snprintf(both, sizeof(both), "%s:%s", isc_test_preload(), found);
	struct isc_run r;
	run_with(both, &r);
	char path[4200];
	snprintf(path, sizeof(path), "%s/trace.json", host_dir);
	yajl_val t = isc_test_load_json(path);
	cr_assert_not_null(t, "%s", r.err);
	cr_assert_geq(host_agg_sum(t, "malloc/calls"), 4 * 2001);
	cr_assert_geq(host_agg_sum(t, "malloc/frees"), 4 * 2001);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(malloc, jemalloc_keeps_working)
{
	other_allocator("libjemalloc.so.2");
}

Test(malloc, tcmalloc_keeps_working)
{
	other_allocator("libtcmalloc_minimal.so.4");
}

Test(malloc, jemalloc_behind_us_is_counted)
{
	counted_in_front("libjemalloc.so.2");
}

Test(malloc, tcmalloc_behind_us_is_counted)
{
	counted_in_front("libtcmalloc_minimal.so.4");
}
