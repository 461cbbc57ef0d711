/* SPDX-License-Identifier: MIT */
/*
 * Graphs: the nodes a stream capture made (capture.c), instantiated into executable
 * graphs and replayed. A graph launch costs one launch on the host and replays the nodes
 * in capture order on the launch stream, each SIMGPU_GRAPH_NODE_GAP_NS after the previous
 * one, all carrying the launch's correlation id, the graph id and their node id.
 *
 * Node ids follow CUPTI: every node has a handle (cudaGraphNode_t) and a process-wide id
 * (cuptiGetGraphNodeId). Instantiation and cudaGraphClone copy each node into a new one
 * with a new id, and the operations of a replay carry the id of the executable graph's
 * copy, never the captured node's. The tool hears of each node inside the API call that
 * made it, on its thread (CUPTI's GRAPHNODE_CREATED and GRAPHNODE_CLONED), once the
 * model's lock is released.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "tests/simgpu/runtime/sim.h"

#define GRAPH_MAGIC 0x47525048u
#define EXEC_MAGIC 0x47455845u
#define NODE_MAGIC 0x474e4f44u

struct CUgraphNode_st {
	uint32_t magic;
	uint32_t type; /* CUgraphNodeType */
	uint64_t id;
};

struct node {
	struct simgpu_op op; /* the captured operation, times unset */
	uint64_t duration;
	struct CUgraphNode_st *h;
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

static uint32_t node_type(const struct simgpu_op *op)
{
	return op->type == SIMGPU_OP_KERNEL   ? CU_GRAPH_NODE_TYPE_KERNEL
	       : op->type == SIMGPU_OP_MEMCPY ? CU_GRAPH_NODE_TYPE_MEMCPY
					      : CU_GRAPH_NODE_TYPE_MEMSET;
}

/* A new node handle with a new id. Caller holds the lock. */
static struct CUgraphNode_st *node_new(uint32_t type)
{
	struct CUgraphNode_st *h = calloc(1, sizeof(*h));

	if (h) {
		h->magic = NODE_MAGIC;
		h->type = type;
		h->id = atomic_fetch_add(&next_node_id, 1);
		isc_sim_handle_add(h);
	}
	return h;
}

static void nodes_free(struct node *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		isc_sim_handle_remove(v[i].h);
		free(v[i].h);
	}
	free(v);
}

struct CUgraph_st *isc_sim_graph_new(void)
{
	struct CUgraph_st *g = calloc(1, sizeof(*g));

	if (g) {
		g->magic = GRAPH_MAGIC;
		g->id = atomic_fetch_add(&next_graph_id, 1);
		isc_sim_handle_add(g);
	}
	return g;
}

bool isc_sim_capture_add(struct CUstream_st *s, const struct simgpu_op *op, uint64_t duration,
			 struct simgpu_graph_node *created)
{
	struct CUgraph_st *g = s->capture;
	struct CUgraphNode_st *h;
	struct node *n;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct node *grown = realloc(g->nodes, cap * sizeof(*grown));

		if (!grown) {
			return false;
		}
		g->nodes = grown;
		g->cap = cap;
	}
	h = node_new(node_type(op));
	if (!h) {
		return false;
	}
	n = &g->nodes[g->n++];
	n->op = *op;
	n->op.graph_id = g->id;
	n->op.graph_node_id = h->id;
	n->duration = duration;
	n->h = h;
	*created = (struct simgpu_graph_node){
		.event = SIMGPU_NODE_CREATED, .node_type = h->type, .graph = g, .node = h
	};
	return true;
}

void isc_sim_notify_graph_node(const struct simgpu_graph_node *node)
{
	const struct simgpu_tool *tool = atomic_load_explicit(&isc_sim_tool, memory_order_acquire);

	if (tool && tool->graph_node) {
		tool->graph_node(node);
	}
}

static void notify_all(const struct simgpu_graph_node *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		isc_sim_notify_graph_node(&v[i]);
	}
}

/*
 * Copies graph's n nodes into *out, each a new node with a new id; *told gets what the
 * tool is told of each (the caller tells it once the lock is released). Caller holds the
 * lock.
 */
static cudaError_t copy_nodes(struct CUgraph_st *graph, struct node **out,
			      struct simgpu_graph_node **told, void *owner, bool exec)
{
	size_t n = graph->n;
	struct node *v = calloc(n ? n : 1, sizeof(*v));
	struct simgpu_graph_node *t = calloc(n ? n : 1, sizeof(*t));

