/* SPDX-License-Identifier: MIT */
/*
 * Per-name statistics of kernels, GPU copies, CUDA API calls, scopes, framework operators
 * and syscalls in the window: count, total, mean, coefficient of variation, min, max,
 * percentiles (linear interpolation, as numpy) and a 1-2-5 histogram of durations.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "sort.h"

static const double pct_at[ISC_PCTS] = { 5, 10, 25, 50, 75, 90, 95, 99 };

/* Upper edges of the histogram buckets, in microseconds; the last bucket is open. */
static const double hist_edge_us[ISC_HIST - 1] = {
	1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6,
};

static int group_of(unsigned type)
{
	switch (type) {
	case ISC_T_KERNEL: return ISC_SG_KERNEL;
	case ISC_T_H2D:
	case ISC_T_D2H:
	case ISC_T_D2D:
	case ISC_T_H2H:
	case ISC_T_MEMSET: return ISC_SG_GPU_COPY;
	case ISC_T_CUDA_API: return ISC_SG_CUDA_API;
	case ISC_T_SCOPE: return ISC_SG_SCOPE;
	case ISC_T_CPU_OP: return ISC_SG_CPU_OP;
	case ISC_T_SYSCALL: return ISC_SG_SYSCALL;
	default: return -1;
	}
}

static double percentile(const int64_t *v, size_t n, double p)
{
	double pos = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)pos;
	double frac = pos - (double)lo;
	if (lo + 1 >= n) {
		return (double)v[n - 1];
	}
	return (double)v[lo] + frac * (double)(v[lo + 1] - v[lo]);
}

static void fill_row(struct isc_stat *row, int64_t *v, size_t n)
{
	isc_sort_i64(v, n);
	double sum = 0, sq = 0;
	for (size_t i = 0; i < n; i++) {
		sum += (double)v[i];
		int b = 0;
		while (b < ISC_HIST - 1 && (double)v[i] >= hist_edge_us[b] * 1000.0) {
			b++;
		}
		row->hist[b]++;
	}
	row->count = n;
	row->total = 0;
	for (size_t i = 0; i < n; i++) {
		row->total += v[i];
	}
	row->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++) {
		double d = (double)v[i] - row->mean;
		sq += d * d;
	}
	row->cv = row->mean > 0 ? sqrt(sq / (double)n) / row->mean : 0;
	row->min = v[0];
	row->max = v[n - 1];
	for (int k = 0; k < ISC_PCTS; k++) {
		row->pct[k] = percentile(v, n, pct_at[k]);
	}
}

static int cmp_row(const void *x, const void *y, void *ctx)
{
	const struct isc_stat *a = x, *b = y;
	const struct isc_trace *t = ctx;
	if (a->total != b->total) {
		return a->total > b->total ? -1 : 1;
	}
	return strcmp(isc_trace_str(t, a->name), isc_trace_str(t, b->name));
}

static bool in_window(const struct isc_analysis *a, const struct isc_ev *e)
{
	return e->ts >= a->window.start && e->ts <= a->window.end;
}

static int group(const struct isc_trace *t, struct isc_analysis *a, int g, size_t *off,
		 uint64_t *bytes)
{
	size_t ns = isc_trace_n_strings(t);
	memset(off, 0, (ns + 1) * sizeof(*off));
	memset(bytes, 0, ns * sizeof(*bytes));
	size_t total = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (group_of(e->type) == g && in_window(a, e)) {
			off[e->name + 1]++;
			total++;
		}
	}
	struct isc_stat_table *tab = &a->stats[g];
	tab->events = total;
	size_t names = 0;
	for (size_t i = 1; i <= ns; i++) {
		names += off[i] > 0;
		off[i] += off[i - 1];
	}
	int64_t *dur = malloc((total + 1) * sizeof(*dur));
	tab->rows = calloc(names + 1, sizeof(*tab->rows));
	if (dur == NULL || tab->rows == NULL) {
		free(dur);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (group_of(e->type) == g && in_window(a, e)) {
			dur[off[e->name]++] = e->dur;
			bytes[e->name] += e->type == ISC_T_COUNTER ? 0 : e->v.bytes;
		}
	}
	/* off[name] now points at the end of name's slice; its start is off[name - 1]. */
	for (size_t name = 0; name < ns; name++) {
		size_t start = name == 0 ? 0 : off[name - 1], end = off[name];
		if (end > start) {
			struct isc_stat *row = &tab->rows[tab->n++];
			row->name = (uint32_t)name;
			row->bytes = bytes[name];
			fill_row(row, dur + start, end - start);
		}
	}
	free(dur);
	qsort_r(tab->rows, tab->n, sizeof(*tab->rows), cmp_row, (void *)t);
	return 0;
}

int isc_stats_compute(const struct isc_trace *t, struct isc_analysis *a)
{
	size_t ns = isc_trace_n_strings(t);
	size_t *off = malloc((ns + 1) * sizeof(*off));
	uint64_t *bytes = malloc((ns + 1) * sizeof(*bytes));
	int r = off == NULL || bytes == NULL ? -ENOMEM : 0;
	for (int g = 0; g < ISC_SG__COUNT && r == 0; g++) {
		r = group(t, a, g, off, bytes);
	}
	free(off);
	free(bytes);
	return r;
}
