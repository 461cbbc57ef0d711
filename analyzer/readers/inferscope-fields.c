/* SPDX-License-Identifier: MIT */
#include "analyzer/readers/inferscope-fields.h"
#include "format/vocab.h"

#include "analyzer/model/model-extra.h"
#include "analyzer/model/result.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/model/stacks.h"

const struct isc_keydef isc_isf_keys[K__COUNT] = {
	{ ISC_KEY_ID, K_ID },
	{ ISC_KEY_TYPE, K_TYPE },
	{ ISC_KEY_NAME, K_NAME },
	{ ISC_KEY_TIMESTAMP_START_US, K_TS_START },
	{ "timestamp_us", K_TS },
	{ ISC_KEY_DURATION_US, K_DUR },
	{ "timestamp_end_us", K_TS_END },
	{ ISC_KEY_METADATA, K_METADATA },
	{ ISC_KEY_THREAD_ID, K_THREAD_ID },
	{ ISC_KEY_CPU_ID, K_CPU_ID },
	{ ISC_KEY_CALL_DEPTH, K_CALL_DEPTH },
	{ ISC_KEY_SCOPE_ID, K_SCOPE_ID },
	{ ISC_KEY_PARENT_SCOPE, K_PARENT_SCOPE },
	{ ISC_KEY_PARENT_SCOPE_ID, K_PARENT_SCOPE_ID },
	{ ISC_KEY_ALLOCATIONS_BYTES, K_ALLOC_BYTES },
	{ ISC_KEY_SOURCE, K_SOURCE },
	{ "domain", K_DOMAIN },
	{ ISC_KEY_UNTERMINATED, K_UNTERMINATED },
	{ ISC_KEY_USER_METADATA, K_USER_METADATA },
	{ ISC_KEY_SYSCALL_NUMBER, K_SYSCALL_NUMBER },
	{ ISC_KEY_FD, K_FD },
	{ ISC_KEY_TARGET, K_TARGET },
	{ ISC_KEY_BYTES, K_BYTES },
	{ ISC_KEY_RETURN_VALUE, K_RETURN_VALUE },
	{ ISC_KEY_ERRNO, K_ERRNO },
	{ ISC_KEY_CATEGORY, K_CATEGORY },
	{ ISC_KEY_STACK, K_STACK },
	{ ISC_KEY_OPERATION, K_OPERATION },
	{ ISC_KEY_PTR, K_PTR },
	{ ISC_KEY_WEIGHT, K_WEIGHT },
	{ ISC_KEY_NUMA_NODE, K_NUMA_NODE },
	{ ISC_KEY_NUMA_PAGES_MIGRATED, K_NUMA_PAGES },
	{ ISC_KEY_VALUE, K_VALUE },
	{ ISC_KEY_UNIT, K_UNIT },
	{ ISC_KEY_CORRELATION_ID, K_CORRELATION_ID },
	{ ISC_KEY_DEVICE_ID, K_DEVICE_ID },
	{ ISC_KEY_STREAM_ID, K_STREAM_ID },
	{ ISC_KEY_RETURN_CODE, K_RETURN_CODE },
	{ ISC_KEY_BLOCKED, K_BLOCKED },
	{ ISC_KEY_DIRECTION, K_DIRECTION },
	{ ISC_KEY_HOST_MEMORY, K_HOST_MEMORY },
	{ "kernel", K_KERNEL },
	{ "grid_dim", K_GRID_DIM },
	{ "block_dim", K_BLOCK_DIM },
	{ ISC_KEY_SHARED_MEMORY_BYTES, K_SHMEM },
	{ ISC_KEY_CONTEXT_ID, K_CONTEXT_ID },
	{ ISC_KEY_STATIC_SHARED_MEMORY_BYTES, K_STATIC_SHMEM },
	{ ISC_KEY_DYNAMIC_SHARED_MEMORY_BYTES, K_DYN_SHMEM },
	{ ISC_KEY_REGISTERS_PER_THREAD, K_REGS },
	{ ISC_KEY_OCCUPANCY, K_OCCUPANCY },
	{ ISC_KEY_GRAPH_ID, K_GRAPH_ID },
	{ ISC_KEY_GRAPH_NODE_ID, K_GRAPH_NODE_ID },
	{ ISC_KEY_ORIGINAL_NODE_ID, K_ORIGINAL_NODE_ID },
	{ ISC_KEY_KIND, K_KIND },
	{ ISC_KEY_THROUGHPUT_GBPS, K_THROUGHPUT },
	{ ISC_KEY_PEER, K_PEER },
	{ ISC_KEY_SRC_DEVICE_ID, K_SRC_DEV },
	{ ISC_KEY_DST_DEVICE_ID, K_DST_DEV },
	{ ISC_KEY_SYNC_TYPE, K_SYNC_TYPE },
	{ "stack_id", K_STACK_ID },
	{ "weight_us", K_WEIGHT_US },
	{ "pid", K_PID },
};