	if (!v || !t) {
		free(v);
		free(t);
		return cudaErrorMemoryAllocation;
	}
	for (size_t i = 0; i < n; i++) {
		v[i] = graph->nodes[i];
		v[i].h = node_new(graph->nodes[i].h->type);
		if (!v[i].h) {
			nodes_free(v, i);
			free(t);
			return cudaErrorMemoryAllocation;
		}
		v[i].op.graph_node_id = v[i].h->id;
		t[i] = (struct simgpu_graph_node){
			.event = SIMGPU_NODE_CLONED,
			.node_type = v[i].h->type,
			.graph = exec ? (void *)graph : owner,
			.original_graph = graph,
			.node = v[i].h,
			.original_node = graph->nodes[i].h,
			.graph_exec = exec ? owner : NULL,
		};
	}
	*out = v;
	*told = t;
	return cudaSuccess;
}

static cudaError_t instantiate(cudaGraphExec_t *out, cudaGraph_t graph,
			       struct simgpu_graph_node **told, size_t *n_told)
{
	struct CUgraphExec_st *x;
	cudaError_t err;

	if (!out || !isc_sim_handle_live(graph) || graph->magic != GRAPH_MAGIC) {
		return cudaErrorInvalidValue;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		return cudaErrorMemoryAllocation;
	}
	err = copy_nodes(graph, &x->nodes, told, x, true);
	if (err != cudaSuccess) {
		free(x);
		return err;
	}
	x->n = graph->n;
	x->magic = EXEC_MAGIC;
	x->graph_id = graph->id;
	isc_sim_handle_add(x);
	*out = x;
	*n_told = x->n;
	return cudaSuccess;
}

static cudaError_t instantiate_call(cudaGraphExec_t *out, cudaGraph_t graph)
{
	struct simgpu_graph_node *told = NULL;
	size_t n = 0;
	cudaError_t err;

	pthread_mutex_lock(&isc_sim_lock);
	err = instantiate(out, graph, &told, &n);
	pthread_mutex_unlock(&isc_sim_lock);
	notify_all(told, n);
	free(told);
	return err;
}

SIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
					    unsigned long long flags)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaGraphInstantiate_v10000), "cudaGraphInstantiate", 0);

	if (err == cudaSuccess) {
		err = instantiate_call(pGraphExec, graph);
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
		err = instantiate_call(pGraphExec, graph);
	}
	return isc_sim_leave(&c, err);
}

/* A copy of a graph: new nodes with new ids, as cudaGraphClone makes them. */
SIM_EXPORT cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
	struct isc_sim_call c;
	struct simgpu_graph_node *told = NULL;
	struct CUgraph_st *g = NULL;
	size_t n = 0;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaGraphClone_v10000), "cudaGraphClone", 0);

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		if (!pGraphClone || !isc_sim_handle_live(originalGraph) ||
		    originalGraph->magic != GRAPH_MAGIC) {
			err = cudaErrorInvalidValue;
		} else if (!(g = isc_sim_graph_new())) {
			err = cudaErrorMemoryAllocation;
		} else if ((err = copy_nodes(originalGraph, &g->nodes, &told, g, false)) !=
			   cudaSuccess) {
			isc_sim_handle_remove(g);
			free(g);
		} else {
			g->n = g->cap = n = originalGraph->n;
			for (size_t i = 0; i < n; i++) {
				g->nodes[i].op.graph_id = g->id;
			}
			*pGraphClone = g;
		}
		pthread_mutex_unlock(&isc_sim_lock);
		notify_all(told, n);
		free(told);
	}
	return isc_sim_leave(&c, err);
}

/* cuptiGetGraphNodeId and cuptiGetGraphId, through the tool interface. */
bool isc_sim_graph_node_id(const void *node, uint64_t *id)
{
	const struct CUgraphNode_st *h = node;
	bool ok;

	pthread_mutex_lock(&isc_sim_lock);
	ok = h && isc_sim_handle_live(h) && h->magic == NODE_MAGIC;
	*id = ok ? h->id : 0;
	pthread_mutex_unlock(&isc_sim_lock);
	return ok;
}

bool isc_sim_graph_id(const void *graph, uint32_t *id)
{
	const struct CUgraph_st *g = graph;
	bool ok;

	pthread_mutex_lock(&isc_sim_lock);
	ok = g && isc_sim_handle_live(g) && g->magic == GRAPH_MAGIC;
	*id = ok ? g->id : 0;
	pthread_mutex_unlock(&isc_sim_lock);
	return ok;
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
			nodes_free(graphExec->nodes, graphExec->n);
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
			nodes_free(graph->nodes, graph->n);
			free(graph);
		}
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}
