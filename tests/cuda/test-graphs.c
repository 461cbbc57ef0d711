/* SPDX-License-Identifier: MIT */
/*
 * CUDA graph replays and their capture (issue 12): wl-graph-capture captures an
 * `attention` kernel and a memset in capture_attention(), two `mlp` kernels and a
 * device-to-device copy in capture_mlp(), and replays the graph N times. Every replayed
 * operation must lead, through the trace's cuda_graph_node events (the instantiated copy,
 * then the node it was cloned from), to a created node whose stack names the function
 * that captured it. Also: a program that never captures has no graph node events, and a
 * CUPTI that refuses the resource domain leaves the GPU timeline whole.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/cuda/cuda-check.h"

TestSuite(graphs, .init = cw_setup, .fini = cw_teardown, .timeout = 120);

#define LAUNCHES 6

static char truth_env[4300];

static const char *truth_var(void)
{
	snprintf(truth_env, sizeof(truth_env), "SIMGPU_TRUTH=%s", cw_path("truth.json"));
	return truth_env;
}

static yajl_val run_capture(const char *arg, const char *extra_env, struct isc_run *r)
{
	static char exe[4200];
	snprintf(exe, sizeof(exe), "%s/wl-graph-capture", CW_WL_BUILD_DIR);
	const char *argv[] = { exe, "launches=6", arg, NULL };
	const char *env[] = { truth_var(), extra_env, NULL };
	yajl_val t = cw_run(argv, env, r);
	cr_assert_not_null(strstr(r->out, "gpu=ok"), "%s", r->out);
	return t;
}

/* The cuda_graph_node event of node id, or NULL. */
static yajl_val node_of(yajl_val t, long long id)
{
	for (size_t i = 0;; i++) {
		yajl_val n = isc_trace_find(t, "cuda_graph_node", NULL, i);
		if (n == NULL || isc_trace_int(n, "metadata/graph_node_id", -1) == id) {
			return n;
		}
	}
}

/* Follows a node back through its clones to the created one; *hops counts the clones. */
static yajl_val created_node(yajl_val t, long long id, int *hops)
{
	yajl_val n = node_of(t, id);
	*hops = 0;
	while (n != NULL && strcmp(isc_trace_str(n, "metadata/operation"), "cloned") == 0) {
		n = node_of(t, isc_trace_int(n, "metadata/original_node_id", -1));
		++*hops;
		cr_assert_lt(*hops, 8, "a cycle of clones");
	}
	return n;
}

/* Whether stack id's frames name function fn. */
static bool stack_names(yajl_val t, long long id, const char *fn)
{
	yajl_val stacks = isc_trace_get(t, "stacks/stacks"),
		 frames = isc_trace_get(t, "stacks/frames");
	if (id <= 0 || !YAJL_IS_ARRAY(stacks) || (size_t)id > YAJL_GET_ARRAY(stacks)->len) {
		return false;
	}
	yajl_val ids = isc_trace_get(YAJL_GET_ARRAY(stacks)->values[id - 1], "frames");
	for (size_t i = 0; YAJL_IS_ARRAY(ids) && i < YAJL_GET_ARRAY(ids)->len; i++) {
		long long f = YAJL_GET_INTEGER(YAJL_GET_ARRAY(ids)->values[i]);
		const char *name = isc_trace_str(YAJL_GET_ARRAY(frames)->values[f - 1], "function");
		if (name != NULL && strcmp(name, fn) == 0) {
			return true;
		}
	}
	return false;
}

struct expect {
	const char *type, *name, *capturer, *other, *call, *kind;
	size_t count; /* per launch */
};

static const struct expect ops[] = {
	{ "gpu_kernel", "attention", "capture_attention", "capture_mlp", "cudaLaunchKernel",
	  "kernel", 1 },
	{ "gpu_memset", NULL, "capture_attention", "capture_mlp", "cudaMemsetAsync", "memset", 1 },
	{ "gpu_kernel", "mlp", "capture_mlp", "capture_attention", "cudaLaunchKernel", "kernel",
	  2 },
	{ "d2d_copy", NULL, "capture_mlp", "capture_attention", "cudaMemcpyAsync", "memcpy", 1 },
};

/* Every replayed operation of each kind resolves to its capture; returns the clones
 * between a replayed node and its created node. */
