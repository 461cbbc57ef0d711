/* SPDX-License-Identifier: MIT */
/*
 * The binary record: what a hook writes into its thread's chunk.
 *
 * Every record is 64 bytes: a 32-byte header common to all kinds and a 32-byte
 * payload whose layout depends on the kind. A logical event that needs more room
 * (a kernel with its launch configuration, a mark with key-value pairs, a stack)
 * takes one head record followed by continuation records (ISC_EV_EXT, ISC_EV_KV,
 * ISC_EV_TEXT, ISC_EV_STACK) reserved in the same chunk, so a reader never sees
 * half an event. Names are ids into the string table (intern.h), never pointers.
 *
 * This header is the contract between the hooks (which fill records) and the
 * converter (format/encode-*.c, which turns them into JSON). The spill file
 * stores these records verbatim, so a layout change bumps ISC_SPILL_VERSION.
 */
#ifndef ISC_EVENT_H
#define ISC_EVENT_H

#include <stdint.h>

enum isc_event_kind {
	ISC_EV_NONE = 0,
	ISC_EV_SCOPE,	    /* cpu_call: annotation API, Python helper, NVTX range */
	ISC_EV_INSTANT,	    /* instant: a mark; followed by n_kv ISC_EV_KV records */
	ISC_EV_SYSCALL,	    /* cpu_syscall */
	ISC_EV_MEMORY,	    /* memory_event */
	ISC_EV_COUNTER,	    /* counter */
	ISC_EV_CUDA_API,    /* cuda_api; a launch is followed by one ISC_EV_EXT */
	ISC_EV_GPU_KERNEL,  /* gpu_kernel; followed by one ISC_EV_EXT */
	ISC_EV_GPU_MEMCPY,  /* h2d_copy, d2h_copy, d2d_copy, h2h_copy */
	ISC_EV_GPU_MEMSET,  /* gpu_memset */
	ISC_EV_GPU_SYNC,    /* gpu_sync */
	ISC_EV_EXT,	    /* continuation: kind-specific extra payload */
	ISC_EV_KV,	    /* continuation: one key-value pair of a mark */
	ISC_EV_TEXT,	    /* continuation: inline text (string values) */
	ISC_EV_STACK,	    /* continuation: up to 7 return addresses */
	ISC_EV_RANGE_START, /* NVTX start/end range opened (paired by id at write time) */
	ISC_EV_RANGE_END,   /* NVTX start/end range closed */
	ISC_EV_CPU_SAMPLE,  /* cpu_sample; followed by ISC_EV_STACK records (samplers/) */
	ISC_EV_GRAPH_NODE,  /* cuda_graph_node: a CUDA graph node created or cloned (gpu/) */
	ISC_EV__COUNT
};

/* Header flags. */
enum {
	ISC_EVF_UNTERMINATED = 1u << 0, /* scope still open at flush; dur is up to the flush */
	ISC_EVF_BLOCKED = 1u << 1,	/* cuda_api: the call waited for the device */
	ISC_EVF_CUPTI = 1u << 2,	/* cuda_api: seen only by CUPTI */
	ISC_EVF_ERRNO = 1u << 3,	/* syscall: failed, errno in payload */
	ISC_EVF_ASYNC = 1u << 4,	/* copies: asynchronous API */
	ISC_EVF_STACK_TEXT = 1u << 5,	/* memory, syscall: write the stack as strings too
					 * (INFERSCOPE_STACKS, the older "stack" field) */
	ISC_EVF_NODE_EXT = 1u << 6,	/* copies, memsets: an ISC_EV_EXT with
					 * struct isc_gpu_node_ext_payload follows */
};

/* Scope sources (ISC_EV_SCOPE, ISC_EV_INSTANT aux). */
enum isc_scope_source {
	ISC_SRC_API = 0,
	ISC_SRC_PYTHON = 1,
	ISC_SRC_NVTX = 2,
	ISC_SRC_INFERSCOPE = 3,
};

