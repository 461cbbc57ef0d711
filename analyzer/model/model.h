/* SPDX-License-Identifier: MIT */
/*
 * The analyzer's event model: what every reader produces and every later stage reads.
 *
 * One trace holds the events of one or more input files (parent and child processes of one
 * host merge on their shared clock). An event is a fixed 64-byte record with interned names,
 * so memory is bounded by the number of events, never by the size of the JSON text.
 * Times are integer nanoseconds on the trace clock: readers convert the microsecond decimals
 * of the file exactly, without going through a double.
 */
#ifndef ISC_MODEL_H
#define ISC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum isc_ev_type {
	ISC_T_SCOPE,  /* cpu_call; Kineto user_annotation */
	ISC_T_CPU_OP, /* Kineto cpu_op: a framework operator */
	ISC_T_INSTANT,
	ISC_T_SYSCALL,
	ISC_T_MEMORY,
	ISC_T_COUNTER,
	ISC_T_CUDA_API,
	ISC_T_CPU_SAMPLE, /* a sampled stack: v.bytes = CPU time it stands for (ns) */
	ISC_T_KERNEL,	  /* first GPU-side type */
	ISC_T_H2D,
	ISC_T_D2H,
	ISC_T_D2D,
	ISC_T_H2H,
	ISC_T_MEMSET,
	ISC_T_GPU_SYNC,
	ISC_T__COUNT
};

enum isc_ev_flag {
	ISC_F_BLOCKED = 1u << 0,	 /* cuda_api: the host waited for the device */
	ISC_F_UNTERMINATED = 1u << 1,	 /* scope still open when the trace was written */
	ISC_F_ERROR = 1u << 2,		 /* failed call */
	ISC_F_PINNED = 1u << 3,		 /* copy touching pinned host memory */
	ISC_F_PAGEABLE = 1u << 4,	 /* copy touching pageable host memory */
	ISC_F_CUPTI = 1u << 5,		 /* cuda_api seen only by CUPTI */
	ISC_F_GRAPH = 1u << 6,		 /* GPU operation replayed from a CUDA graph */
	ISC_F_PLACEHOLDER_END = 1u << 7, /* prototype cpu_call whose end is its start */
	ISC_F_NO_STREAM = 1u << 8,	 /* GPU record on no stream (Kineto "stream": -1) */
	ISC_F_STACK = 1u << 9,		 /* `stack` holds a stack id (never on kernels) */
	/* syscall: a read of a pipe or terminal, whose data arrives at its writer's pace;
	 * what-ifs never make it return before it did (docs/rules.md, "Paced input") */
	ISC_F_PACED = 1u << 10,
	/* syscall: a timed wait that ended by its timeout (ETIMEDOUT): the clock woke it */
	ISC_F_TIMEDOUT = 1u << 11,
	/* syscall: a wait for a child (wait, wait3, wait4, waitpid) whose return value named
	 * the child that ended it: aux holds that pid (these calls take no fd) */
	ISC_F_CHILD_PID = 1u << 12,
};

/* Sub-kinds, one enum per type that needs one (isc_ev.sub). */
enum isc_syscall_cat {
	ISC_SYS_OTHER,
	ISC_SYS_IO,
	ISC_SYS_NET,
	ISC_SYS_WAIT,
	ISC_SYS_SLEEP,
	ISC_SYS_DRIVER,
	ISC_SYS_FS,
};

enum isc_api_class {
	ISC_AC_OTHER,
	ISC_AC_LAUNCH,
	ISC_AC_MEMCPY,
	ISC_AC_MEMSET,
	ISC_AC_SYNC,
	ISC_AC_MALLOC,
	ISC_AC_FREE,
	ISC_AC_HOST_ALLOC,
	ISC_AC_QUERY,
};

enum isc_counter_kind {
	ISC_CTR_OTHER,
	ISC_CTR_CPU_TIME,
	ISC_CTR_WAIT_TIME,
	ISC_CTR_LIVE_HEAP,
	ISC_CTR_DEVICE_MEMORY,
};

enum isc_alloc_kind { ISC_MK_OTHER, ISC_MK_ALLOC, ISC_MK_FREE };

