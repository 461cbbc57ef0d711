/* SPDX-License-Identifier: MIT */
/*
 * The verdict: read off the what-ifs of the dependency graph (verdict-path.c). Only when
 * there is no graph to re-time (no host interval in the window) do the shares decide.
 * With g the gpu_compute share of the window, m the copy share and
 * h = 1 - g - m the share where the GPU does neither (the host computes, sits in the
 * runtime, or waits):
 *   memory_bound  when m >= memory_bound_share and m >= g;
 *   gpu_bound     else when g >= gpu_bound_share;
 *   cpu_bound     else when h >= cpu_bound_share and the largest host-side category
 *                 (cpu_preprocessing, framework_overhead, idle) is at least g and
 *                 at least cpu_cause_share;
 *   balanced      otherwise; unknown (confidence 0) when there is nothing to judge.
 * The confidence grows with the margin past the deciding threshold and is lowered when
 * the GPU timeline is missing, events were dropped, the trace is incomplete or the window
 * is short (docs/rules.md).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/base/fmt.h"

/* What fills the time the GPU does nothing: the largest host-side category. */
static const char *host_cause(const struct isc_analysis *a)
{
	int64_t cpu = a->cat_ns[ISC_CAT_CPU], fw = a->cat_ns[ISC_CAT_FRAMEWORK];
	int64_t idle = a->cat_ns[ISC_CAT_IDLE];
	if (cpu >= fw && cpu >= idle) {
		return "cpu_preprocessing";
	}
	if (fw >= idle) {
		return "framework_overhead";
	}
	const struct isc_waits *w = &a->waits;
	int64_t io = isc_waits_io_on_idle(w);
	int64_t lock = w->on_idle[ISC_SYS_WAIT], sleep = w->on_idle[ISC_SYS_SLEEP];
	if (io >= lock && io >= sleep && io * 2 >= idle) {
		return "host_io_wait";
	}
	if (lock >= sleep && lock * 2 >= idle) {
		return "host_lock_wait";
	}
	return sleep * 2 >= idle && sleep > 0 ? "host_sleep" : "idle";
}

/* Shares of the window, each a union over threads: host computing, waits. */
static void host_shares_evidence(const struct isc_analysis *a)
{
	struct isc_verdict *v = (struct isc_verdict *)&a->verdict;
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN], b4[ISC_FMT_LEN];
	isc_verdict_evidence(v, "host computing (any thread, union): %s of the %s window",
			     isc_fmt_pct(b1, isc_share(a, a->host_busy_ns)),
			     isc_fmt_dur(b2, (double)(a->window.end - a->window.start)));
	const struct isc_waits *w = &a->waits;
	int64_t io = w->io_total;
	if (io > 0 || w->total[ISC_SYS_WAIT] > 0 || w->total[ISC_WAIT_INPUT] > 0) {
		isc_verdict_evidence(
			v,
			"waits, each a union over threads: I/O %s, locks and polls %s, paced "
			"reads %s, sleeps %s of the window",
			isc_fmt_pct(b1, isc_share(a, io)),
			isc_fmt_pct(b2, isc_share(a, w->total[ISC_SYS_WAIT])),
			isc_fmt_pct(b3, isc_share(a, w->total[ISC_WAIT_INPUT])),
			isc_fmt_pct(b4, isc_share(a, w->total[ISC_SYS_SLEEP])));
	}
}

