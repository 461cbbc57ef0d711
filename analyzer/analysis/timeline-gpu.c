/* SPDX-License-Identifier: MIT */
/*
 * The GPU side, as Holistic Trace Analysis (HTA) defines it, so that our numbers can be
 * checked against theirs on the same Kineto trace:
 *  - temporal breakdown per device of each input (rank): from the first GPU event's
 *    start to the last one's end (synchronisation events included, except records on no
 *    stream, stream -1, which HTA's `stream != -1` filter leaves out), idle = not covered
 *    by any GPU event, compute = covered by kernels other than NCCL ones, non-compute =
 *    the rest;
 *  - idle time per stream, gap by gap (kernels, copies and memsets in start order): host
 *    wait when the call that launched the next operation started after the previous one
 *    ended, else kernel wait when the gap is shorter than 30 us, else other;
 *  - kernel launches: each launch call joined with the first GPU operation it caused
 *    (a CUDA graph launch counts once, not once per node; cudaLaunchKernel
 *    family, cudaMemcpyAsync, cudaMemsetAsync): short kernels (call <= 50 us and GPU
 *    time below the call's), slow calls (> 50 us), launch delays (GPU start - call end)
 *    over 100 us.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/grow.h"
#include "analyzer/base/sort.h"
#include "analyzer/analysis/timeline.h"

static bool is_gpu_op(unsigned type)
{
	return isc_type_is_gpu(type) && type != ISC_T_GPU_SYNC;
}

static bool is_launch_call(const struct isc_trace *t, const struct isc_ev *api)
{
	const char *n = isc_trace_str(t, api->name);
	return api->sub == ISC_AC_LAUNCH || isc_api_classify(n) == ISC_AC_LAUNCH ||
	       strncmp(n, "cudaMemcpyAsync", 15) == 0 || strncmp(n, "cudaMemsetAsync", 15) == 0;
}

static struct isc_stream_idle *stream_slot(struct isc_analysis *a, const struct isc_ev *e)
{
	for (size_t i = 0; i < a->n_streams; i++) {
		if (a->streams[i].device == e->device && a->streams[i].stream == e->stream &&
		    a->streams[i].input == e->input) {
			return &a->streams[i];
		}
	}
	if (ISC_RESIZE(a->streams, a->n_streams + 1) < 0) {
		return NULL;
	}
	struct isc_stream_idle *s = &a->streams[a->n_streams++];
	memset(s, 0, sizeof(*s));
	s->input = e->input;
	s->device = e->device;
	s->stream = e->stream;
	return s;
}

struct launch_acc {
	int64_t *cpu, *gpu, *delay;
	size_t n, cap;
};

static int add_pair(struct launch_acc *l, int64_t cpu, int64_t gpu, int64_t delay)
{
	if (l->n == l->cap) {
		/* Three arrays of one capacity. */
		size_t cap = isc_grow_cap(l->cap, l->n + 1, 1024);
		if (ISC_RESIZE(l->cpu, cap) < 0 || ISC_RESIZE(l->gpu, cap) < 0 ||
		    ISC_RESIZE(l->delay, cap) < 0) {
			return -ENOMEM;
		}
		l->cap = cap;
	}
	l->cpu[l->n] = cpu;
	l->gpu[l->n] = gpu;
	l->delay[l->n++] = delay;
	return 0;
}

