/* SPDX-License-Identifier: MIT */
/*
 * A run never replaces the trace of an earlier one: when the trace of the process the
 * user started would land on an existing file, the run takes the first free name of
 * STEM-2.json, STEM-3.json, ... (PATH-2, ... without a .json suffix), as nsys numbers
 * its reports, and says so on stderr. The launcher and the library choose the same way.
 */
#ifndef ISC_TRACE_NAME_H
#define ISC_TRACE_NAME_H

#include <stddef.h>

/* Writes to out the name a new trace meant for path takes: path itself when nothing is
 * there, else the first free numbered name. Returns the number (1: path itself). No
 * allocation, no stdio: the library calls it from its constructor. */
unsigned isc_trace_name_free(const char *path, char *out, size_t cap);

#endif /* ISC_TRACE_NAME_H */
