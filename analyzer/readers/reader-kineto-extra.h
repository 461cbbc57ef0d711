/* SPDX-License-Identifier: MIT */
/* What the Kineto reader keeps beside its events (reader-kineto-extra.c, -flows.c). */
#ifndef ISC_READER_KINETO_EXTRA_H
#define ISC_READER_KINETO_EXTRA_H

#include "analyzer/base/key-map.h"
#include "analyzer/model/model-extra.h"
#include "analyzer/readers/reader.h"

/* What a category means to the reader: every spelling of every generation maps to one. */
enum isc_kineto_kind {
	ISC_KK_KERNEL,
	ISC_KK_MEMCPY,
	ISC_KK_MEMSET,
	ISC_KK_SYNC,
	ISC_KK_API,
	ISC_KK_CPU_OP,
	ISC_KK_SCOPE,
	ISC_KK_GPU_ANNOT,
	ISC_KK_FLOW_LAUNCH,
	ISC_KK_FLOW_FWDBWD,
	ISC_KK_HOST_OTHER, /* known, nothing the analysis needs */
};

/* The categories of every generation (key ids for a key map: the table's index). */
#define ISC_KINETO_MAX_CATS 64
extern const struct isc_keydef isc_kineto_cats[];
extern const uint8_t isc_kineto_cat_kind[]; /* enum isc_kineto_kind, by key id */
extern const size_t isc_kineto_n_cats;

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

/* Model type of a copy by its name (HtoD, DtoH, HtoH, else DtoD). */
int isc_kineto_memcpy_type(const char *name);

/* The sub-kind and v.sync of a cuda_sync event named name (model.h, isc_gpu_sync_kind). */
void isc_kineto_sync_fields(struct isc_ev *ev, const char *name, const struct isc_kineto_wait *w);

/* gpu_user_annotation (o->cat unused): kept for the export. 0 or -ENOMEM. */
int isc_kineto_gpu_annot(struct isc_read_ctx *rc, const struct isc_kineto_other *o);
/* A category the reader does not know: what it adds to the input's unknown_cats (counted
 * per name, with the events that look like device work), its name interned in rc's trace;
 * false when there is nothing to count. */
bool isc_kineto_other_agg(struct isc_read_ctx *rc, const struct isc_kineto_other *o,
			  struct isc_agg *g);
/* A top-level value captured verbatim: "distributedInfo" (its rank is read) or
 * "deviceProperties". Takes ownership of text. */
void isc_kineto_meta_value(struct isc_read_ctx *rc, bool distributed, char *text);

/*
 * Flow events ("ph" s, t, f) bind to the complete event on their track (pid, tid) that
 * starts at their time. Kineto writes each right after its event, so the reader binds
 * most on the spot (ev set); the others are bound when the input is read, by track and
 * start time among the input's events. Then the endpoints of one (kind, id) are linked in
 * time order: s -> t ... -> f; an f or t with no start before it is dropped.
 */
enum isc_kineto_track { ISC_KT_NUM, ISC_KT_STREAM, ISC_KT_LEGACY_CPU, ISC_KT_LEGACY_GPU };

struct isc_kineto_flow_end {
	int64_t ts;
	uint64_t id;
	int64_t pid, tid;
	uint32_t ev;   /* the bound event's index + 1, 0 while unbound */
	uint8_t kind;  /* enum isc_flow_kind */
	uint8_t phase; /* 's', 't' or 'f' */
	uint8_t track; /* enum isc_kineto_track: how pid and tid name the track */
	bool id_str;   /* id is a string's id (a parallel read's part maps it) */
	/* how the event named pid and tid (the reader's), to bind at a part's merge */
	uint8_t pid_kind, tid_kind;
};

struct isc_kineto_flows {
	struct isc_kineto_flow_end *v;
	size_t n, cap;
};

int isc_kineto_flow_add(struct isc_kineto_flows *f, const struct isc_kineto_flow_end *e);
/* Binds what is unbound among the input's events from index first on, links the flows
 * into the trace, and frees f. 0 or -ENOMEM. */
int isc_kineto_flows_finish(struct isc_read_ctx *rc, struct isc_kineto_flows *f, size_t first);

#endif /* ISC_READER_KINETO_EXTRA_H */
