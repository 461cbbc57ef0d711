/* SPDX-License-Identifier: MIT */
/*
 * One JSON array of events read on several threads (split-read.c), for the readers whose
 * traces are such an array (InferScope's "events", Kineto's "traceEvents"): the array is
 * split into parts at guessed event boundaries, each part read by a thread into a model of
 * its own, and the parts merged in order into the trace by the reader's merge, which
 * checks out each split; from the first part that fails the main reader reads on serially.
 */
#ifndef ISC_SPLIT_READ_H
#define ISC_SPLIT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/model/model.h"
#include "analyzer/readers/json-sax.h"
#include "analyzer/readers/reader.h"

struct isc_split_part {
	uint64_t start, end; /* bytes of the input */
	uint64_t stop;	     /* closed: where the array's ']' is */
	bool done;	     /* read (or skipped), its state ready to merge */
	bool ok;	     /* read whole, ending between two elements, or closed */
	bool closed;	     /* the array ended inside it */
	void *state;	     /* the reader's, NULL when it could not start one */
};

struct isc_split_ops {
	/* Reads part k of bytes of fd (pread) or mem: fills ok, closed, stop and state, most
	 * simply through isc_split_run_part. Runs on a worker thread. */
	void (*read)(void *ctx, size_t k, int fd, const unsigned char *mem,
		     struct isc_split_part *pt);
	/* Appends a part read whole into the trace: 0, 1 when the part must be read
	 * serially instead, or -ENOMEM. */
	int (*merge)(void *ctx, struct isc_split_part *pt);
	/* Frees a part's state (NULL allowed). */
	void (*drop)(void *state);
	/* The main reader is to read on serially: it must not pause again. */
	void (*serial)(void *ctx);
};

/*
 * Reads src with the main reader's scanner js: serially (isc_jsax_run) with fewer than two
 * threads (rc->threads, 0 one per CPU) or an input that cannot be read at any offset
 * (gzip, a pipe); else up to the pause the main reader makes at the array's '[', then the
 * parts, then on from where they end. Returns 0 or a negative errno with rc->diag set.
 */
int isc_split_read(struct isc_read_ctx *rc, struct isc_jsax *js, const struct isc_split_ops *ops,
		   void *ctx);
/*
 * Runs the scanner of a part's reader (js, put inside the array by this function) over the
 * part's bytes, and says how it ended: the reader's callback pauses the scanner at the
 * array's ']'. k: the part's index.
 */
void isc_split_run_part(struct isc_jsax *js, size_t k, int fd, const unsigned char *mem,
			struct isc_split_part *pt);

/* A model for a part of rc's input, with as many inputs as rc's trace; NULL without memory. */
struct isc_trace *isc_split_part_trace(const struct isc_read_ctx *rc);

/* Old ids of a part's tables to the trace's, each interned in the part's order. */
struct isc_split_maps {
	uint32_t *str, *thread;
	uint16_t *geom;
};

/* A part may be merged: its kernel shapes fit the trace's shape table (the overflow table
 * keys kernels one by one, in the serial read's order). */
bool isc_split_shapes_fit(const struct isc_trace *mt, const struct isc_trace *wt);
/* The part's strings into the trace (m->str). 0 or -ENOMEM. */
int isc_split_map_strings(struct isc_trace *mt, const struct isc_trace *wt,
			  struct isc_split_maps *m);
/* Then its threads (by their tids as they are in wt) and kernel shapes. 0 or -ENOMEM. */
int isc_split_map_rest(struct isc_trace *mt, const struct isc_trace *wt, struct isc_split_maps *m);
/* Then its events appended, names, threads and shapes mapped, and the counters of input
 * in added. 0 or -ENOMEM. */
int isc_split_append(struct isc_trace *mt, const struct isc_trace *wt, uint16_t in,
		     const struct isc_split_maps *m);
void isc_split_maps_free(struct isc_split_maps *m);

#endif /* ISC_SPLIT_READ_H */
