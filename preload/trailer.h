/* SPDX-License-Identifier: MIT */
/*
 * The JSON a trace carries about its process (trailer.c). Each function renders one
 * pair of objects' members into two isc_vec of bytes (initialised here; the caller
 * finishes them) and returns false when memory ran out. The end functions are called once per
 * trace written, after the families' flush.
 */
#ifndef ISC_TRAILER_H
#define ISC_TRAILER_H

#include <stdbool.h>
#include <stdint.h>

#include "format/scratch.h"

/* trace_metadata and system_info members known at start (spill META, SYSINFO). */
bool isc_trailer_start(struct isc_vec *meta, struct isc_vec *sysinfo);
/* Those known at the end, for the converter's trailer_meta and trailer_sysinfo. */
bool isc_trailer_end(struct isc_vec *meta, struct isc_vec *sysinfo, uint64_t end_ns,
		     const char *end_reason);
/* The spill's SEGMENT block of an image that execs into the next image of the chain. */
bool isc_trailer_segment(struct isc_vec *v, uint64_t end_ns);

/* The trailer's "aggregates" member, per thread (trailer-threads.c); cuda: what the CUDA
 * family reports, NULL without it. */
struct isc_json;
struct isc_cuda_report;
void isc_trailer_threads(struct isc_json *j, const struct isc_cuda_report *cuda);

#endif /* ISC_TRAILER_H */
