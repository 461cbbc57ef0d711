/* SPDX-License-Identifier: MIT */
/*
 * The vocabulary of the trace: every name that the writer (format/convert.c, the encoders,
 * the preload's trailer) and the readers (analyzer/) must spell alike. A name is written
 * here once; both sides use these macros and tables, so a key cannot drift between the
 * recorder and the analyzer. docs/trace-format.md documents what each one means.
 */
#ifndef ISC_VOCAB_H
#define ISC_VOCAB_H

#include <stddef.h>

/* The format version the writer stamps (additive changes keep the major). */
#define ISC_FORMAT_VERSION "1.0"
#define ISC_FORMAT_MAJOR 1

/* Event types (the "type" member of an event). */
#define ISC_TYPE_CPU_CALL "cpu_call"
#define ISC_TYPE_INSTANT "instant"
#define ISC_TYPE_CPU_SYSCALL "cpu_syscall"
#define ISC_TYPE_MEMORY_EVENT "memory_event"
#define ISC_TYPE_COUNTER "counter"
#define ISC_TYPE_CUDA_API "cuda_api"
#define ISC_TYPE_GPU_KERNEL "gpu_kernel"
#define ISC_TYPE_H2D_COPY "h2d_copy"
#define ISC_TYPE_D2H_COPY "d2h_copy"
#define ISC_TYPE_D2D_COPY "d2d_copy"
#define ISC_TYPE_H2H_COPY "h2h_copy"
#define ISC_TYPE_GPU_MEMSET "gpu_memset"
#define ISC_TYPE_GPU_SYNC "gpu_sync"
#define ISC_TYPE_CUDA_GRAPH_NODE "cuda_graph_node"

/* Keys: top-level sections, event members and metadata members. */
#define ISC_KEY_ALLOCATIONS_BYTES "allocations_bytes"
#define ISC_KEY_ASYNC "async"
#define ISC_KEY_BLOCKED "blocked"
#define ISC_KEY_BYTES "bytes"
#define ISC_KEY_CALL_DEPTH "call_depth"
#define ISC_KEY_CATEGORY "category"
#define ISC_KEY_CHILD_IDS "child_ids"
#define ISC_KEY_COMPLETE "complete"
#define ISC_KEY_CONTEXT_ID "context_id"
#define ISC_KEY_CORRELATION_ID "correlation_id"
#define ISC_KEY_CPU_ID "cpu_id"
#define ISC_KEY_DEVICE_ID "device_id"
#define ISC_KEY_DIRECTION "direction"
#define ISC_KEY_DROPPED_EVENTS "dropped_events"
#define ISC_KEY_DST_DEVICE_ID "dst_device_id"
#define ISC_KEY_DURATION_US "duration_us"
#define ISC_KEY_DYNAMIC_SHARED_MEMORY_BYTES "dynamic_shared_memory_bytes"
#define ISC_KEY_END_REASON "end_reason"
#define ISC_KEY_END_US "end_us"
#define ISC_KEY_ERRNO "errno"
#define ISC_KEY_EVENT_ID "event_id"
#define ISC_KEY_EVENT_INDEX "event_index"
#define ISC_KEY_EVENTS "events"
#define ISC_KEY_EXEC_CHAIN "exec_chain"
#define ISC_KEY_EXEC_SEGMENT "exec_segment"
#define ISC_KEY_FD "fd"
#define ISC_KEY_FORMAT_VERSION "format_version"
#define ISC_KEY_GRAPH_ID "graph_id"
#define ISC_KEY_GRAPH_NODE_ID "graph_node_id"
#define ISC_KEY_HOST_MEMORY "host_memory"
#define ISC_KEY_ID "id"
#define ISC_KEY_KIND "kind"
#define ISC_KEY_METADATA "metadata"
#define ISC_KEY_NAME "name"
#define ISC_KEY_NUMA_NODE "numa_node"
#define ISC_KEY_NUMA_PAGES_MIGRATED "numa_pages_migrated"
#define ISC_KEY_OCCUPANCY "occupancy"
#define ISC_KEY_OPERATION "operation"
#define ISC_KEY_ORIGINAL_NODE_ID "original_node_id"
#define ISC_KEY_PARENT_ID "parent_id"
#define ISC_KEY_PARENT_SCOPE "parent_scope"
#define ISC_KEY_PARENT_SCOPE_ID "parent_scope_id"
#define ISC_KEY_PEER "peer"
#define ISC_KEY_PTR "ptr"
#define ISC_KEY_REGISTERS_PER_THREAD "registers_per_thread"
#define ISC_KEY_RELATIONSHIPS "relationships"
#define ISC_KEY_RETURN_CODE "return_code"
#define ISC_KEY_RETURN_VALUE "return_value"
#define ISC_KEY_SCOPE_ID "scope_id"
#define ISC_KEY_SCOPES "scopes"
#define ISC_KEY_SHARED_MEMORY_BYTES "shared_memory_bytes"
#define ISC_KEY_SNAPSHOT_REASON "snapshot_reason"
/* continuous mode (docs/trace-format.md, "Segments") and capture windows */
#define ISC_KEY_RECORDER "recorder"
#define ISC_KEY_RETENTION "retention"
#define ISC_KEY_CAPTURE_WINDOW "capture_window"
#define ISC_KEY_SOURCE "source"
#define ISC_KEY_SRC_DEVICE_ID "src_device_id"
#define ISC_KEY_STACK "stack"
#define ISC_KEY_STATIC_SHARED_MEMORY_BYTES "static_shared_memory_bytes"
#define ISC_KEY_STREAM_ID "stream_id"
#define ISC_KEY_SYNC_TYPE "sync_type"
#define ISC_KEY_SYSCALL_LATENCY "syscall_latency"
#define ISC_KEY_SYSCALL_NUMBER "syscall_number"
#define ISC_KEY_SYSTEM_INFO "system_info"
#define ISC_KEY_TARGET "target"
#define ISC_KEY_THREAD_ID "thread_id"
#define ISC_KEY_THROUGHPUT_GBPS "throughput_gbps"
#define ISC_KEY_TIMESTAMP_CREATED "timestamp_created"
#define ISC_KEY_TIMESTAMP_START_US "timestamp_start_us"
#define ISC_KEY_TRACE_METADATA "trace_metadata"
#define ISC_KEY_TYPE "type"
#define ISC_KEY_UNIT "unit"
#define ISC_KEY_UNTERMINATED "unterminated"
#define ISC_KEY_UNWRITTEN "unwritten"
#define ISC_KEY_USER_METADATA "user_metadata"
#define ISC_KEY_VALUE "value"
#define ISC_KEY_WEIGHT "weight"

/* Value vocabularies shared by the encoders and the readers: index = the record's code. */
extern const char *const isc_copy_kind_names[]; /* host memory of a copy: pageable, pinned... */
extern const size_t isc_copy_kind_count;
extern const char *const isc_sync_type_names[]; /* gpu_sync: event, stream_wait_event... */
extern const size_t isc_sync_type_count;
/* cuda_graph_node: "kind" by CUgraphNodeType (kernel, memcpy, memset, ...), "operation". */
extern const char *const isc_graph_node_kind_names[];
extern const size_t isc_graph_node_kind_count;
#define ISC_NODE_OP_CREATED "created"
#define ISC_NODE_OP_CLONED "cloned"

/* The trace "type" a record kind (enum isc_event_kind) is written as, for dropped-event
 * tables; "continuation" for continuation records, "unknown" past the enum. */
const char *isc_event_kind_name(unsigned kind);

#endif /* ISC_VOCAB_H */