static const unsigned char kinds[K__COUNT] = {
	[K_ID] = VK_UINT,
	[K_TYPE] = VK_STR,
	[K_NAME] = VK_STR,
	[K_TS_START] = VK_NUM,
	[K_TS] = VK_NUM,
	[K_DUR] = VK_NUM_NONNEG,
	[K_TS_END] = VK_NUM,
	[K_METADATA] = VK_OBJ,
	[K_THREAD_ID] = VK_INT,
	[K_CPU_ID] = VK_INT,
	[K_CALL_DEPTH] = VK_UINT,
	[K_SCOPE_ID] = VK_ID_OR_NULL,
	[K_PARENT_SCOPE] = VK_STR_OR_NULL,
	[K_PARENT_SCOPE_ID] = VK_ID_OR_NULL,
	[K_ALLOC_BYTES] = VK_UINT,
	[K_SOURCE] = VK_STR,
	[K_DOMAIN] = VK_STR,
	[K_UNTERMINATED] = VK_BOOL,
	[K_USER_METADATA] = VK_OBJ,
	[K_SYSCALL_NUMBER] = VK_INT,
	[K_FD] = VK_INT,
	[K_TARGET] = VK_STR,
	[K_BYTES] = VK_UINT,
	[K_RETURN_VALUE] = VK_INT,
	[K_ERRNO] = VK_INT,
	[K_CATEGORY] = VK_STR,
	[K_STACK] = VK_STRARR,
	[K_OPERATION] = VK_STR,
	[K_PTR] = VK_STR,
	[K_WEIGHT] = VK_UINT,
	[K_NUMA_NODE] = VK_INT,
	[K_NUMA_PAGES] = VK_UINT,
	[K_VALUE] = VK_NUM,
	[K_UNIT] = VK_STR,
	[K_CORRELATION_ID] = VK_UINT,
	[K_DEVICE_ID] = VK_INT,
	[K_STREAM_ID] = VK_INT,
	[K_RETURN_CODE] = VK_INT,
	[K_BLOCKED] = VK_BOOL,
	[K_DIRECTION] = VK_STR,
	[K_HOST_MEMORY] = VK_STR,
	[K_KERNEL] = VK_STR,
	[K_GRID_DIM] = VK_INT3,
	[K_BLOCK_DIM] = VK_INT3,
	[K_SHMEM] = VK_UINT,
	[K_CONTEXT_ID] = VK_INT,
	[K_STATIC_SHMEM] = VK_UINT,
	[K_DYN_SHMEM] = VK_UINT,
	[K_REGS] = VK_UINT,
	[K_OCCUPANCY] = VK_UNIT_INTERVAL,
	[K_GRAPH_ID] = VK_INT,
	[K_GRAPH_NODE_ID] = VK_INT,
	[K_ORIGINAL_NODE_ID] = VK_INT,
	[K_KIND] = VK_STR,
	[K_THROUGHPUT] = VK_NUM_NONNEG,
	[K_PEER] = VK_BOOL,
	[K_SRC_DEV] = VK_INT,
	[K_DST_DEV] = VK_INT,
	[K_SYNC_TYPE] = VK_STR,
	[K_STACK_ID] = VK_UINT,
	[K_WEIGHT_US] = VK_NUM_NONNEG,
	[K_PID] = VK_INT,
};

enum isc_isf_vkind isc_isf_kind(int key)
{
	return (enum isc_isf_vkind)kinds[key];
}

