/* SPDX-License-Identifier: MIT */
/*
 * Internals of the simulated CUDA runtime (libcudart.so.13), shared by its files.
 *
 * One mutex (isc_sim_lock) protects the whole model: devices, streams, events,
 * allocations, kernels, graphs and the ground truth. It is a test double, so
 * simplicity wins over scalability; the lock is never held while sleeping, busy
 * waiting, or calling into libcupti or an injection library.
 */
#ifndef ISC_SIM_H
#define ISC_SIM_H

#include <cuda_runtime_api.h>
#include <cupti_runtime_cbid.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "tests/simgpu/nvcc-abi.h"
#include "tests/simgpu/sim-tool.h"
#include "tests/simgpu/simgpu.h"

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_CBID(fn) CUPTI_RUNTIME_TRACE_CBID_##fn

#define SIM_MAX_DEVICES 8
#define SIM_LEGACY_STREAM_ID 7u /* what CUPTI reports for the legacy default stream */

/* ---- configuration (config.c): every SIMGPU_* variable, read once ---- */
struct isc_sim_config {
	bool no_device;
	bool debug;
	bool truth_api;
	int device_count;
	char device_name[256];
	char truth_path[4096];
	uint64_t device_memory;
	uint64_t launch_cost_ns;    /* host busy wait inside every launch call */
	uint64_t api_cost_ns;	    /* host busy wait inside other enqueueing calls */
	uint64_t launch_latency_ns; /* enqueue to earliest start on the device */
	uint64_t kernel_default_ns;
	uint64_t copy_latency_ns;   /* fixed part of every copy */
	uint64_t malloc_cost_ns;    /* cudaMalloc: fixed host cost ... */
	uint64_t malloc_ns_per_mib; /* ... plus this per MiB */
	uint64_t free_cost_ns;
	uint64_t host_alloc_cost_ns; /* cudaMallocHost / cudaHostRegister, per MiB */
	uint64_t spin_ns;	     /* blocking waits spin for their last part */
	uint64_t graph_node_gap_ns;
	uint64_t
		queue_depth; /* kernels in flight per stream before a launch blocks (0: no limit) */
	double bw_h2d_pinned; /* bandwidths in bytes per ns (= GB/s) */
	double bw_d2h_pinned;
	double bw_h2d_pageable;
	double bw_d2h_pageable;
	double bw_d2d;
	double bw_p2p;
	double bw_h2h;
	double bw_memset;
};

extern struct isc_sim_config isc_sim_cfg;
void isc_sim_config_load(void);
void isc_sim_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- time (clock.c) ---- */
uint64_t isc_sim_now(void);
void isc_sim_busy_wait(uint64_t ns);
void isc_sim_wait_until(uint64_t t_ns, bool spin);

/* ---- API frames, initialisation, injection, errors (api.c, init.c) ---- */
enum {
	SIM_CALL_NO_INIT = 1u << 0, /* does not initialise the driver (error strings, ...) */
	SIM_CALL_DRIVER = 1u << 1,  /* a driver API call (CUPTI's DRIVER domain) */
	SIM_CALL_HIDDEN = 1u << 2,  /* made by simgpu_launch_hidden() */
};

struct isc_sim_call {
	struct simgpu_api api;
	uint64_t wait_from; /* host blocked inside the call, when wait_to > 0 */
	uint64_t wait_to;
	bool quiet; /* the call reports errors without setting the last error */
};

extern pthread_mutex_t isc_sim_lock;
extern const struct simgpu_tool *_Atomic isc_sim_tool;

cudaError_t isc_sim_enter(struct isc_sim_call *c, uint32_t cbid, const char *name, unsigned flags);
cudaError_t isc_sim_leave(struct isc_sim_call *c, cudaError_t err);
cudaError_t isc_sim_init(void);
bool isc_sim_initialised(void);
uint32_t isc_sim_tid(void);
void isc_sim_block(struct isc_sim_call *c, uint64_t until, bool spin);
void isc_sim_notify_op(const struct simgpu_op *op);
void isc_sim_notify_sync(const struct isc_sim_call *c, uint32_t type, uint32_t stream_id,
			 uint32_t event_id, int device);
void isc_sim_set_last_error(cudaError_t err);
cudaError_t isc_sim_get_last_error(bool reset);
void isc_sim_injection(void);
const char *isc_sim_error_name(int err);
const char *isc_sim_error_string(int err);
const char *isc_sim_runtime_cbid_name(uint32_t cbid);

/* ---- live handles (handles.c); callers hold isc_sim_lock ---- */
bool isc_sim_handle_add(const void *h);
bool isc_sim_handle_live(const void *h);
void isc_sim_handle_remove(const void *h);

