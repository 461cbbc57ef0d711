/* SPDX-License-Identifier: MIT */
/*
 * A small CUPTI consumer for the simulator's own tests: dlopens the simulated
 * libcupti (as a profiler would), registers buffer callbacks and keeps a copy of
 * every record delivered. Not the product's consumer (preload/gpu/cupti.c).
 */
#ifndef SIMGPU_CUPTI_CLIENT_H
#define SIMGPU_CUPTI_CLIENT_H

#include <cupti.h>
#include <stdbool.h>
#include <stddef.h>

#define CLIENT_MAX 8192

struct client_api {
	__typeof__(cuptiActivityEnable) *enable;
	__typeof__(cuptiActivityDisable) *disable;
	__typeof__(cuptiActivityRegisterCallbacks) *register_callbacks;
	__typeof__(cuptiActivityFlushAll) *flush_all;
	__typeof__(cuptiActivityGetNextRecord) *next_record;
	__typeof__(cuptiActivityGetNumDroppedRecords) *dropped;
	__typeof__(cuptiActivityPushExternalCorrelationId) *push_external;
	__typeof__(cuptiActivityPopExternalCorrelationId) *pop_external;
	__typeof__(cuptiSetThreadIdType) *set_thread_id_type;
	__typeof__(cuptiActivityRegisterTimestampCallback) *register_timestamp;
	__typeof__(cuptiGetTimestamp) *get_timestamp;
	__typeof__(cuptiGetVersion) *get_version;
	__typeof__(cuptiGetResultString) *result_string;
	__typeof__(cuptiSubscribe) *subscribe;
	__typeof__(cuptiSubscribe_v2) *subscribe_v2;
	__typeof__(cuptiUnsubscribe) *unsubscribe;
	__typeof__(cuptiEnableDomain) *enable_domain;
	__typeof__(cuptiGetCallbackName) *callback_name;
	__typeof__(cuptiFinalize) *finalize;
	__typeof__(cuptiEnableCallback) *enable_callback;
	__typeof__(cuptiGetGraphNodeId) *graph_node_id;
	__typeof__(cuptiGetGraphId) *graph_id;
};

/* Copies of what the completion callback delivered, in delivery order per kind. */
struct client_records {
	CUpti_ActivityKernel10 kernels[CLIENT_MAX];
	size_t n_kernels;
	CUpti_ActivityMemcpy6 copies[CLIENT_MAX];
	size_t n_copies;
	CUpti_ActivityMemset4 memsets[CLIENT_MAX];
	size_t n_memsets;
	CUpti_ActivityAPI apis[CLIENT_MAX];
	size_t n_apis;
	CUpti_ActivitySynchronization2 syncs[CLIENT_MAX];
	size_t n_syncs;
	CUpti_ActivityExternalCorrelation externals[CLIENT_MAX];
	size_t n_externals;
	CUpti_ActivityDevice5 devices[16];
	size_t n_devices;
	CUpti_ActivityOverhead3 overheads[CLIENT_MAX];
	size_t n_overheads;
	size_t n_records; /* every record, whatever its kind */
	size_t n_buffers; /* completion callbacks */
	char kernel_names[CLIENT_MAX][64];
};

extern struct client_api cupti;
extern struct client_records got;

/* Loads the simulated libcupti; false (with a message) when it cannot. */
bool client_open(void);

/* Buffers of @p size bytes, at most @p max_buffers of them (0: unlimited). */
void client_set_buffers(size_t size, size_t max_buffers);

/* Opens CUPTI, registers the callbacks and enables each kind of the 0-terminated list. */
bool client_start(const CUpti_ActivityKind *kinds);

/* cuptiActivityFlushAll(forced ? FORCED : 0). */
void client_flush(bool forced);

/* CLOCK_MONOTONIC in ns: what InferScope passes as the timestamp callback. */
uint64_t client_monotonic(void);

#endif /* SIMGPU_CUPTI_CLIENT_H */
