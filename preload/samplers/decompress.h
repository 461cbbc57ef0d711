/* SPDX-License-Identifier: MIT */
/*
 * The two compressions an ELF file's debug information comes in, for the symboliser:
 * xz (.gnu_debugdata, "MiniDebugInfo") through liblzma and zlib (SHF_COMPRESSED debug
 * sections: gcc -gz, Debian's -dbgsym files) through libz. Both libraries are dlopen'ed
 * on first use, never a link dependency, and allocate on mmap'ed scratch, never malloc:
 * the writer may run at exit with the heap in any state. What they return stays mapped
 * (the symboliser's names and line tables point into it).
 */
#ifndef ISC_DECOMPRESS_H
#define ISC_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

/* The xz stream in[0..n) decoded; NULL when liblzma is missing or the data is bad. */
const uint8_t *isc_unxz(const uint8_t *in, size_t n, size_t *out_n);

/* The contents of a SHF_COMPRESSED section (an Elf64_Chdr, then the data): zlib only
 * (ELFCOMPRESS_ZSTD is not read); NULL when libz is missing or the data is bad. */
const uint8_t *isc_elf_section_inflate(const uint8_t *in, size_t n, size_t *out_n);

/* The same, inflated as far as it is needed: the output is mapped at its full size (*size)
 * and written up to where isc_inflate_to is asked for; a line table whose lookups need only
 * its first units inflates no further. NULL as isc_elf_section_inflate. */
struct isc_inflate;
struct isc_inflate *isc_inflate_begin(const uint8_t *in, size_t n, size_t *size);
const uint8_t *isc_inflate_data(const struct isc_inflate *f);
/* Inflates at least the first want bytes (or all); returns how many are out: fewer than
 * want at the end, 0 once the data turned out bad. */
size_t isc_inflate_to(struct isc_inflate *f, size_t want);
/* Frees zlib's state; the output stays mapped (names point into it). */
void isc_inflate_end(struct isc_inflate *f);

#endif /* ISC_DECOMPRESS_H */