static void gpu_shares_evidence(const struct isc_trace *t, const struct isc_analysis *a)
{
	struct isc_verdict *v = (struct isc_verdict *)&a->verdict;
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN], b4[ISC_FMT_LEN];
	double w = (double)(a->window.end - a->window.start);
	isc_verdict_evidence(v, "GPU compute covers %s of the %s window",
			     isc_fmt_pct(b1, isc_share(a, a->cat_ns[ISC_CAT_GPU])),
			     isc_fmt_dur(b2, w));
	if (a->gpu_timeline) {
		isc_verdict_evidence(
			v,
			"GPU busy (kernels, copies, memsets) for %s of the window, host "
			"computing for %s",
			isc_fmt_pct(b1, isc_share(a, a->gpu_busy_ns)),
			isc_fmt_pct(b2, isc_share(a, a->host_busy_ns)));
	}
	if (a->idle.gaps > 0) {
		isc_verdict_evidence(
			v,
			"GPU gaps between operations (HTA): host wait %s, kernel wait %s, "
			"other %s",
			isc_fmt_dur(b1, (double)a->idle.host_wait),
			isc_fmt_dur(b2, (double)a->idle.kernel_wait),
			isc_fmt_dur(b3, (double)a->idle.other));
	}
	if (a->cat_ns[ISC_CAT_CPU] > 0) {
		const char *top = a->n_scopes > 0 && a->scopes[0].cpu > 0
					  ? isc_trace_str(t, a->scopes[0].name)
					  : NULL;
		isc_verdict_evidence(
			v, "host computing with the GPU idle (cpu_preprocessing): %s%s%s%s%s",
			isc_fmt_pct(b1, isc_share(a, a->cat_ns[ISC_CAT_CPU])),
			top ? ", most of it in scope '" : "", top ? top : "", top ? "' " : "",
			top ? isc_fmt_dur(b2, (double)a->scopes[0].cpu) : "");
	}
	if (a->cat_ns[ISC_CAT_FRAMEWORK] > 0) {
		isc_verdict_evidence(
			v, "host in CUDA runtime calls with the GPU idle (framework_overhead): %s",
			isc_fmt_pct(b1, isc_share(a, a->cat_ns[ISC_CAT_FRAMEWORK])));
	}
	int64_t copies = a->cat_ns[ISC_CAT_H2D] + a->cat_ns[ISC_CAT_D2H];
	if (copies > 0) {
		isc_verdict_evidence(
			v,
			"copies alone on the GPU: %s (H2D %s, D2H %s), %s of copy time "
			"overlapped with kernels",
			isc_fmt_pct(b1, isc_share(a, copies)),
			isc_fmt_dur(b2, (double)a->cat_ns[ISC_CAT_H2D]),
			isc_fmt_dur(b3, (double)a->cat_ns[ISC_CAT_D2H]),
			isc_fmt_pct(b4, a->copy_union_ns > 0 ? (double)a->copy_overlap_ns /
								       (double)a->copy_union_ns
							     : 0));
	}
	int64_t io = isc_waits_io_on_idle(&a->waits);
	if (io > 0) {
		isc_verdict_evidence(
			v,
			"host I/O waits with the GPU idle (a union over threads): %s of the window",
			isc_fmt_pct(b2, isc_share(a, io)));
	}
}

static double penalties(struct isc_analysis *a)
{
	struct isc_verdict *v = &a->verdict;
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	double f = 1.0;
	if (!a->gpu_timeline && a->count[ISC_T_CUDA_API] > 0) {
		f *= 0.5;
		isc_verdict_evidence(
			v, "no GPU timeline although the process called CUDA: GPU time is not "
			   "measured (confidence halved)");
	} else if (a->cupti_degraded) {
		f *= 0.7;
		isc_verdict_evidence(
			v, "CUPTI was not fully active for every input (confidence lowered)");
	}
	if (a->dropped > 0) {
		double frac = (double)a->dropped / (double)(a->dropped + a->events_total);
		double lim = isc_thr(&a->th, ISC_THR_DROPPED_FRACTION);
		f *= 1.0 - 0.5 * fmin(1.0, lim > 0 ? frac / lim : 1.0);
		isc_verdict_evidence(v, "%llu events were dropped (%s of all): confidence lowered",
				     (unsigned long long)a->dropped, isc_fmt_pct(b1, frac));
	}
	double w = (double)(a->window.end - a->window.start);
	double min_w = isc_thr(&a->th, ISC_THR_MIN_WINDOW_MS) * 1e6;
	if (w < min_w) {
		f *= 0.5 + 0.5 * w / min_w;
		isc_verdict_evidence(v, "the window is only %s (under %s): confidence lowered",
				     isc_fmt_dur(b1, w), isc_fmt_dur(b2, min_w));
	}
	if (a->incomplete) {
		f *= 0.9;
		isc_verdict_evidence(v, "an input is incomplete (recovered or snapshot)");
	}
	return f * isc_path_penalties(a);
}

static double host_max(const struct isc_analysis *a)
{
	int64_t m = a->cat_ns[ISC_CAT_CPU];
	m = a->cat_ns[ISC_CAT_FRAMEWORK] > m ? a->cat_ns[ISC_CAT_FRAMEWORK] : m;
	m = a->cat_ns[ISC_CAT_IDLE] > m ? a->cat_ns[ISC_CAT_IDLE] : m;
	return isc_share(a, m);
}