int isc_isf_enum_slot(int key)
{
	switch (key) {
	case K_SOURCE:
		return ES_SOURCE;
	case K_TARGET:
		return ES_TARGET;
	case K_CATEGORY:
		return ES_CATEGORY;
	case K_OPERATION:
		return ES_OPERATION;
	case K_UNIT:
		return ES_UNIT;
	case K_DIRECTION:
		return ES_DIRECTION;
	case K_HOST_MEMORY:
		return ES_HOST_MEMORY;
	case K_KIND:
		return ES_KIND;
	case K_SYNC_TYPE:
		return ES_SYNC_TYPE;
	default:
		return -1;
	}
}

const char *isc_isf_key_path(int key)
{
	static char buf[K__COUNT][48];
	if (key < K_FIRST_META) {
		return isc_isf_keys[key].key;
	}
	if (buf[key][0] == '\0') {
		snprintf(buf[key], sizeof(buf[key]), "metadata.%s", isc_isf_keys[key].key);
	}
	return buf[key];
}

static const struct {
	const char *name;
	int type;
} type_names[] = {
	{ ISC_TYPE_CPU_CALL, ISC_T_SCOPE },
	{ ISC_TYPE_CPU_SYSCALL, ISC_T_SYSCALL },
	{ ISC_TYPE_GPU_KERNEL, ISC_T_KERNEL },
	{ ISC_TYPE_H2D_COPY, ISC_T_H2D },
	{ ISC_TYPE_D2H_COPY, ISC_T_D2H },
	{ ISC_TYPE_D2D_COPY, ISC_T_D2D },
	{ ISC_TYPE_H2H_COPY, ISC_T_H2H },
	{ ISC_TYPE_MEMORY_EVENT, ISC_T_MEMORY },
	{ ISC_TYPE_INSTANT, ISC_T_INSTANT },
	{ ISC_TYPE_COUNTER, ISC_T_COUNTER },
	{ ISC_TYPE_CUDA_API, ISC_T_CUDA_API },
	{ ISC_TYPE_GPU_MEMSET, ISC_T_MEMSET },
	{ ISC_TYPE_GPU_SYNC, ISC_T_GPU_SYNC },
	{ "cpu_sample", ISC_T_CPU_SAMPLE },
	{ ISC_TYPE_CUDA_GRAPH_NODE, ISC_ISF_GRAPH_NODE },
};

int isc_isf_type_of(const char *type)
{
	/* Per event: the common types first, without walking the table. */
	switch (type[0]) {
	case 'c':
		if (strcmp(type, ISC_TYPE_CUDA_API) == 0) {
			return ISC_T_CUDA_API;
		}
		break;
	case 'g':
		if (strcmp(type, ISC_TYPE_GPU_KERNEL) == 0) {
			return ISC_T_KERNEL;
		}
		break;
	default:
		break;
	}
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
		if (strcmp(type_names[i].name, type) == 0) {
			return type_names[i].type;
		}
	}
	return -1;
}

/* Per-type enums: (type or -1 for all GPU copy types, slot, allowed words). */
struct enum_rule {
	int type;
	int slot;
	const char *const *allowed;
};

static const char *const src_scope[] = { "api", "python", "nvtx", NULL };
static const char *const src_instant[] = { "api", "python", "nvtx", "inferscope", NULL };
static const char *const src_api[] = { "interposer", "cupti", NULL };
static const char *const targets[] = { "file", "socket", "pipe", "tty", "nvidia", "other", NULL };
static const char *const categories[] = { "io", "net", "wait", "sleep", "driver", "fs", NULL };
static const char *const operations[] = { "malloc",	   "calloc",	     "realloc",
					  "reallocarray",  "free",	     "posix_memalign",
					  "aligned_alloc", "memalign",	     "valloc",
					  "pvalloc",	   "mmap",	     "munmap",
					  "mremap",	   "numa_migration", NULL };
static const char *const units[] = { "us", "bytes", "count", NULL };
static const char *const directions[] = { "h2d", "d2h", "d2d", "h2h", "default", NULL };
static const char *const host_memory[] = { "pageable", "pinned", NULL };
static const char *const copy_kinds[] = {
	"pageable", "pinned", "device", "managed", "array", NULL
};
static const char *const sync_types[] = { "event", "stream", "context", "stream_wait_event", NULL };
static const char *const node_ops[] = { ISC_NODE_OP_CREATED, ISC_NODE_OP_CLONED, NULL };

