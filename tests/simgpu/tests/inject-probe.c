/* SPDX-License-Identifier: MIT */
/*
 * A CUDA_INJECTION64_PATH library for the injection tests: counts how often the
 * runtime calls InitializeInjection, notes how many operations had run by then,
 * and (with PROBE_CUPTI=path) starts CUPTI from inside the injection, as
 * InferScope does, counting the API records it then receives.
 */
#include <cupti.h>
#include <dlfcn.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int InitializeInjection(void);
EXPORT int probe_calls(void);
EXPORT long probe_ops_at_init(void);
EXPORT long probe_api_records(uint32_t cbid);

static int calls;
static long ops_at_init = -1;
static long records[1024];
static __typeof__(cuptiActivityGetNextRecord) *next_record;
static __typeof__(cuptiActivityFlushAll) *flush_all;

static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, 1u << 16);
	*size = 1u << 16;
	*max_records = 0;
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				 size_t valid)
{
	CUpti_Activity *r = NULL;

	while (next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
		const CUpti_ActivityAPI *api = (const void *)r;

		if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME && api->cbid < 1024) {
			records[api->cbid]++;
		}
	}
	free(buffer);
}

static void start_cupti(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	__typeof__(cuptiActivityRegisterCallbacks) *reg;
	__typeof__(cuptiActivityEnable) *enable;

	if (!lib) {
		return;
	}
	reg = (__typeof__(reg))dlsym(lib, "cuptiActivityRegisterCallbacks");
	enable = (__typeof__(enable))dlsym(lib, "cuptiActivityEnable");
	next_record = (__typeof__(next_record))dlsym(lib, "cuptiActivityGetNextRecord");
	flush_all = (__typeof__(flush_all))dlsym(lib, "cuptiActivityFlushAll");
	reg(on_request, on_complete);
	enable(CUPTI_ACTIVITY_KIND_RUNTIME);
}

EXPORT int InitializeInjection(void)
{
	size_t (*op_count)(void) = (size_t(*)(void))dlsym(RTLD_DEFAULT, "simgpu_op_count");
	const char *cupti = getenv("PROBE_CUPTI");

	calls++;
	ops_at_init = op_count ? (long)op_count() : -2;
	if (cupti) {
		start_cupti(cupti);
	}
	return 1;
}

EXPORT int probe_calls(void)
{
	return calls;
}

EXPORT long probe_ops_at_init(void)
{
	return ops_at_init;
}

EXPORT long probe_api_records(uint32_t cbid)
{
	if (flush_all) {
		flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	}
	return cbid < 1024 ? records[cbid] : -1;
}
