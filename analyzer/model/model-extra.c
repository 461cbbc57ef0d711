/* SPDX-License-Identifier: MIT */
#include "analyzer/model/model-extra.h"
#include "analyzer/base/sort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct isc_trace_extra *extra(struct isc_trace *t)
{
	if (t->extra == NULL) {
		t->extra = calloc(1, sizeof(*t->extra));
	}
	return t->extra;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap) {
		return 0;
	}
	size_t c = *cap ? *cap * 2 : 256;
	void *p = realloc(*v, c * size);
	if (p == NULL) {
		return -ENOMEM;
	}
	*v = p;
	*cap = c;
	return 0;
}

static bool same_shape(const struct isc_kernel_geom *a, const struct isc_kernel_geom *b)
{
	return memcmp(a->grid, b->grid, sizeof(a->grid)) == 0 &&
	       memcmp(a->block, b->block, sizeof(a->block)) == 0 && a->regs == b->regs &&
	       a->smem == b->smem;
}

static size_t shape_hash(const struct isc_kernel_geom *g)
{
	uint64_t h = UINT64_C(1469598103934665603);
	const int32_t v[8] = { g->grid[0],  g->grid[1],	 g->grid[2], g->block[0],
			       g->block[1], g->block[2], g->regs,    g->smem };
	for (int i = 0; i < 8; i++) {
		h = (h ^ (uint32_t)v[i]) * UINT64_C(1099511628211);
	}
	return (size_t)(h ^ h >> 29);
}

static int rehash(struct isc_trace_extra *x)
{
	size_t cap = x->mask ? (x->mask + 1) * 2 : 256;
	uint32_t *s = calloc(cap, sizeof(*s));
	if (s == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < x->n_shape; i++) {
		size_t j = shape_hash(&x->shape[i]) & (cap - 1);
		while (s[j] != 0) {
			j = (j + 1) & (cap - 1);
		}
		s[j] = (uint32_t)i + 1;
	}
	free(x->slot);
	x->slot = s;
	x->mask = cap - 1;
	return 0;
}

/* 1 + the index of g's shape, added when new; ISC_GEOM_OVERFLOW when the table is full;
 * 0 on -ENOMEM. */
static uint16_t shape_id(struct isc_trace_extra *x, const struct isc_kernel_geom *g)
{
	if ((x->n_shape + 1) * 2 > x->mask && rehash(x) < 0) {
		return 0;
	}
	size_t j = shape_hash(g) & x->mask;
	for (; x->slot[j] != 0; j = (j + 1) & x->mask) {
		if (same_shape(&x->shape[x->slot[j] - 1], g)) {
			return (uint16_t)x->slot[j];
		}
	}
	if (x->n_shape + 1 >= ISC_GEOM_OVERFLOW) {
		return ISC_GEOM_OVERFLOW;
	}
	if (grow((void **)&x->shape, &x->cap_shape, x->n_shape, sizeof(*g)) < 0) {
		return 0;
	}
	x->shape[x->n_shape] =
		(struct isc_kernel_geom){ .grid = { g->grid[0], g->grid[1], g->grid[2] },
					  .block = { g->block[0], g->block[1], g->block[2] },
					  .regs = g->regs,
					  .smem = g->smem };
	x->slot[j] = (uint32_t)++x->n_shape;
	return (uint16_t)x->n_shape;
}

int isc_trace_add_geom(struct isc_trace *t, struct isc_ev *k, const struct isc_kernel_geom *g)
{
	struct isc_trace_extra *x = extra(t);
	uint16_t id = x != NULL ? shape_id(x, g) : 0;
	if (id == 0) {
		return -ENOMEM;
	}
	k->geom = id;
	if (id != ISC_GEOM_OVERFLOW) {
		return 0;
	}
	if (grow((void **)&x->geom, &x->cap_geom, x->n_geom, sizeof(*g)) < 0) {
		return -ENOMEM;
	}
	struct isc_kernel_geom *o = &x->geom[x->n_geom++];
	*o = *g;
	o->ts = k->ts;
	o->corr = k->corr;
	o->stream = k->stream;
	o->input = k->input;
	return 0;
}

int isc_trace_add_annot(struct isc_trace *t, const struct isc_gpu_annot *a)
{
	struct isc_trace_extra *x = extra(t);
	if (x == NULL || grow((void **)&x->annot, &x->cap_annot, x->n_annot, sizeof(*a)) < 0) {
		return -ENOMEM;
	}
	x->annot[x->n_annot++] = *a;
	return 0;
}