/* Value types of a key-value continuation. */
enum isc_kv_type {
	ISC_KV_INT = 0,
	ISC_KV_DOUBLE = 1,
	ISC_KV_STRING = 2, /* the value follows as ISC_EV_TEXT records */
};

struct isc_scope_payload {
	uint64_t scope_id;
	uint64_t parent_id;   /* 0 for an outermost scope */
	uint32_t parent_name; /* string id of the parent's name, 0 when none */
	int32_t cpu;	      /* CPU at open, -1 unknown */
	uint64_t alloc_bytes; /* bytes this thread allocated while open */
};

struct isc_instant_payload {
	uint64_t scope_id; /* innermost open scope, 0 when none */
	uint32_t n_kv;	   /* ISC_EV_KV records that follow (each may have TEXT) */
	uint32_t source;   /* enum isc_scope_source */
	uint64_t reserved[2];
};

struct isc_kv_payload {
	uint32_t key;  /* string id */
	uint32_t type; /* enum isc_kv_type */
	union {
		int64_t i;
		double d;
		uint64_t text_len; /* ISC_KV_STRING: bytes in the TEXT records that follow */
	} v;
	uint64_t reserved[2];
};

/*
 * Inline text (ISC_EV_TEXT): the 48 bytes from offset 0 (ts, dur) and 32 (payload)
 * are text; the header's kind, tid and flags stay readable. Text longer than one
 * record continues in the next one.
 */
#define ISC_TEXT_PER_RECORD 48

/* Counter: name = counter name (cpu_time, live_heap, ...); aux bit 0 = device_id valid. */
struct isc_counter_payload {
	union {
		int64_t i;
		double d;
	} value;
	uint32_t unit; /* enum isc_counter_unit */
	uint32_t is_double;
	uint64_t device_id; /* device_memory */
	uint64_t reserved;
};

enum isc_counter_unit {
	ISC_UNIT_US = 0,
	ISC_UNIT_BYTES = 1,
	ISC_UNIT_COUNT = 2,
};

/*
 * CUDA and GPU records (preload/hooks/cuda/hook-cuda-*.c, preload/gpu/cupti*.c; encoded by encode-cuda.c).
 * Directions and memory kinds are our own codes, so the writer needs no CUDA header.
 */
enum isc_copy_dir {
	ISC_DIR_NONE = 0,
	ISC_DIR_H2D = 1,
	ISC_DIR_D2H = 2,
	ISC_DIR_D2D = 3,
	ISC_DIR_H2H = 4,
	ISC_DIR_DEFAULT = 5, /* cudaMemcpyDefault: the runtime infers it */
	ISC_DIR_P2P = 6,     /* between two devices */
};

enum isc_mem_kind {
	ISC_MEM_UNKNOWN = 0,
	ISC_MEM_PAGEABLE = 1,
	ISC_MEM_PINNED = 2,
	ISC_MEM_DEVICE = 3,
	ISC_MEM_MANAGED = 4,
	ISC_MEM_ARRAY = 5,
};

/* cuda_api aux: device + 1 in bits 0-7 (0 = unknown), then these fields. */
enum {
	ISC_API_DIR_SHIFT = 8,	    /* enum isc_copy_dir, 3 bits */
	ISC_API_HOSTMEM_SHIFT = 11, /* enum isc_mem_kind of the host side, 3 bits */
	ISC_API_HAS_BYTES = 1u << 14,
	ISC_API_HAS_PTR = 1u << 15,
	ISC_API_LAUNCH = 1u << 16, /* an ISC_EV_EXT with struct isc_launch_payload follows */
	ISC_API_STACK = 1u << 17,  /* then ISC_EV_STACK records of a block with a header word */
};

#define ISC_STREAM_NONE 0xffffffffu	 /* the call names no stream */
#define ISC_CUPTI_CORR_BASE (1ull << 48) /* ids of calls only CUPTI saw: base + CUPTI's id */

