/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the test suites: run a program (optionally under the preload)
 * with extra environment and capture its output and status; load a JSON trace;
 * query its events. Workloads are spawned with an absolute LD_PRELOAD; the test
 * runner itself is never preloaded.
 */
#ifndef ISC_TEST_H
#define ISC_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>

struct isc_run {
	int status; /* waitpid status */
	char *out;  /* NUL-terminated, malloc'd */
	char *err;
	size_t out_len;
	size_t err_len;
};

/* Runs argv with env (extra "KEY=VALUE" entries, NULL-terminated, may be NULL) in
 * cwd (NULL = current). With preload, LD_PRELOAD is the built libinferscope.so.
 * Returns 0 or -errno. */
int isc_test_run(const char *const argv[], const char *const env[], bool preload, const char *cwd,
		 struct isc_run *r);
void isc_run_free(struct isc_run *r);

/* A fresh directory per test, for suites that run their workloads in one:
 * TestSuite(name, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown). */
void isc_test_dir_setup(void);
void isc_test_dir_teardown(void);
const char *isc_test_dir(void);
/* dir/name, in one of 8 rotating buffers (several may be used in one expression). */
const char *isc_test_in_dir(const char *name);
/* An environment variable meson test sets; the test fails when it is missing. */
const char *isc_test_env(const char *name);

/* A fresh directory under $TMPDIR (or /tmp); the caller removes it with isc_test_rmrf. */
char *isc_test_tmpdir(void);
void isc_test_rmrf(const char *dir);
bool isc_test_exists(const char *path);

/* Parses a whole JSON file (tests only: a DOM is fine here); NULL with a message. */
yajl_val isc_test_load_json(const char *path);

/* Trace queries. */
yajl_val isc_trace_events(yajl_val trace);
yajl_val isc_trace_get(yajl_val obj, const char *path); /* "a/b/c" */
const char *isc_trace_str(yajl_val obj, const char *path);
long long isc_trace_int(yajl_val obj, const char *path, long long fallback);
double isc_trace_num(yajl_val obj, const char *path, double fallback);
/* Number of events with this type (NULL = any) and name (NULL = any). */
size_t isc_trace_count(yajl_val trace, const char *type, const char *name);
/* The i-th event matching type/name, or NULL. */
yajl_val isc_trace_find(yajl_val trace, const char *type, const char *name, size_t i);

/* The i-th path of a colon-separated list (ISC_PYTHONS: every CPython found at
 * configure time), in one of 8 rotating buffers; NULL past the end. */
const char *isc_test_nth_path(const char *list, size_t i);

/* Paths of build products, set by meson. */
const char *isc_test_preload(void);
const char *isc_test_workload(const char *name); /* static buffer */

#endif /* ISC_TEST_H */
