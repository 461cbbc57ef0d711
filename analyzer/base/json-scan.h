/* SPDX-License-Identifier: MIT */
/*
 * A streaming JSON tokenizer with yajl's callback interface (yajl_callbacks), written
 * for speed on trace files: one pass, a byte-class table, keys and strings without
 * escapes handed out in place, numbers validated by the grammar and passed as text.
 *
 * The caller feeds buffers that it keeps: isc_jscan_feed() consumes whole tokens only
 * and returns how many bytes it used, so a token cut by the end of a buffer is left for
 * the caller to move to the front and complete with more input (readers/json-sax.c does that).
 * Strict RFC 8259: one top-level value, no comments, no trailing commas, UTF-8 checked.
 */
#ifndef ISC_JSCAN_H
#define ISC_JSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

#define ISC_JSCAN_MAX_DEPTH 4096

/* ISC_JSCAN_PAUSED: a callback asked (isc_jscan_pause) to stop after its token. */
enum isc_jscan_status {
	ISC_JSCAN_OK = 0,
	ISC_JSCAN_ERROR = -1,
	ISC_JSCAN_CANCELLED = -2,
	ISC_JSCAN_PAUSED = 1,
};

struct isc_jscan {
	const yajl_callbacks *cb;
	void *ctx;
	uint8_t st; /* what may come next */
	uint32_t depth;
	uint8_t stack[ISC_JSCAN_MAX_DEPTH]; /* '{' or '[' */
	size_t pos;			    /* offset in the current buffer, for error positions */
	char *scratch;			    /* unescaped strings */
	size_t scratch_cap;
	const char *error; /* static text */
	bool pause;	   /* set by a callback: return after the current token */
	bool num_int;	   /* the number being reported has no fraction and no exponent */
};

void isc_jscan_init(struct isc_jscan *s, const yajl_callbacks *cb, void *ctx);
void isc_jscan_finish(struct isc_jscan *s);
/*
 * Parses buf[0..n). With final == false a token that reaches the end of buf is not
 * consumed; *used says how many bytes were. Returns an isc_jscan_status.
 */
int isc_jscan_feed(struct isc_jscan *s, const unsigned char *buf, size_t n, bool final,
		   size_t *used);
/* After the last feed: ISC_JSCAN_OK when exactly one complete value was read. */
int isc_jscan_complete(struct isc_jscan *s);

/*
 * For a parse split at the elements of one array (readers/reader-inferscope-par.c): from a
 * callback, makes isc_jscan_feed return ISC_JSCAN_PAUSED just after the current token,
 * *used counting it.
 */
void isc_jscan_pause(struct isc_jscan *s);
/* Puts a scanner just inside an array, as after its '[' (first) or after a comma between
 * two of its elements: a part of the array is then scanned as if the rest came before. */
void isc_jscan_enter_array(struct isc_jscan *s, bool first);
/* Whether the scanner stands after a comma of the array entered with
 * isc_jscan_enter_array: the bytes fed were whole elements, each followed by a comma. */
bool isc_jscan_between_elements(const struct isc_jscan *s);
/* Makes a scanner just inside an array (after its '[') stand after a comma instead. */
void isc_jscan_after_comma(struct isc_jscan *s);

#endif /* ISC_JSCAN_H */