/* ---- devices (device.c) ---- */
struct isc_sim_device {
	int id;
	unsigned flags;		/* cudaSetDeviceFlags */
	uint64_t max_end;	/* end of the last operation on any stream */
	uint64_t blocking_tail; /* latest tail among blocking non-legacy streams */
	uint64_t h2d_free;	/* one copy engine per direction */
	uint64_t d2h_free;
	uint64_t kernel_free; /* only used while kernels are serialised */
	uint64_t mem_used;
	struct CUstream_st *legacy;
};

extern struct isc_sim_device isc_sim_devices[SIM_MAX_DEVICES];
extern bool isc_sim_serialize_kernels;
int isc_sim_current_device(void);
void isc_sim_set_current_device(int device);
int isc_sim_attribute(int device, enum cudaDeviceAttr attr, int *value);
void isc_sim_devices_init(void);
int isc_sim_fill_props(int device, struct cudaDeviceProp *prop);
bool isc_sim_device_blocking_sync(int device);

/* ---- streams and the timeline (stream.c, timeline.c) ---- */
struct isc_sim_graph;

struct CUstream_st {
	uint32_t magic;
	uint32_t id;
	int device;
	unsigned flags;
	int priority;
	bool legacy;
	bool per_thread;
	uint64_t tail;		    /* end of the last operation or awaited event */
	struct CUgraph_st *capture; /* graph being captured, or NULL */
	unsigned long long capture_id;
	uint64_t *ring; /* SIMGPU_QUEUE_DEPTH: ends of the stream's last kernels, or NULL */
	uint32_t ring_pos;
};

enum isc_sim_engine {
	SIM_ENGINE_NONE = 0, /* kernels overlap freely across streams */
	SIM_ENGINE_H2D,
	SIM_ENGINE_D2H,
	SIM_ENGINE_KERNEL,
};

struct CUstream_st *isc_sim_stream_resolve(cudaStream_t handle, bool ptsz, cudaError_t *err);
uint64_t isc_sim_stream_slot(struct CUstream_st *s);
void isc_sim_stream_slot_take(struct CUstream_st *s, uint64_t end);
uint64_t isc_sim_stream_floor(const struct CUstream_st *s);
void isc_sim_stream_advance(struct CUstream_st *s, uint64_t t);
uint64_t isc_sim_schedule(struct CUstream_st *s, enum isc_sim_engine engine, uint64_t ready,
			  uint64_t duration, uint64_t *start);
uint32_t isc_sim_next_stream_id(void);
struct CUstream_st *isc_sim_stream_new(unsigned flags, int priority);
void isc_sim_stream_kill(struct CUstream_st *s);

/* ---- memory (memory.c) ---- */
enum isc_sim_alloc_kind {
	SIM_ALLOC_DEVICE = 1,
	SIM_ALLOC_HOST,	      /* cudaMallocHost / cudaHostAlloc */
	SIM_ALLOC_REGISTERED, /* cudaHostRegister */
	SIM_ALLOC_MANAGED,
};

struct isc_sim_range {
	uintptr_t base;
	size_t size;
	uint8_t kind; /* enum isc_sim_alloc_kind */
	bool live;
	bool pool; /* cudaMallocAsync */
	int device;
	unsigned flags;
};

struct isc_sim_range *isc_sim_range_find(const void *p);
struct isc_sim_range *isc_sim_range_insert(const struct isc_sim_range *r);
void isc_sim_range_remove(struct isc_sim_range *r);
uint8_t isc_sim_mem_kind(const void *p, int *device);
void isc_sim_mem_reset(int device);
uint64_t isc_sim_per_mib(uint64_t ns_per_mib, size_t bytes);
cudaError_t isc_sim_free_range(struct isc_sim_call *c, void *p, bool host, const char *what);

/* ---- kernels (kernel.c) ---- */
#define SIM_DURATION_DEFAULT UINT64_MAX /* SIMGPU_KERNEL_DEFAULT_NS, read at launch */

struct CUkern_st {
	uint32_t magic;
	const void *func;
	const char *name;
	uint64_t duration_ns;
	uint32_t registers;
	uint32_t static_smem;
	bool user_registered; /* simgpu_kernel_register() set name and duration */
};

struct CUkern_st *isc_sim_kernel_get(const void *func_or_handle, bool create);
struct CUkern_st *isc_sim_kernel_create(const void *func, const char *name);
uint64_t isc_sim_take_next_duration(void);
uint64_t isc_sim_kernel_duration(const struct CUkern_st *k);
uint64_t isc_sim_next_launch_seq(void);
cudaError_t isc_sim_launch(struct isc_sim_call *c, struct CUkern_st *k, dim3 grid, dim3 block,
			   size_t smem, cudaStream_t stream, bool ptsz);
const char *isc_sim_intern(const char *s);

