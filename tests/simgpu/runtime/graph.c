/* SPDX-License-Identifier: MIT */
/*
 * Graphs built by stream capture. While a stream captures, its kernels, copies
 * and memsets become nodes instead of running. A graph launch costs one launch
 * on the host and replays the nodes in capture order on the launch stream, each
 * SIMGPU_GRAPH_NODE_GAP_NS after the previous one, all carrying the launch's
 * correlation id, the graph id and their node id (as CUPTI reports them).
 * Only single-stream captures are modelled: events recorded or awaited while
 * capturing are ignored, so cross-stream (fork/join) captures record the
 * capturing stream's work only.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tests/simgpu/runtime/sim.h"

#define GRAPH_MAGIC 0x47525048u
#define EXEC_MAGIC 0x47455845u

struct node {
	struct simgpu_op op; /* the captured operation, times unset */
	uint64_t duration;
};

struct CUgraph_st {
	uint32_t magic;
	uint32_t id;
	struct node *nodes;
	size_t n;
	size_t cap;
};

struct CUgraphExec_st {
	uint32_t magic;
	uint32_t graph_id;
	struct node *nodes;
	size_t n;
};

static _Atomic uint32_t next_graph_id = 1;
static _Atomic uint64_t next_node_id = 1;
static _Atomic unsigned long long next_capture_id = 1;

void isc_sim_capture_add(struct CUstream_st *s, const struct simgpu_op *op, uint64_t duration)
{
	struct CUgraph_st *g = s->capture;
	struct node *n;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct node *grown = realloc(g->nodes, cap * sizeof(*grown));

		if (!grown) {
			return;
		}
		g->nodes = grown;
		g->cap = cap;
	}
	n = &g->nodes[g->n++];
	n->op = *op;
	n->op.graph_id = g->id;
	n->op.graph_node_id = atomic_fetch_add(&next_node_id, 1);
	n->duration = duration;
}

cudaError_t isc_sim_begin_capture(cudaStream_t stream, enum cudaStreamCaptureMode mode, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;
	struct CUgraph_st *g;

	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s && s->legacy) {
		err = cudaErrorStreamCaptureUnsupported;
	} else if (s && s->capture) {
		err = cudaErrorIllegalState;
	} else if (s) {
		g = calloc(1, sizeof(*g));
		if (!g) {
			err = cudaErrorMemoryAllocation;
		} else {
			g->magic = GRAPH_MAGIC;
			g->id = atomic_fetch_add(&next_graph_id, 1);
			isc_sim_handle_add(g);
			s->capture = g;
			s->capture_id = atomic_fetch_add(&next_capture_id, 1);
		}
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}

cudaError_t isc_sim_end_capture(cudaStream_t stream, cudaGraph_t *graph, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;

	if (!graph) {
		return cudaErrorInvalidValue;
	}
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s && !s->capture) {
		err = cudaErrorIllegalState;
	} else if (s) {
		*graph = s->capture;
		s->capture = NULL;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}

cudaError_t isc_sim_is_capturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
				 unsigned long long *id, cudaGraph_t *graph, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;

	if (!status) {
		return cudaErrorInvalidValue;
	}
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s) {
		*status = s->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
		if (id) {
			*id = s->capture ? s->capture_id : 0;
		}
		if (graph) {
			*graph = s->capture;
		}
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}

static cudaError_t instantiate(cudaGraphExec_t *out, cudaGraph_t graph)
{
	struct CUgraphExec_st *x;

	if (!out || !isc_sim_handle_live(graph) || graph->magic != GRAPH_MAGIC) {
		return cudaErrorInvalidValue;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		return cudaErrorMemoryAllocation;
	}
	x->nodes = calloc(graph->n ? graph->n : 1, sizeof(*x->nodes));
	if (!x->nodes) {
		free(x);
		return cudaErrorMemoryAllocation;
	}
	memcpy(x->nodes, graph->nodes, graph->n * sizeof(*x->nodes));
	x->n = graph->n;
	x->magic = EXEC_MAGIC;
	x->graph_id = graph->id;
	isc_sim_handle_add(x);
	*out = x;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
					    unsigned long long flags)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaGraphInstantiate_v10000), "cudaGraphInstantiate", 0);

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		err = instantiate(pGraphExec, graph);
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
						     unsigned long long flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaGraphInstantiateWithFlags_v11040),
					"cudaGraphInstantiateWithFlags", 0);

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		err = instantiate(pGraphExec, graph);
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}

/* Caller holds the lock; ops are returned for notification once it is released. */
static void replay(struct isc_sim_call *c, struct CUgraphExec_st *x, struct CUstream_st *s,
		   struct simgpu_op *ops)
{
	uint64_t ready = isc_sim_now() + isc_sim_cfg.launch_latency_ns;
	size_t i;