static void decide(struct isc_analysis *a, double g, double m, double h, double *margin)
{
	struct isc_verdict *v = &a->verdict;
	double tg = isc_thr(&a->th, ISC_THR_GPU_BOUND_SHARE);
	double tc = isc_thr(&a->th, ISC_THR_CPU_BOUND_SHARE);
	double tm = isc_thr(&a->th, ISC_THR_MEMORY_BOUND_SHARE);
	double to = isc_thr(&a->th, ISC_THR_OVERLAP_BUSY_SHARE);
	double gb = isc_share(a, a->gpu_busy_ns), hb = isc_share(a, a->host_busy_ns);
	if (gb >= to && hb >= to) {
		/* Both sides saturated at once: a pipeline, no single bottleneck. */
		v->type = ISC_BOUND_BALANCED;
		snprintf(v->cause, sizeof(v->cause), "overlapped_pipeline");
		*margin = fmin(gb, hb) - to;
	} else if (m >= tm && m >= g) {
		v->type = ISC_BOUND_MEMORY;
		snprintf(v->cause, sizeof(v->cause), "%s",
			 a->cat_ns[ISC_CAT_H2D] >= a->cat_ns[ISC_CAT_D2H] ? "h2d_copy"
									  : "d2h_copy");
		*margin = m - tm;
	} else if (g >= tg) {
		v->type = ISC_BOUND_GPU;
		snprintf(v->cause, sizeof(v->cause), "gpu_compute");
		*margin = g - tg;
	} else if (h >= tc && host_max(a) >= g &&
		   host_max(a) >= isc_thr(&a->th, ISC_THR_CPU_CAUSE_SHARE)) {
		/* The GPU idles most of the time and one host-side cause outweighs its
		 * compute; several smaller causes together are a balance, not a bound. */
		v->type = ISC_BOUND_CPU;
		snprintf(v->cause, sizeof(v->cause), "%s", host_cause(a));
		*margin = h - tc;
	} else {
		v->type = ISC_BOUND_BALANCED;
		snprintf(v->cause, sizeof(v->cause), "none");
		*margin = fmin(fmin(tg - g, tc - h), tm - m);
	}
}

void isc_classify(const struct isc_trace *t, struct isc_analysis *a)
{
	struct isc_verdict *v = &a->verdict;
	memset(v, 0, sizeof(*v));
	int64_t w = a->window.end - a->window.start;
	/* CPU samples say what the host did between the calls a hook saw. */
	uint64_t timed = a->count[ISC_T_SCOPE] + a->count[ISC_T_CPU_OP] + a->count[ISC_T_CUDA_API] +
			 a->count[ISC_T_SYSCALL] + a->count[ISC_T_CPU_SAMPLE];
	for (unsigned k = ISC_T_KERNEL; k < ISC_T__COUNT; k++) {
		timed += a->count[k];
	}
	if (w <= 0 || timed == 0) {
		/* What could have been timed: GPU work and CUDA calls only in a trace that
		 * has some (no GPU word for a host-only program's empty window). */
		bool gpu = false;
		for (size_t i = 0; i < t->n && !gpu; i++) {
			gpu = isc_type_is_gpu(t->ev[i].type) || t->ev[i].type == ISC_T_CUDA_API;
		}
		v->type = ISC_BOUND_UNKNOWN;
		snprintf(v->cause, sizeof(v->cause), "no_data");
		isc_verdict_evidence(v, "nothing to judge: %s%s%s",
				     w <= 0 ? "the window is empty" : "no timed events (scopes, ",
				     w <= 0 ? ""
				     : gpu  ? "CUDA calls, GPU work, "
					    : "",
				     w <= 0 ? "" : "syscalls or CPU samples) in it");
		return;
	}
	double g = isc_share(a, a->cat_ns[ISC_CAT_GPU]);
	double m = isc_share(a, a->cat_ns[ISC_CAT_H2D] + a->cat_ns[ISC_CAT_D2H]);
	double margin = 0;
	if (!isc_verdict_from_path(t, a, &margin)) {
		decide(a, g, m, 1.0 - g - m, &margin);
	}
	if (isc_has_gpu_work(a)) {
		gpu_shares_evidence(t, a);
	} else {
		host_shares_evidence(a);
	}
	double c = 0.5 + 0.5 * fmin(1.0, fmax(0.0, margin) / 0.25);
	if (strcmp(v->cause, "idle") == 0 || strcmp(v->cause, "untraced") == 0) {
		c *= 0.8;
		isc_verdict_evidence(
			v, "most of the host-side time is untraced idle: the host waits on "
			   "something no hook saw");
	}
	c *= penalties(a);
	v->confidence = round(fmin(1.0, fmax(0.0, c)) * 100.0) / 100.0;
}