/* cuda_api: name = function (or CUPTI callback) name; flags BLOCKED, CUPTI, ASYNC. */
struct isc_cuda_api_payload {
	uint64_t correlation_id;
	uint64_t bytes;	    /* copy, memset or allocation size (ISC_API_HAS_BYTES) */
	uint64_t ptr;	    /* pointer allocated or freed (ISC_API_HAS_PTR) */
	uint32_t stream_id; /* ISC_STREAM_NONE when the call has no stream */
	int32_t result;	    /* cudaError_t */
};

/* The EXT record after a launch's cuda_api record. */
struct isc_launch_payload {
	uint32_t kernel; /* string id of the kernel name, 0 when unknown */
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared_bytes; /* dynamic shared memory */
};

#define ISC_OCCUPANCY_UNKNOWN 0xffffu

/* gpu_kernel: name = kernel name; aux = device id; followed by one ISC_EV_EXT
 * (struct isc_kernel_ext_payload). */
struct isc_gpu_kernel_payload {
	uint64_t correlation_id;
	uint64_t graph_node_id; /* 0 when not launched from a graph */
	uint32_t stream_id;
	uint32_t context_id;
	uint32_t graph_id;
	uint16_t registers; /* per thread */
	uint16_t occupancy; /* theoretical, in 1/10000; ISC_OCCUPANCY_UNKNOWN */
};

struct isc_kernel_ext_payload {
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t static_shared;
	uint32_t dynamic_shared;
};

/* h2d_copy & co.: aux = device id; flags ISC_EVF_ASYNC. */
struct isc_gpu_memcpy_payload {
	uint64_t correlation_id;
	uint64_t bytes;
	uint32_t stream_id;
	uint32_t graph_id;
	uint8_t dir;	  /* enum isc_copy_dir */
	uint8_t src_kind; /* enum isc_mem_kind */
	uint8_t dst_kind;
	uint8_t reserved;
	uint16_t src_device; /* ISC_DIR_P2P only */
	uint16_t dst_device;
};

/* gpu_memset: aux = device id. */
struct isc_gpu_memset_payload {
	uint64_t correlation_id;
	uint64_t bytes;
	uint32_t stream_id;
	uint32_t value;
	uint32_t graph_id;
	uint32_t mem_kind; /* enum isc_mem_kind */
};

/* The EXT record after a copy or memset replayed from a CUDA graph (ISC_EVF_NODE_EXT): the
 * node id has no room in their payloads. Like ISC_EV_GRAPH_NODE, an addition that leaves
 * every earlier layout as it was (ISC_SPILL_VERSION stays): a converter that predates it
 * counts such records as skipped. */
struct isc_gpu_node_ext_payload {
	uint64_t graph_node_id;
	uint64_t reserved[3];
};

/*
 * A CUDA graph node (ISC_EV_GRAPH_NODE), from CUPTI's resource callbacks on the thread
 * that made the node: created (a launch, copy or memset captured from a stream, or a node
 * added by hand) or cloned (cudaGraphInstantiate and cudaGraphClone copy every node, and
 * the GPU records of a replay carry the copy's id). name = the intercepted runtime call
 * the node was made in (0 when none: a call only CUPTI saw); aux = ISC_NODE_* flags; a
 * created node's stack block (header word, as cuda_api's) follows with ISC_NODE_STACK.
 */
enum {
	ISC_NODE_CLONED = 1u << 0, /* original_id is the node it was copied from */
	ISC_NODE_STACK = 1u << 1,  /* ISC_EV_STACK records of a block with a header word follow */
};

struct isc_graph_node_payload {
	uint64_t node_id;	 /* CUPTI's id (cuptiGetGraphNodeId), as GPU records carry it */
	uint64_t original_id;	 /* ISC_NODE_CLONED: the node it was cloned from */
	uint64_t correlation_id; /* of the intercepted call the node was made in, 0 none */
	uint32_t graph_id;	 /* cuptiGetGraphId of the node's graph, 0 unknown */
	uint32_t node_type;	 /* CUgraphNodeType */
};

