/* SPDX-License-Identifier: MIT */
/*
 * The DWARF call-frame rules of one code address, read from its module's .eh_frame_hdr
 * (unwind-dwarf.c), for the table walker (unwind-cfi.c). Only what x86-64 compilers
 * emit for ordinary functions: anything else is "not followed".
 */
#ifndef ISC_UNWIND_DWARF_H
#define ISC_UNWIND_DWARF_H

#include <stdbool.h>
#include <stdint.h>

#define ISC_REG_FP 6
#define ISC_REG_SP 7
#define ISC_REG_RA 16

enum isc_cfi_how { ISC_SAME, ISC_AT_CFA, ISC_UNDEF, ISC_OTHER };

/* The row of an address: the CFA as a register plus an offset; rbp ([0]) and the
 * return address ([1]) the same, at a CFA offset, undefined or otherwise. */
struct isc_cfi_rules {
	uint64_t cfa_reg;
	int64_t cfa_off;
	uint8_t how[2];
	int64_t off[2];
};

/* The rules of pc into r. false: no unwind table covers pc (*known = false), or its
 * row is not one the walker follows. Async-signal-safe: _dl_find_object, then reads of
 * the module's own tables. */
bool isc_cfi_rules(uint64_t pc, struct isc_cfi_rules *r, bool *known);

/* The start of the function around pc as its unwind table's FDE gives it, 0 when no
 * FDE covers pc: what names a function the symbol tables do not. */
uint64_t isc_cfi_function_start(uint64_t pc);

#endif /* ISC_UNWIND_DWARF_H */
