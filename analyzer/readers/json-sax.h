/* SPDX-License-Identifier: MIT */
/*
 * Drives the streaming tokenizer (base/json-scan.h, yajl's callback interface) over an input in
 * chunks and turns failures into one line with a byte position. Memory stays bounded on
 * hostile input: a single token may grow the buffer only up to ISC_JSAX_MAX_TOKEN.
 */
#ifndef ISC_JSAX_H
#define ISC_JSAX_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzer/base/diag.h"
#include "analyzer/base/json-dom.h"
#include "analyzer/base/json-number.h"
#include "analyzer/base/json-scan.h"
#include "analyzer/readers/input-source.h"

#define ISC_JSAX_MAX_TOKEN (64u << 20)

struct isc_jsax {
	struct isc_jscan *scan;
	uint64_t base; /* offset of the buffer being parsed */
	const char *label;
	struct isc_diag *diag;
	bool failed; /* a callback refused the input and set diag */
};

int isc_jsax_init(struct isc_jsax *j, const yajl_callbacks *cb, void *ctx, const char *label,
		  struct isc_diag *d);
void isc_jsax_finish(struct isc_jsax *j);
/* Parses the whole source. Returns 0 or -EINVAL with diag set. */
int isc_jsax_run(struct isc_jsax *j, struct isc_source *src);
/*
 * Parses bytes [*pos, end) of a file (fd, read with pread) or of memory (mem, when fd < 0)
 * as isc_jsax_run parses a source: for the parts of a parallel read (a scanner that
 * isc_jscan_enter_array put inside an array) and the main reader around them. Returns 0,
 * 1 when a callback paused the scanner (*pos is just past its token), or a negative errno
 * with diag set.
 */
int isc_jsax_run_at(struct isc_jsax *j, int fd, const unsigned char *mem, uint64_t *pos,
		    uint64_t end);
/* Byte offset of the token being reported (valid inside callbacks). */
uint64_t isc_jsax_offset(const struct isc_jsax *j);

/* Kept for the readers' callbacks; nothing to count any more. */
static inline void isc_jsax_tick(struct isc_jsax *j)
{
	(void)j;
}

/*
 * The container stack of a streaming reader: one frame (a value of the reader's own enum)
 * per open container, up to ISC_JSAX_FRAMES deep. Containers deeper than that are only
 * counted: readers skip what they do not understand, so nesting costs no memory.
 */
#define ISC_JSAX_FRAMES 64

struct isc_jframes {
	uint8_t frame[ISC_JSAX_FRAMES];
	int depth;
	int deep; /* containers opened past ISC_JSAX_FRAMES (always skipped) */
};

/* The frame of the innermost container: skip inside one past the limit, -1 at the top. */
static inline int isc_jframes_cur(const struct isc_jframes *f, int skip)
{
	if (f->deep > 0) {
		return skip;
	}
	return f->depth > 0 ? f->frame[f->depth - 1] : -1;
}

/* Opens a container. False when it is past the limit: counted, and to be skipped. */
static inline bool isc_jframes_push(struct isc_jframes *f, int frame)
{
	if (f->deep > 0 || f->depth >= ISC_JSAX_FRAMES) {
		f->deep++;
		return false;
	}
	f->frame[f->depth++] = (uint8_t)frame;
	return true;
}

/* Closes the innermost container: its frame, or -1 when it was one past the limit or
 * none was open. */
static inline int isc_jframes_pop(struct isc_jframes *f)
{
	if (f->deep > 0) {
		f->deep--;
		return -1;
	}
	return f->depth > 0 ? f->frame[--f->depth] : -1;
}

/*
 * The yajl callback table of a reader, named `name`, from four handlers of its own:
 * open(ctx, is_map), close(ctx), key(ctx, text, len) and value(ctx, jtype, text, len,
 * b), where ctx is a `type` whose member `js` (struct isc_jsax) runs the scan; a number
 * comes typed ISC_J_INT or ISC_J_DOUBLE as the tokenizer read it, a boolean as
 * "true"/"false" with b set, and null as "". The trampolines are static functions of
 * the reader's file, so its handlers are called directly and inlined on the per-token
 * path, as a table of handler pointers would not allow.
 */
#define ISC_JSAX_CALLBACKS(name, type, open, close, key, value)                       \
	static int name##_null(void *c)                                               \
	{                                                                             \
		return value(c, ISC_J_NULL, "", 0, false);                            \
	}                                                                             \
	static int name##_bool(void *c, int b)                                        \
	{                                                                             \
		return value(c, ISC_J_BOOL, b ? "true" : "false", b ? 4 : 5, b != 0); \
	}                                                                             \
	static int name##_number(void *c, const char *s, size_t n)                    \
	{                                                                             \
		bool is_int = ((type *)c)->js.scan->num_int;                          \
		return value(c, is_int ? ISC_J_INT : ISC_J_DOUBLE, s, n, false);      \
	}                                                                             \
	static int name##_string(void *c, const unsigned char *s, size_t n)           \
	{                                                                             \
		return value(c, ISC_J_STRING, (const char *)s, n, false);             \
	}                                                                             \
	static int name##_start_map(void *c)                                          \
	{                                                                             \
		return open(c, true);                                                 \
	}                                                                             \
	static int name##_start_array(void *c)                                        \
	{                                                                             \
		return open(c, false);                                                \
	}                                                                             \
	static int name##_end(void *c)                                                \
	{                                                                             \
		return close(c);                                                      \
	}                                                                             \
	static int name##_key(void *c, const unsigned char *s, size_t n)              \
	{                                                                             \
		return key(c, (const char *)s, n);                                    \
	}                                                                             \
	static const yajl_callbacks name = {                                          \
		.yajl_null = name##_null,                                             \
		.yajl_boolean = name##_bool,                                          \
		.yajl_number = name##_number,                                         \
		.yajl_string = name##_string,                                         \
		.yajl_start_map = name##_start_map,                                   \
		.yajl_map_key = name##_key,                                           \
		.yajl_end_map = name##_end,                                           \
		.yajl_start_array = name##_start_array,                               \
		.yajl_end_array = name##_end,                                         \
	}

#endif /* ISC_JSAX_H */
