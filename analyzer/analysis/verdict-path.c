/* SPDX-License-Identifier: MIT */
/*
 * The verdict from the critical path (docs/rules.md, "Verdict"). With P the path's length
 * and g, m, h the parts of it in GPU work (kernels, memsets), host-device copies and
 * host-side time (host computing, CUDA calls, returns from syncs, launch latency, waits):
 *   balanced (overlapped_pipeline)  the GPU and the host are each busy for
 *                 verdict.overlap_busy_share of the window, the host's share being its
 *                 busiest thread's time not blocked in calls (the graph's waits: syncs,
 *                 blocking copies, a full launch queue) nor waiting;
 *   memory_bound  m >= memory_bound_share and m >= g;
 *   gpu_bound     g >= gpu_bound_share (cause: communication when NCCL/gloo kernels
 *                 outweigh compute kernels on the path, else gpu_compute);
 *   cpu_bound     h >= cpu_bound_share and its largest cause is at least cpu_cause_share
 *                 of the path and at least g;
 *   balanced      otherwise.
 * Blocked time is never host computing: a blocking call hands the path to the GPU work
 * it waited for, and a launch on a full queue to the operation that freed the slot.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"

/* The host-side causes on the path, largest first. */
static const char *host_cause(const struct isc_analysis *a, int64_t *ns)
{
	const struct isc_causal *c = a->causal;
	const int64_t *k = c->cat;
	struct {
		const char *cause;
		int64_t ns;
	} v[] = {
		{ "cpu_preprocessing", k[ISC_CP_HOST] },
		{ "framework_overhead", k[ISC_CP_RUNTIME] + k[ISC_CP_LAUNCH] },
		{ "sync_bound", k[ISC_CP_SYNC] + k[ISC_CP_BLOCKED] },
		{ "host_io_wait", k[ISC_CP_IO] },
		{ a->waits.on_idle[ISC_SYS_SLEEP] > a->waits.on_idle[ISC_SYS_WAIT]
			  ? "host_sleep"
			  : "host_lock_wait",
		  k[ISC_CP_HOST_WAIT] },
		{ "gpu_gaps", k[ISC_CP_GPU_GAP] },
	};
	size_t best = 0;
	for (size_t i = 1; i < sizeof(v) / sizeof(v[0]); i++) {
		best = v[i].ns > v[best].ns ? i : best;
	}
	*ns = v[best].ns;
	return v[best].cause;
}

static void path_evidence(const struct isc_trace *t, struct isc_analysis *a)
{
	const struct isc_causal *c = a->causal;
	struct isc_verdict *v = &a->verdict;
	char b[8][ISC_FMT_LEN];
	double p = (double)c->path_ns;
	isc_verdict_evidence(
		v,
		"critical path %s: GPU work %s, copies %s, host side %s (host computing %s, "
		"CUDA calls and launch latency %s, sync returns and blocked calls %s)",
		isc_fmt_dur(b[0], p), isc_fmt_pct(b[1], (double)isc_cp_gpu(c) / p),
		isc_fmt_pct(b[2], (double)isc_cp_copies(c) / p),
		isc_fmt_pct(b[3], (double)isc_cp_host(c) / p),
		isc_fmt_pct(b[4], (double)c->cat[ISC_CP_HOST] / p),
		isc_fmt_pct(b[5], (double)(c->cat[ISC_CP_RUNTIME] + c->cat[ISC_CP_LAUNCH]) / p),
		isc_fmt_pct(b[6], (double)(c->cat[ISC_CP_SYNC] + c->cat[ISC_CP_BLOCKED]) / p));
	if (c->top[0].ns > 0) {
		isc_verdict_evidence(v, "longest on the critical path: %s '%s' %s",
				     isc_cp_kind_name((enum isc_cp_kind)c->top[0].kind),
				     isc_trace_str(t, c->top[0].name),
				     isc_fmt_dur(b[0], (double)c->top[0].ns));
	}
	if (c->queue_full > 0) {
		isc_verdict_evidence(
			v,
			"%llu launches waited for a slot of a full launch queue (up to %lld "
			"operations in flight): the host is blocked, not computing",
			(unsigned long long)c->queue_full, (long long)c->max_queue_depth);
	}
}