static int check_replays(yajl_val t)
{
	int hops = -1;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		const struct expect *x = &ops[k];
		size_t n = isc_trace_count(t, x->type, x->name);
		cr_assert_eq(n, LAUNCHES * x->count, "%s %s: %zu", x->type, x->name, n);
		for (size_t i = 0; i < n; i++) {
			yajl_val e = isc_trace_find(t, x->type, x->name, i);
			long long id = isc_trace_int(e, "metadata/graph_node_id", 0);
			cr_assert_gt(id, 0, "%s #%zu carries its node", x->type, i);
			yajl_val launch =
				cw_api_by_corr(t, isc_trace_int(e, "metadata/correlation_id", -1));
			cr_assert_str_eq(isc_trace_str(launch, "name"), "cudaGraphLaunch");
			int h;
			yajl_val c = created_node(t, id, &h);
			cr_assert_not_null(c, "%s #%zu: node %lld leads to no created node",
					   x->type, i, id);
			cr_assert(hops < 0 || h == hops);
			hops = h;
			cr_assert_str_eq(isc_trace_str(c, "name"), x->call);
			cr_assert_str_eq(isc_trace_str(c, "metadata/kind"), x->kind);
			long long stack = isc_trace_int(c, "metadata/stack_id", 0);
			cr_assert(stack_names(t, stack, x->capturer), "%s: stack %lld lacks %s",
				  x->type, stack, x->capturer);
			cr_assert(!stack_names(t, stack, x->other));
			/* the capture's own call, made while the stream captured */
			yajl_val call =
				cw_api_by_corr(t, isc_trace_int(c, "metadata/correlation_id", -1));
			cr_assert_not_null(call);
			cr_assert_str_eq(isc_trace_str(call, "name"), x->call);
		}
	}
	return hops;
}

Test(graphs, replays_resolve_to_the_function_that_captured_them)
{
	struct isc_run r;
	yajl_val t = run_capture(NULL, NULL, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/graph_nodes/status"), "on");
	cr_assert_eq(isc_trace_int(t, "trace_metadata/cupti/graph_nodes/created", -1), 5);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/cupti/graph_nodes/cloned", -1), 5);
	cr_assert_eq(isc_trace_count(t, "cuda_graph_node", NULL), 10, "5 captured, 5 instantiated");
	cr_assert_eq(check_replays(t), 1, "one copy: the instantiation");
	cw_check_truth(t, cw_path("truth.json"));
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(graphs, a_clone_of_the_graph_is_one_hop_more)
{
	struct isc_run r;
	yajl_val t = run_capture("clone", NULL, &r);

	cr_assert_eq(isc_trace_int(t, "trace_metadata/cupti/graph_nodes/cloned", -1), 10);
	cr_assert_eq(check_replays(t), 2, "cudaGraphClone, then the instantiation");
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(graphs, a_program_that_never_captures_has_no_graph_nodes)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-runtime"), NULL };
	const char *env[] = { truth_var(), NULL };
	yajl_val t = cw_run(argv, env, &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/graph_nodes/status"), "on");
	cr_assert_eq(isc_trace_int(t, "trace_metadata/cupti/graph_nodes/created", -1), 0);
	cr_assert_eq(isc_trace_count(t, "cuda_graph_node", NULL), 0);
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", NULL), 4, "the timeline as before");
	for (size_t i = 0; i < 4; i++) {
		yajl_val k = isc_trace_find(t, "gpu_kernel", NULL, i);
		cr_assert_null(isc_trace_get(k, "metadata/graph_node_id"));
	}
	cw_check_truth(t, cw_path("truth.json"));
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(graphs, a_cupti_refusing_the_resource_domain_keeps_the_timeline)
{
	struct isc_run r;
	yajl_val t = run_capture(NULL, "SIMGPU_CUPTI_NO_RESOURCE=1", &r);

	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/status"), "active");
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/cupti/graph_nodes/status"),
			 "unavailable");
	cr_assert_not_null(strstr(isc_trace_str(t, "trace_metadata/cupti/graph_nodes/reason"),
				  "GRAPHNODE_CREATED"));
	cr_assert_eq(isc_trace_count(t, "cuda_graph_node", NULL), 0);
	cr_assert_eq(isc_trace_count(t, "gpu_kernel", "mlp"), 2 * LAUNCHES);
	cw_check_truth(t, cw_path("truth.json"));
	yajl_tree_free(t);
	isc_run_free(&r);
}
