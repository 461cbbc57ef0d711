/* SPDX-License-Identifier: MIT */
/*
 * CUDA graph nodes (the InferScope format's cuda_graph_node events) and the code that
 * issued a GPU operation.
 *
 * A kernel, copy or memset replayed by cudaGraphLaunch carries the launch's correlation
 * id and the id of the node it replays: a node of the executable graph, which
 * instantiation (or cudaGraphClone before it) copied from the node that stream capture
 * made. The trace records each created node with the stack of the call that made it and
 * each clone as original -> copy; the table below follows a replayed node back to its
 * created node, so that the operation is charged to the code that captured it (as Nsight
 * Systems does with --cuda-graph-trace=node), not to the cudaGraphLaunch.
 *
 * Ids are per input (CUPTI numbers nodes per process). GPU events refer to their node by
 * its index in the table (isc_ev.aux with ISC_F_GRAPH), so an event stays 64 bytes; the
 * table holds one entry per node, however often it is replayed.
 */
#ifndef ISC_GRAPH_NODES_H
#define ISC_GRAPH_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/base/wmap.h"
#include "analyzer/model/model.h"

struct isc_gnode {
	uint64_t id;	   /* CUPTI's node id */
	uint64_t original; /* cloned: the node it was copied from */
	uint32_t stack;	   /* created: the stack at the capture (the input's stacks), 0 none */
	uint32_t thread;   /* the thread that made it, UINT32_MAX unknown */
	uint32_t origin;   /* after isc_gnodes_resolve: index + 1 of its created node, 0 none */
	uint16_t input;
	uint8_t defined; /* a cuda_graph_node event described it */
	uint8_t cloned;
};

struct isc_gnodes {
	struct isc_gnode *v; /* map.n of them, in the order of map's indices */
	size_t cap;
	struct isc_wmap map; /* (id, input) -> index */
	bool resolved;
};

/* The node (input, id): its index + 1, created on first use; 0 on allocation failure. */
uint32_t isc_gnode_ref(struct isc_trace *t, uint16_t input, uint64_t id);
/* Describes a node: created (original 0) with the stack of its capture, or cloned from
 * original. Returns 0 or -ENOMEM. */
int isc_gnode_define(struct isc_trace *t, uint16_t input, uint64_t id, uint64_t original,
		     uint32_t stack, uint32_t thread);
/* Follows every node back through its clones to the node that was created (finalize). */
void isc_gnodes_resolve(struct isc_gnodes *g);
void isc_gnodes_destroy(struct isc_gnodes *g);

/* Who issued a GPU operation: the stack and thread of its capture for an operation
 * replayed from a graph whose node's creation is known, else those of the call that
 * launched it (its correlation id). */
struct isc_issuer {
	uint32_t stack;	 /* id in the input's stacks, 0 when none */
	uint32_t thread; /* index into isc_trace.threads */
	uint16_t input;
	bool captured; /* from the graph node's capture */
};

/* False when the operation's issuer is unknown (no launch call, no node). */
bool isc_gpu_issuer(const struct isc_trace *t, const struct isc_ev *gpu, struct isc_issuer *out);

#endif /* ISC_GRAPH_NODES_H */