	for (i = 0; i < x->n; i++) {
		struct simgpu_op *op = &ops[i];
		enum isc_sim_engine engine = SIM_ENGINE_KERNEL;

		*op = x->nodes[i].op;
		op->correlation_id = c->api.correlation_id;
		op->thread_id = c->api.thread_id;
		op->stream_id = s->id;
		op->device = s->device;
		op->enqueue_ns = isc_sim_now();
		if (op->type == SIMGPU_OP_KERNEL) {
			op->launch_seq = isc_sim_next_launch_seq();
		} else if (op->type == SIMGPU_OP_MEMCPY) {
			engine = op->copy_kind == SIMGPU_COPY_HTOD   ? SIM_ENGINE_H2D
				 : op->copy_kind == SIMGPU_COPY_DTOH ? SIM_ENGINE_D2H
								     : SIM_ENGINE_NONE;
		} else {
			engine = SIM_ENGINE_NONE;
		}
		op->end_ns =
			isc_sim_schedule(s, engine, ready, x->nodes[i].duration, &op->start_ns);
		ready = op->end_ns + isc_sim_cfg.graph_node_gap_ns;
		isc_sim_truth_op(op);
	}
}

cudaError_t isc_sim_graph_launch(struct isc_sim_call *c, cudaGraphExec_t exec, cudaStream_t stream,
				 bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct simgpu_op *ops = NULL;
	struct CUstream_st *s;
	size_t i;
	size_t n = 0;

	isc_sim_busy_wait(isc_sim_cfg.launch_cost_ns);
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s && (!isc_sim_handle_live(exec) || exec->magic != EXEC_MAGIC)) {
		err = cudaErrorInvalidValue;
	} else if (s && s->capture) {
		err = cudaErrorStreamCaptureUnsupported;
	} else if (s) {
		ops = calloc(exec->n ? exec->n : 1, sizeof(*ops));
		if (!ops) {
			err = cudaErrorMemoryAllocation;
		} else {
			replay(c, exec, s, ops);
			n = exec->n;
		}
	}
	pthread_mutex_unlock(&isc_sim_lock);
	for (i = 0; i < n; i++) {
		isc_sim_notify_op(&ops[i]);
	}
	free(ops);
	return err;
}

SIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaGraphLaunch_v10000), "cudaGraphLaunch", 0);

	if (err == cudaSuccess) {
		err = isc_sim_graph_launch(&c, graphExec, stream, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaGraphExecDestroy_v10000), "cudaGraphExecDestroy", 0);

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		if (!isc_sim_handle_live(graphExec) || graphExec->magic != EXEC_MAGIC) {
			err = cudaErrorInvalidValue;
		} else {
			isc_sim_handle_remove(graphExec);
			free(graphExec->nodes);
			free(graphExec);
		}
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaGraphDestroy_v10000), "cudaGraphDestroy", 0);

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		if (!isc_sim_handle_live(graph) || graph->magic != GRAPH_MAGIC) {
			err = cudaErrorInvalidValue;
		} else {
			isc_sim_handle_remove(graph);
			free(graph->nodes);
			free(graph);
		}
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamBeginCapture_v10000),
					"cudaStreamBeginCapture", 0);

	if (err == cudaSuccess) {
		err = isc_sim_begin_capture(stream, mode, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaStreamEndCapture_v10000), "cudaStreamEndCapture", 0);

	if (err == cudaSuccess) {
		err = isc_sim_end_capture(stream, pGraph, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
					     enum cudaStreamCaptureStatus *pCaptureStatus)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamIsCapturing_v10000),
					"cudaStreamIsCapturing", 0);

	if (err == cudaSuccess) {
		err = isc_sim_is_capturing(stream, pCaptureStatus, NULL, NULL, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
						enum cudaStreamCaptureStatus *captureStatus_out,
						unsigned long long *id_out, cudaGraph_t *graph_out,
						const cudaGraphNode_t **dependencies_out,
						const cudaGraphEdgeData **edgeData_out,
						size_t *numDependencies_out)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamGetCaptureInfo_v12030),
					"cudaStreamGetCaptureInfo", 0);

	if (dependencies_out) {
		*dependencies_out = NULL;
	}
	if (edgeData_out) {
		*edgeData_out = NULL;
	}
	if (numDependencies_out) {
		*numDependencies_out = 0;
	}
	if (err == cudaSuccess) {
		err = isc_sim_is_capturing(stream, captureStatus_out, id_out, graph_out, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaThreadExchangeStreamCaptureMode_v10010),
					"cudaThreadExchangeStreamCaptureMode", 0);

	if (err == cudaSuccess && !mode) {
		err = cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}
