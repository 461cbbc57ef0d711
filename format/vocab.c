/* SPDX-License-Identifier: MIT */
#include "format/vocab.h"

#include "format/record.h"

/* enum isc_mem_kind order (record.h) */
const char *const isc_copy_kind_names[] = { "unknown", "pageable", "pinned",
					    "device",  "managed",  "array" };
const size_t isc_copy_kind_count = sizeof(isc_copy_kind_names) / sizeof(isc_copy_kind_names[0]);

/* enum isc_sync_type order (record.h) */
const char *const isc_sync_type_names[] = { "unknown", "event", "stream_wait_event", "stream",
					    "context" };
const size_t isc_sync_type_count = sizeof(isc_sync_type_names) / sizeof(isc_sync_type_names[0]);

/* CUgraphNodeType order (cuda.h); "other" past it */
const char *const isc_graph_node_kind_names[] = {
	"kernel",	  "memcpy",	  "memset",
	"host",		  "graph",	  "empty",
	"wait_event",	  "event_record", "ext_semas_signal",
	"ext_semas_wait", "mem_alloc",	  "mem_free",
	"batch_mem_op",	  "conditional",  "other",
};
const size_t isc_graph_node_kind_count =
	sizeof(isc_graph_node_kind_names) / sizeof(isc_graph_node_kind_names[0]);

const char *isc_event_kind_name(unsigned kind)
{
	static const char *const names[ISC_EV__COUNT] = {
		[ISC_EV_NONE] = "none",
		[ISC_EV_SCOPE] = ISC_TYPE_CPU_CALL,
		[ISC_EV_INSTANT] = ISC_TYPE_INSTANT,
		[ISC_EV_SYSCALL] = ISC_TYPE_CPU_SYSCALL,
		[ISC_EV_MEMORY] = ISC_TYPE_MEMORY_EVENT,
		[ISC_EV_COUNTER] = ISC_TYPE_COUNTER,
		[ISC_EV_CUDA_API] = ISC_TYPE_CUDA_API,
		[ISC_EV_GPU_KERNEL] = ISC_TYPE_GPU_KERNEL,
		[ISC_EV_GPU_MEMCPY] = "gpu_memcpy",
		[ISC_EV_GPU_MEMSET] = ISC_TYPE_GPU_MEMSET,
		[ISC_EV_GPU_SYNC] = ISC_TYPE_GPU_SYNC,
		[ISC_EV_EXT] = "continuation",
		[ISC_EV_KV] = "continuation",
		[ISC_EV_TEXT] = "continuation",
		[ISC_EV_STACK] = "continuation",
		[ISC_EV_RANGE_START] = ISC_TYPE_CPU_CALL,
		[ISC_EV_RANGE_END] = ISC_TYPE_CPU_CALL,
		[ISC_EV_GRAPH_NODE] = ISC_TYPE_CUDA_GRAPH_NODE,
	};
	return kind < ISC_EV__COUNT && names[kind] ? names[kind] : "unknown";
}
