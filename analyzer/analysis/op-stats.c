/* SPDX-License-Identifier: MIT */
/*
 * Per-name statistics of kernels, GPU copies, CUDA API calls, scopes, framework operators
 * and syscalls in the window: count, total, mean, coefficient of variation, min, max,
 * percentiles (linear interpolation, as numpy) and a 1-2-5 histogram of durations.
 * Syscalls over the whole trace come from the hooks' exact aggregates and latency
 * histograms instead (exact_syscalls): the events are only the calls above a threshold.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/base/grow.h"
#include "analyzer/base/json-number.h"
#include "analyzer/base/sort.h"

static const double pct_at[ISC_PCTS] = { 5, 10, 25, 50, 75, 90, 95, 99 };

/* Upper edges of the histogram buckets, in microseconds; the last bucket is open. */
static const double hist_edge_us[ISC_HIST - 1] = {
	1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6,
};

static int group_of(unsigned type)
{
	switch (type) {
	case ISC_T_KERNEL:
		return ISC_SG_KERNEL;
	case ISC_T_H2D:
	case ISC_T_D2H:
	case ISC_T_D2D:
	case ISC_T_H2H:
	case ISC_T_MEMSET:
		return ISC_SG_GPU_COPY;
	case ISC_T_CUDA_API:
		return ISC_SG_CUDA_API;
	case ISC_T_SCOPE:
		return ISC_SG_SCOPE;
	case ISC_T_CPU_OP:
		return ISC_SG_CPU_OP;
	case ISC_T_SYSCALL:
		return ISC_SG_SYSCALL;
	default:
		return -1;
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

/* Membership as window.c defines it. */
static bool in_window(const struct isc_trace *t, const struct isc_analysis *a,
		      const struct isc_ev *e)
{
	return isc_in_window(t, a, e);
}

/* Fills one group's rows from its slice of durations grouped by name. */
static int rows(const struct isc_trace *t, struct isc_analysis *a, int g, const size_t *off,
		int64_t *dur, const uint64_t *bytes)
{
	size_t ns = isc_trace_n_strings(t);
	struct isc_stat_table *tab = &a->stats[g];
	size_t names = 0;
	for (size_t name = 0; name < ns; name++) {
		names += off[name + 1] > off[name];
	}
	tab->rows = calloc(names + 1, sizeof(*tab->rows));
	if (tab->rows == NULL) {
		return -ENOMEM;
	}
	for (size_t name = 0; name < ns; name++) {
		size_t start = off[name], end = off[name + 1];
		if (end > start) {
			struct isc_stat *row = &tab->rows[tab->n++];
			row->name = (uint32_t)name;
			row->bytes = bytes[name];
			fill_row(row, dur + start, end - start);
		}
	}
	tab->events = off[ns];
	qsort_r(tab->rows, tab->n, sizeof(*tab->rows), cmp_row, (void *)t);
	return 0;
}

/* ---- syscalls from the exact aggregates ---- */

/* Calls of the merged buckets b[0..n) shorter than x ns: each bucket spread evenly. */
static double calls_below(const struct isc_lat_bucket *b, size_t n, double x)
{
	double c = 0;
	for (size_t i = 0; i < n; i++) {
		double f = (x - (double)b[i].lo) / (double)(b[i].hi - b[i].lo);
		c += (double)b[i].n * (f < 0 ? 0 : f > 1 ? 1 : f);
	}
	return c;
}

/*
 * Percentiles, min, CV and the 1-2-5 histogram of a row from its latency buckets (one
 * input's buckets do not overlap; several inputs' may, the CDF adds them up). Bucket ends
 * past the longest call are cut at it.
 */
static void fill_from_buckets(struct isc_stat *row, struct isc_lat_bucket *b, size_t n)
{
	double calls = 0, lo = INFINITY, hi = 0, var = 0;
	for (size_t i = 0; i < n; i++) {
		b[i].hi = b[i].hi > row->max + 1 ? row->max + 1 : b[i].hi;
		b[i].lo = b[i].lo >= b[i].hi ? b[i].hi - 1 : b[i].lo;
		calls += (double)b[i].n;
		lo = (double)b[i].lo < lo ? (double)b[i].lo : lo;
		hi = (double)b[i].hi > hi ? (double)b[i].hi : hi;
		double mid = ((double)b[i].lo + (double)b[i].hi) / 2,
		       w = (double)(b[i].hi - b[i].lo);
		var += (double)b[i].n * ((mid - row->mean) * (mid - row->mean) + w * w / 12);
		int k = 0;
		while (k < ISC_HIST - 1 && mid >= hist_edge_us[k] * 1000.0) {
			k++;
		}
		row->hist[k] += (uint32_t)b[i].n;
	}
	row->min = (int64_t)lo;
	row->cv = row->mean > 0 ? sqrt(var / calls) / row->mean : 0;
	for (int k = 0; k < ISC_PCTS; k++) {
		double want = pct_at[k] / 100.0 * calls, a = lo, z = hi;
		for (int it = 0; it < 64 && z - a > 0.5; it++) {
			double m = (a + z) / 2;
			*(calls_below(b, n, m) < want ? &a : &z) = m;
		}
		row->pct[k] = (a + z) / 2;
	}
}

/* Whether the syscall table can be the aggregates': the window is the whole trace, and
 * every input with syscall events counted its calls. */
static bool aggregates_cover(const struct isc_trace *t, const struct isc_analysis *a)
{
	bool any = false;
	if (a->window.trimmed) {
		return false;
	}
	for (size_t i = 0; i < t->n_inputs; i++) {
		any = any || t->inputs[i].agg_syscalls.n > 0;
	}
	for (size_t i = 0; any && i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_SYSCALL && t->inputs[e->input].agg_syscalls.n == 0) {
			return false;
		}
	}
	return any;
}

/* The events' row of a name, if any. */
static const struct isc_stat *events_row(const struct isc_stat_table *tab, uint32_t name)
{
	for (size_t i = 0; i < tab->n; i++) {
		if (tab->rows[i].name == name) {
			return &tab->rows[i];
		}
	}
	return NULL;
}

/*
 * The syscall rows from the aggregates: one row per call name, counts and totals exact;
 * percentiles from the latency histograms when every input that made the call has one,
 * else kept from the events (the calls above the threshold), which the table then says.
 */
static int exact_syscalls(const struct isc_trace *t, struct isc_analysis *a)
{
	struct isc_stat_table *tab = &a->stats[ISC_SG_SYSCALL];
	struct isc_agg_list sum = { 0 };
	int r = 0;
	for (size_t i = 0; i < t->n_inputs && r == 0; i++) {
		for (size_t k = 0; k < t->inputs[i].agg_syscalls.n && r == 0; k++) {
			r = isc_agg_add(&sum, &t->inputs[i].agg_syscalls.v[k]);
		}
	}
	struct isc_stat *rows = calloc(sum.n + 1, sizeof(*rows));
	struct isc_lat_bucket *b = NULL;
	size_t nb = 0, cap = 0;
	r = r == 0 && rows == NULL ? -ENOMEM : r;
	size_t n = 0;
	bool from_events = false;
	for (size_t k = 0; k < sum.n && r == 0; k++) {
		const struct isc_agg *g = &sum.v[k];
		if (g->count == 0) {
			continue;
		}
		struct isc_stat *row = &rows[n++];
		row->name = g->name;
		row->count = g->count;
		row->total = isc_d2i(g->total_us * 1000.0);
		row->max = isc_d2i(g->max_us * 1000.0);
		row->bytes = g->bytes;
		row->mean = (double)row->total / (double)row->count;
		bool histograms = true;
		nb = 0;
		for (size_t i = 0; i < t->n_inputs && r == 0; i++) {
			const struct isc_input *in = &t->inputs[i];
			bool made = false;
			for (size_t j = 0; j < in->agg_syscalls.n; j++) {
				made = made || in->agg_syscalls.v[j].name == g->name;
			}
			histograms = histograms && (!made || in->has_latency);
			for (size_t j = 0; j < in->latency.n && r == 0; j++) {
				if (in->latency.v[j].name == g->name) {
					r = ISC_GROW(b, cap, nb + 1, 32);
					if (r == 0) {
						b[nb++] = in->latency.v[j];
					}
				}
			}
		}
		const struct isc_stat *ev = events_row(tab, g->name);
		if (histograms && nb > 0) {
			fill_from_buckets(row, b, nb);
		} else if (ev != NULL) {
			from_events = true;
			row->min = ev->min;
			row->cv = ev->cv;
			memcpy(row->pct, ev->pct, sizeof(row->pct));
			memcpy(row->hist, ev->hist, sizeof(row->hist));
		} else {
			from_events = true; /* no call reached the threshold: nothing to say */
		}
		tab->calls += row->count;
	}
	free(b);
	free(sum.v);
	if (r != 0) {
		free(rows);
		return r;
	}
	free(tab->rows);
	tab->rows = rows;
	tab->n = n;
	tab->exact = true;
	tab->pct_from_events = from_events;
	qsort_r(tab->rows, tab->n, sizeof(*tab->rows), cmp_row, (void *)t);
	return 0;
}

/*
 * Two passes over the events for all groups: count per (group, name), then place each
 * duration in its slice. off[g] has ns + 1 entries: the slice of name k is
 * [off[g][k], off[g][k + 1]) of group g's durations.
 */
int isc_stats_compute(const struct isc_trace *t, struct isc_analysis *a)
{
	size_t ns = isc_trace_n_strings(t);
	size_t *off = calloc((size_t)ISC_SG__COUNT * (ns + 1), sizeof(*off));
	size_t *fill = calloc((size_t)ISC_SG__COUNT * (ns + 1), sizeof(*fill));
	uint64_t *bytes = calloc((size_t)ISC_SG__COUNT * (ns + 1), sizeof(*bytes));
	size_t total[ISC_SG__COUNT] = { 0 };
	int r = off == NULL || fill == NULL || bytes == NULL ? -ENOMEM : 0;
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		int g = group_of(e->type);
		if (g >= 0 && in_window(t, a, e)) {
			off[(size_t)g * (ns + 1) + e->name + 1]++;
			total[g]++;
		}
	}
	int64_t *dur[ISC_SG__COUNT] = { NULL };
	for (int g = 0; g < ISC_SG__COUNT && r == 0; g++) {
		size_t *o = off + (size_t)g * (ns + 1);
		for (size_t k = 1; k <= ns; k++) {
			o[k] += o[k - 1];
		}
		memcpy(fill + (size_t)g * (ns + 1), o, (ns + 1) * sizeof(*o));
		dur[g] = malloc((total[g] + 1) * sizeof(**dur));
		r = dur[g] == NULL ? -ENOMEM : 0;
	}
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		int g = group_of(e->type);
		if (g >= 0 && in_window(t, a, e)) {
			size_t at = (size_t)g * (ns + 1) + e->name;
			dur[g][fill[at]++] = e->dur;
			bytes[at] += e->v.bytes;
		}
	}
	for (int g = 0; g < ISC_SG__COUNT && r == 0; g++) {
		r = rows(t, a, g, off + (size_t)g * (ns + 1), dur[g], bytes + (size_t)g * (ns + 1));
	}
	if (r == 0 && aggregates_cover(t, a)) {
		r = exact_syscalls(t, a);
	}
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_input *in = &t->inputs[i];
		struct isc_alloc_stats *m = &a->allocs;
		m->present = m->present || in->malloc_calls > 0 || in->malloc_frees > 0;
		m->calls += in->malloc_calls;
		m->frees += in->malloc_frees;
		m->failed += in->malloc_failed;
		m->bytes += in->malloc_bytes;
		m->bytes_freed += in->malloc_bytes_freed;
		m->sampled += in->malloc_sampled;
		m->live += in->malloc_live;
	}
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		free(dur[g]);
	}
	free(off);
	free(fill);
	free(bytes);
	return r;
}
