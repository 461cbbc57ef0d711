/* SPDX-License-Identifier: MIT */
#include "analyzer/base/interval.h"

#include <errno.h>
#include <stdlib.h>

#include "analyzer/base/grow.h"
#include "analyzer/base/sort.h"

void isc_ivec_free(struct isc_ivec *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

static int push(struct isc_ivec *l, int64_t s, int64_t e)
{
	if (ISC_GROW(l->v, l->cap, l->n + 1, 256) < 0) {
		return -ENOMEM;
	}
	l->v[l->n++] = (struct isc_iv){ s, e };
	return 0;
}

int isc_ivec_add(struct isc_ivec *l, int64_t s, int64_t e, int64_t lo, int64_t hi)
{
	s = s < lo ? lo : s;
	e = e > hi ? hi : e;
	return e > s ? push(l, s, e) : 0;
}

int isc_ivec_add_merge(struct isc_ivec *l, int64_t s, int64_t e)
{
	if (e <= s) {
		return 0;
	}
	if (l->n > 0 && s <= l->v[l->n - 1].e) {
		if (e > l->v[l->n - 1].e) {
			l->v[l->n - 1].e = e;
		}
		return 0;
	}
	return push(l, s, e);
}

static int sort_by_start(struct isc_ivec *l)
{
	uint32_t *idx = malloc(l->n * sizeof(*idx));
	struct isc_iv *out = malloc(l->n * sizeof(*out));
	if (idx == NULL || out == NULL) {
		free(idx);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++) {
		idx[i] = (uint32_t)i;
	}
	int r = isc_sort_by_key(&l->v[0].s, sizeof(struct isc_iv), idx, l->n);
	if (r == 0) {
		for (size_t i = 0; i < l->n; i++) {
			out[i] = l->v[idx[i]];
		}
		free(l->v);
		l->v = out;
		l->cap = l->n;
		out = NULL;
	}
	free(idx);
	free(out);
	return r;
}

int isc_ivec_union(struct isc_ivec *l)
{
	bool sorted = true;
	for (size_t i = 1; i < l->n && sorted; i++) {
		sorted = l->v[i - 1].s <= l->v[i].s;
	}
	if (!sorted) {
		int r = sort_by_start(l);
		if (r < 0) {
			return r;
		}
	}
	size_t w = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (w > 0 && l->v[i].s <= l->v[w - 1].e) {
			if (l->v[i].e > l->v[w - 1].e) {
				l->v[w - 1].e = l->v[i].e;
			}
		} else {
			l->v[w++] = l->v[i];
		}
	}
	l->n = w;
	return 0;
}

int64_t isc_ivec_total(const struct isc_ivec *l)
{
	int64_t sum = 0;
	for (size_t i = 0; i < l->n; i++) {
		sum += l->v[i].e - l->v[i].s;
	}
	return sum;
}

/* First interval whose end is after t. */
static size_t lower(const struct isc_ivec *u, int64_t t)
{
	size_t lo = 0, hi = u->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u->v[mid].e <= t) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

int64_t isc_ivec_overlap(const struct isc_ivec *u, int64_t s, int64_t e)
{
	int64_t sum = 0;
	for (size_t i = lower(u, s); i < u->n && u->v[i].s < e; i++) {
		int64_t a = u->v[i].s > s ? u->v[i].s : s;
		int64_t b = u->v[i].e < e ? u->v[i].e : e;
		sum += b > a ? b - a : 0;
	}
	return sum;
}

bool isc_ivec_contains(const struct isc_ivec *u, int64_t t)
{
	size_t i = lower(u, t);
	return i < u->n && u->v[i].s <= t;
}

int isc_ivec_subtract(struct isc_ivec *out, const struct isc_ivec *a, const struct isc_ivec *b)
{
	size_t j = 0;
	for (size_t i = 0; i < a->n; i++) {
		int64_t s = a->v[i].s, e = a->v[i].e;
		while (j < b->n && b->v[j].e <= s) {
			j++;
		}
		for (size_t k = j; k < b->n && b->v[k].s < e; k++) {
			if (b->v[k].s > s && push(out, s, b->v[k].s) < 0) {
				return -ENOMEM;
			}
			s = b->v[k].e > s ? b->v[k].e : s;
		}
		if (e > s && push(out, s, e) < 0) {
			return -ENOMEM;
		}
	}
	return 0;
}
