/* SPDX-License-Identifier: MIT */
#include "analyzer/model/hosts.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/sort.h"
#include "analyzer/model/model.h"

/* Readings of the clock difference are taken at these many lags at most each way: the
 * traces of two hosts may start at different collectives. */
#define MAX_LAG 64
/* The smallest uncertainty stated: timestamps are recorded to the microsecond in Kineto
 * traces, and collectives end within about that of each other on an NVLink/IB fabric. */
#define MIN_UNCERTAINTY_NS 1000

struct colls {
	struct isc_coll *v;
	size_t n;
};

static int by_end(const void *a, const void *b)
{
	const struct isc_coll *x = a, *y = b;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int by_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* One input's NCCL kernels by end time. One stream's kernels of one collective: a rank
 * runs each collective once per communicator, so its sequence is the collective order. */
static int collect(const struct isc_trace *t, uint16_t input, struct colls *c)
{
	c->n = 0;
	c->v = NULL;
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		n += e->input == input && e->type == ISC_T_KERNEL &&
		     strstr(isc_trace_str(t, e->name), "nccl") != NULL;
	}
	if (n == 0) {
		return 0;
	}
	c->v = malloc(n * sizeof(*c->v));
	if (c->v == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->input == input && e->type == ISC_T_KERNEL &&
		    strstr(isc_trace_str(t, e->name), "nccl") != NULL) {
			c->v[c->n++] = (struct isc_coll){ isc_time_add(e->ts, e->dur), e->name };
		}
	}
	isc_qsort(c->v, c->n, sizeof(*c->v), by_end);
	return 0;
}

struct estimate {
	int64_t offset, spread;
	uint32_t matched;
	int64_t lag;
};

/* The readings ref[k + lag].end - other[k].end where the names agree; their median and
 * spread (p90 - p10, halved). False when fewer than two readings. */
static bool at_lag(const struct colls *ref, const struct colls *other, int64_t lag, int64_t *buf,
		   struct estimate *out)
{
	size_t n = 0;
	for (size_t k = 0; k < other->n; k++) {
		int64_t r = (int64_t)k + lag;
		if (r < 0 || r >= (int64_t)ref->n || ref->v[r].name != other->v[k].name) {
			continue;
		}
		buf[n++] = isc_time_bound(ref->v[r].end - other->v[k].end);
	}
	if (n < 2) {
		return false;
	}
	isc_qsort(buf, n, sizeof(*buf), by_i64);
	size_t lo = n / 10, hi = n - 1 - n / 10;
	out->offset = n % 2 ? buf[n / 2] : buf[n / 2 - 1] + (buf[n / 2] - buf[n / 2 - 1]) / 2;
	out->spread = (buf[hi] - buf[lo] + 1) / 2;
	out->matched = (uint32_t)n;
	out->lag = lag;
	return true;
}

/*
 * The lag whose readings agree best, among those that match at least half of the
 * shorter sequence. A job's collectives are periodic, so several lags agree about as
 * well (each is off by a multiple of the period): of those, the one nearest to what the
 * anchors said wins. The anchors are right to NTP's accuracy (about a millisecond), so
 * this holds while the collectives are further apart than twice that.
 */
static bool estimate(const struct colls *ref, const struct colls *other, struct estimate *best)
{
	size_t shorter = ref->n < other->n ? ref->n : other->n;
	if (shorter < 2) {
		return false;
	}
	int64_t *buf = malloc(other->n * sizeof(*buf));
	struct estimate *cand = malloc((2 * MAX_LAG + 1) * sizeof(*cand));
	size_t n = 0;
	int64_t tightest = INT64_MAX;
	for (int64_t lag = -MAX_LAG; buf != NULL && cand != NULL && lag <= MAX_LAG; lag++) {
		struct estimate e;
		if (at_lag(ref, other, lag, buf, &e) && e.matched * 2 >= shorter) {
			cand[n++] = e;
			tightest = e.spread < tightest ? e.spread : tightest;
		}
	}
	bool found = false;
	for (size_t i = 0; i < n; i++) {
		const struct estimate *e = &cand[i];
		if (e->spread - tightest > tightest + MIN_UNCERTAINTY_NS) {
			continue;
		}
		if (!found || llabs(e->offset) < llabs(best->offset)) {
			*best = *e;
			found = true;
		}
	}
	free(buf);
	free(cand);
	if (found && best->spread < MIN_UNCERTAINTY_NS) {
		best->spread = MIN_UNCERTAINTY_NS;
	}
	return found;
}

bool isc_hosts_estimate(const struct isc_coll *ref, size_t n_ref, const struct isc_coll *other,
			size_t n_other, struct isc_clock_estimate *out)
{
	struct colls r = { (struct isc_coll *)ref, n_ref },
		     o = { (struct isc_coll *)other, n_other };
	struct estimate e;
	if (!estimate(&r, &o, &e)) {
		return false;
	}
	*out = (struct isc_clock_estimate){ e.offset, e.spread, e.matched, e.lag };
	return true;
}

