/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the CUDA suite: run a workload under the preload and load its trace,
 * look up the CUDA events of a trace, and compare a trace's GPU timeline with the
 * simulator's ground truth.
 */
#ifndef CUDA_CHECK_H
#define CUDA_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <yajl/yajl_tree.h>

#include "tests/common/isc-test.h"

/* A fresh directory per test (cw_setup/cw_teardown as Criterion init/fini). */
extern char *cw_dir;
void cw_setup(void);
void cw_teardown(void);

/* Runs argv under the preload in cw_dir with env; asserts exit 0; returns the trace. */
yajl_val cw_run(const char *const argv[], const char *const env[], struct isc_run *r);
/* The value of "key=N" in the workload's stdout, or -1. */
long long cw_out(const struct isc_run *r, const char *key);
/* cw_dir/name, in a static buffer. */
const char *cw_path(const char *name);

/* True for gpu_kernel, the four copy types and gpu_memset. */
bool cw_is_gpu_work(const char *type);
/* cuda_api events with this metadata/source ("interposer", "cupti", NULL = any). */
size_t cw_api_count(yajl_val trace, const char *source);
/* The cuda_api event with this correlation id, or NULL. */
yajl_val cw_api_by_corr(yajl_val trace, long long corr);
/* Start and end of an event in nanoseconds. */
long long cw_start_ns(yajl_val ev);
long long cw_end_ns(yajl_val ev);

/*
 * The trace's GPU timeline against the ground truth at truth_path: as many GPU
 * events as operations; each operation matched by an event of its type whose start
 * and end are within 1 us; each event correlated with a cuda_api event of the call
 * that issued the operation (its name and thread). Returns the operations matched.
 */
size_t cw_check_truth(yajl_val trace, const char *truth_path);

#endif /* CUDA_CHECK_H */
