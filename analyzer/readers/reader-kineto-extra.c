/* SPDX-License-Identifier: MIT */
/*
 * The parts of a Kineto trace that are not events of the model but must not be lost:
 * GPU-side annotations and the top-level metadata go to the export (HTA reads them), and
 * complete events of categories the reader does not understand are counted, so that the
 * report says what it could not judge (a non-CUDA accelerator's device work, for one)
 * instead of dropping it silently.
 */
#include "analyzer/readers/reader-kineto-extra.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every category name of every generation (output_json.cpp and ActivityType.cpp through
 * their history; the legacy profiler's export has none, its flows excepted). */
const struct isc_keydef isc_kineto_cats[] = {
	/* PyTorch 1.10 on */
	{ "kernel", 0 },
	{ "gpu_memcpy", 1 },
	{ "gpu_memset", 2 },
	{ "cuda_sync", 3 },
	{ "cuda_runtime", 4 },
	{ "cuda_driver", 5 },
	{ "cpu_op", 6 },
	{ "user_annotation", 7 },
	{ "gpu_user_annotation", 8 },
	{ "ac2g", 9 },
	{ "fwdbwd", 10 },
	/* PyTorch 1.8 and 1.9 */
	{ "Kernel", 11 },
	{ "Memcpy", 12 },
	{ "Memset", 13 },
	{ "Runtime", 14 },
	{ "Operator", 15 },
	{ "gpu_user_Annotation", 16 },
	{ "User", 17 }, /* 1.8: GPU-side user annotations, tid "stream N user" */
	{ "async", 18 },
	{ "async_gpu", 19 },
	{ "forward_backward", 20 },
	/* the legacy torch.autograd.profiler export's launch flows */
	{ "cpu_to_cuda", 21 },
	/* host-side categories that carry nothing the analysis needs; cuda_event: the
	 * cudaEventRecord marks whose stream and correlation the cuda_sync records that wait
	 * for them repeat */
	{ "Trace", 22 },
	{ "python_function", 23 },
	{ "cpu_instant_event", 24 },
	{ "overhead", 25 },
	{ "cuda_profiler_range", 26 },
	{ "cuda_event", 27 },
	{ "external_correlation", 28 },
};

const uint8_t isc_kineto_cat_kind[] = {
	ISC_KK_KERNEL,	    ISC_KK_MEMCPY,	ISC_KK_MEMSET,	    ISC_KK_SYNC,
	ISC_KK_API,	    ISC_KK_API,		ISC_KK_CPU_OP,	    ISC_KK_SCOPE,
	ISC_KK_GPU_ANNOT,   ISC_KK_FLOW_LAUNCH, ISC_KK_FLOW_FWDBWD, ISC_KK_KERNEL,
	ISC_KK_MEMCPY,	    ISC_KK_MEMSET,	ISC_KK_API,	    ISC_KK_CPU_OP,
	ISC_KK_GPU_ANNOT,   ISC_KK_GPU_ANNOT,	ISC_KK_FLOW_LAUNCH, ISC_KK_FLOW_LAUNCH,
	ISC_KK_FLOW_FWDBWD, ISC_KK_FLOW_LAUNCH, ISC_KK_HOST_OTHER,  ISC_KK_HOST_OTHER,
	ISC_KK_HOST_OTHER,  ISC_KK_HOST_OTHER,	ISC_KK_HOST_OTHER,  ISC_KK_HOST_OTHER,
	ISC_KK_HOST_OTHER,
};

const size_t isc_kineto_n_cats = sizeof(isc_kineto_cats) / sizeof(isc_kineto_cats[0]);

_Static_assert(sizeof(isc_kineto_cats) / sizeof(isc_kineto_cats[0]) ==
			       sizeof(isc_kineto_cat_kind) &&
		       sizeof(isc_kineto_cat_kind) <= ISC_KINETO_MAX_CATS,
	       "one kind per category, a counter for each");