static const struct enum_rule enum_rules[] = {
	{ ISC_T_SCOPE, ES_SOURCE, src_scope },
	{ ISC_T_INSTANT, ES_SOURCE, src_instant },
	{ ISC_T_CUDA_API, ES_SOURCE, src_api },
	{ ISC_T_SYSCALL, ES_TARGET, targets },
	{ ISC_T_SYSCALL, ES_CATEGORY, categories },
	{ ISC_T_MEMORY, ES_OPERATION, operations },
	{ ISC_T_COUNTER, ES_UNIT, units },
	{ ISC_T_CUDA_API, ES_DIRECTION, directions },
	{ ISC_T_CUDA_API, ES_HOST_MEMORY, host_memory },
	{ ISC_T_H2D, ES_KIND, copy_kinds },
	{ ISC_T_D2H, ES_KIND, copy_kinds },
	{ ISC_T_D2D, ES_KIND, copy_kinds },
	{ ISC_T_H2H, ES_KIND, copy_kinds },
	{ ISC_T_MEMSET, ES_KIND, copy_kinds },
	{ ISC_T_GPU_SYNC, ES_SYNC_TYPE, sync_types },
	{ ISC_ISF_GRAPH_NODE, ES_OPERATION, node_ops },
};

static const int slot_key[ES__COUNT] = {
	[ES_SOURCE] = K_SOURCE,		  [ES_TARGET] = K_TARGET, [ES_CATEGORY] = K_CATEGORY,
	[ES_OPERATION] = K_OPERATION,	  [ES_UNIT] = K_UNIT,	  [ES_DIRECTION] = K_DIRECTION,
	[ES_HOST_MEMORY] = K_HOST_MEMORY, [ES_KIND] = K_KIND,	  [ES_SYNC_TYPE] = K_SYNC_TYPE,
};

static int word_index(const char *const *allowed, const char *w)
{
	for (int i = 0; allowed[i] != NULL; i++) {
		if (strcmp(allowed[i], w) == 0) {
			return i;
		}
	}
	return -1;
}

static const char *bad_enum(const struct isc_isf_event *e, const struct enum_rule *r, char *buf,
			    size_t n)
{
	int len = snprintf(buf, n, "%s: '%s' is not one of", isc_isf_key_path(slot_key[r->slot]),
			   e->ev_str[r->slot]);
	for (int i = 0; r->allowed[i] != NULL && len > 0 && (size_t)len < n; i++) {
		len += snprintf(buf + len, n - (size_t)len, "%s %s", i ? "," : "", r->allowed[i]);
	}
	return buf;
}

static bool needs_corr(int type)
{
	return type == ISC_T_CUDA_API || isc_type_is_gpu((unsigned)type);
}

#define SEEN(e, k) (((e)->seen >> (k)) & 1u)

