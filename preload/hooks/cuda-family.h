/* SPDX-License-Identifier: MIT */
/* The CUDA and NVTX hook families, as lifecycle.c's families[] starts them. */
#ifndef ISC_CUDA_FAMILY_H
#define ISC_CUDA_FAMILY_H

#include <stdint.h>

/* cuda-runtime.c: tables, trace contributions, CUDA_INJECTION64_PATH. */
void isc_hooks_cuda_init(void);
/* hook-nvtx.c: NVTX_INJECTION64_PATH. */
void isc_hooks_nvtx_init(void);

/* Sets the injection variable var to this library's absolute path unless it is set. */
void isc_cuda_set_injection_var(const char *var);

/* Interned names of the intercepted functions, indexed by enum isc_cuda_fn. */
extern uint32_t isc_cuda_fn_ids[];

#endif /* ISC_CUDA_FAMILY_H */
