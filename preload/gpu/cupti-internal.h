/* SPDX-License-Identifier: MIT */
/*
 * Shared by the CUPTI files: the functions we took from the dlopen'ed libcupti, and
 * the record side's entry points (cupti-records.c).
 */
#ifndef ISC_CUPTI_INTERNAL_H
#define ISC_CUPTI_INTERNAL_H

#include <cupti.h>
#include <stdbool.h>
#include <stdint.h>

#include "format/record.h"
#include "format/json-writer.h"

struct isc_cupti_api {
	CUptiResult (*get_version)(uint32_t *version);
	CUptiResult (*subscribe_v2)(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *user,
				    CUpti_SubscriberParams *params);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *user);
	CUptiResult (*set_thread_id_type)(CUpti_ActivityThreadIdType type);
	CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc fn);
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc req,
					  CUpti_BuffersCallbackCompleteFunc done);
	CUptiResult (*enable)(CUpti_ActivityKind kind);
	CUptiResult (*enable_runtime_api)(CUpti_CallbackId cbid, uint8_t enable);
	CUptiResult (*enable_driver_api)(CUpti_CallbackId cbid, uint8_t enable);
	CUptiResult (*flush_all)(uint32_t flag);
	CUptiResult (*get_next_record)(uint8_t *buffer, size_t valid, CUpti_Activity **record);
	CUptiResult (*get_num_dropped)(CUcontext ctx, uint32_t stream, size_t *dropped);
	CUptiResult (*push)(CUpti_ExternalCorrelationKind kind, uint64_t id);
	CUptiResult (*pop)(CUpti_ExternalCorrelationKind kind, uint64_t *id);
	CUptiResult (*get_timestamp)(uint64_t *ts);
	CUptiResult (*get_callback_name)(CUpti_CallbackDomain domain, uint32_t cbid,
					 const char **name);
	CUptiResult (*get_result_string)(CUptiResult r, const char **s);
	/* graph nodes (cupti-graphs.c); NULL in a libcupti without them */
	CUptiResult (*enable_callback)(uint32_t enable, CUpti_SubscriberHandle s,
				       CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
	CUptiResult (*graph_node_id)(CUgraphNode node, uint64_t *id);
	CUptiResult (*graph_id)(CUgraph graph, uint32_t *id);
};

extern struct isc_cupti_api isc_cupti;

/* ---- cupti-records.c ---- */

/* Maps the correlation table and the pending list; 0 or -ENOMEM. */
int isc_cupti_records_init(void);
/* CUPTI's buffer callbacks. */
void CUPTIAPI isc_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI isc_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					 size_t size, size_t valid);
/* After the final forced flush: writes what still waits for its correlation. */
void isc_cupti_records_drain(void);
/* The CUPTI function name of a callback id, our interned id (0 unknown), and whether
 * the function issues GPU work or waits for it (launch, copy, memset, synchronise). */
uint32_t isc_cupti_api_name(CUpti_CallbackDomain domain, uint32_t cbid, bool *issues_work);

struct isc_cupti_stats {
	uint64_t dropped;	  /* CUPTI's count of records it could not store */
	uint64_t buffers;	  /* buffers completed */
	uint64_t buffers_refused; /* requests refused at the cap (records are dropped) */
	uint64_t records;	  /* activity records decoded */
	uint64_t unresolved;	  /* GPU records whose host call never showed up */
	uint64_t incomplete;	  /* handed over in flight without timestamps: dropped */
	uint64_t overhead_ns;	  /* CUPTI's own overhead records */
};
void isc_cupti_stats(struct isc_cupti_stats *out);

/* ---- cupti-graphs.c ---- */

/* The subscriber's callback: CUDA graph nodes created and cloned (resource domain). */
void CUPTIAPI isc_cupti_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data);
/* Enables the graph node callbacks of subscriber sub; when CUPTI refuses them, graph
 * replays stay charged to cudaGraphLaunch and the report says why. */
void isc_cupti_graphs_start(CUpti_SubscriberHandle sub);
struct isc_cupti_report;
void isc_cupti_graphs_report(struct isc_cupti_report *r);

/* ---- cupti-decode.c ---- */

/* A GPU record turned into ours, waiting for the host call it belongs to: the
 * correlation id (payload raw[0]) and the thread (tid) are filled in when CUPTI's
 * correlation id `cc` resolves. */
struct isc_staged {
	uint32_t cc;
	uint8_t n;	    /* records in ev */
	uint8_t kernel;	    /* occupancy is computed once the device is known */
	uint8_t resolved;   /* the host side is filled in */
	uint8_t incomplete; /* no timestamps: in flight at a forced flush */
	struct isc_event ev[2];
};

/* Decodes a kernel, copy, memset or synchronisation record; false for other kinds. */
bool isc_cupti_decode_gpu(const CUpti_Activity *rec, struct isc_staged *out);
/* Decodes a DEVICE record into the device table. */
void isc_cupti_decode_device(const CUpti_Activity *rec);
/* Device of a context, learnt from kernel and copy records (-1 unknown). */
int isc_cupti_context_device(uint32_t context);

/* Timestamps: our clock through the callback, or CUPTI's shifted by a calibrated
 * offset (cupti.c). */
uint64_t isc_cupti_time(uint64_t cupti_ts);

#endif /* ISC_CUPTI_INTERNAL_H */
