/* SPDX-License-Identifier: MIT */
/*
 * The analyzer names CUDA calls by family (isc_api_classify). The preload records
 * every runtime function now (build/preload/cuda-functions.txt lists them): a
 * generated hook's call must never pass for a launch or a synchronisation, which
 * only the hand-written hooks decode; unknown calls stay runtime time on the host.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/model/model.h"

#define MAX_FNS 1024

struct fn {
	char name[96];
	char origin[16];
};

static struct fn fns[MAX_FNS];

static size_t load(void)
{
	FILE *f = fopen(ISC_CUDA_FUNCTIONS, "r");
	size_t n = 0;
	cr_assert_not_null(f, "cannot open %s", ISC_CUDA_FUNCTIONS);
	while (n < MAX_FNS && fscanf(f, "%95s %15s%*[^\n]", fns[n].name, fns[n].origin) == 2) {
		n++;
	}
	fclose(f);
	cr_assert_gt(n, 200, "the whole runtime API");
	return n;
}

static enum isc_api_class of(const char *name)
{
	return isc_api_classify(name);
}

Test(cuda_names, generated_calls_are_no_launch_and_no_sync)
{
	size_t n = load(), generated = 0, other = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(fns[i].origin, "generated") != 0) {
			continue;
		}
		generated++;
		enum isc_api_class c = of(fns[i].name);
		cr_expect_neq(c, ISC_AC_LAUNCH, "%s passes for a launch", fns[i].name);
		cr_expect_neq(c, ISC_AC_SYNC, "%s passes for a synchronisation", fns[i].name);
		cr_expect_neq(c, ISC_AC_HOST_ALLOC, "%s passes for pinned memory", fns[i].name);
		other += c == ISC_AC_OTHER;
	}
	cr_assert_gt(generated, 200);
	cr_assert_gt(other, generated / 2, "most calls are plain runtime time");
}

Test(cuda_names, hand_written_families_as_before)
{
	size_t n = load();
	size_t launches = 0, syncs = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(fns[i].origin, "handwritten") == 0) {
			launches += of(fns[i].name) == ISC_AC_LAUNCH;
			syncs += of(fns[i].name) == ISC_AC_SYNC;
		}
	}
	cr_assert_eq(launches, 10, "the launch family and its _ptsz variants");
	cr_assert_eq(syncs, 6, "device/stream/event synchronize and stream waits");
	/* queries poll, they do not wait; copies and allocations by family */
	cr_assert_eq(of("cudaStreamQuery"), ISC_AC_QUERY);
	cr_assert_eq(of("cudaStreamQuery_ptsz"), ISC_AC_QUERY);
	cr_assert_eq(of("cudaEventQuery"), ISC_AC_QUERY);
	cr_assert_eq(of("cudaStreamIsCapturing_ptsz"), ISC_AC_QUERY);
	cr_assert_eq(of("cudaStreamSynchronize_ptsz"), ISC_AC_SYNC);
	cr_assert_eq(of("cudaMemcpy2DArrayToArray_ptds"), ISC_AC_MEMCPY);
	cr_assert_eq(of("cudaMallocArray"), ISC_AC_MALLOC);
	cr_assert_eq(of("cudaFreeMipmappedArray"), ISC_AC_FREE);
	cr_assert_eq(of("cudaStreamCreate"), ISC_AC_OTHER);
	cr_assert_eq(of("cudaGraphInstantiateWithParams_ptsz"), ISC_AC_OTHER);
}
