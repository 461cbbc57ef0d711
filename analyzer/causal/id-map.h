/* SPDX-License-Identifier: MIT */
/*
 * A small open-addressing table from 64-bit ids (streams, CUDA events, each keyed with
 * its input) to 32-bit values (graph nodes), for the passes that pair cross-stream
 * event calls (graph-events.c, graph-events-kineto.c). Key 0 is never stored: callers
 * set a high bit in every key.
 */
#ifndef ISC_ID_MAP_H
#define ISC_ID_MAP_H

#include <stddef.h>
#include <stdint.h>

struct isc_id_map {
	uint64_t *key;
	uint32_t *val;
	size_t mask;
	size_t n;
};

/* The slot of key, inserted with value absent when it was not there; NULL on -ENOMEM.
 * The pointer is valid until the next call that inserts. */
uint32_t *isc_id_map_at(struct isc_id_map *m, uint64_t key, uint32_t absent);
/* Frees the table; a zeroed map is empty and needs no call before the first insert. */
void isc_id_map_free(struct isc_id_map *m);

#endif /* ISC_ID_MAP_H */