enum isc_sync_type {
	ISC_SYNC_UNKNOWN = 0,
	ISC_SYNC_EVENT = 1,
	ISC_SYNC_STREAM_WAIT_EVENT = 2,
	ISC_SYNC_STREAM = 3,
	ISC_SYNC_CONTEXT = 4,
};

/* gpu_sync: aux = device id + 1 (0 = unknown). */
struct isc_gpu_sync_payload {
	uint64_t correlation_id;
	uint32_t stream_id; /* ISC_STREAM_NONE when not about a stream */
	uint32_t sync_type; /* enum isc_sync_type */
	uint32_t event_id;
	uint32_t context_id;
	uint64_t reserved;
};
/* Memory (ISC_EV_MEMORY): a sampled or large host allocation, a release, a mapping,
 * or the process's NUMA page migrations. name = 0 (the encoder names it after op);
 * `frames` return addresses follow in ISC_EV_STACK records. */
enum isc_mem_op {
	ISC_MEM_MALLOC = 0,
	ISC_MEM_CALLOC,
	ISC_MEM_REALLOC,
	ISC_MEM_REALLOCARRAY,
	ISC_MEM_FREE,
	ISC_MEM_POSIX_MEMALIGN,
	ISC_MEM_ALIGNED_ALLOC,
	ISC_MEM_MEMALIGN,
	ISC_MEM_VALLOC,
	ISC_MEM_PVALLOC,
	ISC_MEM_MMAP,
	ISC_MEM_MUNMAP,
	ISC_MEM_MREMAP,
	ISC_MEM_NUMA_MIGRATION,
	ISC_MEM__COUNT
};

struct isc_memory_payload {
	uint64_t ptr;	    /* address returned (or released) */
	uint64_t bytes;	    /* size requested (free: usable size); numa_migration: pages */
	uint64_t weight;    /* bytes this sample stands for */
	uint16_t op;	    /* enum isc_mem_op */
	int16_t numa_node;  /* node of the thread's CPU, -1 unknown */
	uint16_t frames;    /* stack frames that follow */
	uint16_t py_frames; /* Python frames after them (two words each) */
};

/* System calls and waits (ISC_EV_SYSCALL): name = the call's name. */
enum isc_sys_category {
	ISC_SYSCAT_IO = 0,
	ISC_SYSCAT_NET,
	ISC_SYSCAT_WAIT,
	ISC_SYSCAT_SLEEP,
	ISC_SYSCAT_DRIVER,
	ISC_SYSCAT_FS,
};

enum isc_fd_target {
	ISC_FD_UNKNOWN = 0, /* not classified (no fd, or the fd is gone) */
	ISC_FD_FILE,
	ISC_FD_SOCKET,
	ISC_FD_PIPE,
	ISC_FD_TTY,
	ISC_FD_NVIDIA, /* /dev/nvidia*: time in the GPU driver */
	ISC_FD_OTHER,
};

struct isc_syscall_payload {
	int64_t ret;	    /* raw result */
	uint64_t bytes;	    /* bytes requested, 0 when the call moves none */
	int32_t fd;	    /* -1 when the call has none */
	int32_t err;	    /* errno, valid with ISC_EVF_ERRNO */
	int16_t nr;	    /* x86-64 syscall number, -1 for futex-based waits */
	uint8_t category;   /* enum isc_sys_category */
	uint8_t target;	    /* enum isc_fd_target */
	uint16_t frames;    /* stack frames that follow */
	uint16_t py_frames; /* Python frames after them (two words each) */
};

/*
 * Stack frames (ISC_EV_STACK continuation): 7 return addresses per record, innermost
 * first, in the words at byte offsets 0, 8, 24, 32, 40, 48 and 56 - everything but
 * the tid/kind/flags word, which stays readable as with ISC_EV_TEXT.
 */