static int key_cmp(uint16_t ia, uint64_t ca, int64_t ta, int32_t sa,
		   const struct isc_kernel_geom *b)
{
	if (ia != b->input) {
		return ia < b->input ? -1 : 1;
	}
	if (ca != b->corr) {
		return ca < b->corr ? -1 : 1;
	}
	if (ta != b->ts) {
		return ta < b->ts ? -1 : 1;
	}
	return sa < b->stream ? -1 : sa > b->stream;
}

static int geom_cmp(const void *pa, const void *pb)
{
	const struct isc_kernel_geom *a = pa;
	return key_cmp(a->input, a->corr, a->ts, a->stream, pb);
}

void isc_trace_extra_finalize(struct isc_trace *t)
{
	if (t->extra != NULL && t->extra->n_geom > 1) {
		isc_qsort(t->extra->geom, t->extra->n_geom, sizeof(*t->extra->geom), geom_cmp);
	}
}

const struct isc_kernel_geom *isc_trace_geom_of(const struct isc_trace *t, const struct isc_ev *k)
{
	const struct isc_trace_extra *x = t->extra;
	if (x == NULL || k->type != ISC_T_KERNEL || k->geom == 0) {
		return NULL;
	}
	if (k->geom != ISC_GEOM_OVERFLOW) {
		return k->geom <= x->n_shape ? &x->shape[k->geom - 1] : NULL;
	}
	size_t lo = 0, hi = x->n_geom;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(k->input, k->corr, k->ts, k->stream, &x->geom[mid]);
		if (c == 0) {
			return &x->geom[mid];
		}
		if (c < 0) {
			hi = mid;
		} else {
			lo = mid + 1;
		}
	}
	return NULL;
}

void isc_trace_extra_destroy(struct isc_trace_extra *x)
{
	if (x == NULL) {
		return;
	}
	free(x->shape);
	free(x->slot);
	free(x->geom);
	free(x->annot);
	free(x);
}

static void put(struct isc_jcap *c, const char *s, size_t n)
{
	if (c->failed) {
		return;
	}
	if (c->n + n + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 256;
		while (cap < c->n + n + 1) {
			cap *= 2;
		}
		char *p = realloc(c->s, cap);
		if (p == NULL) {
			c->failed = true;
			return;
		}
		c->s = p;
		c->cap = cap;
	}
	memcpy(c->s + c->n, s, n);
	c->n += n;
	c->s[c->n] = '\0';
}

/* The separator before a value or a key at the current level. */
static void sep(struct isc_jcap *c)
{
	if (c->after_key) {
		c->after_key = false;
		return;
	}
	if (c->need_comma) {
		put(c, ",", 1);
	}
}

static void put_string(struct isc_jcap *c, const char *s, size_t n)
{
	put(c, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		char esc[8];
		if (ch == '"' || ch == '\\') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			put(c, esc, 2);
		} else if (ch < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", ch);
			put(c, esc, 6);
		} else {
			put(c, (const char *)&s[i], 1);
		}
	}
	put(c, "\"", 1);
}

void isc_jcap_open(struct isc_jcap *c, bool is_map)
{
	sep(c);
	put(c, is_map ? "{" : "[", 1);
	if (c->depth < 64) {
		c->maps = is_map ? c->maps | (UINT64_C(1) << c->depth)
				 : c->maps & ~(UINT64_C(1) << c->depth);
	} else {
		c->failed = true; /* deeper than any metadata Kineto writes */
	}
	c->depth++;
	c->need_comma = false;
}

bool isc_jcap_close(struct isc_jcap *c)
{
	c->depth--;
	bool map = c->depth >= 0 && c->depth < 64 && (c->maps >> c->depth) & 1;
	put(c, map ? "}" : "]", 1);
	c->need_comma = true;
	return c->depth <= 0;
}

void isc_jcap_key(struct isc_jcap *c, const char *s, size_t n)
{
	sep(c);
	put_string(c, s, n);
	put(c, ":", 1);
	c->after_key = true;
	c->need_comma = true;
}

void isc_jcap_scalar(struct isc_jcap *c, bool is_string, const char *s, size_t n)
{
	sep(c);
	if (is_string) {
		put_string(c, s, n);
	} else {
		put(c, s, n);
	}
	c->need_comma = true;
}

char *isc_jcap_take(struct isc_jcap *c)
{
	char *s = c->failed ? NULL : c->s;
	if (c->failed) {
		free(c->s);
	}
	memset(c, 0, sizeof(*c));
	return s;
}
