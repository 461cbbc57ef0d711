/* SPDX-License-Identifier: MIT */
/*
 * Drives the streaming tokenizer (jscan.h, yajl's callback interface) over an input in
 * chunks and turns failures into one line with a byte position. Memory stays bounded on
 * hostile input: a single token may grow the buffer only up to ISC_JSAX_MAX_TOKEN.
 */
#ifndef ISC_JSAX_H
#define ISC_JSAX_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzer/base/diag.h"
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
/* Byte offset of the token being reported (valid inside callbacks). */
uint64_t isc_jsax_offset(const struct isc_jsax *j);

/* Kept for the readers' callbacks; nothing to count any more. */
static inline void isc_jsax_tick(struct isc_jsax *j)
{
	(void)j;
}

#endif /* ISC_JSAX_H */
