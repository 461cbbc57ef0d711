/* SPDX-License-Identifier: MIT */
/*
 * The whole runtime API (generated hooks): cw-api makes runtime calls that no
 * hand-written hook decodes, through the PLT. Under the preload every call is
 * recorded once, with its result, and the program sees what it sees without the
 * preload (results, errno, strings): on the simulated GPU and on the real runtime
 * without a GPU. A lookup in the runtime's own handle is unchanged.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-check.h"

TestSuite(api, .init = cw_setup, .fini = cw_teardown, .timeout = 120);

#define MAX_CALLS 64

struct call {
	char name[64];
	int rc;
};

/* The "call NAME RC ERRNO" lines of a run's stdout. */
static size_t calls_of(const char *out, struct call *c)
{
	size_t n = 0;
	for (const char *p = out; p && *p && n < MAX_CALLS; p = strchr(p, '\n')) {
		p += *p == '\n';
		int err; /* compared with the run without the preload, with the whole line */
		n += sscanf(p, "call %63s %d %d", c[n].name, &c[n].rc, &err) == 3;
	}
	return n;
}

static size_t count_name(const struct call *c, size_t n, const char *name)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		k += strcmp(c[i].name, name) == 0;
	}
	return k;
}

/* Runs cw-api with env, without and with the preload; checks what the program saw
 * and what the trace holds; returns how many calls failed. */
static size_t check(const char *const env[], const char *arg)
{
	struct isc_run bare, r;
	struct call c[MAX_CALLS];
	const char *argv[] = { isc_test_workload("cw-api"), arg, NULL };

	cr_assert_eq(isc_test_run(argv, env, false, cw_dir, &bare), 0);
	cr_assert(WIFEXITED(bare.status) && WEXITSTATUS(bare.status) == 0, "%s", bare.err);
	yajl_val t = cw_run(argv, env, &r);
	cr_assert_str_eq(r.out, bare.out,
			 "the program saw other results under the preload:\n%s\n"
			 "without it:\n%s",
			 r.out, bare.out);
	cr_assert_eq(r.status, bare.status);

	size_t n = calls_of(r.out, c);
	cr_assert_eq(n, 27, "cw-api makes 27 calls:\n%s", r.out);
	cr_assert_eq(cw_api_count(t, "interposer"), n, "every call recorded once:\n%s", r.out);
	size_t failed = 0;
	for (size_t i = 0; i < n; i++) {
		size_t want = count_name(c, n, c[i].name);
		cr_assert_eq(isc_trace_count(t, "cuda_api", c[i].name), want, "%s: %zu calls",
			     c[i].name, want);
		/* the k-th call of a name is the k-th event of that name */
		size_t k = count_name(c, i, c[i].name);
		yajl_val e = isc_trace_find(t, "cuda_api", c[i].name, k);
		cr_assert_eq(isc_trace_int(e, "metadata/return_code", -1), c[i].rc, "%s #%zu",
			     c[i].name, k);
		cr_assert_gt(isc_trace_int(e, "metadata/correlation_id", 0), 0);
		cr_assert_str_eq(isc_trace_str(e, "metadata/source"), "interposer");
		failed += c[i].rc != 0;
	}
	/* a call that takes a stream carries it; the _ptsz variant's NULL is per-thread */
	yajl_val v = isc_trace_find(t, "cuda_api", "cudaStreamGetPriority_ptsz", 0);
	cr_assert_eq(isc_trace_int(v, "metadata/stream_id", -1), 1);
	v = isc_trace_find(t, "cuda_api", "cudaStreamIsCapturing", 0);
	cr_assert_not_null(isc_trace_get(v, "metadata/stream_id"));
	/* and the per-thread aggregates count them exactly */
	yajl_val threads = isc_trace_get(t, "trace_metadata/aggregates/threads");
	long long destroys = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(threads)->len; i++) {
		destroys += isc_trace_int(YAJL_GET_ARRAY(threads)->values[i],
					  "cuda_api/cudaStreamDestroy/count", 0);
	}
	cr_assert_eq(destroys, 2);
	yajl_tree_free(t);
	isc_run_free(&r);
	isc_run_free(&bare);
	return failed;
}

Test(api, every_call_recorded_on_the_simulated_gpu)
{
	size_t failed = check(NULL, NULL);
	/* the simulator implements these calls: most succeed (elapsed time of two events
	 * recorded on a stream, for one, may not) */
	cr_assert_lt(failed, 4, "%zu calls failed on the simulated GPU", failed);
}

Test(api, every_call_recorded_on_the_real_runtime_without_gpu)
{
	char libpath[4200];
	if (CW_CUDA_LIBDIR[0] == '\0') {
		cr_skip_test("no CUDA toolkit libraries in this build");
	}
	snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s", CW_CUDA_LIBDIR);
	const char *env[] = { libpath, NULL };
	size_t failed = check(env, NULL);
	/* only the version query and the string functions work without a driver */
	cr_assert_gt(failed, 20);
}

/* The simulator exports part of the API; the preload exports all of it (hand-written
 * and generated hooks), as hidden versions: dlsym, in the global scope or in the runtime's handle, still finds the
 * runtime's function, or nothing. (check() compares the whole output with a run
 * without the preload.) */
Test(api, lookups_are_unchanged)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-api"), "lookups", NULL };
	check(NULL, "lookups");
	yajl_val t = cw_run(argv, NULL, &r);
	static const char *const expect[] = {
		"dlsym default cudaStreamCreate runtime\n",
		"dlsym handle cudaStreamCreate runtime\n",
		"dlsym default cudaStreamGetPriority_ptsz runtime\n",
		"dlsym default cudaMemcpy runtime\n",
		"dlsym default cudaLaunchKernel runtime\n",
		"dlsym default cudaGraphCreate null\n",
		"dlsym handle cudaGraphCreate null\n",
		"dlsym default cudaNoSuchFunction null\n",
	};
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		cr_assert_not_null(strstr(r.out, expect[i]), "no %s in:\n%s", expect[i], r.out);
	}
	yajl_tree_free(t);
	isc_run_free(&r);
}