const char *isc_isf_check(const struct isc_isf_event *e, int type, bool strict, char *buf, size_t n)
{
	if (!strict) {
		return NULL;
	}
	/* A cpu_sample is flat and small: no id, name or metadata object. */
	static const int required[] = { K_ID, K_TYPE, K_NAME, K_METADATA, K_THREAD_ID };
	static const int required_sample[] = { K_TYPE, K_THREAD_ID, K_STACK_ID, K_WEIGHT_US };
	bool sample = type == ISC_T_CPU_SAMPLE;
	const int *req = sample ? required_sample : required;
	size_t nreq = sample ? 4 : sizeof(required) / sizeof(required[0]);
	for (size_t i = 0; i < nreq; i++) {
		if (!SEEN(e, req[i])) {
			snprintf(buf, n, "%s is missing",
				 sample ? isc_isf_keys[req[i]].key : isc_isf_key_path(req[i]));
			return buf;
		}
	}
	if (!SEEN(e, K_TS_START) && !SEEN(e, K_TS)) {
		return "timestamp_start_us (or timestamp_us) is missing";
	}
	bool timed = type != ISC_T_INSTANT && type != ISC_T_COUNTER && !sample;
	if (timed && type >= 0 && !SEEN(e, K_DUR) && !SEEN(e, K_TS_END)) {
		return "duration_us (or timestamp_end_us) is missing";
	}
	if (type < 0) {
		return NULL;
	}
	if (needs_corr(type) && !SEEN(e, K_CORRELATION_ID)) {
		return "metadata.correlation_id is missing";
	}
	if (type == ISC_T_COUNTER && !SEEN(e, K_VALUE)) {
		return "metadata.value is missing";
	}
	if (type == ISC_ISF_GRAPH_NODE) {
		if (!SEEN(e, K_GRAPH_NODE_ID) || !SEEN(e, K_OPERATION)) {
			return !SEEN(e, K_GRAPH_NODE_ID) ? "metadata.graph_node_id is missing"
							 : "metadata.operation is missing";
		}
		if (strcmp(e->ev_str[ES_OPERATION], ISC_NODE_OP_CLONED) == 0 &&
		    !SEEN(e, K_ORIGINAL_NODE_ID)) {
			return "metadata.original_node_id is missing";
		}
	}
	if (type == ISC_T_MEMSET && SEEN(e, K_VALUE) && !e->value_is_int) {
		return "metadata.value: expected an integer, got a number";
	}
	for (size_t i = 0; i < sizeof(enum_rules) / sizeof(enum_rules[0]); i++) {
		const struct enum_rule *r = &enum_rules[i];
		if (r->type == type && SEEN(e, slot_key[r->slot]) &&
		    word_index(r->allowed, e->ev_str[r->slot]) < 0) {
			return bad_enum(e, r, buf, n);
		}
	}
	return NULL;
}

/* A read of a pipe or terminal: its data comes when the writer writes it. Sockets are
 * left out: a socket read may be a reply to this thread's own request, whose wait is
 * the peer's service time and can be hidden by asking earlier. */
static bool paced_read(const struct isc_isf_event *e, const char *name)
{
	const char *target = SEEN(e, K_TARGET) ? e->ev_str[ES_TARGET] : "";
	bool read = strcmp(name, "read") == 0 || strcmp(name, "readv") == 0;
	return read && (strcmp(target, "pipe") == 0 || strcmp(target, "tty") == 0);
}

static unsigned syscall_category(const struct isc_isf_event *e, const char *name)
{
	static const char *const by_name[][2] = {
		{ "read", "io" },	  { "write", "io" },
		{ "pread", "io" },	  { "pwrite", "io" },
		{ "recv", "net" },	  { "send", "net" },
		{ "accept", "net" },	  { "connect", "net" },
		{ "poll", "wait" },	  { "select", "wait" },
		{ "epoll", "wait" },	  { "futex", "wait" },
		{ "pthread", "wait" },	  { "sem_", "wait" },
		{ "nanosleep", "sleep" }, { "clock_nanosleep", "sleep" },
		{ "ioctl", "driver" },	  { "open", "fs" },
		{ "close", "fs" },	  { "fsync", "fs" },
	};
	const char *cat = SEEN(e, K_CATEGORY) ? e->ev_str[ES_CATEGORY] : NULL;
	for (size_t i = 0; cat == NULL && i < sizeof(by_name) / sizeof(by_name[0]); i++) {
		if (strncmp(name, by_name[i][0], strlen(by_name[i][0])) == 0) {
			cat = by_name[i][1];
		}
	}
	int w = cat != NULL ? word_index(categories, cat) : -1;
	static const unsigned codes[] = { ISC_SYS_IO,	 ISC_SYS_NET,	 ISC_SYS_WAIT,
					  ISC_SYS_SLEEP, ISC_SYS_DRIVER, ISC_SYS_FS };
	return w >= 0 ? codes[w] : ISC_SYS_OTHER;
}

static void host_kind(const struct isc_isf_event *e, int slot, struct isc_ev *out)
{
	if (!SEEN(e, slot_key[slot])) {
		return;
	}
	if (strcmp(e->ev_str[slot], "pinned") == 0) {
		out->flags |= ISC_F_PINNED;
	} else if (strcmp(e->ev_str[slot], "pageable") == 0) {
		out->flags |= ISC_F_PAGEABLE;
	}
}

