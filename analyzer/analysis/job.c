/* SPDX-License-Identifier: MIT */
/* A job's ranks compared from their summaries (job.h). */
#include "analyzer/analysis/job.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/base/sort.h"
#include "analyzer/model/hosts.h"

void isc_job_init(struct isc_job *j)
{
	memset(j, 0, sizeof(*j));
	j->slowest = j->straggler = j->verdict = -1;
}

void isc_rank_sum_free(struct isc_rank_sum *s)
{
	free(s->colls);
	s->colls = NULL;
	s->n_colls = 0;
}

void isc_job_destroy(struct isc_job *j)
{
	for (size_t i = 0; i < j->n; i++) {
		isc_rank_sum_free(&j->v[i]);
	}
	free(j->v);
	free(j->failed);
	free(j->hosts);
	isc_job_init(j);
}

uint32_t isc_job_name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s != '\0'; s++) {
		h = (h ^ (unsigned char)*s) * 16777619u;
	}
	return h;
}

static int by_end(const void *a, const void *b)
{
	const struct isc_job_coll *x = a, *y = b;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int by_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The rank's NCCL kernels (as model/hosts.c collects them), the first ISC_JOB_COLLS by
 * end. */
static int collectives(const struct isc_trace *t, struct isc_rank_sum *s)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		n += e->type == ISC_T_KERNEL && strstr(isc_trace_str(t, e->name), "nccl") != NULL;
	}
	if (n == 0) {
		return 0;
	}
	s->colls = malloc(n * sizeof(*s->colls));
	if (s->colls == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		const char *name = isc_trace_str(t, e->name);
		if (e->type == ISC_T_KERNEL && strstr(name, "nccl") != NULL) {
			s->colls[s->n_colls++] = (struct isc_job_coll){ e->ts, e->ts + e->dur,
									isc_job_name_hash(name) };
		}
	}
	isc_qsort(s->colls, s->n_colls, sizeof(*s->colls), by_end);
	if (s->n_colls > ISC_JOB_COLLS) {
		s->n_colls = ISC_JOB_COLLS;
		struct isc_job_coll *v = realloc(s->colls, ISC_JOB_COLLS * sizeof(*v));
		s->colls = v != NULL ? v : s->colls;
	}
	return 0;
}

int isc_rank_sum_from(const struct isc_trace *t, const struct isc_analysis *a, const char *source,
		      struct isc_rank_sum *s)
{
	memset(s, 0, sizeof(*s));
	const struct isc_input *in = &t->inputs[0];
	s->given_rank = s->r.rank = in->rank;
	snprintf(s->source, sizeof(s->source), "%s", source);
	snprintf(s->host, sizeof(s->host), "%s",
		 in->hostname ? isc_trace_str(t, in->hostname) : "");
	s->pid = in->pid;
	for (size_t i = 0; i < t->n_inputs; i++) {
		s->events += t->inputs[i].events;
	}
	s->has_anchor = in->has_anchor;
	s->anchor_mono_ns = in->anchor_mono_ns;
	s->anchor_real_ns = in->anchor_real_ns;
	struct isc_rank *r = &s->r;
	r->start = a->window.start;
	r->end = a->window.end;
	memcpy(r->cat_ns, a->cat_ns, sizeof(r->cat_ns));
	r->bound = a->verdict.type;
	snprintf(r->cause, sizeof(r->cause), "%s", a->verdict.cause);
	/* Rounded as the JSON result holds them, so that a job analysed from its traces and
	 * one merged from per-rank results are the same. */
	r->confidence = round(a->verdict.confidence * 1000.0) / 1000.0;
	r->steps = a->extras->steps.n;
	r->step_mean_ns = round(a->extras->steps.step.mean);
	int rc = isc_rank_overlap(t, a, r);
	rc = rc == 0 ? collectives(t, s) : rc;
	if (rc != 0) {
		isc_rank_sum_free(s);
	}
	return rc;
}

