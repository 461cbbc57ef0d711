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

static int memcpy_type(const char *name)
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

/* Model type of a complete event by category, -1 for categories not modelled. */
int isc_kineto_type_of(const char *cat, const char *name)
{
	static const struct {
		const char *cat;
		int type;
	} cats[] = {
		{ "kernel", ISC_T_KERNEL },	    { "gpu_memset", ISC_T_MEMSET },
		{ "cuda_sync", ISC_T_GPU_SYNC },    { "cuda_runtime", ISC_T_CUDA_API },
		{ "cuda_driver", ISC_T_CUDA_API },  { "cpu_op", ISC_T_CPU_OP },
		{ "user_annotation", ISC_T_SCOPE },
	};
	if (strcmp(cat, "gpu_memcpy") == 0) {
		return memcpy_type(name);
	}
	for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]); i++) {
		if (strcmp(cats[i].cat, cat) == 0) {
			return cats[i].type;
		}
	}
	return -1;
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

/* Categories Kineto writes that carry nothing the analysis needs: host-side ones, and
 * cuda_event, the cudaEventRecord marks whose stream and correlation the cuda_sync
 * records that wait for them repeat (wait_on_stream, wait_on_cuda_event_record_corr_id). */
static bool known_host_cat(const char *cat)
{
	static const char *const known[] = {
		"Trace", "python_function",	"cpu_instant_event", "overhead", "fwdbwd",
		"ac2g",	 "cuda_profiler_range", "cuda_event"
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(cat, known[i]) == 0) {
			return true;
		}
	}
	return false;
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

int isc_kineto_other_event(struct isc_read_ctx *rc, const struct isc_kineto_other *o)
{
	if (strcmp(o->cat, "gpu_user_annotation") == 0) {
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
	if (o->cat[0] == '\0' || known_host_cat(o->cat)) {
		return 0;
	}
	struct isc_agg g = {
		.name = isc_trace_intern(rc->t, o->cat, strlen(o->cat)),
		.count = 1,
		.total_us = (double)(o->dur > 0 ? o->dur : 0) / 1000.0,
		.max_us = (double)(o->dur > 0 ? o->dur : 0) / 1000.0,
		.bytes = looks_like_device(o->cat, o) ? 1 : 0,
	};
	return isc_agg_add(&rc->t->inputs[rc->input].unknown_cats, &g);
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