static void gpu_fields(const struct isc_isf_event *e, struct isc_ev *out)
{
	out->corr = SEEN(e, K_CORRELATION_ID) ? (uint64_t)e->iv[K_CORRELATION_ID] : 0;
	out->stream = SEEN(e, K_STREAM_ID) ? (int32_t)e->iv[K_STREAM_ID] : 0;
	out->device = SEEN(e, K_DEVICE_ID) ? (int16_t)e->iv[K_DEVICE_ID] : 0;
	out->v.bytes = SEEN(e, K_BYTES) ? (uint64_t)e->iv[K_BYTES] : 0;
}

static void api_fields(const struct isc_isf_event *e, const char *name, struct isc_ev *out)
{
	out->sub = (uint8_t)isc_api_classify(name);
	out->corr = SEEN(e, K_CORRELATION_ID) ? (uint64_t)e->iv[K_CORRELATION_ID] : 0;
	out->stream = SEEN(e, K_STREAM_ID) ? (int32_t)e->iv[K_STREAM_ID] : -1;
	out->device = SEEN(e, K_DEVICE_ID) ? (int16_t)e->iv[K_DEVICE_ID] : -1;
	out->v.bytes = SEEN(e, K_BYTES) ? (uint64_t)e->iv[K_BYTES] : 0;
	if (SEEN(e, K_PTR) && isc_api_event_call(name) != ISC_EC_NONE) {
		out->v.handle = (uint64_t)e->iv[K_PTR]; /* an event call carries no bytes */
	}
	out->aux = SEEN(e, K_RETURN_CODE) ? (uint32_t)e->iv[K_RETURN_CODE] : 0;
	out->flags |= out->aux != 0 ? ISC_F_ERROR : 0;
	out->flags |= SEEN(e, K_BLOCKED) && e->iv[K_BLOCKED] ? ISC_F_BLOCKED : 0;
	out->flags |=
		SEEN(e, K_SOURCE) && strcmp(e->ev_str[ES_SOURCE], "cupti") == 0 ? ISC_F_CUPTI : 0;
	out->depth = SEEN(e, K_DIRECTION)
			     ? (uint16_t)(word_index(directions, e->ev_str[ES_DIRECTION]) + 1)
			     : 0;
	host_kind(e, ES_HOST_MEMORY, out);
}

