/* SPDX-License-Identifier: MIT */
/*
 * Every number the verdict and the rules compare against, with its documented default
 * (docs/rules.md). A file of "key = value" lines overrides any of them.
 */
#ifndef ISC_THRESHOLDS_H
#define ISC_THRESHOLDS_H

#include <stdio.h>

#include "analyzer/base/diag.h"

enum isc_thr {
	ISC_THR_GPU_BOUND_SHARE,       /* gpu_compute share that makes a trace gpu_bound */
	ISC_THR_CPU_BOUND_SHARE,       /* host-side share (GPU not busy) that makes it cpu_bound */
	ISC_THR_CPU_CAUSE_SHARE,       /* cpu_bound: the largest host-side cause at least this */
	ISC_THR_MEMORY_BOUND_SHARE,    /* copy share that makes it memory_bound */
	ISC_THR_OVERLAP_BUSY_SHARE,    /* host and GPU both this busy: balanced (pipelined) */
	ISC_THR_KERNEL_WAIT_US,	       /* HTA: gaps shorter than this are kernel wait */
	ISC_THR_LAUNCH_RUNTIME_US,     /* HTA: launch calls longer than this are slow */
	ISC_THR_LAUNCH_DELAY_US,       /* HTA: launch delays longer than this are outliers */
	ISC_THR_CPU_BUSY_UTIL,	       /* CPU-time samples: utilisation that means computing */
	ISC_THR_MIN_WINDOW_MS,	       /* windows shorter than this lower the confidence */
	ISC_THR_MIN_IMPROVEMENT_PCT,   /* suggestions estimated below this are left out */
	ISC_THR_PINNED_SPEEDUP,	       /* pinned/pageable bandwidth when no pinned copy was seen */
	ISC_THR_COPY_MIN_SHARE,	       /* copy rules look at copies above this share */
	ISC_THR_OVERLAP_MAX,	       /* copy.no-overlap: overlap fraction below this fires */
	ISC_THR_TINY_KERNEL_FRACTION,  /* launch.tiny-kernels: short kernels fraction */
	ISC_THR_TINY_KERNEL_MIN_COUNT, /* launch.tiny-kernels: at least this many */
	ISC_THR_SYNC_PER_LAUNCH,       /* sync.excessive: syncs per launch */
	ISC_THR_SYNC_MIN_COUNT,	       /* sync.excessive: at least this many syncs */
	ISC_THR_WARMUP_FRACTION,       /* alloc rules: the first part of the window is warm-up */
	ISC_THR_ALLOC_MIN_COUNT,       /* alloc.device-steady-state: calls after warm-up */
	ISC_THR_GPU_GAP_SHARE,	       /* gpu.gaps: "other" GPU idle share that fires */
	ISC_THR_LOW_OCCUPANCY,	       /* gpu.low-occupancy: below this is low */
	ISC_THR_OCCUPANCY_TARGET,      /* gpu.low-occupancy: occupancy assumed reachable */
	ISC_THR_LOW_OCC_SHARE,	       /* gpu.low-occupancy: share of GPU time that fires */
	ISC_THR_CPU_PRE_SHARE,	       /* host.cpu-preprocessing: share that fires */
	ISC_THR_PARALLEL_WORKERS,      /* host.cpu-preprocessing: workers assumed at most */
	ISC_THR_MALLOC_RATE,	       /* alloc.host-churn: host allocations per second */
	ISC_THR_WAIT_SHARE,	       /* host.io-wait / host.lock-contention: share that fires */
	ISC_THR_DROPPED_FRACTION,      /* data.dropped-events: fraction that halves confidence */
	ISC_THR_QUEUE_FULL_DEPTH,      /* graph: launches in flight that make a full queue */
	ISC_THR_GRAPH_NODE_GAP_US,     /* what-if graph: device time between replayed nodes */
	ISC_THR_MIN_GAIN_PCT,	       /* verdict: a lever gaining less than this moves nothing */
	ISC_THR_BALANCE_RATIO, /* verdict: a second lever this close to the first: balanced */
	ISC_THR_STARVED_RATIO, /* verdict: run-queue wait / CPU time that starves a thread */
	ISC_THR__COUNT
};

struct isc_thresholds {
	double v[ISC_THR__COUNT];
	unsigned overridden; /* how many came from a file */
};

struct isc_thr_def {
	const char *key;
	double dflt;
	double min, max;
	const char *doc;
};

const struct isc_thr_def *isc_thr_defs(void);
void isc_thresholds_init(struct isc_thresholds *th);
/* Reads "key = value" lines (# comments). Returns 0, or -EINVAL with "file:line: problem". */
int isc_thresholds_load(struct isc_thresholds *th, const char *path, struct isc_diag *d);
int isc_thresholds_parse(struct isc_thresholds *th, const char *label, const char *text, size_t n,
			 struct isc_diag *d);
void isc_thresholds_print(const struct isc_thresholds *th, FILE *f);

static inline double isc_thr(const struct isc_thresholds *th, enum isc_thr k)
{
	return th->v[k];
}

#endif /* ISC_THRESHOLDS_H */
