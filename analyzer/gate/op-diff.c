/* SPDX-License-Identifier: MIT */
/*
 * The op diff of two snapshots, as HTA's TraceDiff.ops_diff classifies operators:
 * per group and name, added (absent from the baseline), removed (absent now),
 * increased, decreased or unchanged.
 *
 * HTA decides increased/decreased by the change of the count alone. Here the total
 * time decides first, when it moved by more than the threshold (percent of the
 * baseline's total) and by more than 0.1 % of the baseline's window (at least a
 * microsecond, the resolution of Kineto traces): a kernel that runs as often but twice
 * as long is the regression a gate is for, while a change that cannot move a share by
 * a tenth of a point is run-to-run noise. When the time did not move that much, the
 * count decides, as in HTA.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/gate/gate.h"
#include "analyzer/base/sort.h"

#define MIN_TIME_CHANGE_US 1.0
#define MIN_WINDOW_FRACTION 0.001

bool isc_diff_group(int group)
{
	/* System calls above a duration threshold come and go with the machine's load:
	 * their names would fill the diff with noise. */
	return group != ISC_SG_SYSCALL;
}

const char *isc_diff_change_name(enum isc_diff_change c)
{
	static const char *const n[ISC_DIFF__COUNT] = { "added", "removed", "increased",
							"decreased", "unchanged" };
	return c < ISC_DIFF__COUNT ? n[c] : "unknown";
}

static int cmp_op(const void *x, const void *y)
{
	const struct isc_snap_op *const *a = x, *const *b = y;
	return strcmp((*a)->name, (*b)->name);
}

static enum isc_diff_change classify(const struct isc_diff_row *r, double threshold_pct,
				     double min_us)
{
	if (r->base_count == 0) {
		return r->count > 0 ? ISC_DIFF_ADDED : ISC_DIFF_UNCHANGED;
	}
	if (r->count == 0) {
		return ISC_DIFF_REMOVED;
	}
	double d = r->total_us - r->base_total_us;
	if (fabs(d) >= min_us && fabs(d) > threshold_pct / 100.0 * r->base_total_us) {
		return d > 0 ? ISC_DIFF_INCREASED : ISC_DIFF_DECREASED;
	}
	if (r->count != r->base_count) {
		return r->count > r->base_count ? ISC_DIFF_INCREASED : ISC_DIFF_DECREASED;
	}
	return ISC_DIFF_UNCHANGED;
}

/* Sorted pointers to a group's ops, by name. */
static const struct isc_snap_op **by_name(const struct isc_snap_group *g)
{
	const struct isc_snap_op **v = malloc((g->n + 1) * sizeof(*v));
	if (v != NULL) {
		for (size_t i = 0; i < g->n; i++) {
			v[i] = &g->ops[i];
		}
		isc_qsort(v, g->n, sizeof(*v), cmp_op);
	}
	return v;
}

static void add_row(struct isc_diff *d, int group, const struct isc_snap_op *b,
		    const struct isc_snap_op *c, double min_us)
{
	struct isc_diff_row *r = &d->rows[d->n];
	r->name = b != NULL ? b->name : c->name;
	r->group = group;
	r->base_count = b != NULL ? b->count : 0;
	r->base_total_us = b != NULL ? b->total_us : 0;
	r->count = c != NULL ? c->count : 0;
	r->total_us = c != NULL ? c->total_us : 0;
	r->change = classify(r, d->threshold_pct, min_us);
	d->by_change[r->change]++;
	d->by_group[group][r->change]++;
	d->n++;
}

/* Merges one group of both snapshots by name. */
static int merge(struct isc_diff *d, int group, const struct isc_snap_group *gb,
		 const struct isc_snap_group *gc, double min_us)
{
	const struct isc_snap_op **b = by_name(gb), **c = by_name(gc);
	if (b == NULL || c == NULL) {
		free(b);
		free(c);
		return -ENOMEM;
	}
	size_t i = 0, j = 0;
	while (i < gb->n || j < gc->n) {
		int k = i == gb->n ? 1 : j == gc->n ? -1 : strcmp(b[i]->name, c[j]->name);
		add_row(d, group, k <= 0 ? b[i] : NULL, k >= 0 ? c[j] : NULL, min_us);
		i += k <= 0;
		j += k >= 0;
	}
	free(b);
	free(c);
	return 0;
}

/* Changes first (added, removed, increased, decreased), the biggest time change
 * first within each, then group and name: deterministic. */
static int cmp_row(const void *x, const void *y)
{
	const struct isc_diff_row *a = x, *b = y;
	if (a->change != b->change) {
		return a->change < b->change ? -1 : 1;
	}
	double da = fabs(a->total_us - a->base_total_us), db = fabs(b->total_us - b->base_total_us);
	if (da != db) {
		return da > db ? -1 : 1;
	}
	if (a->group != b->group) {
		return a->group < b->group ? -1 : 1;
	}
	return strcmp(a->name, b->name);
}

int isc_diff_compute(const struct isc_snapshot *base, const struct isc_snapshot *cur,
		     double threshold_pct, struct isc_diff *out)
{
	memset(out, 0, sizeof(*out));
	out->threshold_pct = threshold_pct;
	size_t cap = 0;
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		cap += isc_diff_group(g) ? base->g[g].n + cur->g[g].n : 0;
	}
	out->rows = calloc(cap + 1, sizeof(*out->rows));
	if (out->rows == NULL) {
		return -ENOMEM;
	}
	double min_us = fmax(MIN_TIME_CHANGE_US, MIN_WINDOW_FRACTION * base->window_us);
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		if (isc_diff_group(g) && merge(out, g, &base->g[g], &cur->g[g], min_us) < 0) {
			isc_diff_finish(out);
			return -ENOMEM;
		}
	}
	isc_qsort(out->rows, out->n, sizeof(*out->rows), cmp_row);
	return 0;
}

void isc_diff_finish(struct isc_diff *d)
{
	free(d->rows);
	memset(d, 0, sizeof(*d));
}
