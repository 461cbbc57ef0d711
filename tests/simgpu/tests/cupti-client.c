/* SPDX-License-Identifier: MIT */
/*
 * The tests' CUPTI consumer (see cupti-client.h). SIMGPU_CUPTI_PATH comes from
 * meson: the simulated libcupti.so.13 in the build tree.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/simgpu/tests/cupti-client.h"

struct client_api cupti;
struct client_records got;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t buffer_size = 1u << 20;
static size_t buffer_max;
static size_t buffers_given;

uint64_t client_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define RESOLVE(field, symbol)                                             \
	do {                                                               \
		cupti.field = (__typeof__(cupti.field))dlsym(lib, symbol); \
		if (!cupti.field) {                                        \
			fprintf(stderr, "client: %s missing\n", symbol);   \
			return false;                                      \
		}                                                          \
	} while (0)

bool client_open(void)
{
	void *lib = dlopen(SIMGPU_CUPTI_PATH, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		fprintf(stderr, "client: %s\n", dlerror());
		return false;
	}
	RESOLVE(enable, "cuptiActivityEnable");
	RESOLVE(disable, "cuptiActivityDisable");
	RESOLVE(register_callbacks, "cuptiActivityRegisterCallbacks");
	RESOLVE(flush_all, "cuptiActivityFlushAll");
	RESOLVE(next_record, "cuptiActivityGetNextRecord");
	RESOLVE(dropped, "cuptiActivityGetNumDroppedRecords");
	RESOLVE(push_external, "cuptiActivityPushExternalCorrelationId");
	RESOLVE(pop_external, "cuptiActivityPopExternalCorrelationId");
	RESOLVE(set_thread_id_type, "cuptiSetThreadIdType");
	RESOLVE(register_timestamp, "cuptiActivityRegisterTimestampCallback");
	RESOLVE(get_timestamp, "cuptiGetTimestamp");
	RESOLVE(get_version, "cuptiGetVersion");
	RESOLVE(result_string, "cuptiGetResultString");
	RESOLVE(subscribe, "cuptiSubscribe");
	RESOLVE(subscribe_v2, "cuptiSubscribe_v2");
	RESOLVE(unsubscribe, "cuptiUnsubscribe");
	RESOLVE(enable_domain, "cuptiEnableDomain");
	RESOLVE(callback_name, "cuptiGetCallbackName");
	RESOLVE(finalize, "cuptiFinalize");
	RESOLVE(enable_callback, "cuptiEnableCallback");
	RESOLVE(graph_node_id, "cuptiGetGraphNodeId");
	RESOLVE(graph_id, "cuptiGetGraphId");
	return true;
}

void client_set_buffers(size_t size, size_t max_buffers)
{
	buffer_size = size;
	buffer_max = max_buffers;
}

static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0;
	if (buffer_max && buffers_given >= buffer_max) {
		*buffer = NULL;
		*size = 0;
		return;
	}
	buffers_given++;
	*buffer = aligned_alloc(8, buffer_size);
	*size = buffer_size;
}

static void keep(const CUpti_Activity *r)
{
	got.n_records++;
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		if (got.n_kernels < CLIENT_MAX) {
			const CUpti_ActivityKernel10 *k = (const void *)r;

			snprintf(got.kernel_names[got.n_kernels], 64, "%s", k->name ? k->name : "");
			got.kernels[got.n_kernels++] = *k;
		}
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		if (got.n_copies < CLIENT_MAX) {
			got.copies[got.n_copies++] = *(const CUpti_ActivityMemcpy6 *)r;
		}
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		if (got.n_memsets < CLIENT_MAX) {
			got.memsets[got.n_memsets++] = *(const CUpti_ActivityMemset4 *)r;
		}
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		if (got.n_apis < CLIENT_MAX) {
			got.apis[got.n_apis++] = *(const CUpti_ActivityAPI *)r;
		}
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		if (got.n_syncs < CLIENT_MAX) {
			got.syncs[got.n_syncs++] = *(const CUpti_ActivitySynchronization2 *)r;
		}
		break;
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		if (got.n_externals < CLIENT_MAX) {
			got.externals[got.n_externals++] =
				*(const CUpti_ActivityExternalCorrelation *)r;
		}
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		if (got.n_devices < 16) {
			got.devices[got.n_devices++] = *(const CUpti_ActivityDevice5 *)r;
		}
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		if (got.n_overheads < CLIENT_MAX) {
			got.overheads[got.n_overheads++] = *(const CUpti_ActivityOverhead3 *)r;
		}
		break;
	default:
		break;
	}
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				 size_t valid)
{
	CUpti_Activity *r = NULL;

	pthread_mutex_lock(&lock);
	got.n_buffers++;
	while (cupti.next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
		keep(r);
	}
	pthread_mutex_unlock(&lock);
	free(buffer);
}

bool client_start(const CUpti_ActivityKind *kinds)
{
	if (!client_open()) {
		return false;
	}
	if (cupti.register_callbacks(on_request, on_complete) != CUPTI_SUCCESS) {
		return false;
	}
	for (; *kinds; kinds++) {
		if (cupti.enable(*kinds) != CUPTI_SUCCESS) {
			return false;
		}
	}
	return true;
}

void client_flush(bool forced)
{
	cupti.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}
