/* SPDX-License-Identifier: MIT */
/*
 * The kernel classifier: case-insensitive substrings of the name, first match wins, in
 * the order of the table. Communication comes first (an NCCL all-reduce kernel is
 * "elementwise" in its reduction but waits on the network), then attention before gemm
 * (FlashAttention kernels contain "gemm" in their CUTLASS templates), then the copies
 * (a "copy" kernel is a gather, not arithmetic), then the elementwise families of
 * PyTorch, Triton and CUTLASS epilogues.
 */
#include "watch/kernel-class.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "analyzer/model/model.h"

struct pattern {
	enum isc_kclass c;
	const char *needle; /* lower case */
};

static const struct pattern patterns[] = {
	{ ISC_KC_COMMUNICATION, "nccl" },
	{ ISC_KC_COMMUNICATION, "allreduce" },
	{ ISC_KC_COMMUNICATION, "all_reduce" },
	{ ISC_KC_COMMUNICATION, "allgather" },
	{ ISC_KC_COMMUNICATION, "all_gather" },
	{ ISC_KC_COMMUNICATION, "reducescatter" },
	{ ISC_KC_COMMUNICATION, "reduce_scatter" },
	{ ISC_KC_COMMUNICATION, "alltoall" },
	{ ISC_KC_COMMUNICATION, "all_to_all" },
	{ ISC_KC_COMMUNICATION, "sendrecv" },
	{ ISC_KC_ATTENTION, "attention" },
	{ ISC_KC_ATTENTION, "attn" },
	{ ISC_KC_ATTENTION, "flash_fwd" },
	{ ISC_KC_ATTENTION, "flash_bwd" },
	{ ISC_KC_ATTENTION, "fmha" },
	{ ISC_KC_ATTENTION, "mha" },
	{ ISC_KC_ATTENTION, "softmax" },
	{ ISC_KC_ATTENTION, "paged_attention" },
	{ ISC_KC_GEMM, "gemm" },
	{ ISC_KC_GEMM, "gemv" },
	{ ISC_KC_GEMM, "matmul" },
	{ ISC_KC_GEMM, "cublas" },
	{ ISC_KC_GEMM, "cutlass" },
	{ ISC_KC_GEMM, "sm80_xmma" },
	{ ISC_KC_GEMM, "sm90_xmma" },
	{ ISC_KC_GEMM, "xmma" },
	{ ISC_KC_GEMM, "conv" },
	{ ISC_KC_COPY, "memcpy" },
	{ ISC_KC_COPY, "memset" },
	{ ISC_KC_COPY, "copy" },
	{ ISC_KC_COPY, "gather" },
	{ ISC_KC_COPY, "scatter" },
	{ ISC_KC_COPY, "cat_" },
	{ ISC_KC_COPY, "transpose" },
	{ ISC_KC_ELEMENTWISE, "elementwise" },
	{ ISC_KC_ELEMENTWISE, "vectorized" },
	{ ISC_KC_ELEMENTWISE, "pointwise" },
	{ ISC_KC_ELEMENTWISE, "unrolled" },
	{ ISC_KC_ELEMENTWISE, "triton_poi" },
	{ ISC_KC_ELEMENTWISE, "activation" },
	{ ISC_KC_ELEMENTWISE, "gelu" },
	{ ISC_KC_ELEMENTWISE, "silu" },
	{ ISC_KC_ELEMENTWISE, "relu" },
	{ ISC_KC_ELEMENTWISE, "add" },
	{ ISC_KC_ELEMENTWISE, "mul" },
	{ ISC_KC_ELEMENTWISE, "norm" },
	{ ISC_KC_ELEMENTWISE, "rotary" },
	{ ISC_KC_ELEMENTWISE, "fill" },
};

static const char *const names[ISC_KC__COUNT] = {
	"gemm", "attention", "communication", "elementwise", "copy", "other",
};

/* Names are lowered into a bounded buffer: a template name can be kilobytes long, and
 * every pattern that matters sits in its first part. */
#define SCAN 512

enum isc_kclass isc_kernel_class(const char *name)
{
	if (name == NULL) {
		return ISC_KC_OTHER;
	}
	char low[SCAN + 1];
	size_t n = 0;
	for (; name[n] != '\0' && n < SCAN; n++) {
		low[n] = (char)tolower((unsigned char)name[n]);
	}
	low[n] = '\0';
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		if (strstr(low, patterns[i].needle) != NULL) {
			return patterns[i].c;
		}
	}
	return ISC_KC_OTHER;
}

enum isc_kclass isc_gpu_op_class(unsigned type, const char *name)
{
	return type == ISC_T_KERNEL ? isc_kernel_class(name) : ISC_KC_COPY;
}

const char *isc_kclass_name(enum isc_kclass c)
{
	return c < ISC_KC__COUNT ? names[c] : "other";
}
