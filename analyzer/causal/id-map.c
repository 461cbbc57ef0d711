/* SPDX-License-Identifier: MIT */
/* The id table of the event-pairing passes (id-map.h). */
#include "analyzer/causal/id-map.h"

#include <errno.h>
#include <stdlib.h>

#include "analyzer/base/hash.h"

static int grow(struct isc_id_map *m)
{
	size_t cap = m->mask ? (m->mask + 1) * 2 : 64;
	uint64_t *k = calloc(cap, sizeof(*k));
	uint32_t *v = malloc(cap * sizeof(*v));
	if (k == NULL || v == NULL) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; m->mask && i <= m->mask; i++) {
		if (m->key[i] != 0) {
			size_t j = isc_mix64(m->key[i]) & (cap - 1);
			while (k[j] != 0) {
				j = (j + 1) & (cap - 1);
			}
			k[j] = m->key[i];
			v[j] = m->val[i];
		}
	}
	free(m->key);
	free(m->val);
	m->key = k;
	m->val = v;
	m->mask = cap - 1;
	return 0;
}

uint32_t *isc_id_map_at(struct isc_id_map *m, uint64_t key, uint32_t absent)
{
	/* at most half full: probes stay short */
	if ((m->n + 1) * 2 > m->mask + 1 && grow(m) < 0) {
		return NULL;
	}
	size_t j = isc_mix64(key) & m->mask;
	while (m->key[j] != 0 && m->key[j] != key) {
		j = (j + 1) & m->mask;
	}
	if (m->key[j] == 0) {
		m->key[j] = key;
		m->val[j] = absent;
		m->n++;
	}
	return &m->val[j];
}

void isc_id_map_free(struct isc_id_map *m)
{
	free(m->key);
	free(m->val);
	m->key = NULL;
	m->val = NULL;
	m->mask = m->n = 0;
}
