/* SPDX-License-Identifier: MIT */
/*
 * A fixed string -> small integer map for JSON keys, built once per reader run. Lookups
 * run for every key of every event, so the hash reads three bytes and the length, and a
 * candidate is confirmed by length and memcmp.
 */
#ifndef ISC_KEYMAP_H
#define ISC_KEYMAP_H

#include <stdint.h>
#include <string.h>

#define ISC_KEYMAP_SLOTS 1024

struct isc_keydef {
	const char *key;
	int id;
};

struct isc_keyslot {
	const char *key;
	uint32_t len;
	int id;
};

struct isc_keymap {
	struct isc_keyslot slot[ISC_KEYMAP_SLOTS];
};

static inline unsigned isc_keymap_hash(const char *s, size_t n)
{
	if (n == 0) {
		return 0;
	}
	uint32_t h = (uint32_t)n * 2654435761u;
	h ^= (unsigned char)s[0] * 40503u;
	h ^= (unsigned char)s[n - 1] * 9973u;
	h ^= (unsigned char)s[n / 2] * 331u;
	return (h ^ (h >> 13)) & (ISC_KEYMAP_SLOTS - 1);
}

static inline void isc_keymap_build(struct isc_keymap *m, const struct isc_keydef *defs, size_t n)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(defs[i].key);
		unsigned h = isc_keymap_hash(defs[i].key, len);
		while (m->slot[h].key != NULL) {
			h = (h + 1) & (ISC_KEYMAP_SLOTS - 1);
		}
		m->slot[h] = (struct isc_keyslot){ defs[i].key, (uint32_t)len, defs[i].id };
	}
}

/* The id of the key, or -1. */
static inline int isc_keymap_get(const struct isc_keymap *m, const char *s, size_t n)
{
	unsigned h = isc_keymap_hash(s, n);
	while (m->slot[h].key != NULL) {
		const struct isc_keyslot *k = &m->slot[h];
		if (k->len == n && memcmp(k->key, s, n) == 0) {
			return k->id;
		}
		h = (h + 1) & (ISC_KEYMAP_SLOTS - 1);
	}
	return -1;
}

#endif /* ISC_KEYMAP_H */
