/* SPDX-License-Identifier: MIT */
/*
 * CUDA graph nodes from CUPTI's resource callbacks: the stack of the code that made each
 * node, so that the kernels, copies and memsets a graph replays are charged to the code
 * that captured them (as Nsight Systems' --cuda-graph-trace=node does) rather than to the
 * cudaGraphLaunch that replays them.
 *
 * CUPTI calls back synchronously, on the thread that makes the node, inside the API call
 * that makes it: GRAPHNODE_CREATED for a launch, copy or memset captured from a stream
 * (and for a node added with cudaGraphAdd*Node), GRAPHNODE_CLONED for every node that
 * cudaGraphInstantiate or cudaGraphClone copies. The GPU records of a replay carry the id
 * of the instantiated copy, so the trace holds both: each created node with its stack,
 * taken every time (a graph is captured once and replayed many times: there is no rate to
 * limit), and each clone as original -> copy, which the analyzer follows back.
 *
 * The callback runs in the application's thread inside CUDA, so it keeps the hooks'
 * rules: nothing formatted, allocated or locked, errno as it was. Records are written
 * whenever the library is live, outside the capture window too: a node captured before
 * the window is what the window's replays refer to.
 */
#include <cupti.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "common/log.h"
#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "preload/core/guard.h"
#include "preload/core/thread.h"
#include "preload/gpu/cupti-internal.h"
#include "preload/hooks/cuda/cuda-family.h"
#include "preload/samplers/cpu-sampler.h"
#include "preload/samplers/samplers.h"
#include "common/clock.h"

static struct {
	_Atomic bool on;
	uintptr_t self_lo, self_hi; /* this library's code: the hook's frame */
	const char *status;	    /* "on", "off", "unavailable" */
	char reason[160];
	_Atomic uint64_t created, cloned, no_id;
} g = { .status = "off" };

static bool ours(uint64_t pc)
{
	return pc >= g.self_lo && pc < g.self_hi;
}

/*
 * Inside an intercepted call, the walk from the callback goes through CUPTI, the driver
 * and the runtime, then the hook (our frame), then the application: what is left out is
 * everything down to the hook, so that the stack starts where the program called CUDA,
 * as a launch's stack does. Without a hook frame (a call only CUPTI saw: cuBLAS's own
 * runtime, the driver API) the frames stay: the analyzer skips runtime frames anyway.
 */
static unsigned trim(uint64_t *w, unsigned n)
{
	unsigned native = (uint16_t)w[0], python = (uint16_t)(w[0] >> 16);
	uint64_t *pc = w + 1;
	unsigned i = 0;
	while (i < native && !ours(pc[i])) {
		i++;
	}
	unsigned k = i;
	while (k < native && ours(pc[k])) {
		k++;
	}
	if (i == native || k == native) {
		return n;
	}
	memmove(pc, pc + k, (n - 1 - k) * sizeof(*pc));
	w[0] = isc_stack_block_header(native - k, python);
	return n - k;
}

/* INFERSCOPE_STACKS bounds the native frames, as for every event stack. */
static unsigned bound(uint64_t *w, unsigned n)
{
	uint16_t native = (uint16_t)w[0];
	unsigned python = (uint16_t)(w[0] >> 16);
	n = 1 + isc_stacks_bound(w + 1, n - 1, &native, python);
	w[0] = isc_stack_block_header(native, python);
	return n;
}