int isc_kineto_memcpy_type(const char *name)
{
	if (strstr(name, "HtoD") != NULL) {
		return ISC_T_H2D;
	}
	if (strstr(name, "DtoH") != NULL) {
		return ISC_T_D2H;
	}
	if (strstr(name, "HtoH") != NULL) {
		return ISC_T_H2H;
	}
	return ISC_T_D2D;
}

void isc_kineto_sync_fields(struct isc_ev *ev, const char *name, const struct isc_kineto_wait *w)
{
	/* Kineto names a cuda_sync record by its CUPTI synchronization type */
	ev->sub = strcmp(name, "Stream Wait Event") == 0 ? ISC_GS_WAIT_EVENT
		  : strcmp(name, "Event Sync") == 0	 ? ISC_GS_EVENT_SYNC
							 : ISC_GS_OTHER;
	ev->v.bytes = 0;
	if (ev->sub == ISC_GS_OTHER) {
		return;
	}
	/* -1 is Kineto's "not known"; CUPTI's ids are 32-bit */
	bool stream_ok = w->has_stream && w->stream >= 0 && w->stream <= INT32_MAX;
	bool record_ok = w->has_record && w->record_corr > 0 && w->record_corr <= UINT32_MAX;
	ev->v.sync.wait_stream = stream_ok ? (int32_t)w->stream : -1;
	ev->v.sync.record_corr = record_ok ? (uint32_t)w->record_corr : 0;
}

/* Device work: on a stream or a device, or named like it (e.g. "mtia_ccp_events",
 * "xpu_kernel", "hpu_memcpy"), and not a host runtime or driver call. */
static bool looks_like_device(const char *cat, const struct isc_kineto_other *o)
{
	if (strstr(cat, "runtime") != NULL || strstr(cat, "driver") != NULL) {
		return false;
	}
	static const char *const hints[] = { "kernel", "memcpy", "memset",     "gpu",
					     "device", "ccp",	 "accelerator" };
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		if (strstr(cat, hints[i]) != NULL) {
			return true;
		}
	}
	return o->has_stream || o->has_device;
}

int isc_kineto_gpu_annot(struct isc_read_ctx *rc, const struct isc_kineto_other *o)
{
	struct isc_gpu_annot a = {
		.ts = o->ts,
		.dur = o->dur > 0 ? o->dur : 0,
		.corr = o->has_corr && o->corr > 0 ? (uint64_t)o->corr : 0,
		.name = o->name,
		.stream = o->has_stream ? (int32_t)o->stream : 0,
		.device = o->has_device ? (int16_t)o->device : 0,
		.input = rc->input,
	};
	return isc_trace_add_annot(rc->t, &a);
}

bool isc_kineto_other_agg(struct isc_read_ctx *rc, const struct isc_kineto_other *o,
			  struct isc_agg *g)
{
	if (o->cat[0] == '\0') {
		return false;
	}
	*g = (struct isc_agg){
		.name = isc_trace_intern(rc->t, o->cat, strlen(o->cat)),
		.count = 1,
		.total_us = (double)(o->dur > 0 ? o->dur : 0) / 1000.0,
		.max_us = (double)(o->dur > 0 ? o->dur : 0) / 1000.0,
		.bytes = looks_like_device(o->cat, o) ? 1 : 0,
	};
	return true;
}

void isc_kineto_meta_value(struct isc_read_ctx *rc, bool distributed, char *text)
{
	struct isc_input *in = &rc->t->inputs[rc->input];
	char **slot = distributed ? &in->distributed_info : &in->device_properties;
	free(*slot);
	*slot = text;
	if (!distributed || text == NULL || text[0] != '{') {
		return;
	}
	/* The capture writes keys as "key": at the first level only for objects; a nested
	 * "rank" would come after a '{' deeper in, which Kineto never writes. */
	const char *p = strstr(text, "\"rank\":");
	if (p != NULL) {
		char *end = NULL;
		long v = strtol(p + 7, &end, 10);
		in->rank = end != p + 7 && v >= 0 && v < 1 << 30 ? (int)v : in->rank;
	}
}
