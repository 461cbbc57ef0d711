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
struct isc_dl_range;
struct isc_inflate;

struct isc_dwarf_lines {
	const uint8_t *line, *line_str, *str; /* .debug_line, .debug_line_str, .debug_str */
	size_t n_line, n_line_str, n_str;
	const uint8_t *str_z; /* .debug_str still compressed (an Elf64_Chdr first), or NULL */
	size_t n_str_z;
	/* .debug_line still compressed: n_line of its n_line_all bytes are inflated so far */
	struct isc_inflate *z;
	size_t n_line_all;
	const uint8_t *aranges; /* .debug_aranges: which unit's line program covers an address */
	size_t n_aranges;
	struct isc_dl_seq *seq; /* sequences by start address, built by the lookups */
	size_t n_seq, mapped;
	/* By units (aranges given and consistent): the address ranges of the units, the start
	 * of each line program walked so far, which programs are in the index */
	struct isc_dl_range *range;
	uint32_t *prog;
	uint8_t *in_index;
	size_t n_range, n_units, n_prog, mapped_units;
	size_t units_run; /* line programs run by the index (the tests count them) */
	enum { ISC_DL_NEW, ISC_DL_BY_UNIT, ISC_DL_WHOLE } mode;
};

/* The file (as the line table names it, NUL-terminated, in the mapped image) and line
 * of addr, an address in the module's link-time space. false when no row covers it. */
bool isc_dwarf_line(struct isc_dwarf_lines *d, uint64_t addr, const char **file, unsigned *line);

/* Unmaps the index (the sections belong to the module's image). */
void isc_dwarf_lines_free(struct isc_dwarf_lines *d);

#endif /* ISC_DWARF_LINES_H */