/* gpu_sync: the waits on a CUDA event, as Kineto's cuda_sync records name them; their
 * corr is the waiting call's (cudaStreamWaitEvent, cudaEventSynchronize), their v.sync
 * what recorded the event. */
enum isc_gpu_sync_kind {
	ISC_GS_OTHER,	   /* stream and context synchronize; InferScope's records */
	ISC_GS_WAIT_EVENT, /* "Stream Wait Event": the stream's later work waits for it */
	ISC_GS_EVENT_SYNC, /* "Event Sync": the host waits for it */
};

enum isc_scope_src { ISC_SRC_API_, ISC_SRC_PYTHON_, ISC_SRC_NVTX_, ISC_SRC_KINETO };

struct isc_ev {
	int64_t ts;    /* start, ns */
	int64_t dur;   /* ns, >= 0 */
	uint64_t corr; /* correlation id, 0 = none; memory_event: sample weight */
	union {
		uint64_t bytes;	 /* copies, memsets, syscalls, allocations */
		double value;	 /* counters */
		uint64_t handle; /* cuda_api event calls (isc_api_event_call): the cudaEvent_t,
				  * 0 when the input does not say (Kineto) */
		struct {
			uint32_t
				record_corr; /* the cudaEventRecord call's correlation, 0 unknown */
			int32_t wait_stream; /* the stream it recorded on, -1 unknown */
		} sync; /* gpu_sync of sub ISC_GS_WAIT_EVENT or ISC_GS_EVENT_SYNC */
	} v;
	uint32_t name;	 /* string id */
	uint32_t thread; /* index into isc_trace.threads (host thread; GPU: launching one) */
	int32_t stream;	 /* GPU stream, -1 for host-side events */
	union {
		float occupancy; /* kernels: theoretical occupancy in [0, 1], < 0 unknown */
		uint32_t stack;	 /* other types with ISC_F_STACK: id in the input's stacks
				  * (stacks.h); kernels reach theirs through the launch */
	};
	uint32_t aux;	/* cuda_api: return code; syscall: fd (ISC_F_CHILD_PID: the child's pid);
			 * GPU operations with ISC_F_GRAPH:
			 * their graph node (graph-nodes.h), 0 unknown */
	uint8_t type;	/* enum isc_ev_type */
	uint8_t sub;	/* sub-kind of the type */
	uint16_t flags; /* ISC_F_* */
	int16_t device; /* GPU device, -1 unknown */
	uint16_t input; /* index into isc_trace.inputs */
	uint16_t depth; /* scopes: call depth */
	uint16_t geom;	/* kernels: their geometry in the trace's table (model-extra.h), 0 none */
};

_Static_assert(sizeof(struct isc_ev) == 64, "events are 64 bytes");

struct isc_thread_info {
	int64_t tid;
	uint32_t name; /* string id, 0 when unknown */
	uint16_t input;
};

/* A per-name counter from a trace's exact aggregates. */
struct isc_agg {
	uint32_t name;
	uint64_t count;
	double total_us;
	double max_us;
	uint64_t bytes;
};

struct isc_agg_list {
	struct isc_agg *v;
	size_t n, cap;
};

/* One bucket of a call's latency histogram (aggregates.syscall_latency): calls that lasted
 * [lo, hi) ns. A histogram covers every call the hooks counted, not only the events. */
struct isc_lat_bucket {
	uint32_t name;
	int64_t lo, hi;
	uint64_t n;
};

struct isc_lat_list {
	struct isc_lat_bucket *v;
	size_t n, cap;
};

struct isc_device_info {
	bool present;
	int sm_count;
	int max_threads_per_sm;
	int max_blocks_per_sm;
	int max_registers_per_sm;
	int max_shared_memory_per_sm;
	int warp_size;
};

