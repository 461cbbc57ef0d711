/* SPDX-License-Identifier: MIT */
/*
 * Drives yajl's event parser over an input in chunks and turns its failures into one
 * line with a byte position. It also bounds memory on hostile input: yajl keeps a token
 * that spans chunks in a growing buffer, so a value that produces no callback for
 * ISC_JSAX_MAX_TOKEN bytes is refused before it can grow without limit.
 */
#ifndef ISC_JSAX_H
#define ISC_JSAX_H

#include <stdbool.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

#include "diag.h"
#include "source.h"

#define ISC_JSAX_MAX_TOKEN (64u << 20)

struct isc_jsax {
	yajl_handle h;
	uint64_t base;		/* offset of the chunk being parsed */
	uint64_t callbacks;	/* incremented by the reader's callbacks (isc_jsax_tick) */
	uint64_t quiet;		/* bytes since the last callback */
	const char *label;
	struct isc_diag *diag;
	bool failed;		/* a callback refused the input and set diag */
};

int isc_jsax_init(struct isc_jsax *j, const yajl_callbacks *cb, void *ctx, const char *label,
		  struct isc_diag *d);
void isc_jsax_finish(struct isc_jsax *j);
/* Parses the whole source. Returns 0 or -EINVAL with diag set. */
int isc_jsax_run(struct isc_jsax *j, struct isc_source *src);
/* Byte offset of the token being reported (valid inside callbacks). */
uint64_t isc_jsax_offset(const struct isc_jsax *j);

static inline void isc_jsax_tick(struct isc_jsax *j)
{
	j->callbacks++;
}

#endif /* ISC_JSAX_H */
