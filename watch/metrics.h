/* SPDX-License-Identifier: MIT */
/*
 * What `inferscope watch` keeps per process and serves on /metrics: the numbers of the
 * latest analysed segment (gauges) and running totals over all its segments (counters),
 * written as OpenMetrics 1.0 or as Prometheus text 0.0.4, whichever the scraper asks for.
 */
#ifndef ISC_WATCH_METRICS_H
#define ISC_WATCH_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/analysis/analysis.h"
#include "watch/kernel-class.h"

#define ISC_WATCH_GPUS 16

struct isc_gpu_metrics {
	int device;			       /* -1: the trace did not say */
	double busy_ratio;		       /* latest segment: union of GPU work / window */
	double seconds_total[ISC_KC__COUNT];   /* GPU time by kernel category, all segments */
	double seconds_segment[ISC_KC__COUNT]; /* the latest segment's */
	bool seen_latest;		       /* present in the latest segment */
};

/* One analysed segment's numbers (isc_segment_metrics fills it). */
struct isc_segment_metrics {
	char host[128];
	int64_t pid;
	double share[ISC_CAT__COUNT];
	enum isc_bound bound;
	double confidence;
	double window_s;
	uint64_t launches, syncs, device_allocs, dropped;
	double allocs_per_s;
	double end_realtime_s; /* wall-clock end of the window, 0 when the trace has no anchor */
	size_t n_gpus;
	struct {
		int device;
		double busy_ns;
		double ns[ISC_KC__COUNT];
	} gpu[ISC_WATCH_GPUS];
};

struct isc_proc_metrics {
	char host[128];
	int64_t pid;
	uint64_t seq; /* update order, for eviction */
	struct isc_segment_metrics last;
	uint64_t segments, launches_total, syncs_total, device_allocs_total, dropped_total;
	size_t n_gpus;
	struct isc_gpu_metrics gpu[ISC_WATCH_GPUS];
};

struct isc_watch_self {
	uint64_t analysed, failed;
	double analysis_seconds; /* read + analyse + pprof, summed */
	uint64_t events;	 /* events read from analysed segments */
};

/* Fills m from an analysed segment (host and pid from the trace; the caller may override
 * them when the trace does not say). Returns 0 or -ENOMEM. */
int isc_segment_metrics(const struct isc_trace *t, const struct isc_analysis *a,
			struct isc_segment_metrics *m);
/* Folds a segment into its process's totals and latest values. */
void isc_proc_update(struct isc_proc_metrics *p, const struct isc_segment_metrics *m);
/* The exposition of every process, OpenMetrics (with "# EOF") or text 0.0.4. */
void isc_metrics_write(FILE *f, const struct isc_proc_metrics *procs, size_t n,
		       const struct isc_watch_self *self, bool openmetrics);

#endif /* ISC_WATCH_METRICS_H */