/* ---- copies (copy.c) ---- */
enum {
	SIM_COPY_SYNC = 0,
	SIM_COPY_ASYNC = 1u << 0,
	SIM_COPY_PTSZ = 1u << 1,
};

struct isc_sim_copy {
	void *dst;
	const void *src;
	size_t bytes;
	size_t rows; /* 2D copies: height, else 1 */
	enum cudaMemcpyKind kind;
	int dst_device; /* peer copies, else -1 */
	int src_device;
};

cudaError_t isc_sim_copy(struct isc_sim_call *c, const struct isc_sim_copy *cp, cudaStream_t stream,
			 unsigned mode);
cudaError_t isc_sim_symbol_copy(struct isc_sim_call *c, const struct isc_sim_copy *cp,
				cudaStream_t stream, unsigned mode, bool to_symbol);
cudaError_t isc_sim_copy_2d(struct isc_sim_call *c, void *dst, size_t dpitch, const void *src,
			    size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind,
			    cudaStream_t stream, unsigned mode);
cudaError_t isc_sim_copy_peer(struct isc_sim_call *c, void *dst, int dstDevice, const void *src,
			      int srcDevice, size_t count, cudaStream_t stream, unsigned mode);
cudaError_t isc_sim_copy_symbol(struct isc_sim_call *c, void *dst, const void *src, size_t count,
				enum cudaMemcpyKind kind, cudaStream_t stream, unsigned mode,
				bool to_symbol);
cudaError_t isc_sim_memset(struct isc_sim_call *c, void *dst, int value, size_t bytes,
			   cudaStream_t stream, unsigned mode);
uint64_t isc_sim_copy_duration(uint8_t copy_kind, uint8_t host_kind, uint64_t bytes);

/* ---- graphs (graph.c, capture.c) ---- */
/* A new empty graph (its handle live). Caller holds the lock. */
struct CUgraph_st *isc_sim_graph_new(void);
/* Adds op as a node of the graph s captures; *created is what the tool is told, with
 * isc_sim_notify_graph_node once the lock is released. False when out of memory. */
bool isc_sim_capture_add(struct CUstream_st *s, const struct simgpu_op *op, uint64_t duration,
			 struct simgpu_graph_node *created);
void isc_sim_notify_graph_node(const struct simgpu_graph_node *node);
bool isc_sim_graph_node_id(const void *node, uint64_t *id);
bool isc_sim_graph_id(const void *graph, uint32_t *id);

/* ---- ground truth (truth.c) ---- */
void isc_sim_truth_op(const struct simgpu_op *op);
void isc_sim_truth_api(const struct isc_sim_call *c);
void isc_sim_truth_mem(const char *what, const void *ptr, size_t bytes, int kind, int device);
void isc_sim_truth_init(void);

/* ---- shared implementations used by the _ptsz/_ptds variants (ptsz.c) ---- */
cudaError_t isc_sim_stream_sync(struct isc_sim_call *c, cudaStream_t stream, bool ptsz);
cudaError_t isc_sim_stream_query(cudaStream_t stream, bool ptsz);
cudaError_t isc_sim_stream_wait_event(struct isc_sim_call *c, cudaStream_t stream,
				      cudaEvent_t event, bool ptsz);
cudaError_t isc_sim_event_record(struct isc_sim_call *c, cudaEvent_t event, cudaStream_t stream,
				 bool ptsz);
cudaError_t isc_sim_launch_ex(struct isc_sim_call *c, const cudaLaunchConfig_t *config,
			      const void *func, bool ptsz);
cudaError_t isc_sim_malloc_async(struct isc_sim_call *c, void **ptr, size_t size,
				 cudaStream_t stream, bool ptsz);
cudaError_t isc_sim_free_async(struct isc_sim_call *c, void *ptr, cudaStream_t stream, bool ptsz);
cudaError_t isc_sim_begin_capture(cudaStream_t stream, enum cudaStreamCaptureMode mode, bool ptsz);
cudaError_t isc_sim_end_capture(cudaStream_t stream, cudaGraph_t *graph, bool ptsz);
cudaError_t isc_sim_is_capturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
				 unsigned long long *id, cudaGraph_t *graph, bool ptsz);
cudaError_t isc_sim_graph_launch(struct isc_sim_call *c, cudaGraphExec_t exec, cudaStream_t stream,
				 bool ptsz);
cudaError_t isc_sim_stream_get(cudaStream_t stream, bool ptsz, int *priority, unsigned *flags,
			       unsigned long long *id, int *device);

/* The simulator's own exports (simgpu.h declares the rest). */
const struct simgpu_runtime *simgpu_tool_attach(const struct simgpu_tool *tool);

static inline uint64_t sim_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

#endif /* ISC_SIM_H */
