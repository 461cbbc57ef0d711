/* SPDX-License-Identifier: MIT */
/*
 * The event fields of the InferScope format (docs/trace-format.md): which keys exist, at
 * which level, with which JSON type, and the per-type rules (required fields, enums).
 * The reader checks them as values stream by; docs/trace-format.schema.json states the
 * same contract and a test keeps the two in agreement.
 */
#ifndef ISC_INFERSCOPE_FIELDS_H
#define ISC_INFERSCOPE_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzer/base/diag.h"
#include "analyzer/base/key-map.h"
#include "analyzer/model/model.h"

enum isc_isf_key {
	/* event level */
	K_ID,
	K_TYPE,
	K_NAME,
	K_TS_START,
	K_TS,
	K_DUR,
	K_TS_END,
	K_METADATA,
	/* metadata level */
	K_THREAD_ID,
	K_CPU_ID,
	K_CALL_DEPTH,
	K_SCOPE_ID,
	K_PARENT_SCOPE,
	K_PARENT_SCOPE_ID,
	K_ALLOC_BYTES,
	K_SOURCE,
	K_DOMAIN,
	K_UNTERMINATED,
	K_USER_METADATA,
	K_SYSCALL_NUMBER,
	K_FD,
	K_TARGET,
	K_BYTES,
	K_RETURN_VALUE,
	K_ERRNO,
	K_CATEGORY,
	K_STACK,
	K_OPERATION,
	K_PTR,
	K_WEIGHT,
	K_NUMA_NODE,
	K_NUMA_PAGES,
	K_VALUE,
	K_UNIT,
	K_CORRELATION_ID,
	K_DEVICE_ID,
	K_STREAM_ID,
	K_RETURN_CODE,
	K_BLOCKED,
	K_DIRECTION,
	K_HOST_MEMORY,
	K_KERNEL,
	K_GRID_DIM,
	K_BLOCK_DIM,
	K_SHMEM,
	K_CONTEXT_ID,
	K_STATIC_SHMEM,
	K_DYN_SHMEM,
	K_REGS,
	K_OCCUPANCY,
	K_GRAPH_ID,
	K_GRAPH_NODE_ID,
	K_ORIGINAL_NODE_ID, /* cuda_graph_node */
	K_KIND,
	K_THROUGHPUT,
	K_PEER,
	K_SRC_DEV,
	K_DST_DEV,
	K_SYNC_TYPE,
	K_STACK_ID,  /* sampled stacks: also at the event level (cpu_sample) */
	K_WEIGHT_US, /* cpu_sample */
	K_PID,	     /* cpu_sample */
	K__COUNT
};

_Static_assert(K__COUNT <= 64, "seen fields are a 64-bit mask");

#define K_FIRST_META K_THREAD_ID

enum isc_isf_vkind {
	VK_INT,
	VK_UINT,
	VK_NUM,
	VK_NUM_NONNEG,
	VK_UNIT_INTERVAL,
	VK_STR,
	VK_BOOL,
	VK_OBJ,
	VK_INT3,
	VK_STRARR,
	VK_STR_OR_NULL,
	VK_ID,
	VK_ID_OR_NULL,
};

/* Enum-valued fields keep their text until the type is known (key order is free). */
enum isc_isf_enum_slot {
	ES_SOURCE,
	ES_TARGET,
	ES_CATEGORY,
	ES_OPERATION,
	ES_UNIT,
	ES_DIRECTION,
	ES_HOST_MEMORY,
	ES_KIND,
	ES_SYNC_TYPE,
	ES__COUNT
};

#define ISF_ENUM_LEN 24

struct isc_isf_event {
	uint64_t index;	 /* position in "events" */
	uint64_t offset; /* byte where the event object started */
	uint64_t seen;	 /* 1 << K_* */
	char type[ISF_ENUM_LEN];
	bool type_too_long;
	uint32_t name;
	int64_t iv[K__COUNT]; /* integers and timestamps (ns) */
	double dv[K__COUNT];  /* other numbers */
	bool value_is_int;
	char ev_str[ES__COUNT][ISF_ENUM_LEN];
	int64_t dims[2][3];
	int ndims[2];
};

extern const struct isc_keydef isc_isf_keys[K__COUNT];
enum isc_isf_vkind isc_isf_kind(int key);
int isc_isf_enum_slot(int key); /* -1 when the key is not enum-valued */
/* Metadata keys also read at the event level (the flat cpu_sample events). */
static inline bool isc_isf_either_level(int key)
{
	return key == K_THREAD_ID || key == K_STACK_ID || key == K_WEIGHT_US || key == K_PID;
}
const char *isc_isf_key_path(int key); /* "metadata.thread_id" / "timestamp_start_us" */

/* cuda_graph_node: not an event of the model but a row of its graph node table
 * (graph-nodes.h); isc_isf_type_of answers this past the model's types. */
#define ISC_ISF_GRAPH_NODE ISC_T__COUNT

/* The model type of a type name (or ISC_ISF_GRAPH_NODE); -1 unknown (skipped). */
int isc_isf_type_of(const char *type);

/*
 * Checks what only the whole event can tell (required fields, per-type enums); in strict
 * mode any violation fails. Returns NULL when fine, else a static-or-buf message.
 */
const char *isc_isf_check(const struct isc_isf_event *e, int type, bool strict, char *buf,
			  size_t n);
/* Fills a model event from a checked one. */
void isc_isf_to_model(const struct isc_isf_event *e, int type, const char *name,
		      struct isc_ev *out);
/* A kernel's geometry into the trace's export table (model-extra.h). 0 or -ENOMEM. */
int isc_isf_geom(struct isc_trace *t, const struct isc_isf_event *e, struct isc_ev *k);

#endif /* ISC_INFERSCOPE_FIELDS_H */
