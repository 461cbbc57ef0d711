/* SPDX-License-Identifier: MIT */
/*
 * A bare CUPTI client, preloaded by bench-cuda as the baseline of the "with CUPTI"
 * column: it enables the activity kinds InferScope enables and reads every record
 * of every buffer, and does nothing else. The difference between InferScope with
 * CUPTI and this client is what InferScope adds on top of CUPTI's own cost (in the
 * simulator, the simulated CUPTI's record keeping). BENCH_CUPTI_LIB names libcupti.
 */
#include <cupti.h>
#include <dlfcn.h>
#include <stdlib.h>

static CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*size = 4u << 20;
	*buffer = aligned_alloc(8, *size);
	*max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
			       size_t valid)
{
	CUpti_Activity *rec = NULL;
	volatile size_t n = 0;
	(void)ctx;
	(void)stream;
	(void)size;
	while (next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
		n++;
	}
	free(buffer);
}

__attribute__((constructor)) static void start(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_DEVICE,
		CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2,
		CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		CUPTI_ACTIVITY_KIND_OVERHEAD,
		CUPTI_ACTIVITY_KIND_RUNTIME,
		CUPTI_ACTIVITY_KIND_DRIVER,
	};
	const char *path = getenv("BENCH_CUPTI_LIB");
	void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (lib == NULL) {
		return;
	}
	typedef CUptiResult (*reg_fn)(CUpti_BuffersCallbackRequestFunc,
				      CUpti_BuffersCallbackCompleteFunc);
	reg_fn reg = (reg_fn)dlsym(lib, "cuptiActivityRegisterCallbacks");
	CUptiResult (*enable)(CUpti_ActivityKind) =
		(CUptiResult(*)(CUpti_ActivityKind))dlsym(lib, "cuptiActivityEnable");
	next_record = (CUptiResult(*)(uint8_t *, size_t, CUpti_Activity **))dlsym(
		lib, "cuptiActivityGetNextRecord");
	if (reg == NULL || enable == NULL || next_record == NULL) {
		return;
	}
	reg(requested, completed);
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		enable(kinds[i]);
	}
}
