/* SPDX-License-Identifier: MIT */
/* The two-key index map (wmap.h). */
#include "analyzer/base/wmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/hash.h"

static size_t home(uint64_t a, uint64_t b, size_t mask)
{
	return isc_mix64(a ^ isc_mix64(b)) & mask;
}

static int wmap_grow(struct isc_wmap *m)
{
	size_t cap = m->mask ? (m->mask + 1) * 2 : 64;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	uint64_t *k1 = realloc(m->k1, cap / 2 * sizeof(*k1));
	if (k1 != NULL) {
		m->k1 = k1;
	}
	uint64_t *k2 = realloc(m->k2, cap / 2 * sizeof(*k2));
	if (k2 != NULL) {
		m->k2 = k2;
	}
	if (slot == NULL || k1 == NULL || k2 == NULL) {
		free(slot);
		return -ENOMEM;
	}
	for (size_t k = 0; k < m->n; k++) {
		size_t i = home(m->k1[k], m->k2[k], cap - 1);
		while (slot[i] != 0) {
			i = (i + 1) & (cap - 1);
		}
		slot[i] = (uint32_t)k + 1;
	}
	free(m->slot);
	m->slot = slot;
	m->mask = cap - 1;
	return 0;
}

size_t isc_wmap_get(struct isc_wmap *m, uint64_t a, uint64_t b, bool *added)
{
	*added = false;
	if (m->n * 2 >= m->mask && wmap_grow(m) < 0) {
		return SIZE_MAX;
	}
	size_t i = home(a, b, m->mask);
	for (; m->slot[i] != 0; i = (i + 1) & m->mask) {
		size_t k = m->slot[i] - 1;
		if (m->k1[k] == a && m->k2[k] == b) {
			return k;
		}
	}
	m->k1[m->n] = a;
	m->k2[m->n] = b;
	m->slot[i] = (uint32_t)++m->n;
	*added = true;
	return m->n - 1;
}

size_t isc_wmap_find(const struct isc_wmap *m, uint64_t a, uint64_t b)
{
	if (m->slot == NULL) {
		return SIZE_MAX;
	}
	for (size_t i = home(a, b, m->mask); m->slot[i] != 0; i = (i + 1) & m->mask) {
		size_t k = m->slot[i] - 1;
		if (m->k1[k] == a && m->k2[k] == b) {
			return k;
		}
	}
	return SIZE_MAX;
}

void isc_wmap_free(struct isc_wmap *m)
{
	free(m->k1);
	free(m->k2);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}
