/* SPDX-License-Identifier: MIT */
/* Shared by the analyzer suites: paths from the environment, running the CLI, files. */
#ifndef ISC_TEST_HELPERS_H
#define ISC_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* `-f pprof` of the analysis, gunzipped (malloc'd, *n bytes): the profile.proto message. */
uint8_t *pprof_bytes(const struct isc_trace *t, const struct isc_analysis *a, size_t *n);
/* What the writer named ("md", "json", "html", "folded"...) writes of the analysis
 * (malloc'd), its length in *len where len is not NULL; fails the test on error. */
char *render(const struct isc_trace *t, const struct isc_analysis *a, const char *writer,
	     size_t *len);

/* The events of a type in the trace. */
size_t count_events(const struct isc_trace *t, unsigned type);

struct isc_causal;
/* The name of graph node i's event. */
const char *node_name(const struct isc_trace *t, const struct isc_causal *c, uint32_t i);
/* The critical path's time in the events named name (its top table), 0 when absent. */
int64_t path_ns(const struct isc_causal *c, const struct isc_trace *t, const char *name);
/* The cudaEventSynchronize calls the graph makes wait; fails the test unless each waits
 * for an operation named op. */
int event_syncs_waiting_for(const struct isc_trace *t, const struct isc_causal *c, const char *op);

#endif /* ISC_TEST_HELPERS_H */
