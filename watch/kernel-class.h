/* SPDX-License-Identifier: MIT */
/*
 * Kernel categories for metrics: a bounded set of label values, so that a fleet's time
 * series stay few whatever kernels run. The kernel names themselves stay in the profiles
 * (pprof, reports). docs/fleet.md lists the patterns.
 */
#ifndef ISC_KERNEL_CLASS_H
#define ISC_KERNEL_CLASS_H

#include <stdint.h>

enum isc_kclass {
	ISC_KC_GEMM,
	ISC_KC_ATTENTION,
	ISC_KC_COMMUNICATION,
	ISC_KC_ELEMENTWISE,
	ISC_KC_COPY, /* copies and memsets, and kernels that only move data */
	ISC_KC_OTHER,
	ISC_KC__COUNT
};

/* The category of a kernel by its (mangled or demangled) name; NULL is "other". */
enum isc_kclass isc_kernel_class(const char *name);
/* The event type's category: copies and memsets are "copy", kernels by name. */
enum isc_kclass isc_gpu_op_class(unsigned type, const char *name);
const char *isc_kclass_name(enum isc_kclass c);

#endif /* ISC_KERNEL_CLASS_H */
