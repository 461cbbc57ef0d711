/* SPDX-License-Identifier: MIT */
/* A fixed string -> small integer map for JSON keys, built once per reader run. */
#ifndef ISC_KEYMAP_H
#define ISC_KEYMAP_H

#include <stdint.h>
#include <string.h>

#define ISC_KEYMAP_SLOTS 512

struct isc_keydef {
	const char *key;
	int id;
};

struct isc_keymap {
	const struct isc_keydef *slot[ISC_KEYMAP_SLOTS];
};

static inline unsigned isc_keymap_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	}
	return h & (ISC_KEYMAP_SLOTS - 1);
}

static inline void isc_keymap_build(struct isc_keymap *m, const struct isc_keydef *defs, size_t n)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		unsigned h = isc_keymap_hash(defs[i].key, strlen(defs[i].key));
		while (m->slot[h] != NULL) {
			h = (h + 1) & (ISC_KEYMAP_SLOTS - 1);
		}
		m->slot[h] = &defs[i];
	}
}

/* The id of the key, or -1. */
static inline int isc_keymap_get(const struct isc_keymap *m, const char *s, size_t n)
{
	unsigned h = isc_keymap_hash(s, n);
	while (m->slot[h] != NULL) {
		const char *k = m->slot[h]->key;
		if (strncmp(k, s, n) == 0 && k[n] == '\0') {
			return m->slot[h]->id;
		}
		h = (h + 1) & (ISC_KEYMAP_SLOTS - 1);
	}
	return -1;
}

#endif /* ISC_KEYMAP_H */