/* What one input file said about itself. String fields are ids, 0 when absent. */
struct isc_input {
	char *path;
	const char *format; /* reader name */
	char format_version[16];
	int64_t pid;
	int64_t ppid; /* 0 unknown: with pid, which input is a child of which */
	uint32_t hostname, command, cupti_status, cupti_reason, end_reason, gpu_model, version;
	int complete; /* -1 unknown, 0, 1 */
	uint64_t dropped_total;
	uint64_t cupti_dropped;
	struct isc_agg_list dropped_by_kind;
	uint64_t events;  /* events kept */
	uint64_t skipped; /* events of unknown types */
	uint64_t ignored; /* events read but not modelled (flows, returns, metadata) */
	int64_t meta_start_ns, meta_end_ns; /* 0 when absent */
	/* trace_metadata.clock: one monotonic and one realtime reading of the same moment,
	 * the pair that puts the traces of several hosts on one axis (model/hosts.h) */
	bool has_anchor;
	int64_t anchor_mono_ns, anchor_real_ns;
	/* Exec chains (trace_metadata.exec_chain): the images before the program, which
	 * started at meta_start_ns; their events are start-up, before it. */
	uint32_t startup_images;
	uint32_t startup_command; /* the first image's command line */
	int cpu_count;		  /* 0 unknown */
	struct isc_device_info device;
	bool has_aggregates;
	uint64_t malloc_calls, malloc_frees, malloc_bytes, malloc_sampled;
	uint64_t malloc_failed, malloc_bytes_freed; /* aggregates.threads[].malloc, summed */
	int64_t malloc_live;
	struct isc_agg_list agg_syscalls;
	struct isc_agg_list agg_cuda_api;
	bool has_latency; /* the trace has aggregates.syscall_latency (traces before: none) */
	struct isc_lat_list latency;
	int rank; /* distributed rank (Kineto distributedInfo.rank), -1 unknown */
	/* Kineto's top-level "distributedInfo" and "deviceProperties", verbatim JSON (NULL when
	 * absent), so that the Chrome export hands them on to HTA. */
	char *distributed_info, *device_properties;
	/* Categories of complete events the reader does not model: count, total time, and in
	 * bytes the number of those events that look like device work (model-extra.h). */
	struct isc_agg_list unknown_cats;
	struct isc_stacks *stacks; /* sampled stacks and their frames (stacks.h), or NULL */
	double sample_hz;	   /* trace_metadata.sampling.cpu_hz, 0 when off or absent */
	uint64_t samples_lost;	   /* trace_metadata.sampling.lost */
	uint32_t sampling_python;  /* trace_metadata.sampling.python, string id */
	/* trace_metadata.sampling.unsampled_threads and _reason (string id): threads whose
	 * CPU time was not sampled (they blocked the sampler's signal) */
	uint64_t unsampled_threads;
	uint32_t unsampled_reason;
	/* trace_metadata.unwritten: events recorded but never written (disk full, no
	 * descriptor, no memory), and why (string id) */
	uint64_t unwritten_events;
	uint32_t unwritten_reason;
};

/* A dependency the input states between two of its events, as Chrome-trace flow events
 * ("ph" s, t, f) draw them: Kineto's launch links (ac2g; async and async_gpu before
 * PyTorch 1.10; the legacy profiler's cpu_to_cuda) from the call or operator to its GPU
 * work, and its autograd links (fwdbwd; forward_backward before 1.10) from a forward
 * operator to its backward. */
enum isc_flow_kind { ISC_FLOW_LAUNCH, ISC_FLOW_FWDBWD, ISC_FLOW__COUNT };

struct isc_flow {
	uint32_t src, dst; /* event indices (isc_trace_finalize keeps them right) */
	uint8_t kind;	   /* enum isc_flow_kind */
};

struct isc_strtab;
struct isc_stacks;
struct isc_gnodes;

/* Correlation ids are handed out by a counter: per input they are usually dense, and a
 * plain array indexed by id beats a hash table on millions of lookups. */
struct isc_corr_direct {
	uint64_t base;
	size_t n;
	uint32_t *idx; /* cuda_api event index + 1, 0 = none */
};

struct isc_trace {
	struct isc_ev *ev;
	size_t n, cap;
	struct isc_strtab *str;
	struct isc_input *inputs;
	size_t n_inputs, cap_inputs;
	struct isc_thread_info *threads;
	size_t n_threads, cap_threads;
	uint32_t *thread_slots; /* open addressing: thread index + 1 */
	size_t thread_slot_mask;
	uint32_t *corr_slots; /* cuda_api event index + 1, by (input, corr) */
	size_t corr_slot_mask;
	struct isc_corr_direct *corr_direct; /* per input, when its ids are dense */
	struct isc_flow *flows;		     /* by source's start once finalized */
	size_t n_flows, cap_flows;
	bool finalized;
	struct isc_trace_extra *extra; /* what only the export needs (model-extra.h), or NULL */
	struct isc_hosts *hosts;       /* several hosts: their clocks aligned (hosts.h), or NULL */
	struct isc_gnodes *gnodes;     /* CUDA graph nodes (graph-nodes.h), or NULL */
};

