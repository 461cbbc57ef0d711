/* SPDX-License-Identifier: MIT */
/*
 * Growable scratch memory for the trace writer, from mmap rather than malloc: the
 * writer runs at exit, from _exit and exec hooks and (opt-in) from a signal handler,
 * where the application's heap may be in any state. The same code serves the
 * analyzer when it reads a spill file.
 */
#ifndef ISC_SCRATCH_H
#define ISC_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>

struct isc_vec {
	void *data;
	size_t len;    /* elements */
	size_t cap;    /* elements */
	size_t elem;   /* element size */
	size_t mapped; /* bytes */
};

void isc_vec_init(struct isc_vec *v, size_t elem);
/* Returns a pointer to a new zeroed element, or NULL when memory is exhausted. */
void *isc_vec_push(struct isc_vec *v);
/* Makes room for n elements in total; false on failure. */
bool isc_vec_reserve(struct isc_vec *v, size_t n);
void isc_vec_finish(struct isc_vec *v);

/* An anonymous mapping of at least n bytes, or NULL. */
void *isc_map(size_t n);
void isc_unmap(void *p, size_t n);

#endif /* ISC_SCRATCH_H */
