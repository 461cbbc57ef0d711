/* SPDX-License-Identifier: MIT */
/*
 * Source lines of native code addresses from a module's .debug_line (DWARF 2-5), for
 * the symboliser (symbolize.c): what a program or extension built with -g carries. No
 * malloc: the index of line sequences is on mmap'ed scratch, the file names point into
 * the module's mapped image, which stays mapped until the trace is written.
 */
#ifndef ISC_DWARF_LINES_H
#define ISC_DWARF_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isc_dl_seq;

struct isc_dwarf_lines {
	const uint8_t *line, *line_str, *str; /* .debug_line, .debug_line_str, .debug_str */
	size_t n_line, n_line_str, n_str;
	struct isc_dl_seq *seq; /* sequences by start address, built on the first lookup */
	size_t n_seq, mapped;
	bool indexed;
};

/* The file (as the line table names it, NUL-terminated, in the mapped image) and line
 * of addr, an address in the module's link-time space. false when no row covers it. */
bool isc_dwarf_line(struct isc_dwarf_lines *d, uint64_t addr, const char **file, unsigned *line);

/* Unmaps the index (the sections belong to the module's image). */
void isc_dwarf_lines_free(struct isc_dwarf_lines *d);

#endif /* ISC_DWARF_LINES_H */