void isc_isf_to_model(const struct isc_isf_event *e, int type, const char *name, struct isc_ev *out)
{
	out->type = (uint8_t)type;
	out->name = e->name;
	switch (type) {
	case ISC_T_SCOPE:
		out->depth = SEEN(e, K_CALL_DEPTH) ? (uint16_t)e->iv[K_CALL_DEPTH] : 0;
		if (SEEN(e, K_UNTERMINATED) && e->iv[K_UNTERMINATED]) {
			out->flags |= ISC_F_UNTERMINATED;
		}
		break;
	case ISC_T_SYSCALL:
		out->sub = (uint8_t)syscall_category(e, name);
		out->v.bytes = SEEN(e, K_BYTES) ? (uint64_t)e->iv[K_BYTES] : 0;
		out->aux = SEEN(e, K_FD) ? (uint32_t)e->iv[K_FD] : UINT32_MAX;
		out->flags |= SEEN(e, K_ERRNO) ? ISC_F_ERROR : 0;
		out->flags |= paced_read(e, name) ? ISC_F_PACED : 0;
		/* pthread_cond_timedwait returns the error number, sem_timedwait and futex -1
		 * with it in errno */
		out->flags |= out->sub == ISC_SYS_WAIT &&
					      ((SEEN(e, K_RETURN_VALUE) &&
						e->iv[K_RETURN_VALUE] == ETIMEDOUT) ||
					       (SEEN(e, K_ERRNO) && e->iv[K_ERRNO] == ETIMEDOUT))
				      ? ISC_F_TIMEDOUT
				      : 0;
		/* wait, wait3, wait4 and waitpid return the pid of the child that ended the
		 * wait (waitid returns 0: its child is in the siginfo, not recorded) */
		if (out->sub == ISC_SYS_WAIT && SEEN(e, K_RETURN_VALUE) &&
		    e->iv[K_RETURN_VALUE] > 0 && e->iv[K_RETURN_VALUE] < UINT32_MAX &&
		    strcmp(name, "waitid") != 0 && isc_wait_kind_of(name) == ISC_WK_CHILD) {
			out->aux = (uint32_t)e->iv[K_RETURN_VALUE];
			out->flags |= ISC_F_CHILD_PID;
		}
		break;
	case ISC_T_MEMORY: {
		const char *op = SEEN(e, K_OPERATION) ? e->ev_str[ES_OPERATION] : "";
		bool is_free = strcmp(op, "free") == 0 || strcmp(op, "munmap") == 0;
		out->sub = is_free ? ISC_MK_FREE
				   : (op[0] && strcmp(op, "numa_migration") ? ISC_MK_ALLOC
									    : ISC_MK_OTHER);
		out->v.bytes = SEEN(e, K_BYTES) ? (uint64_t)e->iv[K_BYTES] : 0;
		out->corr = SEEN(e, K_WEIGHT) ? (uint64_t)e->iv[K_WEIGHT] : out->v.bytes;
		break;
	}
	case ISC_T_COUNTER:
		out->sub = (uint8_t)isc_counter_kind(name);
		out->v.value = SEEN(e, K_VALUE) ? e->dv[K_VALUE] : 0.0;
		out->device = SEEN(e, K_DEVICE_ID) ? (int16_t)e->iv[K_DEVICE_ID] : -1;
		break;
	case ISC_T_CUDA_API:
		api_fields(e, name, out);
		break;
	case ISC_T_KERNEL:
		gpu_fields(e, out);
		out->occupancy = SEEN(e, K_OCCUPANCY) ? (float)e->dv[K_OCCUPANCY] : -1.0f;
		out->flags |= SEEN(e, K_GRAPH_ID) ? ISC_F_GRAPH : 0;
		break;
	case ISC_T_H2D:
	case ISC_T_D2H:
	case ISC_T_D2D:
	case ISC_T_H2H:
	case ISC_T_MEMSET:
		gpu_fields(e, out);
		host_kind(e, ES_KIND, out);
		out->flags |= SEEN(e, K_GRAPH_ID) ? ISC_F_GRAPH : 0;
		break;
	case ISC_T_GPU_SYNC:
		gpu_fields(e, out);
		break;
	case ISC_T_CPU_SAMPLE:
		out->v.bytes = SEEN(e, K_WEIGHT_US) ? (uint64_t)e->iv[K_WEIGHT_US] : 0;
		break;
	default:
		break;
	}
	/* Kernels keep their occupancy there: their stack is the launch's. */
	if (type != ISC_T_KERNEL && SEEN(e, K_STACK_ID) && e->iv[K_STACK_ID] > 0 &&
	    e->iv[K_STACK_ID] < (int64_t)ISC_STACK_ID_LIMIT) {
		out->stack = (uint32_t)e->iv[K_STACK_ID];
		out->flags |= ISC_F_STACK;
	}
}

int isc_isf_geom(struct isc_trace *t, const struct isc_isf_event *e, struct isc_ev *k)
{
	bool smem = SEEN(e, K_SHMEM) || SEEN(e, K_STATIC_SHMEM) || SEEN(e, K_DYN_SHMEM);
	if (e->ndims[0] != 3 && e->ndims[1] != 3 && !SEEN(e, K_REGS) && !smem) {
		return 0;
	}
	struct isc_kernel_geom g = {
		.regs = SEEN(e, K_REGS) ? (int32_t)e->iv[K_REGS] : -1,
		.smem = -1,
	};
	if (SEEN(e, K_SHMEM)) {
		g.smem = (int32_t)e->iv[K_SHMEM];
	} else if (smem) {
		g.smem = (int32_t)((SEEN(e, K_STATIC_SHMEM) ? e->iv[K_STATIC_SHMEM] : 0) +
				   (SEEN(e, K_DYN_SHMEM) ? e->iv[K_DYN_SHMEM] : 0));
	}
	for (int i = 0; i < 3; i++) {
		g.grid[i] = e->ndims[0] == 3 ? (int32_t)e->dims[0][i] : 0;
		g.block[i] = e->ndims[1] == 3 ? (int32_t)e->dims[1][i] : 0;
	}
	return isc_trace_add_geom(t, k, &g);
}
