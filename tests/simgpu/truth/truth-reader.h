/* SPDX-License-Identifier: MIT */
/*
 * Reading the simulator's ground truth (SIMGPU_TRUTH=path, or simgpu_truth_write())
 * back into memory, for test suites that compare a profiler's trace with what the
 * virtual device really executed. The JSON format is in tests/simgpu/README.md.
 */
#ifndef SIMGPU_TRUTH_READER_H
#define SIMGPU_TRUTH_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/simgpu/simgpu.h"

/** One API call as the simulator saw it. */
struct simgpu_truth_api {
	char *name;
	uint8_t domain; /* enum simgpu_api_domain */
	bool hidden;	/* made by simgpu_launch_hidden() */
	uint32_t cbid;
	uint32_t correlation_id;
	uint32_t thread_id;
	int result; /* cudaError_t */
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t blocked_from_ns; /* 0 when the call never waited for the device */
	uint64_t blocked_to_ns;
};

/** One allocation or release. */
struct simgpu_truth_mem {
	char what[24]; /* malloc, free, malloc_async, malloc_host, ... */
	uint64_t address;
	uint64_t bytes;
	uint64_t time_ns;
	uint32_t thread_id;
	uint8_t kind; /* enum simgpu_mem_kind */
	int device;
};

struct simgpu_truth {
	int pid;
	int device_count;
	struct simgpu_op *ops; /* op names are owned by the truth */
	size_t n_ops;
	struct simgpu_truth_api *api;
	size_t n_api;
	struct simgpu_truth_mem *mem;
	size_t n_mem;
	size_t dropped_ops;
	size_t dropped_api;
	size_t dropped_mem;
};

/**
 * Loads @p path. Returns 0, or a negative errno with a one-line reason (naming
 * the file and what was wrong) in @p err.
 */
int simgpu_truth_create(const char *path, struct simgpu_truth **out, char *err, size_t err_len);

/** Frees a truth; NULL is a no-op. */
void simgpu_truth_destroy(struct simgpu_truth *truth);

/** Number of operations of @p type (0: any) that carry @p correlation_id. */
size_t simgpu_truth_count_correlated(const struct simgpu_truth *truth, uint32_t type,
				     uint32_t correlation_id);

/**
 * Time during which at least one operation of @p type (0: any) ran, as a union of
 * intervals (never a plain sum); @p first and @p last, when not NULL, receive the
 * earliest start and latest end.
 */
uint64_t simgpu_truth_busy_ns(const struct simgpu_truth *truth, uint32_t type, uint64_t *first,
			      uint64_t *last);

/** The API call with @p correlation_id, or NULL. */
const struct simgpu_truth_api *simgpu_truth_api_by_correlation(const struct simgpu_truth *truth,
							       uint32_t correlation_id);

#endif /* SIMGPU_TRUTH_READER_H */
