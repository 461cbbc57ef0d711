/* SPDX-License-Identifier: MIT */
/* Internals shared by the timeline files (timeline.c, timeline-host.c). */
#ifndef ISC_TIMELINE_H
#define ISC_TIMELINE_H

#include "analyzer/analysis/analysis.h"
#include "analyzer/base/interval.h"

/* The per-category unions the sweep attributes, clipped to the window. */
struct isc_lanes {
	struct isc_ivec gpu, h2d, d2h, api, host;
	struct isc_ivec cpu, idle; /* results of the sweep */
};

/* Host busy time: per thread, scopes (or CPU-time samples) minus blocking waits. */
int isc_host_busy(const struct isc_trace *t, struct isc_analysis *a, struct isc_ivec *host);
/* Self time of scopes and the part of it attributed to cpu_preprocessing. */
int isc_scope_times(const struct isc_trace *t, struct isc_analysis *a, const struct isc_ivec *cpu);
/* Host waits by category and how much of them left the GPU idle. */
int isc_wait_times(const struct isc_trace *t, struct isc_analysis *a, const struct isc_ivec *idle);

#endif /* ISC_TIMELINE_H */
