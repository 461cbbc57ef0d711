/* SPDX-License-Identifier: MIT */
/*
 * The set of live handles (streams, events, graphs, executable graphs). A handle
 * is looked up here before it is dereferenced, so a destroyed or made-up handle
 * gets cudaErrorInvalidResourceHandle (or cudaErrorInvalidValue) instead of a
 * crash. Open addressing with tombstones; callers hold isc_sim_lock.
 */
#include <stdlib.h>

#include "tests/simgpu/runtime/sim.h"

#define TOMBSTONE ((const void *)1)

static const void **slots;
static size_t cap;
static size_t used; /* live entries and tombstones */

static size_t hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x ^ (x >> 29));
}

static bool insert(const void **table, size_t n, const void *h)
{
	size_t i = hash(h) & (n - 1);

	while (table[i] && table[i] != TOMBSTONE) {
		if (table[i] == h) {
			return true;
		}
		i = (i + 1) & (n - 1);
	}
	table[i] = h;
	return true;
}

static bool rehash(size_t new_cap)
{
	const void **table = calloc(new_cap, sizeof(*table));
	size_t i;

	if (!table) {
		return false;
	}
	used = 0;
	for (i = 0; i < cap; i++) {
		if (slots[i] && slots[i] != TOMBSTONE) {
			insert(table, new_cap, slots[i]);
			used++;
		}
	}
	free(slots);
	slots = table;
	cap = new_cap;
	return true;
}

bool isc_sim_handle_add(const void *h)
{
	if ((used + 1) * 2 > cap && !rehash(cap ? cap * 2 : 64)) {
		return false;
	}
	used++;
	return insert(slots, cap, h);
}

static size_t find(const void *h)
{
	size_t i;

	if (!cap || !h || h == TOMBSTONE) {
		return SIZE_MAX;
	}
	for (i = hash(h) & (cap - 1); slots[i]; i = (i + 1) & (cap - 1)) {
		if (slots[i] == h) {
			return i;
		}
	}
	return SIZE_MAX;
}

bool isc_sim_handle_live(const void *h)
{
	return find(h) != SIZE_MAX;
}

void isc_sim_handle_remove(const void *h)
{
	size_t i = find(h);

	if (i != SIZE_MAX) {
		slots[i] = TOMBSTONE;
	}
}
