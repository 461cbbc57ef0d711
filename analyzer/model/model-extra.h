/* SPDX-License-Identifier: MIT */
/*
 * What a trace holds beside its events for the Chrome/Kineto export only: kernel geometry
 * (grid, block, registers, shared memory) and GPU-side annotations (Kineto's
 * gpu_user_annotation). The analysis never reads them; the 64-byte event has no room for
 * them, so they live here, keyed by the event they describe.
 */
#ifndef ISC_MODEL_EXTRA_H
#define ISC_MODEL_EXTRA_H

#include <stdint.h>

#include "analyzer/model/model.h"

struct isc_kernel_geom {
	int64_t ts; /* the kernel's key (only in the overflow table): input, correlation,
		     * start, stream */
	uint64_t corr;
	int32_t stream;
	uint16_t input;
	int32_t grid[3], block[3]; /* 0 unknown */
	int32_t regs, smem;	   /* registers per thread, shared memory bytes; -1 unknown */
};

struct isc_gpu_annot {
	int64_t ts, dur;
	uint64_t corr;
	uint32_t name;
	int32_t stream;
	int16_t device;
	uint16_t input;
};

/*
 * Kernels share a few launch shapes, so the table holds each distinct one once and a
 * kernel names its shape by isc_ev.geom (1 + index; 2 bytes the 64-byte event had
 * spare). Only past ISC_GEOM_OVERFLOW - 1 shapes does a kernel's geometry go, with its
 * key, into the overflow table (geom), looked up by binary search.
 */
#define ISC_GEOM_OVERFLOW UINT16_MAX

struct isc_trace_extra {
	struct isc_kernel_geom *shape; /* distinct shapes (keys unused) */
	size_t n_shape, cap_shape;
	uint32_t *slot; /* open addressing over shape: 1 + index, 0 empty */
	size_t mask;
	struct isc_kernel_geom *geom; /* overflow, by key */
	size_t n_geom, cap_geom;
	struct isc_gpu_annot *annot;
	size_t n_annot, cap_annot;
};

/* Records kernel k's geometry (its key fields are taken from k) and sets k->geom.
 * Returns 0 or -ENOMEM. */
int isc_trace_add_geom(struct isc_trace *t, struct isc_ev *k, const struct isc_kernel_geom *g);
/* Appends; returns 0 or -ENOMEM. */
int isc_trace_add_annot(struct isc_trace *t, const struct isc_gpu_annot *a);
/* Sorts the geometry table for lookups (isc_trace_finalize calls it). */
void isc_trace_extra_finalize(struct isc_trace *t);
/* The geometry of a kernel event, or NULL. */
const struct isc_kernel_geom *isc_trace_geom_of(const struct isc_trace *t, const struct isc_ev *k);
void isc_trace_extra_destroy(struct isc_trace_extra *x);

/* Growable text that re-serialises a JSON subtree from SAX callbacks (reader-kineto.c keeps
 * "distributedInfo" and "deviceProperties" verbatim with it). */
struct isc_jcap {
	char *s;
	size_t n, cap;
	int depth;	 /* open containers inside the captured value */
	uint64_t maps;	 /* bit k: the container at depth k is an object */
	bool need_comma; /* a value was written at the current level */
	bool after_key;
	bool failed;
};

void isc_jcap_open(struct isc_jcap *c, bool is_map);
/* Returns true when the captured value is complete. */
bool isc_jcap_close(struct isc_jcap *c);
void isc_jcap_key(struct isc_jcap *c, const char *s, size_t n);
/* A scalar: strings are escaped, numbers/true/false/null written as given. */
void isc_jcap_scalar(struct isc_jcap *c, bool is_string, const char *s, size_t n);
/* The text (malloc'd, caller frees), NULL on failure; resets the capture. */
char *isc_jcap_take(struct isc_jcap *c);

#endif /* ISC_MODEL_EXTRA_H */
