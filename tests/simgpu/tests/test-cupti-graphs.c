/* SPDX-License-Identifier: MIT */
/*
 * The simulated CUPTI's graph node callbacks (resource domain), as a profiler uses the
 * real ones to map a replayed operation back to its capture: GRAPHNODE_CREATED inside
 * each captured call on its thread, GRAPHNODE_CLONED for each node instantiation and
 * cudaGraphClone copy, cuptiGetGraphNodeId giving the ids the activity records carry
 * (the instantiated copy's, never the captured node's).
 */
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>

#include "tests/simgpu/tests/cupti-client.h"
#include "tests/simgpu/tests/sim-test.h"

#define US 1000u
#define MAX_NODES 64

TestSuite(cupti_graphs);

struct nodes {
	struct {
		uint64_t id, original;
		uint32_t graph, type, tid;
		bool exec; /* cloned into an executable graph */
	} created[MAX_NODES], cloned[MAX_NODES];
	size_t n_created, n_cloned;
};

static void CUPTIAPI on_node(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			     const void *data)
{
	const CUpti_GraphData *g = ((const CUpti_ResourceData *)data)->resourceDescriptor;
	struct nodes *v = userdata;
	bool cloned = cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED;
	size_t *n = cloned ? &v->n_cloned : &v->n_created;

	cr_assert_eq(domain, CUPTI_CB_DOMAIN_RESOURCE);
	cr_assert(cloned || cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
	cr_assert_lt(*n, MAX_NODES);
	if (cloned) {
		cr_assert_eq(cupti.graph_node_id(g->originalNode, &v->cloned[*n].original),
			     CUPTI_SUCCESS);
		v->cloned[*n].exec = g->graphExec != NULL;
	}
	cr_assert_eq(cupti.graph_node_id(g->node, cloned ? &v->cloned[*n].id : &v->created[*n].id),
		     CUPTI_SUCCESS);
	if (!cloned) {
		cr_assert_eq(cupti.graph_id(g->graph, &v->created[*n].graph), CUPTI_SUCCESS);
		v->created[*n].type = g->nodeType;
		v->created[*n].tid = (uint32_t)syscall(SYS_gettid);
	}
	(*n)++;
}

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	0,
};

static CUpti_SubscriberHandle subscribe(struct nodes *v)
{
	CUpti_SubscriberHandle h;

	cr_assert(client_start(kinds));
	cr_assert_eq(cupti.subscribe(&h, on_node, v), CUPTI_SUCCESS);
	return h;
}

/* Captures a copy, a kernel, a memset and a kernel on s. */
static cudaGraph_t capture(cudaStream_t s, void *dev, void *pinned)
{
	cudaGraph_t g;

	kernel(0, "layer_a", 20 * US);
	kernel(1, "layer_b", 30 * US);
	CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CU(cudaMemcpyAsync(dev, pinned, 4096, cudaMemcpyHostToDevice, s));
	launch(0, s);
	CU(cudaMemsetAsync(dev, 0, 4096, s));
	launch(1, s);
	CU(cudaStreamEndCapture(s, &g));
	return g;
}

static bool is_clone_of(const struct nodes *v, uint64_t id, uint64_t *original)
{
	for (size_t i = 0; i < v->n_cloned; i++) {
		if (v->cloned[i].id == id) {
			*original = v->cloned[i].original;
			return true;
		}
	}
	return false;
}