static double median(int64_t *v, size_t n)
{
	if (n == 0) {
		return 0;
	}
	isc_sort_i64(v, n);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

/* One GPU operation: its gap on its stream, and its launch pair. A call pairs with the
 * first operation it caused only: a CUDA graph launch is one launch whatever the number
 * of its nodes, which all carry its correlation id. */
static int gpu_op(const struct isc_trace *t, struct isc_analysis *a, const struct isc_ev *e,
		  int64_t *prev_end, bool has_prev, struct launch_acc *acc, uint8_t *paired)
{
	const int64_t kw = (int64_t)(isc_thr(&a->th, ISC_THR_KERNEL_WAIT_US) * 1000.0);
	const int64_t rt = (int64_t)(isc_thr(&a->th, ISC_THR_LAUNCH_RUNTIME_US) * 1000.0);
	const int64_t ld = (int64_t)(isc_thr(&a->th, ISC_THR_LAUNCH_DELAY_US) * 1000.0);
	const struct isc_ev *api = isc_trace_launch_of(t, e);
	int64_t gap = has_prev ? e->ts - *prev_end : 0;
	bool host_wait = has_prev && api != NULL && api->ts > *prev_end;
	bool kernel_wait = has_prev && !host_wait && gap < kw;
	size_t k = api != NULL ? (size_t)(api - t->ev) : 0;
	bool first = api != NULL && !(paired[k >> 3] & (1u << (k & 7)));
	if (first && is_launch_call(t, api)) {
		paired[k >> 3] |= (uint8_t)(1u << (k & 7));
		int64_t delay = e->ts - (api->ts + api->dur);
		bool short_k = api->dur <= rt && e->dur < api->dur;
		a->launch.short_kernels += short_k;
		a->launch.slow_launches += api->dur > rt;
		a->launch.delay_outliers += delay > ld;
		a->launch.launch_total_ns += api->dur;
		if (short_k && (host_wait || kernel_wait) && gap > 0) {
			a->launch.short_kernel_gap_ns += gap < api->dur ? gap : api->dur;
		}
		if (add_pair(acc, api->dur, e->dur, delay) < 0) {
			return -ENOMEM;
		}
	}
	*prev_end = e->ts + e->dur;
	if (!has_prev) {
		return 0;
	}
	return host_wait ? 1 : kernel_wait ? 2 : 3;
}

static int idle_and_launches(const struct isc_trace *t, struct isc_analysis *a)
{
	struct launch_acc acc = { 0 };
	int64_t *prev = NULL;
	bool *has = NULL;
	uint8_t *paired = calloc(t->n / 8 + 1, 1);
	int r = paired == NULL ? -ENOMEM : 0;
	for (size_t i = 0; i < t->n && r >= 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (!is_gpu_op(e->type) || !isc_in_window(t, a, e)) {
			continue;
		}
		size_t before = a->n_streams;
		struct isc_stream_idle *s = stream_slot(a, e);
		if (s == NULL) {
			r = -ENOMEM;
			break;
		}
		if (a->n_streams != before) {
			if (ISC_RESIZE(prev, a->n_streams) < 0 ||
			    ISC_RESIZE(has, a->n_streams) < 0) {
				r = -ENOMEM;
				break;
			}
			has[a->n_streams - 1] = false;
		}
		size_t k = (size_t)(s - a->streams);
		int64_t gap = has[k] ? e->ts - prev[k] : 0;
		r = gpu_op(t, a, e, &prev[k], has[k], &acc, paired);
		has[k] = true;
		s->ops++;
		s->busy += e->dur;
		s->gaps += r > 0;
		s->host_wait += r == 1 ? gap : 0;
		s->kernel_wait += r == 2 ? gap : 0;
		s->other += r == 3 ? gap : 0;
	}
	for (size_t k = 0; k < a->n_streams; k++) {
		a->idle.host_wait += a->streams[k].host_wait;
		a->idle.kernel_wait += a->streams[k].kernel_wait;
		a->idle.other += a->streams[k].other;
		a->idle.gaps += a->streams[k].gaps;
		a->idle.ops += a->streams[k].ops;
	}
	a->launch.pairs = acc.n;
	a->launch.median_launch_ns = median(acc.cpu, acc.n);
	a->launch.median_gpu_ns = median(acc.gpu, acc.n);
	a->launch.median_delay_ns = median(acc.delay, acc.n);
	free(acc.cpu);
	free(acc.gpu);
	free(acc.delay);
	free(prev);
	free(has);
	free(paired);
	return r < 0 ? r : 0;
}

static int temporal_device(const struct isc_trace *t, struct isc_analysis *a, uint16_t input,
			   int16_t dev, const bool *nccl, struct isc_hta_temporal *out)
{
	struct isc_ivec all = { 0 }, comp = { 0 };
	const int64_t ws = a->window.start, we = a->window.end;
	int64_t first = 0, last = 0;
	bool any = false;
	int r = 0;
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		/* HTA leaves records on no stream (stream -1) out of its GPU numbers. */
		if (!isc_type_is_gpu(e->type) || e->device != dev || e->input != input ||
		    (e->flags & ISC_F_NO_STREAM) ||
		    (a->window.trimmed && !isc_in_window(t, a, e))) {
			continue;
		}
		int64_t s = e->ts > ws ? e->ts : ws, en = e->ts + e->dur < we ? e->ts + e->dur : we;
		if (en < s) {
			continue; /* outside the window */
		}
		/* Zero-length operations still bound the span, as in HTA. */
		first = any ? first : s;
		last = any && last > en ? last : en;
		any = true;
		r = isc_ivec_add_merge(&all, s, en);
		if (r == 0 && e->type == ISC_T_KERNEL && !nccl[e->name]) {
			r = isc_ivec_add_merge(&comp, s, en);
		}
	}
	out->input = input;
	out->device = dev;
	out->span = any ? last - first : 0;
	out->idle = out->span - isc_ivec_total(&all);
	out->compute = isc_ivec_total(&comp);
	out->non_compute = out->span - out->compute - out->idle;
	isc_ivec_free(&all);
	isc_ivec_free(&comp);
	return r;
}

static int temporal(const struct isc_trace *t, struct isc_analysis *a)
{
	size_t ns = isc_trace_n_strings(t);
	bool *nccl = calloc(ns, sizeof(*nccl));
	if (nccl == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < ns; i++) {
		nccl[i] = strstr(isc_trace_str(t, (uint32_t)i), "nccl") != NULL;
	}
	int r = 0;
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (!isc_type_is_gpu(e->type)) {
			continue;
		}
		bool known = false;
		for (size_t k = 0; k < a->n_hta && !known; k++) {
			known = a->hta[k].device == e->device && a->hta[k].input == e->input;
		}
		if (known) {
			continue;
		}
		if (ISC_RESIZE(a->hta, a->n_hta + 1) < 0) {
			r = -ENOMEM;
			break;
		}
		memset(&a->hta[a->n_hta], 0, sizeof(a->hta[0]));
		r = temporal_device(t, a, e->input, e->device, nccl, &a->hta[a->n_hta]);
		a->n_hta++; /* devices with a zero span are dropped below, once */
	}
	size_t kept = 0;
	for (size_t k = 0; k < a->n_hta; k++) {
		if (a->hta[k].span > 0) {
			a->hta[kept++] = a->hta[k];
		}
	}
	a->n_hta = kept;
	free(nccl);
	return r;
}

int isc_timeline_gpu(const struct isc_trace *t, struct isc_analysis *a)
{
	int r = temporal(t, a);
	return r == 0 ? idle_and_launches(t, a) : r;
}
