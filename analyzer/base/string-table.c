/* SPDX-License-Identifier: MIT */
#include "analyzer/base/string-table.h"

#include <stdlib.h>
#include <string.h>

#include "analyzer/base/grow.h"

static uint64_t hash_bytes(const char *s, size_t n)
{
	/* FNV-1a: names are short and this runs once per name field read. */
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

int isc_strtab_init(struct isc_strtab *s)
{
	memset(s, 0, sizeof(*s));
	s->mask = 1023;
	s->slots = isc_mem_calloc(s->mask + 1, sizeof(*s->slots));
	if (s->slots == NULL) {
		return -1;
	}
	return isc_strtab_intern(s, "", 0) == 0 ? 0 : -1;
}

void isc_strtab_finish(struct isc_strtab *s)
{
	isc_mem_free(s->pool);
	isc_mem_free(s->off);
	isc_mem_free(s->len);
	isc_mem_free(s->slots);
	memset(s, 0, sizeof(*s));
}

static int grow_slots(struct isc_strtab *s)
{
	size_t cap = (s->mask + 1) * 2;
	uint32_t *slots = isc_mem_calloc(cap, sizeof(*slots));
	if (slots == NULL) {
		return -1;
	}
	for (size_t id = 0; id < s->n; id++) {
		size_t i = hash_bytes(s->pool + s->off[id], s->len[id]) & (cap - 1);
		while (slots[i] != 0) {
			i = (i + 1) & (cap - 1);
		}
		slots[i] = (uint32_t)id + 1;
	}
	isc_mem_free(s->slots);
	s->slots = slots;
	s->mask = cap - 1;
	return 0;
}

static int reserve(struct isc_strtab *s, size_t n)
{
	if (s->pool_len + n + 1 > s->pool_cap) {
		size_t cap = isc_grow_cap(s->pool_cap, s->pool_len + n + 1, 65536);
		if (cap > UINT32_MAX || ISC_RESIZE(s->pool, cap) < 0) {
			return -1;
		}
		s->pool_cap = cap;
	}
	if (s->n == s->cap) {
		/* Two arrays of one capacity. */
		size_t cap = isc_grow_cap(s->cap, s->n + 1, 1024);
		if (ISC_RESIZE(s->off, cap) < 0 || ISC_RESIZE(s->len, cap) < 0) {
			return -1;
		}
		s->cap = cap;
	}
	return 0;
}

uint32_t isc_strtab_find(const struct isc_strtab *s, const char *str, size_t n)
{
	size_t i = hash_bytes(str, n) & s->mask;
	while (s->slots[i] != 0) {
		uint32_t id = s->slots[i] - 1;
		if (s->len[id] == n && memcmp(s->pool + s->off[id], str, n) == 0) {
			return id;
		}
		i = (i + 1) & s->mask;
	}
	return UINT32_MAX;
}

uint32_t isc_strtab_intern(struct isc_strtab *s, const char *str, size_t n)
{
	size_t i = hash_bytes(str, n) & s->mask;
	while (s->slots[i] != 0) {
		uint32_t id = s->slots[i] - 1;
		if (s->len[id] == n && memcmp(s->pool + s->off[id], str, n) == 0) {
			return id;
		}
		i = (i + 1) & s->mask;
	}
	if (n > UINT32_MAX / 2 || reserve(s, n) < 0) {
		return UINT32_MAX;
	}
	uint32_t id = (uint32_t)s->n++;
	s->off[id] = (uint32_t)s->pool_len;
	s->len[id] = (uint32_t)n;
	memcpy(s->pool + s->pool_len, str, n);
	s->pool[s->pool_len + n] = '\0';
	s->pool_len += n + 1;
	s->slots[i] = id + 1;
	/* Keep the load under one half so probes stay short. */
	if (s->n * 2 > s->mask + 1 && grow_slots(s) < 0) {
		return UINT32_MAX;
	}
	return id;
}

int isc_strtab_repoint(struct isc_strtab *s, uint32_t id, const char *str, size_t n)
{
	if (id >= s->n || n > UINT32_MAX / 2 || reserve(s, n) < 0) {
		return -1;
	}
	s->off[id] = (uint32_t)s->pool_len;
	s->len[id] = (uint32_t)n;
	memcpy(s->pool + s->pool_len, str, n);
	s->pool[s->pool_len + n] = '\0';
	s->pool_len += n + 1;
	return 0;
}
