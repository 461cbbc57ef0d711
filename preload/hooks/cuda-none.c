/* SPDX-License-Identifier: MIT */
/* Built without the CUDA headers: the CUDA and NVTX families do nothing. */
#include "cuda-family.h"

void isc_hooks_cuda_init(void)
{
}

void isc_hooks_nvtx_init(void)
{
}
