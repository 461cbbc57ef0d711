/* SPDX-License-Identifier: MIT */
/* What the Kineto reader keeps beside its events (reader-kineto-extra.c). */
#ifndef ISC_READER_KINETO_EXTRA_H
#define ISC_READER_KINETO_EXTRA_H

#include "analyzer/model/model-extra.h"
#include "analyzer/readers/reader.h"

/* A complete event of a category the reader does not model as an event. */
struct isc_kineto_other {
	const char *cat;
	uint32_t name;
	int64_t ts, dur, stream, device, corr;
	bool has_stream, has_device, has_corr;
};

/* What a cuda_sync record says about the CUDA event it waits for: wait_on_stream and,
 * in PyTorch since late 2023, wait_on_cuda_event_record_corr_id. */
struct isc_kineto_wait {
	int64_t stream, record_corr;
	bool has_stream, has_record;
};

/* Model type of a complete event by category (and, for copies, name); -1 when not modelled. */
int isc_kineto_type_of(const char *cat, const char *name);

/* The sub-kind and v.sync of a cuda_sync event named name (model.h, isc_gpu_sync_kind). */
void isc_kineto_sync_fields(struct isc_ev *ev, const char *name, const struct isc_kineto_wait *w);

/* gpu_user_annotation: kept for the export; any other category: counted per name in
 * the input's unknown_cats, with the events that look like device work. 0 or -ENOMEM. */
int isc_kineto_other_event(struct isc_read_ctx *rc, const struct isc_kineto_other *o);
/* A top-level value captured verbatim: "distributedInfo" (its rank is read) or
 * "deviceProperties". Takes ownership of text. */
void isc_kineto_meta_value(struct isc_read_ctx *rc, bool distributed, char *text);

#endif /* ISC_READER_KINETO_EXTRA_H */