int isc_job_add(struct isc_job *j, struct isc_rank_sum *s)
{
	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 16;
		struct isc_rank_sum *v = realloc(j->v, cap * sizeof(*v));
		if (v == NULL) {
			return -ENOMEM;
		}
		j->v = v;
		j->cap = cap;
	}
	j->v[j->n++] = *s;
	s->colls = NULL;
	s->n_colls = 0;
	return 0;
}

int isc_job_add_failed(struct isc_job *j, const char *source, const char *why)
{
	if (j->n_failed == j->cap_failed) {
		size_t cap = j->cap_failed ? j->cap_failed * 2 : 8;
		struct isc_job_fail *v = realloc(j->failed, cap * sizeof(*v));
		if (v == NULL) {
			return -ENOMEM;
		}
		j->failed = v;
		j->cap_failed = cap;
	}
	struct isc_job_fail *f = &j->failed[j->n_failed++];
	snprintf(f->source, sizeof(f->source), "%s", source);
	snprintf(f->why, sizeof(f->why), "%s", why);
	return 0;
}

static struct isc_job_host *host_of(struct isc_job *j, const char *name)
{
	for (size_t i = 0; i < j->n_hosts; i++) {
		if (strcmp(j->hosts[i].name, name) == 0) {
			return &j->hosts[i];
		}
	}
	return NULL;
}

/* The rank of host h with the most collectives, shifted by shift, as hosts.c matches. */
static int busiest(const struct isc_job *j, const char *host, int64_t shift, struct isc_coll **out,
		   size_t *n)
{
	const struct isc_rank_sum *best = NULL;
	for (size_t i = 0; i < j->n; i++) {
		const struct isc_rank_sum *s = &j->v[i];
		if (strcmp(s->host, host) == 0 && (best == NULL || s->n_colls > best->n_colls)) {
			best = s;
		}
	}
	*out = NULL;
	*n = 0;
	if (best == NULL || best->n_colls == 0) {
		return 0;
	}
	*out = malloc(best->n_colls * sizeof(**out));
	if (*out == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < best->n_colls; k++) {
		(*out)[k] = (struct isc_coll){ best->colls[k].end + shift, best->colls[k].name };
	}
	*n = best->n_colls;
	return 0;
}

static const struct isc_rank_sum *anchored_rank(const struct isc_job *j, const char *host)
{
	for (size_t i = 0; i < j->n; i++) {
		if (strcmp(j->v[i].host, host) == 0 && j->v[i].has_anchor) {
			return &j->v[i];
		}
	}
	return NULL;
}

/* Several named hosts: each one's shift onto the first rank's host clock (hosts.h). */
static int align(struct isc_job *j)
{
	j->hosts = calloc(j->n + 1, sizeof(*j->hosts));
	if (j->hosts == NULL) {
		return -ENOMEM;
	}
	bool named = true;
	for (size_t i = 0; i < j->n; i++) {
		struct isc_job_host *h = host_of(j, j->v[i].host);
		if (h == NULL) {
			h = &j->hosts[j->n_hosts++];
			snprintf(h->name, sizeof(h->name), "%s", j->v[i].host);
			h->reference = j->n_hosts == 1;
		}
		h->ranks++;
		named &= j->v[i].host[0] != '\0';
	}
	if (j->n_hosts < 2 || !named) {
		return 0;
	}
	struct isc_coll *ref = NULL, *other = NULL;
	size_t n_ref = 0, n_other = 0;
	const struct isc_rank_sum *ra = anchored_rank(j, j->hosts[0].name);
	j->hosts[0].anchored = ra != NULL;
	int rc = busiest(j, j->hosts[0].name, 0, &ref, &n_ref);
	for (size_t i = 1; i < j->n_hosts && rc == 0; i++) {
		struct isc_job_host *h = &j->hosts[i];
		const struct isc_rank_sum *ha = anchored_rank(j, h->name);
		h->anchored = ra != NULL && ha != NULL;
		h->anchor_shift_ns = h->anchored ? (ha->anchor_real_ns - ha->anchor_mono_ns) -
							   (ra->anchor_real_ns - ra->anchor_mono_ns)
						 : 0;
		rc = busiest(j, h->name, h->anchor_shift_ns, &other, &n_other);
		struct isc_clock_estimate e;
		if (rc == 0 && n_ref > 0 && isc_hosts_estimate(ref, n_ref, other, n_other, &e)) {
			h->estimated = true;
			h->offset_ns = e.offset_ns;
			h->uncertainty_ns = e.uncertainty_ns;
			h->matched = e.matched;
		}
		h->applied_ns = h->anchor_shift_ns + h->offset_ns;
		free(other);
		other = NULL;
	}
	free(ref);
	return rc;
}

