/* SPDX-License-Identifier: MIT */
/*
 * The private interface between the simulated runtime and the simulated CUPTI.
 *
 * The two libraries find each other at run time, the way the real ones share the
 * driver: whichever is called second looks for the other by soname with
 * dlopen(RTLD_NOLOAD) (never loading it) and exchanges the two tables below. A
 * process that never loads libcupti therefore pays one pointer test per API call.
 * Nothing here is part of the CUDA or CUPTI interface; the ABI number guards against
 * mixing libraries of two builds.
 */
#ifndef SIM_TOOL_H
#define SIM_TOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "tests/simgpu/simgpu.h"

#define SIMGPU_TOOL_ABI 2

struct cudaDeviceProp;

/* One API call, from its entry to its exit. */
struct simgpu_api {
	uint32_t cbid;	/* CUPTI callback id of the function */
	uint8_t domain; /* enum simgpu_api_domain */
	uint8_t hidden; /* issued by simgpu_launch_hidden() */
	uint8_t pad[2];
	const char *name;   /* function name, e.g. "cudaLaunchKernel_ptsz" */
	const char *symbol; /* launches: the kernel's name, else NULL */
	uint32_t correlation_id;
	uint32_t thread_id;  /* gettid() */
	uint64_t pthread_id; /* pthread_self() */
	uint64_t start_ns;   /* CLOCK_MONOTONIC */
	uint64_t end_ns;
	int result;	     /* cudaError_t (filled before api_exit) */
	uint64_t tool_start; /* for the tool: timestamps in its own clock */
	uint64_t tool_end;
	uint64_t tool_data; /* for the tool: CUPTI's correlationData */
};

/* A host-side synchronisation (CUPTI SYNCHRONIZATION records). */
struct simgpu_sync {
	uint32_t type; /* CUpti_ActivitySynchronizationType */
	uint32_t correlation_id;
	uint32_t stream_id; /* 0 when not about a stream */
	uint32_t event_id;  /* 0 when not about an event */
	int32_t device;
	int result;
	uint64_t start_ns;
	uint64_t end_ns;
};

/* A CUDA graph node made by the calling thread's API call (CUPTI's resource callbacks). */
enum simgpu_graph_event {
	SIMGPU_NODE_CREATED = 1, /* captured from a stream */
	SIMGPU_NODE_CLONED = 2,	 /* copied by cudaGraphInstantiate or cudaGraphClone */
};

struct simgpu_graph_node {
	uint32_t event;	    /* enum simgpu_graph_event */
	uint32_t node_type; /* CUgraphNodeType */
	void *graph; /* cudaGraph_t the node belongs to (instantiation: the one instantiated) */
	void *original_graph; /* cloned: the graph copied from */
	void *node;	      /* cudaGraphNode_t */
	void *original_node;  /* cloned: the node copied */
	void *graph_exec;     /* instantiation: the new cudaGraphExec_t */
};

/* What libcupti gives the runtime. Every hook runs on the calling application thread. */
struct simgpu_tool {
	int abi;
	void (*api_enter)(struct simgpu_api *call);
	void (*api_exit)(struct simgpu_api *call);
	void (*op)(const struct simgpu_op *op);
	void (*sync)(const struct simgpu_sync *sync);
	void (*runtime_ready)(void); /* devices exist now (after injection) */
	void (*graph_node)(const struct simgpu_graph_node *node); /* inside the API call */
};

/* What the runtime gives libcupti. */
struct simgpu_runtime {
	int abi;
	bool (*initialised)(void);
	int (*device_count)(void);
	int (*device_props)(int device, struct cudaDeviceProp *prop);
	uint64_t (*now)(void);
	void (*serialize_kernels)(bool on);
	/* ids of live graph nodes and graphs (cuptiGetGraphNodeId, cuptiGetGraphId): false
	 * for a handle that is not one */
	bool (*graph_node_id)(const void *node, uint64_t *id);
	bool (*graph_id)(const void *graph, uint32_t *id);
};

/* Exported by the runtime: installs @p tool (NULL to remove it), returns the runtime's table. */
typedef const struct simgpu_runtime *(*simgpu_tool_attach_fn)(const struct simgpu_tool *tool);
#define SIMGPU_TOOL_ATTACH "simgpu_tool_attach"

/* Exported by libcupti: the runtime calls it once initialised, so CUPTI attaches. */
typedef void (*simgpu_cupti_connect_fn)(void);
#define SIMGPU_CUPTI_CONNECT "simgpu_cupti_connect"

#endif /* SIM_TOOL_H */
