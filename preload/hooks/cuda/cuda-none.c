/* SPDX-License-Identifier: MIT */
/* Built without the CUDA headers: the CUDA and NVTX families do nothing. */
#include "preload/hooks/cuda/cuda-family.h"

void isc_hooks_cuda_init(void)
{
}

void isc_hooks_cuda_flush(void)
{
}

void isc_hooks_cuda_flush_completed(void)
{
}

void isc_hooks_cuda_fork_child(void)
{
}

void isc_hooks_nvtx_init(void)
{
}

void isc_hooks_nvtx_flush(void)
{
}

bool isc_cuda_report(struct isc_cuda_report *r)
{
	(void)r;
	return false;
}
