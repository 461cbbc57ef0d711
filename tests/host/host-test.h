/* SPDX-License-Identifier: MIT */
/* Helpers of the host suite: run a workload under the preload in a fresh directory,
 * load its trace, and read the per-thread aggregates. */
#ifndef ISC_HOST_TEST_H
#define ISC_HOST_TEST_H

#include <stdbool.h>

#include "tests/common/isc-test.h"

/* The fresh directory of the running test (created by the suite's init). */
extern char *host_dir;
void host_setup(void);
void host_teardown(void);

/* Runs argv under the preload with env in host_dir, asserts a clean exit, loads
 * host_dir/trace.json. */
yajl_val host_trace(const char *const argv[], const char *const env[], struct isc_run *r);

/* Sum over aggregates.threads[] of the integer at path ("malloc/calls"). */
long long host_agg_sum(yajl_val trace, const char *path);
/* The aggregates.threads[] entry of the thread with this name (comm), or NULL. */
yajl_val host_agg_thread(yajl_val trace, const char *name);

/* Number of events of type whose metadata string key equals value. */
size_t host_count_meta(yajl_val trace, const char *type, const char *key, const char *value);

/* Path of a built helper library (tests/host/...), or of a system library found by
 * soname in the usual directories; NULL when absent. */
const char *host_find_lib(const char *soname);

#endif /* ISC_HOST_TEST_H */
