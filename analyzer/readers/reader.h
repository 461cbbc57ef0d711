/* SPDX-License-Identifier: MIT */
/*
 * Readers turn one input into events of the model. They are registered in a table with
 * a detection function that looks at the first bytes; the first reader that claims the
 * input reads it, unless a format is forced.
 */
#ifndef ISC_READER_H
#define ISC_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/base/diag.h"
#include "analyzer/model/model.h"
#include "analyzer/readers/input-source.h"

struct isc_read_opts {
	const char *format; /* reader name, NULL to detect */
	bool validate;	    /* accept only the InferScope format (--validate) */
	/* Threads that read one InferScope trace (reader-inferscope-par.c): 0 one per online
	 * CPU, 1 the serial path; split: the bytes of events a part holds, 0 the default. */
	unsigned threads;
	size_t split;
};

struct isc_read_ctx {
	struct isc_trace *t;
	uint16_t input;
	struct isc_source *src;
	const char *label; /* the path as given, for messages */
	struct isc_diag *diag;
	bool validate;
	unsigned threads; /* as isc_read_opts */
	size_t split;
};

struct isc_reader {
	const char *name;
	const char *what;
	/* Returns the position in the head of the marker that identifies the format, or
	 * SIZE_MAX when the input is not of this format: the earliest marker wins. */
	size_t (*detect)(const struct isc_source *src);
	int (*read)(struct isc_read_ctx *rc);
};

extern const struct isc_reader isc_reader_inferscope;
extern const struct isc_reader isc_reader_bare;
extern const struct isc_reader isc_reader_kineto;
extern const struct isc_reader isc_reader_spill;

const struct isc_reader *const *isc_readers(size_t *n);
const struct isc_reader *isc_reader_find(const char *name);

/*
 * Reads one input into the trace (not finalized: call isc_trace_finalize once every input
 * is in). Returns 0; -EINVAL for input that is not a readable trace; another negative
 * errno for I/O failures. On failure diag holds one line naming the input, the position
 * and the problem.
 */
int isc_read_file(struct isc_trace *t, const char *path, const struct isc_read_opts *o,
		  struct isc_diag *d);
int isc_read_buffer(struct isc_trace *t, const char *label, const void *buf, size_t n,
		    const struct isc_read_opts *o, struct isc_diag *d);
/* Reads fd from its current position; fd is closed in any case. */
int isc_read_fd(struct isc_trace *t, const char *label, int fd, const struct isc_read_opts *o,
		struct isc_diag *d);

/*
 * Reads the inputs in order (isc_read_file each), except that the segments of one
 * process - files named BASE.PID.seg-NNNNNN.spill or BASE.PID.seg-NNNNNN.spill.part, as
 * INFERSCOPE_MODE=continuous writes them - given two or more together are merged in
 * segment order into one spill and read as one input, labelled
 * "BASE.PID.seg-FIRST..LAST (N segments)": the last minutes of a killed process as one
 * trace. Not with a forced input format other than spill. (reader-segments.c)
 */
int isc_read_inputs(struct isc_trace *t, const char *const *paths, size_t n,
		    const struct isc_read_opts *o, struct isc_diag *d);

/* Parts of parallel reads merged so far, by every reader of the process (tests and
 * benchmarks tell a parallel read from one that fell back to the serial path). */
uint64_t isc_read_parts_merged(void);

/* Helpers for readers. */
size_t isc_head_find(const struct isc_source *src, const char *needle);
/* Position of the first non-blank byte of the head, SIZE_MAX when the head is all blank. */
size_t isc_head_first(const struct isc_source *src);

#endif /* ISC_READER_H */