struct isc_trace *isc_trace_create(void);
void isc_trace_destroy(struct isc_trace *t);

/* Interning: the same bytes always give the same id; id 0 is the empty string. */
uint32_t isc_trace_intern(struct isc_trace *t, const char *s, size_t n);
const char *isc_trace_str(const struct isc_trace *t, uint32_t id);
/* Id of an already interned string, or UINT32_MAX. */
uint32_t isc_trace_find_str(const struct isc_trace *t, const char *s);
size_t isc_trace_n_strings(const struct isc_trace *t);

/* Returns the new input's index, or -ENOMEM. */
int isc_trace_add_input(struct isc_trace *t, const char *path);
/* Index of (input, tid), created on first use; UINT32_MAX on allocation failure. */
uint32_t isc_trace_thread(struct isc_trace *t, uint16_t input, int64_t tid);
/* Room for n events in all (t->ev may move). 0 or -ENOMEM. */
int isc_trace_reserve(struct isc_trace *t, size_t n);
/* A zeroed event appended to the trace (stream -1, device -1, occupancy -1), or NULL. */
struct isc_ev *isc_trace_push(struct isc_trace *t);
/* A flow from event src to event dst (indices before finalize). 0 or -ENOMEM. */
int isc_trace_add_flow(struct isc_trace *t, uint32_t src, uint32_t dst, enum isc_flow_kind kind);
const char *isc_flow_kind_name(unsigned kind);

/* Times beyond +-73 years are nonsense from a corrupt input: every time the model holds
 * (events, an input's metadata and clock anchors, the shifts between hosts) is bounded to
 * +-ISC_TIME_LIMIT, which keeps the sum or difference of two of them inside int64. */
#define ISC_TIME_LIMIT (INT64_C(1) << 61)

static inline int64_t isc_time_bound(int64_t v)
{
	return v < -ISC_TIME_LIMIT ? -ISC_TIME_LIMIT : v > ISC_TIME_LIMIT ? ISC_TIME_LIMIT : v;
}

/* a + b, two bounded times or a time and a shift, bounded again. */
static inline int64_t isc_time_add(int64_t a, int64_t b)
{
	return isc_time_bound(isc_time_bound(a) + isc_time_bound(b));
}

/*
 * Bounds every time (ISC_TIME_LIMIT), puts the inputs of several hosts on one clock
 * (hosts.h), sorts events by start time (stable), indexes correlation ids, gives GPU
 * events without a thread the thread of the call that launched them and follows graph
 * nodes back to their capture (graph-nodes.h). Returns 0 or -ENOMEM.
 */
int isc_trace_finalize(struct isc_trace *t);
/* The cuda_api event with this correlation id in this input, or NULL. */
const struct isc_ev *isc_trace_launch_of(const struct isc_trace *t, const struct isc_ev *gpu);

bool isc_type_is_gpu(unsigned type);
const char *isc_type_name(unsigned type);
enum isc_api_class isc_api_classify(const char *name);

/* What a CUDA call does with a CUDA event (runtime and driver spellings, the _ptsz and
 * WithFlags variants): the calls whose handle (isc_ev.v.handle) the graph pairs. */
enum isc_event_call {
	ISC_EC_NONE,
	ISC_EC_RECORD, /* cudaEventRecord: marks the work submitted to its stream so far */
	ISC_EC_WAIT,   /* cudaStreamWaitEvent: its stream's later work waits for that mark */
	ISC_EC_SYNC,   /* cudaEventSynchronize: the host waits for that mark */
	ISC_EC_QUERY,  /* cudaEventQuery: the host polls it, never waits */
};
enum isc_event_call isc_api_event_call(const char *name);
enum isc_counter_kind isc_counter_kind(const char *name);
int isc_agg_add(struct isc_agg_list *l, const struct isc_agg *a);

#endif /* ISC_MODEL_H */