static int64_t shift_of(const struct isc_job *j, const struct isc_rank_sum *s)
{
	for (size_t i = 1; i < j->n_hosts; i++) {
		if (strcmp(j->hosts[i].name, s->host) == 0) {
			return j->hosts[i].applied_ns;
		}
	}
	return 0;
}

static void spread(struct isc_job *j, double *buf)
{
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		struct isc_job_spread *sp = &j->spread[c];
		for (size_t i = 0; i < j->n; i++) {
			int64_t total = 0;
			for (int k = 0; k < ISC_CAT__COUNT; k++) {
				total += j->v[i].r.cat_ns[k];
			}
			buf[i] = total > 0 ? (double)j->v[i].r.cat_ns[c] / (double)total : 0;
			if (i == 0 || buf[i] > sp->max) {
				sp->max = buf[i];
				sp->max_rank = j->v[i].r.rank;
			}
		}
		isc_qsort(buf, j->n, sizeof(*buf), by_double);
		sp->min = buf[0];
		sp->max = buf[j->n - 1];
		sp->median = j->n % 2 ? buf[j->n / 2] : (buf[j->n / 2 - 1] + buf[j->n / 2]) / 2;
	}
}

/* Index of the collective of ref (sorted by end) nearest to end, or -1 beyond tol. */
static long nearest(const struct isc_job_coll *ref, size_t n, int64_t shift, int64_t end,
		    int64_t tol)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ref[mid].end + shift < end) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	long best = -1;
	int64_t d = tol;
	for (size_t k = lo > 0 ? lo - 1 : 0; k < n && k <= lo; k++) {
		int64_t dk = llabs(ref[k].end + shift - end);
		if (dk <= d) {
			d = dk;
			best = (long)k;
		}
	}
	return best;
}

/*
 * The straggler: a collective ends together on every rank, so the rank whose kernel
 * starts last is the one the others waited for. Each rank's collectives are matched to
 * those of the rank with the most (the reference) by their end on the aligned clock,
 * within half the reference's median gap between collectives; per rank, the mean delay
 * of its arrival behind the first rank's.
 */
