/* SPDX-License-Identifier: MIT */
/*
 * A streaming JSON emitter: no DOM, no malloc, no stdio on the hot path.
 *
 * Output goes into a caller-provided buffer that is handed to a sink when full,
 * so the same code writes a trace from a dying process (sink = write(2) on an fd,
 * buffer on the stack or mmap'd), a metadata block into memory, or an analyzer
 * report into a FILE *. Commas are inserted automatically: a writer only says
 * "key", "value", "begin", "end".
 *
 * Numbers are formatted by hand: printf is neither async-signal-safe nor fast
 * enough for the 2 M events/s the trace writer must reach.
 */
#ifndef ISC_JSON_WRITER_H
#define ISC_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ISC_JSON_MAX_DEPTH 32

/* Returns 0 or a negative errno; after an error the writer discards output. */
typedef int (*isc_json_sink)(void *ctx, const char *buf, size_t len);

struct isc_json {
	char *buf;
	size_t len;
	size_t cap;
	isc_json_sink sink;
	void *ctx;
	int err; /* first sink error, sticky */
	int depth;
	bool pretty;
	bool need_comma[ISC_JSON_MAX_DEPTH];
	bool after_key;
	uint64_t written; /* bytes handed to the sink */
};

void isc_json_init(struct isc_json *j, char *buf, size_t cap, isc_json_sink sink, void *ctx);
/* Hands what is buffered to the sink; returns j->err. */
int isc_json_flush(struct isc_json *j);

/* Sinks provided here. ctx is a pointer to an int fd / a FILE *. */
int isc_json_sink_fd(void *ctx, const char *buf, size_t len);
int isc_json_sink_file(void *ctx, const char *buf, size_t len);

void isc_json_begin_object(struct isc_json *j);
void isc_json_end_object(struct isc_json *j);
void isc_json_begin_array(struct isc_json *j);
void isc_json_end_array(struct isc_json *j);
/* A key: a plain ASCII literal of the caller's, not escaped. Inline so that strlen
 * of a literal folds to a constant. */
void isc_json_key_n(struct isc_json *j, const char *key, size_t n);
static inline void isc_json_key(struct isc_json *j, const char *key)
{
	isc_json_key_n(j, key, __builtin_strlen(key));
}

void isc_json_string(struct isc_json *j, const char *s);
void isc_json_string_n(struct isc_json *j, const char *s, size_t n);
void isc_json_int(struct isc_json *j, int64_t v);
void isc_json_uint(struct isc_json *j, uint64_t v);
/* A double with at most `decimals` digits after the point, trailing zeros kept
 * off; non-finite values are written as null (JSON has no NaN). */
void isc_json_double(struct isc_json *j, double v, int decimals);
/* Nanoseconds written as microseconds with exactly three decimals: exact, no
 * floating point on the way. */
void isc_json_ns_as_us(struct isc_json *j, int64_t ns);
void isc_json_bool(struct isc_json *j, bool v);
void isc_json_null(struct isc_json *j);
/* A pointer-sized value as "0x..." */
void isc_json_hex(struct isc_json *j, uint64_t v);
/* Pre-formatted JSON text inserted as one value. */
void isc_json_raw(struct isc_json *j, const char *text, size_t n);

/* key + value shorthands */
void isc_json_kv_string(struct isc_json *j, const char *key, const char *s);
void isc_json_kv_int(struct isc_json *j, const char *key, int64_t v);
void isc_json_kv_uint(struct isc_json *j, const char *key, uint64_t v);
void isc_json_kv_double(struct isc_json *j, const char *key, double v, int decimals);
void isc_json_kv_bool(struct isc_json *j, const char *key, bool v);

/* Formats v into out (at least 21 bytes); returns the length. No NUL. */
size_t isc_fmt_uint(char *out, uint64_t v);
size_t isc_fmt_int(char *out, int64_t v);

#endif /* ISC_JSON_WRITER_H */