/* The input of host h with the most NCCL kernels (the rank to match), or the first. */
static int busiest(const struct isc_trace *t, uint32_t host, struct colls *out)
{
	int rc = 0;
	out->v = NULL;
	out->n = 0;
	int best = -1;
	for (size_t i = 0; i < t->n_inputs && rc == 0; i++) {
		if (t->inputs[i].hostname != host) {
			continue;
		}
		struct colls c;
		rc = collect(t, (uint16_t)i, &c);
		if (rc == 0 && (best < 0 || c.n > out->n)) {
			free(out->v);
			*out = c;
			best = (int)i;
		} else {
			free(c.v);
		}
	}
	return rc < 0 ? rc : best;
}

/* The anchor pair of the first anchored input of host h: realtime - monotonic. */
static bool anchor_of(const struct isc_trace *t, uint32_t host, int64_t *diff)
{
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_input *in = &t->inputs[i];
		if (in->hostname == host && in->has_anchor) {
			*diff = isc_time_bound(in->anchor_real_ns - in->anchor_mono_ns);
			return true;
		}
	}
	return false;
}

static int add_host(struct isc_hosts *h, uint32_t host, uint16_t input)
{
	for (size_t i = 0; i < h->n; i++) {
		if (h->v[i].host == host) {
			h->v[i].inputs++;
			return 0;
		}
	}
	struct isc_host_clock *v = realloc(h->v, (h->n + 1) * sizeof(*v));
	if (v == NULL) {
		return -ENOMEM;
	}
	h->v = v;
	memset(&v[h->n], 0, sizeof(v[0]));
	v[h->n].host = host;
	v[h->n].input = input;
	v[h->n].inputs = 1;
	v[h->n].reference = h->n == 0;
	h->n++;
	return 0;
}

/* Host c's shift onto the reference's clock: anchors, then collectives. */
static int align_one(struct isc_trace *t, struct isc_host_clock *ref, struct isc_host_clock *c,
		     const struct colls *rc)
{
	int64_t dr, dc;
	c->anchored = anchor_of(t, ref->host, &dr) && anchor_of(t, c->host, &dc);
	c->anchor_shift_ns = c->anchored ? isc_time_bound(dc - dr) : 0;
	struct colls cc;
	int best = busiest(t, c->host, &cc);
	if (best < 0) {
		return best == -1 ? 0 : best;
	}
	c->input = (uint16_t)best;
	c->ref_input = ref->input;
	for (size_t k = 0; k < cc.n; k++) {
		cc.v[k].end = isc_time_add(cc.v[k].end, c->anchor_shift_ns);
	}
	struct estimate e;
	if (estimate(rc, &cc, &e)) {
		c->estimated = true;
		c->offset_ns = e.offset;
		c->uncertainty_ns = e.spread;
		c->matched = e.matched;
		c->lag = e.lag;
	}
	free(cc.v);
	return 0;
}

int isc_hosts_align(struct isc_trace *t)
{
	if (t->hosts != NULL || t->n_inputs < 2) {
		return 0;
	}
	struct isc_hosts *h = calloc(1, sizeof(*h));
	int rc = h == NULL ? -ENOMEM : 0;
	for (size_t i = 0; i < t->n_inputs && rc == 0; i++) {
		rc = add_host(h, t->inputs[i].hostname, (uint16_t)i);
	}
	/* one host (or none named): one monotonic clock, nothing to align */
	bool several = rc == 0 && h->n >= 2 && h->v[0].host != 0;
	for (size_t i = 0; several && i < h->n; i++) {
		several = h->v[i].host != 0;
	}
	if (!several) {
		isc_hosts_destroy(h);
		return rc;
	}
	t->hosts = h;
	struct colls ref;
	int r = busiest(t, h->v[0].host, &ref);
	rc = r < -1 ? r : 0;
	if (r >= 0) {
		h->v[0].input = (uint16_t)r;
	}
	int64_t unused;
	h->v[0].anchored = anchor_of(t, h->v[0].host, &unused);
	for (size_t i = 1; i < h->n && rc == 0; i++) {
		rc = align_one(t, &h->v[0], &h->v[i], &ref);
		h->v[i].applied_ns = isc_time_add(h->v[i].anchor_shift_ns, h->v[i].offset_ns);
	}
	free(ref.v);
	for (size_t i = 0; i < t->n && rc == 0; i++) {
		struct isc_ev *e = &t->ev[i];
		for (size_t k = 1; k < h->n; k++) {
			if (t->inputs[e->input].hostname == h->v[k].host) {
				e->ts = isc_time_add(e->ts, h->v[k].applied_ns);
				break;
			}
		}
	}
	for (size_t i = 0; i < t->n_inputs && rc == 0; i++) {
		struct isc_input *in = &t->inputs[i];
		for (size_t k = 1; k < h->n; k++) {
			if (in->hostname == h->v[k].host) {
				in->meta_start_ns =
					isc_time_add(in->meta_start_ns,
						     in->meta_start_ns ? h->v[k].applied_ns : 0);
				in->meta_end_ns = isc_time_add(
					in->meta_end_ns, in->meta_end_ns ? h->v[k].applied_ns : 0);
			}
		}
	}
	return rc;
}

void isc_hosts_destroy(struct isc_hosts *h)
{
	if (h != NULL) {
		free(h->v);
		free(h);
	}
}