Test(cupti_graphs, replays_carry_the_instantiated_copy_of_each_captured_node)
{
	static const uint32_t types[] = { CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_KERNEL,
					  CU_GRAPH_NODE_TYPE_MEMSET, CU_GRAPH_NODE_TYPE_KERNEL };
	struct nodes v = { 0 };
	CUpti_SubscriberHandle h = subscribe(&v);
	cudaGraphExec_t exec;
	cudaStream_t s;
	void *dev, *pinned;

	cr_assert_eq(cupti.enable_callback(1, h, CUPTI_CB_DOMAIN_RESOURCE,
					   CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED),
		     CUPTI_SUCCESS);
	cr_assert_eq(cupti.enable_callback(1, h, CUPTI_CB_DOMAIN_RESOURCE,
					   CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED),
		     CUPTI_SUCCESS);
	CU(cudaStreamCreate(&s));
	CU(cudaMalloc(&dev, 4096));
	CU(cudaMallocHost(&pinned, 4096));
	cudaGraph_t g = capture(s, dev, pinned);
	cr_assert_eq(v.n_created, 4, "one callback per captured call");
	cr_assert_eq(v.n_cloned, 0);
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(v.created[i].type, types[i]);
		cr_assert_eq(v.created[i].tid, (uint32_t)syscall(SYS_gettid), "the calling thread");
		cr_assert_eq(v.created[i].graph, v.created[0].graph);
		cr_assert_neq(v.created[i].id, 0);
	}
	CU(cudaGraphInstantiate(&exec, g, 0));
	cr_assert_eq(v.n_cloned, 4, "instantiation copies each node");
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(v.cloned[i].original, v.created[i].id);
		cr_assert_neq(v.cloned[i].id, v.created[i].id, "a copy has an id of its own");
		cr_assert(v.cloned[i].exec);
	}
	CU(cudaGraphLaunch(exec, s));
	CU(cudaGraphLaunch(exec, s));
	CU(cudaStreamSynchronize(s));
	client_flush(true);
	cr_assert_eq(got.n_kernels, 4);
	cr_assert_eq(got.n_copies, 2);
	cr_assert_eq(got.n_memsets, 2);
	uint64_t original;
	for (size_t i = 0; i < got.n_kernels; i++) {
		cr_assert(is_clone_of(&v, got.kernels[i].graphNodeId, &original));
		cr_assert_eq(original,
			     v.created[strcmp(got.kernel_names[i], "layer_a") ? 3 : 1].id);
		cr_assert_eq(got.kernels[i].graphId, v.created[0].graph);
	}
	for (size_t i = 0; i < 2; i++) {
		cr_assert(is_clone_of(&v, got.copies[i].graphNodeId, &original));
		cr_assert_eq(original, v.created[0].id);
		cr_assert(is_clone_of(&v, got.memsets[i].graphNodeId, &original));
		cr_assert_eq(original, v.created[2].id);
	}
	CU(cudaGraphExecDestroy(exec));
	CU(cudaGraphDestroy(g));
}

Test(cupti_graphs, a_graph_clone_is_one_copy_more)
{
	struct nodes v = { 0 };
	CUpti_SubscriberHandle h = subscribe(&v);
	cudaGraphExec_t exec;
	cudaGraph_t c;
	cudaStream_t s;
	void *dev, *pinned;

	cr_assert_eq(cupti.enable_domain(1, h, CUPTI_CB_DOMAIN_RESOURCE), CUPTI_SUCCESS);
	CU(cudaStreamCreate(&s));
	CU(cudaMalloc(&dev, 4096));
	CU(cudaMallocHost(&pinned, 4096));
	cudaGraph_t g = capture(s, dev, pinned);
	CU(cudaGraphClone(&c, g));
	CU(cudaGraphInstantiate(&exec, c, 0));
	cr_assert_eq(v.n_cloned, 8);
	for (size_t i = 0; i < 4; i++) {
		cr_assert(!v.cloned[i].exec, "cudaGraphClone's copies belong to a graph");
		cr_assert_eq(v.cloned[i].original, v.created[i].id);
		cr_assert_eq(v.cloned[4 + i].original, v.cloned[i].id, "copied from the clone");
	}
	CU(cudaGraphLaunch(exec, s));
	CU(cudaStreamSynchronize(s));
	client_flush(true);
	cr_assert_eq(got.n_kernels, 2);
	cr_assert_eq(got.kernels[0].graphNodeId, v.cloned[5].id);
}

Test(cupti_graphs, no_callbacks_unless_enabled_and_none_when_refused)
{
	struct nodes v = { 0 };
	cudaStream_t s;
	void *dev, *pinned;

	setenv("SIMGPU_CUPTI_NO_RESOURCE", "1", 1);
	CUpti_SubscriberHandle h = subscribe(&v);
	cr_assert_eq(cupti.enable_callback(1, h, CUPTI_CB_DOMAIN_RESOURCE,
					   CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED),
		     CUPTI_ERROR_NOT_SUPPORTED);
	CU(cudaStreamCreate(&s));
	CU(cudaMalloc(&dev, 4096));
	CU(cudaMallocHost(&pinned, 4096));
	cudaGraph_t g = capture(s, dev, pinned);
	cr_assert_eq(v.n_created, 0);
	CU(cudaGraphDestroy(g));
}