bool isc_verdict_from_path(const struct isc_trace *t, struct isc_analysis *a, double *margin)
{
	const struct isc_causal *c = a->causal;
	if (c == NULL || c->gpu_nodes == 0 || c->path_ns <= 0) {
		return false;
	}
	struct isc_verdict *v = &a->verdict;
	double p = (double)c->path_ns;
	double g = (double)isc_cp_gpu(c) / p, m = (double)isc_cp_copies(c) / p;
	double h = (double)isc_cp_host(c) / p;
	double tg = isc_thr(&a->th, ISC_THR_GPU_BOUND_SHARE);
	double tc = isc_thr(&a->th, ISC_THR_CPU_BOUND_SHARE);
	double tm = isc_thr(&a->th, ISC_THR_MEMORY_BOUND_SHARE);
	double to = isc_thr(&a->th, ISC_THR_OVERLAP_BUSY_SHARE);
	double gb = isc_share(a, a->gpu_busy_ns);
	double hb = isc_share(a, a->host_busy_ns < c->host_work ? a->host_busy_ns : c->host_work);
	int64_t cause_ns = 0;
	const char *cause = host_cause(a, &cause_ns);
	double hc = (double)cause_ns / p;
	if (gb >= to && hb >= to) {
		v->type = ISC_BOUND_BALANCED;
		snprintf(v->cause, sizeof(v->cause), "overlapped_pipeline");
		*margin = fmin(gb, hb) - to;
	} else if (m >= tm && m >= g) {
		v->type = ISC_BOUND_MEMORY;
		snprintf(v->cause, sizeof(v->cause), "%s",
			 c->cat[ISC_CP_H2D] >= c->cat[ISC_CP_D2H] ? "h2d_copy" : "d2h_copy");
		*margin = m - tm;
	} else if (g + m >= tg) {
		/* The GPU side holds the path: kernels, communication, or copies behind them. */
		int64_t comm = c->cat[ISC_CP_COMM], kern = c->cat[ISC_CP_KERNEL];
		int64_t copies = isc_cp_copies(c);
		v->type = ISC_BOUND_GPU;
		snprintf(v->cause, sizeof(v->cause), "%s",
			 comm >= kern && comm >= copies ? "communication"
			 : copies > kern		? "gpu_copies"
							: "gpu_compute");
		*margin = g + m - tg;
	} else if (h >= tc && hc >= isc_thr(&a->th, ISC_THR_CPU_CAUSE_SHARE) && hc >= g) {
		v->type = ISC_BOUND_CPU;
		snprintf(v->cause, sizeof(v->cause), "%s", cause);
		*margin = h - tc;
	} else {
		v->type = ISC_BOUND_BALANCED;
		snprintf(v->cause, sizeof(v->cause), "none");
		*margin = fmin(fmin(tg - g, tc - h), tm - m);
	}
	path_evidence(t, a);
	return true;
}

double isc_path_penalties(struct isc_analysis *a)
{
	const struct isc_causal *c = a->causal;
	struct isc_verdict *v = &a->verdict;
	double f = 1.0;
	if (c == NULL || c->n == 0) {
		return f;
	}
	if (c->kineto && c->gpu_nodes > 0) {
		f *= 0.85;
		isc_verdict_evidence(
			v, "a Kineto input records no waits: blocked calls are told from launch "
			   "queue depth and GPU timing only (confidence lowered)");
	}
	if (c->gpu_nodes > 0 && c->unknown_device_ops * 2 > c->gpu_nodes) {
		f *= 0.8;
		isc_verdict_evidence(v, "most GPU operations name no device (confidence lowered)");
	}
	return f;
}
