/* SPDX-License-Identifier: MIT */
/* The host events a thread's graph segments are cut from, in the order the cutting needs
 * (graph.c, thread_segments). */
#include "analyzer/causal/graph.h"

#include <stdlib.h>
#include <string.h>

/* CPU samples count where nothing recorded covers the thread: a program with no
 * annotation and no hooked call still has host work to re-time (see thread_segments). */
static bool is_host_interval(const struct isc_ev *e)
{
	return e->type == ISC_T_SCOPE || e->type == ISC_T_CPU_OP || e->type == ISC_T_CUDA_API ||
	       e->type == ISC_T_SYSCALL || e->type == ISC_T_CPU_SAMPLE;
}

/* How long a host event holds its thread. A CPU sample stands for the CPU time before it
 * (v.bytes ns); it is placed at [ts, ts + that) so that a thread's events stay in the
 * start order the trace is sorted in: the same length, one sampling period later. */
int64_t isc_graph_host_dur(const struct isc_ev *e)
{
	return e->type == ISC_T_CPU_SAMPLE ? (int64_t)e->v.bytes : e->dur;
}

/* Which of two events with the same extent is outside: scopes, then calls. */
static int rank(const struct isc_ev *e)
{
	return e->type == ISC_T_SCOPE	   ? 0
	       : e->type == ISC_T_CPU_OP   ? 1
	       : e->type == ISC_T_CUDA_API ? 2
					   : 3;
}

static int64_t overlap(const struct isc_ev *x, const struct isc_ev *y)
{
	int64_t s = x->ts > y->ts ? x->ts : y->ts;
	int64_t e = x->ts + x->dur < y->ts + y->dur ? x->ts + x->dur : y->ts + y->dur;
	return e > s ? e - s : 0;
}

/* Syscalls a CUDA call makes (the runtime sleeping or polling in a synchronize, its
 * ioctls) are how the call waits, not host work of their own: they are left out, so
 * that the call owns its time. The hook's clock read can put such a syscall a fraction
 * of a microsecond before the call: an overlap of half the syscall counts too. */
static void inside_calls(const struct isc_trace *t, uint32_t *idx, size_t n)
{
	int64_t api_end = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		const struct isc_ev *e = &t->ev[idx[i]];
		if (e->type == ISC_T_CUDA_API) {
			api_end = e->ts + e->dur > api_end ? e->ts + e->dur : api_end;
			continue;
		}
		if (e->type != ISC_T_SYSCALL) {
			continue;
		}
		bool in = e->ts < api_end;
		for (size_t j = i + 1; !in && j < n && j < i + 3; j++) {
			const struct isc_ev *x = &t->ev[idx[j]];
			in = x->type == ISC_T_CUDA_API && 2 * overlap(e, x) >= e->dur && e->dur > 0;
		}
		idx[i] = in ? ISC_GN_NONE : idx[i];
	}
}

/* Host events of the window grouped by thread, each group in start order with a parent
 * before the children that start with it. */
uint32_t *isc_graph_host_events(const struct isc_trace *t, const struct isc_analysis *a,
				size_t **off)
{
	size_t *cnt = calloc(t->n_threads + 2, sizeof(*cnt));
	if (cnt == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (is_host_interval(e) && isc_graph_in_window(a, e) && e->thread < t->n_threads) {
			cnt[e->thread + 1]++;
		}
	}
	for (size_t k = 1; k <= t->n_threads + 1; k++) {
		cnt[k] += cnt[k - 1];
	}
	uint32_t *idx = malloc((cnt[t->n_threads] + 1) * sizeof(*idx));
	size_t *pos = malloc((t->n_threads + 1) * sizeof(*pos));
	if (idx == NULL || pos == NULL) {
		free(idx);
		free(pos);
		free(cnt);
		return NULL;
	}
	memcpy(pos, cnt, (t->n_threads + 1) * sizeof(*pos));
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (is_host_interval(e) && isc_graph_in_window(a, e) && e->thread < t->n_threads) {
			idx[pos[e->thread]++] = (uint32_t)i;
		}
	}
	free(pos);
	/* Equal starts: the longer event first, and of two equal ones the scope before the
	 * call it makes (events are sorted by start only). Runs of equal starts are short:
	 * insertion sort. */
	for (size_t k = 0; k < t->n_threads; k++) {
		for (size_t i = cnt[k] + 1; i < cnt[k + 1]; i++) {
			uint32_t x = idx[i];
			const struct isc_ev *e = &t->ev[x];
			size_t j = i;
			while (j > cnt[k] && t->ev[idx[j - 1]].ts == e->ts &&
			       (isc_graph_host_dur(&t->ev[idx[j - 1]]) < isc_graph_host_dur(e) ||
				(isc_graph_host_dur(&t->ev[idx[j - 1]]) == isc_graph_host_dur(e) &&
				 rank(&t->ev[idx[j - 1]]) > rank(e)))) {
				idx[j] = idx[j - 1];
				j--;
			}
			idx[j] = x;
		}
	}
	for (size_t k = 0; k < t->n_threads; k++) {
		inside_calls(t, idx + cnt[k], cnt[k + 1] - cnt[k]);
	}
	*off = cnt;
	return idx;
}
