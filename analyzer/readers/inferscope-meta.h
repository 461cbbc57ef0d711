/* SPDX-License-Identifier: MIT */
/* trace_metadata and system_info of the InferScope format: checked, then kept in the input. */
#ifndef ISC_INFERSCOPE_META_H
#define ISC_INFERSCOPE_META_H

#include <stddef.h>

#include "analyzer/base/json-dom.h"
#include "analyzer/readers/reader.h"

/* Return 0, or -1 with err holding ".path: problem" (the caller prefixes the top key). */
int isc_meta_apply(struct isc_read_ctx *rc, const struct isc_jdom *d, char *err, size_t n);
int isc_sysinfo_apply(struct isc_read_ctx *rc, const struct isc_jdom *d, char *err, size_t n);

#endif /* ISC_INFERSCOPE_META_H */