static int straggler(struct isc_job *j)
{
	size_t ref = 0;
	for (size_t i = 1; i < j->n; i++) {
		ref = j->v[i].n_colls > j->v[ref].n_colls ? i : ref;
	}
	const struct isc_rank_sum *R = &j->v[ref];
	size_t nr = R->n_colls;
	if (nr == 0) {
		return 0;
	}
	int64_t *arr = malloc(j->n * nr * sizeof(*arr));
	int64_t *gaps = malloc(nr * sizeof(*gaps));
	double *late = calloc(j->n, sizeof(*late));
	uint32_t *n_late = calloc(j->n, sizeof(*n_late)), *last = calloc(j->n, sizeof(*last));
	int rc = arr && gaps && late && n_late && last ? 0 : -ENOMEM;
	int64_t tol = INT64_MAX / 4;
	if (rc == 0 && nr >= 2) {
		for (size_t k = 1; k < nr; k++) {
			gaps[k - 1] = R->colls[k].end - R->colls[k - 1].end;
		}
		isc_qsort(gaps, nr - 1, sizeof(*gaps), by_i64);
		tol = gaps[(nr - 1) / 2] / 2;
	}
	int64_t rshift = shift_of(j, R);
	for (size_t q = 0; q < j->n && rc == 0; q++) {
		const struct isc_rank_sum *s = &j->v[q];
		int64_t sh = shift_of(j, s);
		for (size_t k = 0; k < nr; k++) {
			arr[q * nr + k] = INT64_MIN;
		}
		for (size_t c = 0; c < s->n_colls; c++) {
			long k = nearest(R->colls, nr, rshift, s->colls[c].end + sh, tol);
			if (k >= 0 && R->colls[k].name == s->colls[c].name &&
			    arr[q * nr + (size_t)k] == INT64_MIN) {
				arr[q * nr + (size_t)k] = s->colls[c].start + sh;
			}
		}
	}
	size_t n_skew = 0;
	for (size_t k = 0; k < nr && rc == 0; k++) {
		int64_t first = INT64_MAX, lastv = INT64_MIN;
		size_t seen = 0;
		for (size_t q = 0; q < j->n; q++) {
			int64_t v = arr[q * nr + k];
			if (v != INT64_MIN) {
				seen++;
				first = v < first ? v : first;
				lastv = v > lastv ? v : lastv;
			}
		}
		if (seen < 2) {
			continue;
		}
		gaps[n_skew++] = lastv - first;
		for (size_t q = 0; q < j->n; q++) {
			int64_t v = arr[q * nr + k];
			if (v != INT64_MIN) {
				late[q] += (double)(v - first);
				n_late[q]++;
				last[q] += v == lastv;
			}
		}
	}
	if (rc == 0 && n_skew > 0) {
		j->compared = (uint32_t)n_skew;
		isc_qsort(gaps, n_skew, sizeof(*gaps), by_i64);
		j->skew_ns =
			n_skew % 2 ? (double)gaps[n_skew / 2]
				   : ((double)gaps[n_skew / 2 - 1] + (double)gaps[n_skew / 2]) / 2;
		double worst = -1;
		for (size_t q = 0; q < j->n; q++) {
			double m = n_late[q] ? late[q] / n_late[q] : -1;
			if (m > worst) {
				worst = m;
				j->straggler = (int)q;
			}
		}
		j->straggler_late_ns = worst;
		j->straggler_last = last[j->straggler];
	}
	free(arr);
	free(gaps);
	free(late);
	free(n_late);
	free(last);
	return rc;
}

int isc_job_finish(struct isc_job *j)
{
	for (size_t i = 0; i < j->n; i++) {
		j->v[i].r.rank = j->v[i].given_rank >= 0 ? j->v[i].given_rank : (int)i;
	}
	int rc = align(j);
	if (rc != 0 || j->n == 0) {
		return rc;
	}
	int64_t first = INT64_MAX;
	for (size_t i = 0; i < j->n; i++) {
		int64_t s = j->v[i].r.start + shift_of(j, &j->v[i]);
		first = s < first ? s : first;
	}
	for (size_t i = 0; i < j->n; i++) {
		j->v[i].r.offset = j->v[i].r.start + shift_of(j, &j->v[i]) - first;
	}
	double *buf = malloc(j->n * sizeof(*buf));
	if (buf == NULL) {
		return -ENOMEM;
	}
	spread(j, buf);
	free(buf);
	if (j->n >= 2) {
		struct isc_rank *rv = malloc(j->n * sizeof(*rv));
		if (rv == NULL) {
			return -ENOMEM;
		}
		for (size_t i = 0; i < j->n; i++) {
			rv[i] = j->v[i].r;
		}
		j->slowest = (int)isc_ranks_slowest(rv, j->n, j->slowest_why);
		free(rv);
	}
	rc = straggler(j);
	j->verdict = j->straggler >= 0 ? j->straggler : j->n == 1 ? 0 : j->slowest;
	return rc;
}
