/* SPDX-License-Identifier: MIT */
/* Shared by the analyzer suites: paths from the environment, running the CLI, files. */
#ifndef ISC_TEST_HELPERS_H
#define ISC_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/model/model.h"

/* $ISC_DATA/rel (tests/analyzer/data), in a static buffer. */
const char *data_path(const char *rel);
/* Runs a shell command; returns its exit status, stdout in *out (malloc'd), stderr in *err. */
int run(const char *cmd, char **out, char **err);
char *slurp(const char *path, size_t *len);
/* Reads and finalizes; fails the test on error. */
struct isc_trace *load(const char *rel);
struct isc_analysis *analyse(const struct isc_trace *t, const struct isc_analyze_opts *o);

#endif /* ISC_TEST_HELPERS_H */
