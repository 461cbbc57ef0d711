/* SPDX-License-Identifier: MIT */
/*
 * Internals of the simulated CUPTI (libcupti.so.13), shared by its files.
 *
 * State is global, as in the real library, behind one recursive mutex: the
 * client's buffer-request callback runs with it held (so it may call back into
 * CUPTI on the same thread), the buffer-completed callback never does. Records
 * of operations that have not finished on the virtual device wait in a pending
 * heap until the device reaches their end, so a buffer only ever holds complete
 * records, except after a forced flush, where unfinished ones come out with zero
 * timestamps, as CUPTI documents for records it could not time.
 */
#ifndef ISC_CUPTI_SIM_H
#define ISC_CUPTI_SIM_H

#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tests/simgpu/sim-tool.h"

#define CUPTI_EXPORT __attribute__((visibility("default")))
#define ISC_CUPTI_KINDS 64

/* Every record this CUPTI writes, so a pending one has room whatever its kind. */
union isc_cupti_record {
	CUpti_Activity any;
	CUpti_ActivityKernel10 kernel;
	CUpti_ActivityMemcpy6 memcpy;
	CUpti_ActivityMemcpyPtoP4 peer;
	CUpti_ActivityMemset4 memset;
	CUpti_ActivityAPI api;
	CUpti_ActivitySynchronization2 sync;
	CUpti_ActivityExternalCorrelation external;
	CUpti_ActivityDevice5 device;
	CUpti_ActivityOverhead3 overhead;
};

struct isc_cupti_buf {
	uint8_t *data;
	size_t size;
	size_t used;
	size_t max_records; /* 0: as many as fit */
	size_t n_records;
	struct isc_cupti_buf *next;
};

struct isc_cupti_pending {
	uint64_t ready_ns; /* CLOCK_MONOTONIC end of the operation */
	union isc_cupti_record rec;
};

struct isc_cupti_state {
	pthread_mutex_t lock;
	const struct simgpu_runtime *rt;
	_Atomic bool enabled[ISC_CUPTI_KINDS];
	CUpti_BuffersCallbackRequestFunc request;
	CUpti_BuffersCallbackCompleteFunc complete;
	CUpti_TimestampCallbackFunc ts_cb;
	int64_t ts_offset; /* record clock = CLOCK_MONOTONIC + offset */
	CUpti_ActivityThreadIdType tid_type;
	bool latency_timestamps;
	bool kernels_serialised;
	uint32_t devices_emitted; /* bit per device with a DEVICE record */
	size_t dropped;
	uint64_t buffers_requested;
	uint64_t buffer_limit; /* SIMGPU_CUPTI_BUFFER_LIMIT, 0: none */
	uint32_t flush_period_ms;
	uint32_t subscribe_ms; /* SIMGPU_CUPTI_SUBSCRIBE_MS: how long a subscription takes */
	bool refuse_resource;  /* SIMGPU_CUPTI_NO_RESOURCE: the resource domain is refused */
	struct isc_cupti_buf *cur;
	struct isc_cupti_buf *full_head;
	struct isc_cupti_buf *full_tail;
	struct isc_cupti_pending *pending; /* min-heap on ready_ns */
	size_t n_pending;
	size_t cap_pending;
	char holder[64]; /* SIMGPU_CUPTI_HOLDER: another tool owns CUPTI */
};

extern struct isc_cupti_state isc_cupti;

/* cupti-api.c */
void isc_cupti_setup(void);
bool isc_cupti_connect(void);
bool isc_cupti_enabled(CUpti_ActivityKind kind);
uint64_t isc_cupti_ts(uint64_t mono_ns);
uint64_t isc_cupti_now_mono(void);

/* buffers.c */
void isc_cupti_put(const union isc_cupti_record *rec, uint64_t ready_ns);
void isc_cupti_retire(uint64_t now_ns);
CUptiResult isc_cupti_flush(bool forced, bool deliver_empty);
size_t isc_cupti_record_size(CUpti_ActivityKind kind);
void isc_cupti_worker_stop(void);

/* records.c */
void isc_cupti_record_api(const struct simgpu_api *call);
void isc_cupti_record_op(const struct simgpu_op *op);
void isc_cupti_record_sync(const struct simgpu_sync *sync);
void isc_cupti_record_devices(void);
void isc_cupti_record_overhead(CUpti_ActivityOverheadKind kind, uint64_t start_mono,
			       uint64_t end_mono);
uint32_t isc_cupti_thread_id(uint32_t tid, uint64_t pthread_id);

/* correlation.c */
void isc_cupti_record_external(uint32_t correlation_id);

/* callbacks.c */
void isc_cupti_callback(const struct simgpu_api *call, CUpti_ApiCallbackSite site);
void isc_cupti_graph_callback(const struct simgpu_graph_node *node);
bool isc_cupti_has_subscriber(void);
void isc_cupti_unsubscribe_all(void);

/* cbid-names.c (generated) */
const char *isc_cupti_cbid_name(int driver, uint32_t cbid);

#endif /* ISC_CUPTI_SIM_H */
