/* SPDX-License-Identifier: MIT */
/*
 * C++ names as people read them. Symbols of native frames and the kernel names CUPTI
 * reports are mangled (Itanium ABI: "_ZN2at6native5addmmE..."); every output of the
 * analyzer shows them demangled, as pprof and Nsight Systems do.
 */
#ifndef ISC_DEMANGLE_H
#define ISC_DEMANGLE_H

#include "analyzer/base/string-table.h"

/* Replaces each string of the table that is a mangled C++ name by its demangled form;
 * its id stays the same. Names the demangler rejects, and every name when the C++
 * runtime's demangler (libstdc++'s __cxa_demangle, loaded on first use) is not on the
 * machine, stay as they are. Returns 0, or -1 when memory runs out. */
int isc_strtab_demangle(struct isc_strtab *s);

#endif /* ISC_DEMANGLE_H */
