/* SPDX-License-Identifier: MIT */
#include "analyzer/base/json-dom.h"

#include <stdlib.h>
#include <string.h>

#include "analyzer/base/grow.h"

void isc_jdom_init(struct isc_jdom *d)
{
	memset(d, 0, sizeof(*d));
	d->pending_key = UINT32_MAX;
}

void isc_jdom_finish(struct isc_jdom *d)
{
	free(d->n);
	free(d->pool);
	memset(d, 0, sizeof(*d));
}

static uint32_t pool_add(struct isc_jdom *d, const char *s, size_t n)
{
	if (d->pool_len + n + 1 > ISC_JDOM_MAX_BYTES) {
		d->error = "too much text";
		return UINT32_MAX;
	}
	if (ISC_GROW(d->pool, d->pool_cap, d->pool_len + n + 1, 4096) < 0) {
		d->error = "out of memory";
		return UINT32_MAX;
	}
	uint32_t off = (uint32_t)d->pool_len;
	memcpy(d->pool + off, s, n);
	d->pool[off + n] = '\0';
	d->pool_len += n + 1;
	return off;
}

bool isc_jdom_key(struct isc_jdom *d, const char *k, size_t n)
{
	d->pending_key = pool_add(d, k, n);
	return d->pending_key != UINT32_MAX;
}

static struct isc_jnode *add(struct isc_jdom *d, enum isc_jtype t)
{
	if (d->len >= ISC_JDOM_MAX_NODES) {
		d->error = "too many values";
		return NULL;
	}
	if (ISC_GROW(d->n, d->cap, d->len + 1, 64) < 0) {
		d->error = "out of memory";
		return NULL;
	}
	uint32_t id = (uint32_t)d->len++;
	struct isc_jnode *node = &d->n[id];
	memset(node, 0, sizeof(*node));
	node->type = (uint8_t)t;
	node->key = d->pending_key;
	d->pending_key = UINT32_MAX;
	if (d->depth > 0) {
		struct isc_jnode *parent = &d->n[d->stack[d->depth - 1]];
		if (parent->last == 0) {
			parent->child = id + 1;
		} else {
			d->n[parent->last - 1].next = id + 1;
		}
		parent->last = id + 1;
	}
	return node;
}

bool isc_jdom_scalar(struct isc_jdom *d, enum isc_jtype t, int64_t i, double x, const char *s,
		     size_t n)
{
	uint32_t off = 0;
	if (t == ISC_J_STRING && (off = pool_add(d, s, n)) == UINT32_MAX) {
		return false;
	}
	struct isc_jnode *node = add(d, t);
	if (node == NULL) {
		return false;
	}
	if (t == ISC_J_BOOL) {
		node->v.b = i != 0;
	} else if (t == ISC_J_INT) {
		node->v.i = i;
	} else if (t == ISC_J_DOUBLE) {
		node->v.d = x;
	} else if (t == ISC_J_STRING) {
		node->v.s = off;
	}
	return true;
}

bool isc_jdom_open(struct isc_jdom *d, enum isc_jtype t)
{
	if (d->depth >= ISC_JDOM_MAX_DEPTH) {
		d->error = "nested too deeply";
		return false;
	}
	if (add(d, t) == NULL) {
		return false;
	}
	d->stack[d->depth++] = (uint32_t)d->len - 1;
	return true;
}

bool isc_jdom_close(struct isc_jdom *d)
{
	if (d->depth > 0) {
		d->depth--;
	}
	return d->depth == 0;
}

uint32_t isc_jdom_first(const struct isc_jdom *d, uint32_t node)
{
	if (node >= d->len || d->n[node].child == 0) {
		return UINT32_MAX;
	}
	return d->n[node].child - 1;
}

uint32_t isc_jdom_next(const struct isc_jdom *d, uint32_t node)
{
	if (node >= d->len || d->n[node].next == 0) {
		return UINT32_MAX;
	}
	return d->n[node].next - 1;
}

const char *isc_jdom_keyof(const struct isc_jdom *d, uint32_t node)
{
	if (node >= d->len || d->n[node].key == UINT32_MAX) {
		return "";
	}
	return d->pool + d->n[node].key;
}

uint32_t isc_jdom_get(const struct isc_jdom *d, uint32_t obj, const char *key)
{
	if (obj >= d->len || d->n[obj].type != ISC_J_OBJECT) {
		return UINT32_MAX;
	}
	for (uint32_t c = isc_jdom_first(d, obj); c != UINT32_MAX; c = isc_jdom_next(d, c)) {
		if (strcmp(isc_jdom_keyof(d, c), key) == 0) {
			return c;
		}
	}
	return UINT32_MAX;
}

int isc_jdom_type(const struct isc_jdom *d, uint32_t node)
{
	return node < d->len ? d->n[node].type : -1;
}

const char *isc_jdom_str(const struct isc_jdom *d, uint32_t node)
{
	if (node >= d->len || d->n[node].type != ISC_J_STRING) {
		return NULL;
	}
	return d->pool + d->n[node].v.s;
}

bool isc_jdom_int(const struct isc_jdom *d, uint32_t node, int64_t *out)
{
	if (node >= d->len || d->n[node].type != ISC_J_INT) {
		return false;
	}
	*out = d->n[node].v.i;
	return true;
}

bool isc_jdom_num(const struct isc_jdom *d, uint32_t node, double *out)
{
	if (node < d->len && d->n[node].type == ISC_J_INT) {
		*out = (double)d->n[node].v.i;
		return true;
	}
	if (node < d->len && d->n[node].type == ISC_J_DOUBLE) {
		*out = d->n[node].v.d;
		return true;
	}
	return false;
}

const char *isc_jtype_name(int t)
{
	static const char *const names[] = { "null",	 "a boolean", "an integer", "a number",
					     "a string", "an object", "an array" };
	return t >= 0 && t <= ISC_J_ARRAY ? names[t] : "missing";
}
