/* SPDX-License-Identifier: MIT */
/*
 * Which events a window holds. Host events count where they start. In a trimmed window
 * (--window, --window-scope) GPU work counts where the host call that launched it starts
 * (its correlation id): the kernels a step queued belong to the step even when the GPU
 * runs them after it ended, and the kernels an earlier step queued do not, as in HTA's
 * per-iteration views. The window then runs on past the trimmed end until the last GPU
 * work it launched has finished, so that work is never clipped; host events are still
 * taken only up to the trimmed end (host_end).
 */
#include "analyzer/model/result.h"

bool isc_in_window(const struct isc_trace *t, const struct isc_analysis *a, const struct isc_ev *e)
{
	int64_t ts = e->ts;
	if (!a->window.trimmed) {
		return ts >= a->window.start && ts <= a->window.end;
	}
	if (isc_type_is_gpu(e->type) && e->corr != 0) {
		const struct isc_ev *launch = isc_trace_launch_of(t, e);
		ts = launch != NULL ? launch->ts : ts;
	}
	return ts >= a->window.start && ts <= a->window.host_end;
}

int64_t isc_window_end_of(const struct isc_analysis *a, const struct isc_ev *e)
{
	return isc_type_is_gpu(e->type) ? a->window.end : a->window.host_end;
}

void isc_window_extend(const struct isc_trace *t, struct isc_analysis *a)
{
	a->window.host_end = a->window.end;
	if (!a->window.trimmed) {
		return;
	}
	int64_t end = a->window.end;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (isc_type_is_gpu(e->type) && e->ts + e->dur > end && isc_in_window(t, a, e)) {
			end = e->ts + e->dur;
		}
	}
	a->window.gpu_tail = end - a->window.end;
	a->window.end = end;
}
