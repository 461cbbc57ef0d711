/* SPDX-License-Identifier: MIT */
#include "tests/host/host-test.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *host_dir;

void host_setup(void)
{
	host_dir = isc_test_tmpdir();
	cr_assert_not_null(host_dir);
}

void host_teardown(void)
{
	isc_test_rmrf(host_dir);
	free(host_dir);
	host_dir = NULL;
}

yajl_val host_trace(const char *const argv[], const char *const env[], struct isc_run *r)
{
	char path[4200];
	/* the previous run's trace: a run never replaces one (it would write trace-2.json) */
	snprintf(path, sizeof(path), "%s/trace.json", host_dir);
	unlink(path);
	cr_assert_eq(isc_test_run(argv, env, true, host_dir, r), 0);
	cr_assert(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0, "%s exited %d: %s", argv[0],
		  r->status, r->err);
	snprintf(path, sizeof(path), "%s/trace.json", host_dir);
	yajl_val t = isc_test_load_json(path);
	cr_assert_not_null(t, "no trace from %s (stderr: %s)", argv[0], r->err);
	return t;
}

static yajl_val threads(yajl_val trace)
{
	yajl_val th = isc_trace_get(trace, "trace_metadata/aggregates/threads");
	cr_assert(YAJL_IS_ARRAY(th), "aggregates.threads is missing");
	return th;
}

long long host_agg_sum(yajl_val trace, const char *path)
{
	yajl_val th = threads(trace);
	long long sum = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(th)->len; i++) {
		sum += isc_trace_int(YAJL_GET_ARRAY(th)->values[i], path, 0);
	}
	return sum;
}

yajl_val host_agg_thread(yajl_val trace, const char *name)
{
	yajl_val th = threads(trace);
	for (size_t i = 0; i < YAJL_GET_ARRAY(th)->len; i++) {
		yajl_val t = YAJL_GET_ARRAY(th)->values[i];
		const char *n = isc_trace_str(t, "name");
		if (n && strcmp(n, name) == 0) {
			return t;
		}
	}
	return NULL;
}

size_t host_count_meta(yajl_val trace, const char *type, const char *key, const char *value)
{
	yajl_val ev = isc_trace_events(trace);
	char path[256];
	size_t n = 0;
	snprintf(path, sizeof(path), "metadata/%s", key);
	for (size_t i = 0; ev && i < YAJL_GET_ARRAY(ev)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(ev)->values[i];
		const char *t = isc_trace_str(e, "type");
		const char *v = isc_trace_str(e, path);
		n += t && strcmp(t, type) == 0 && v && strcmp(v, value) == 0;
	}
	return n;
}

const char *host_find_lib(const char *soname)
{
	static char buf[4096];
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
					    "/lib/x86_64-linux-gnu", NULL };
	for (int i = 0; dirs[i]; i++) {
		snprintf(buf, sizeof(buf), "%s/%s", dirs[i], soname);
		if (access(buf, R_OK) == 0) {
			return buf;
		}
	}
	return NULL;
}