#define ISC_STACK_PER_RECORD 7

static inline unsigned isc_stack_offset(unsigned i)
{
	return i < 2 ? i * 8 : 8 + i * 8;
}

static inline unsigned isc_stack_records(unsigned frames)
{
	return (frames + ISC_STACK_PER_RECORD - 1) / ISC_STACK_PER_RECORD;
}

/*
 * CPU sample (ISC_EV_CPU_SAMPLE): dur = CPU time the sample stands for (ns of the
 * thread's CPU clock). `native` return addresses, then `python` frames of two words
 * each (struct isc_pyframe_words), follow in ISC_EV_STACK records, 7 words per
 * record. Other events that carry a stack use the same words (samplers/stack-words.h).
 */
struct isc_cpu_sample_payload {
	uint64_t overrun; /* timer expirations merged into this one (kernel's overrun) */
	uint16_t native;  /* return addresses, innermost first */
	uint16_t python;  /* Python frames, innermost first */
	uint16_t status;  /* enum isc_py_status of the Python walk */
	uint16_t reserved;
	uint64_t reserved2[2];
};

/*
 * A Python frame in a stack is two words. The signal handler writes what it can
 * read without the GIL: word 0 the code object's address, word 1 the instruction
 * offset (code units) | flags << 32. Before the records are spilled, the collector
 * turns them into word 0 = name string id | file string id << 32 and word 1 = line
 * | (flags | ISC_PYF_RESOLVED) << 32, while the code objects are alive.
 */
enum {
	ISC_PYF_RESOLVED = 1u << 0, /* words hold string ids and a line */
	ISC_PYF_ENTRY = 1u << 1,    /* the outermost frame of one evaluator call */
	ISC_PYF_BAD = 1u << 2,	    /* the code object could not be read */
};

/* Outcome of the Python walk of a sample (isc_cpu_sample_payload.status). */
enum isc_py_status {
	ISC_PY_NONE = 0,      /* no interpreter, or the thread has no Python state */
	ISC_PY_OK = 1,	      /* frames read */
	ISC_PY_TRUNCATED = 2, /* frames read, the walk stopped early (changing under us) */
};

/* The common header; the payload union follows at offset 32. */
struct isc_event {
	uint64_t ts;	/* start, CLOCK_MONOTONIC nanoseconds (isc_now()) */
	uint64_t dur;	/* nanoseconds; 0 for instants */
	uint32_t tid;	/* thread the event belongs to (not always the writer) */
	uint16_t kind;	/* enum isc_event_kind */
	uint16_t flags; /* ISC_EVF_* */
	uint32_t name;	/* string id (intern.h); 0 = no name */
	uint32_t aux;	/* kind-specific small field (see each kind) */
	union {
		struct isc_scope_payload scope; /* aux: call depth | source << 16 */
		struct isc_instant_payload instant;
		struct isc_kv_payload kv;
		struct isc_counter_payload counter;
		struct isc_cuda_api_payload cuda_api;
		struct isc_launch_payload launch;
		struct isc_gpu_kernel_payload gpu_kernel;
		struct isc_kernel_ext_payload gpu_kernel_ext;
		struct isc_gpu_memcpy_payload gpu_copy;
		struct isc_gpu_memset_payload gpu_memset;
		struct isc_gpu_sync_payload gpu_sync;
		struct isc_memory_payload memory;
		struct isc_syscall_payload syscall;
		struct isc_cpu_sample_payload sample;
		struct isc_gpu_node_ext_payload gpu_node_ext;
		struct isc_graph_node_payload graph_node;
		uint64_t raw[4];
		unsigned char bytes[32];
	} u;
};

_Static_assert(sizeof(struct isc_event) == 64, "records are 64 bytes");

#endif /* ISC_EVENT_H */
