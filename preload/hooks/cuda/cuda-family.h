/* SPDX-License-Identifier: MIT */
/*
 * The CUDA family (runtime hooks, CUPTI, NVTX) as lifecycle.c and trailer.c see it:
 * init, flush and fork functions for the family table, and a report of what the family
 * knows at the end. Built without the CUDA headers, cuda-none.c provides the same
 * functions doing nothing.
 */
#ifndef ISC_CUDA_FAMILY_H
#define ISC_CUDA_FAMILY_H

#include <stdbool.h>
#include <stdint.h>

#include "preload/gpu/gpu-devices.h"

/* cuda-runtime.c: tables, CUDA_INJECTION64_PATH. */
void isc_hooks_cuda_init(void);
/* Every flush: delivers what CUPTI holds (forced flush). */
void isc_hooks_cuda_flush(void);
/* While recording goes on (the flight recorder's tick): what CUPTI completed, the
 * activities in flight left to a later flush. */
void isc_hooks_cuda_flush_completed(void);
/* fork child: no GPU timeline there; per-thread call counters start over. */
void isc_hooks_cuda_fork_child(void);
/* hook-nvtx.c: NVTX_INJECTION64_PATH. */
void isc_hooks_nvtx_init(void);
/* Every flush: NVTX start/end ranges still open are written as unterminated. */
void isc_hooks_nvtx_flush(void);

/* Sets the injection variable var to this library's absolute path unless it is set. */
void isc_cuda_set_injection_var(const char *var);

/* The interned name of intercepted function fn (enum isc_cuda_fn), interned at its first
 * use: a process that never calls CUDA does not put ~400 names in its string table. */
uint32_t isc_cuda_fn_id(unsigned fn);

/* trace_metadata.cupti: whether CUPTI ran, why not, and what it delivered. */
struct isc_cupti_report {
	const char *status;	/* not_used, active, disabled, unavailable, refused... */
	const char *reason;	/* why it is not active; NULL when active */
	const char *library;	/* the libcupti loaded, "" when none */
	const char *holder;	/* the subscriber that holds CUPTI, when refused */
	const char *started_by; /* who started it, when active */
	uint32_t version;	/* 0 unknown */
	bool active;
	bool refused;
	bool ts_callback; /* timestamps through our clock callback, not calibrated */
	uint64_t dropped, buffers, buffers_refused, records, unresolved, overhead_ns;
	/* CUDA graph nodes (cupti-graphs.c): "on", "off" (CUPTI not active) or
	 * "unavailable" with a reason; nodes recorded; ids CUPTI could not give */
	const char *graph_nodes, *graph_nodes_reason;
	uint64_t graph_nodes_created, graph_nodes_cloned, graph_nodes_no_id;
};

/* What the CUDA family knows at the end of the run. */
struct isc_cuda_report {
	bool used;	     /* an intercepted call ran, or CUPTI saw a device */
	int runtime_version; /* 1000 * major + 10 * minor, 0 unknown */
	int driver_version;  /* likewise */
	unsigned n_devices;
	struct isc_gpu_device devices[ISC_GPU_MAX_DEVICES];
	struct isc_cupti_report cupti;
	unsigned n_functions; /* per-thread call counters (thread.h cuda.calls) */
	const char *const *function_names;
};

/* Fills r; false when the library was built without CUDA (nothing to report). */
bool isc_cuda_report(struct isc_cuda_report *r);

#endif /* ISC_CUDA_FAMILY_H */
