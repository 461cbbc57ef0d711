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

#endif /* ISC_DECOMPRESS_H */