static void record(struct isc_thread *t, bool cloned, const CUpti_GraphData *d)
{
	uint64_t node = 0, original = 0;
	uint32_t graph = 0;
	if (isc_cupti.graph_node_id(d->node, &node) != CUPTI_SUCCESS || node == 0 ||
	    (cloned && (d->originalNode == NULL ||
			isc_cupti.graph_node_id(d->originalNode, &original) != CUPTI_SUCCESS))) {
		atomic_fetch_add_explicit(&g.no_id, 1, memory_order_relaxed);
		return;
	}
	if (d->graph != NULL && isc_cupti.graph_id(d->graph, &graph) != CUPTI_SUCCESS) {
		graph = 0;
	}
	bool in_call = t->cuda.depth != 0;
	uint64_t w[ISC_EVENT_STACK_WORDS + 1];
	unsigned nw = 0;
	isc_guard_enter();
	if (!cloned) {
		nw = isc_stacks_block_here(w, ISC_EVENT_STACK_WORDS + 1);
		nw = nw && in_call ? trim(w, nw) : nw;
		nw = nw ? bound(w, nw) : 0;
	}
	unsigned ns = nw ? isc_stack_records(nw) : 0;
	struct isc_event *e = isc_event_reserve(ISC_EV_GRAPH_NODE, 1 + ns);
	if (e) {
		memset(e, 0, sizeof(*e));
		e->ts = isc_now();
		e->tid = t->tid;
		e->kind = ISC_EV_GRAPH_NODE;
		e->name = in_call ? isc_cuda_fn_id(t->cuda.fn) : 0;
		e->aux = (cloned ? ISC_NODE_CLONED : 0) | (ns ? ISC_NODE_STACK : 0);
		e->u.graph_node.node_id = node;
		e->u.graph_node.original_id = original;
		e->u.graph_node.correlation_id = in_call ? t->cuda.corr : 0;
		e->u.graph_node.graph_id = graph;
		e->u.graph_node.node_type = (uint32_t)d->nodeType;
		if (ns) {
			isc_stacks_fill(&e[1], t->tid, w, nw);
		}
		isc_event_commit(1 + ns);
		atomic_fetch_add_explicit(cloned ? &g.cloned : &g.created, 1, memory_order_relaxed);
	}
	isc_guard_leave();
}

void CUPTIAPI isc_cupti_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)user;
	bool cloned = cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED;
	if (domain != CUPTI_CB_DOMAIN_RESOURCE || data == NULL ||
	    (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && !cloned) ||
	    !atomic_load_explicit(&g.on, memory_order_acquire) || isc_guarded() ||
	    !isc_capture_live()) {
		return;
	}
	const CUpti_GraphData *d = ((const CUpti_ResourceData *)data)->resourceDescriptor;
	if (d == NULL || d->node == NULL) {
		return;
	}
	int saved = errno;
	struct isc_thread *t = isc_tls_self;
	if (t == NULL) {
		isc_guard_enter();
		t = isc_thread_attach();
		isc_guard_leave();
	}
	if (t != NULL) {
		record(t, cloned, d);
	}
	errno = saved;
}

void isc_cupti_graphs_start(CUpti_SubscriberHandle sub)
{
	static const CUpti_CallbackId ids[] = { CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
						CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED };
	if (isc_cupti.enable_callback == NULL || isc_cupti.graph_node_id == NULL ||
	    isc_cupti.graph_id == NULL) {
		g.status = "unavailable";
		isc_fmt(g.reason, sizeof(g.reason),
			"libcupti lacks cuptiEnableCallback or cuptiGetGraphNodeId");
		return;
	}
	isc_self_code(&g.self_lo, &g.self_hi);
	for (unsigned i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		CUptiResult r = isc_cupti.enable_callback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, ids[i]);
		if (r != CUPTI_SUCCESS) {
			/* half a mapping is no mapping: the replays stay with cudaGraphLaunch */
			isc_cupti.enable_callback(0, sub, CUPTI_CB_DOMAIN_RESOURCE, ids[0]);
			g.status = "unavailable";
			isc_fmt(g.reason, sizeof(g.reason),
				"cuptiEnableCallback(RESOURCE, %s) failed (%d)",
				i == 0 ? "GRAPHNODE_CREATED" : "GRAPHNODE_CLONED", (int)r);
			isc_info("CUDA graph nodes: %s; graph replays are charged to "
				 "cudaGraphLaunch",
				 g.reason);
			return;
		}
	}
	g.status = "on";
	atomic_store_explicit(&g.on, true, memory_order_release);
}

void isc_cupti_graphs_report(struct isc_cupti_report *r)
{
	r->graph_nodes = g.status;
	r->graph_nodes_reason = g.reason[0] ? g.reason : NULL;
	r->graph_nodes_created = atomic_load(&g.created);
	r->graph_nodes_cloned = atomic_load(&g.cloned);
	r->graph_nodes_no_id = atomic_load(&g.no_id);
}
