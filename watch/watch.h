/* SPDX-License-Identifier: MIT */
/*
 * The watcher: a directory of segments in, metrics and profiles out (main.c parses the
 * options; docs/fleet.md says how to run it).
 */
#ifndef ISC_WATCH_H
#define ISC_WATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "watch/metrics.h"

struct isc_watch_opts {
	const char *dir;
	const char *listen;
	int rescan_ms;
	bool pprof;
	bool once;
	bool openmetrics; /* --once's format */
	const char *thresholds;
	size_t max_procs;
	bool verbose;
};

/* Analyses one segment file into m (host and pid from the trace, else host_fallback and
 * pid_fallback) and, when pprof_path is set, writes its profile there (through a
 * temporary name) with the result in *pprof_rc (-ENOTSUP: pprof not built in).
 * *events gets the number of events read. Returns 0 or -errno; err says why, of a
 * failed analysis or a failed profile. */
int isc_watch_analyse(const char *path, const struct isc_thresholds *th, const char *host_fallback,
		      int64_t pid_fallback, const char *pprof_path, struct isc_segment_metrics *m,
		      uint64_t *events, int *pprof_rc, char *err, size_t cap);

/* Runs until *stop is set (or, with o->once, after one pass). Returns the exit status. */
int isc_watch_run(const struct isc_watch_opts *o, volatile sig_atomic_t *stop);

#endif /* ISC_WATCH_H */
