/* SPDX-License-Identifier: MIT */
/*
 * GPU work replayed from CUDA graphs, charged to the code that captured it
 * (analyzer/model/graph-nodes.h): the node table read from cuda_graph_node events and
 * followed back through clones, then a recorded run of wl-graph-capture
 * (tests/workloads/c/graph-capture.c) under the preload on the simulated GPU, whose
 * kernels' time must go to capture_attention() and capture_mlp() in `where` and in the
 * pprof profile. Every number asserted is a count or the simulated device's durations.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "analyzer/model/graph-nodes.h"
#include "analyzer/model/stacks.h"
#include "analyzer/readers/reader.h"
#include "analyzer/report/report.h"
#include "analyzer/rules/rules.h"
#ifdef ISC_TEST_PPROF
#include "profile.pb-c.h"
#endif

static struct isc_trace *read_text(const char *text)
{
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d = { "" };
	cr_assert_eq(isc_read_buffer(t, "graph.json", text, strlen(text), NULL, &d), 0, "%s",
		     d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

/* The name of the frame that names a stack (its site). */
static const char *site_of(const struct isc_trace *t, uint16_t input, uint32_t stack)
{
	struct isc_stack_ref r;
	if (stack == 0 || !isc_stack_get(t, input, stack, &r)) {
		return "";
	}
	int i = isc_stack_site(t, &r, NULL);
	return i < 0 ? "" : isc_trace_str(t, isc_stack_frame(&r, (size_t)i)->function);
}

/*
 * Kernels come before the nodes they replay (the file's order is the writer's, not
 * time's). Nodes: 1 created in attention() (stack 1), 2 created in mlp() (stack 2),
 * 3 <- 1 and 5 <- 3 (instantiation of a clone), 4 <- 2, 6 <- 99 (a node the trace never
 * made), 7 <- 8 <- 7 (a cycle). The launch (correlation 50) has stack 3, in serve().
 */
static const char trace_text[] =
	"{'format_version':'1.0','trace_metadata':{'pid':7},'events':["
	"{'id':1,'type':'cuda_api','name':'cudaGraphLaunch','timestamp_start_us':100,"
	" 'duration_us':5,'metadata':{'thread_id':7,'correlation_id':50,'return_code':0,"
	" 'stack_id':3}},"
	"{'id':2,'type':'gpu_kernel','name':'k_attn','timestamp_start_us':110,'duration_us':10,"
	" 'metadata':{'thread_id':7,'correlation_id':50,'graph_id':1,'graph_node_id':5}},"
	"{'id':3,'type':'gpu_kernel','name':'k_mlp','timestamp_start_us':120,'duration_us':10,"
	" 'metadata':{'thread_id':7,'correlation_id':50,'graph_id':1,'graph_node_id':4}},"
	"{'id':4,'type':'d2d_copy','name':'Memcpy DtoD','timestamp_start_us':130,"
	" 'duration_us':1,'metadata':{'thread_id':7,'correlation_id':50,'bytes':64,"
	" 'graph_id':1,'graph_node_id':4}},"
	"{'id':5,'type':'gpu_kernel','name':'k_lost','timestamp_start_us':140,'duration_us':10,"
	" 'metadata':{'thread_id':7,'correlation_id':50,'graph_id':1,'graph_node_id':6}},"
	"{'id':6,'type':'gpu_kernel','name':'k_cycle','timestamp_start_us':150,'duration_us':10,"
	" 'metadata':{'thread_id':7,'correlation_id':50,'graph_id':1,'graph_node_id':7}},"
	"{'id':7,'type':'gpu_kernel','name':'k_plain','timestamp_start_us':160,'duration_us':10,"
	" 'metadata':{'thread_id':7,'correlation_id':50}},"
	"{'id':8,'type':'cuda_graph_node','name':'cudaLaunchKernel','timestamp_start_us':10,"
	" 'duration_us':0,'metadata':{'thread_id':7,'operation':'created','graph_node_id':1,"
	" 'graph_id':1,'kind':'kernel','stack_id':1}},"
	"{'id':9,'type':'cuda_graph_node','name':'cudaLaunchKernel','timestamp_start_us':11,"
	" 'duration_us':0,'metadata':{'thread_id':7,'operation':'created','graph_node_id':2,"
	" 'graph_id':1,'kind':'kernel','stack_id':2}},"
	"{'id':10,'type':'cuda_graph_node','name':'','timestamp_start_us':12,'duration_us':0,"
	" 'metadata':{'thread_id':7,'operation':'cloned','graph_node_id':3,'original_node_id':1}},"
	"{'id':11,'type':'cuda_graph_node','name':'','timestamp_start_us':13,'duration_us':0,"
	" 'metadata':{'thread_id':7,'operation':'cloned','graph_node_id':5,'original_node_id':3}},"
	"{'id':12,'type':'cuda_graph_node','name':'','timestamp_start_us':14,'duration_us':0,"
	" 'metadata':{'thread_id':7,'operation':'cloned','graph_node_id':4,'original_node_id':2}},"
	"{'id':13,'type':'cuda_graph_node','name':'','timestamp_start_us':15,'duration_us':0,"
	" 'metadata':{'thread_id':7,'operation':'cloned','graph_node_id':6,'original_node_id':99}},"
	"{'id':14,'type':'cuda_graph_node','name':'','timestamp_start_us':16,'duration_us':0,"
	" 'metadata':{'thread_id':7,'operation':'cloned','graph_node_id':7,'original_node_id':8}},"
	"{'id':15,'type':'cuda_graph_node','name':'','timestamp_start_us':17,'duration_us':0,"
	" 'metadata':{'thread_id':7,'operation':'cloned','graph_node_id':8,'original_node_id':7}}"
	"],'stacks':{'frames':["
	"{'id':1,'kind':'native','function':'attention','module':'app'},"
	"{'id':2,'kind':'native','function':'mlp','module':'app'},"
	"{'id':3,'kind':'native','function':'serve','module':'app'}],"
	"'stacks':[{'id':1,'frames':[1,3]},{'id':2,'frames':[2,3]},{'id':3,'frames':[3]}]}}";

/* The text with ' for " (the JSON above stays readable). */
static struct isc_trace *read_quoted(const char *text)
{
	char *json = strdup(text);
	for (char *p = json; *p; p++) {
		*p = *p == '\'' ? '"' : *p;
	}
	struct isc_trace *t = read_text(json);
	free(json);
	return t;
}

static const struct isc_ev *event(const struct isc_trace *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(isc_trace_str(t, t->ev[i].name), name) == 0) {
			return &t->ev[i];
		}
	}
	cr_assert_fail("no event %s", name);
	return NULL;
}

Test(graph_nodes, replays_follow_their_clones_back_to_the_capture)
{
	struct isc_trace *t = read_quoted(trace_text);
	static const struct {
		const char *event, *site;
		bool captured;
	} want[] = {
		{ "k_attn", "attention", true }, { "k_mlp", "mlp", true },
		{ "Memcpy DtoD", "mlp", true },	 { "k_lost", "serve", false },
		{ "k_cycle", "serve", false },	 { "k_plain", "serve", false },
	};
	cr_assert_eq(t->n, 7, "nodes are a table, not events");
	cr_assert_not_null(t->gnodes);
	cr_assert_eq(t->gnodes->map.n, 8, "one row per node described (99 is only named)");
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct isc_issuer is;
		cr_assert(isc_gpu_issuer(t, event(t, want[i].event), &is), "%s", want[i].event);
		cr_assert_eq(is.captured, want[i].captured, "%s", want[i].event);
		cr_assert_str_eq(site_of(t, is.input, is.stack), want[i].site, "%s", want[i].event);
		cr_assert_eq(is.thread, event(t, "cudaGraphLaunch")->thread);
	}
	isc_trace_destroy(t);
}

Test(graph_nodes, a_clone_without_its_original_fails_a_strict_read)
{
	static const char bad[] =
		"{\"format_version\":\"1.0\",\"trace_metadata\":{\"pid\":7},"
		"\"events\":[{\"id\":1,\"type\":\"cuda_graph_node\",\"name\":\"\","
		"\"timestamp_start_us\":10,\"duration_us\":0,\"metadata\":{"
		"\"thread_id\":7,\"operation\":\"cloned\",\"graph_node_id\":3}}]}";
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d = { "" };
	cr_assert_lt(isc_read_buffer(t, "bad.json", bad, strlen(bad), NULL, &d), 0);
	cr_assert(strstr(d.msg, "original_node_id is missing") != NULL, "%s", d.msg);
	isc_trace_destroy(t);
}

/* ---- a recorded run ---- */

#define LAUNCHES 100

static struct isc_trace *record(void)
{
	const char *bin = getenv("ISC_WORKLOADS"), *preload = getenv("ISC_PRELOAD");
	cr_assert(bin != NULL && preload != NULL);
	char dir[] = "/tmp/isc-graphs-XXXXXX", cmd[8192], path[4200];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && timeout 300 env INFERSCOPE_OUTPUT=trace.json LD_PRELOAD=%s "
		 "%s/wl-graph-capture launches=%d >/dev/null",
		 dir, preload, bin, LAUNCHES);
	cr_assert_eq(run(cmd, NULL, NULL), 0, "wl-graph-capture: the run failed");
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d = { "" };
	cr_assert_eq(isc_read_file(t, path, NULL, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd, NULL, NULL);
	return t;
}

Test(graph_nodes, recorded_kernels_go_to_the_functions_that_captured_them, .timeout = 300)
{
	struct isc_trace *t = record();
	int64_t attention = 0, mlp = 0, copies = 0;
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		struct isc_issuer is;
		if (!isc_type_is_gpu(e->type) || e->type == ISC_T_GPU_SYNC) {
			continue;
		}
		cr_assert(isc_gpu_issuer(t, e, &is) && is.captured, "%s is charged to its capture",
			  isc_trace_str(t, e->name));
		const char *site = site_of(t, is.input, is.stack);
		const char *name = isc_trace_str(t, e->name);
		n++;
		if (e->type == ISC_T_KERNEL) {
			bool attn = strcmp(name, "attention") == 0;
			cr_assert_str_eq(site, attn ? "capture_attention" : "capture_mlp", "%s",
					 name);
			*(attn ? &attention : &mlp) += e->dur;
		} else {
			cr_assert_str_eq(site, e->type == ISC_T_MEMSET ? "capture_attention"
								       : "capture_mlp");
			copies++;
		}
	}
	cr_assert_eq(n, 5 * LAUNCHES);
	cr_assert_eq(copies, 2 * LAUNCHES);
	cr_assert_eq(attention, LAUNCHES * INT64_C(20000));
	cr_assert_eq(mlp, LAUNCHES * INT64_C(60000));

	/* A gpu.* rule's `where`: a line of capture_mlp, each of whose two launches (lines 44
	 * and 47 of the workload, 30 us each) has 30 of the 80 us of kernel time. Whether a
	 * gpu.* rule fires on a live run depends on the host's speed next to the simulated
	 * device's, so the sites are asked for as if gpu.dominant-kernels had fired. */
	struct isc_analysis *a = analyse(t, NULL);
	struct isc_suggestion gpu = { .rule_id = "gpu.dominant-kernels" };
	struct isc_suggestion *fired = a->sugg;
	size_t n_fired = a->n_sugg;
	a->sugg = &gpu;
	a->n_sugg = 1;
	cr_assert_eq(isc_rules_where(t, a), 0);
	a->sugg = fired;
	a->n_sugg = n_fired;
	cr_assert((strncmp(gpu.where, "capture_mlp (graph-capture.c:44,", 32) == 0 ||
		   strncmp(gpu.where, "capture_mlp (graph-capture.c:47,", 32) == 0) &&
			  strstr(gpu.where, "38 % of kernel time") != NULL,
		  "%s", gpu.where);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

#ifdef ISC_TEST_PPROF
/* pprof's gpu_kernel values summed by the function of each sample's innermost frame. */
Test(graph_nodes, the_pprof_profile_charges_the_capture, .timeout = 300)
{
	struct isc_trace *t = record();
	struct isc_analysis *a = analyse(t, NULL);
	size_t len;
	uint8_t *buf = pprof_bytes(t, a, &len);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	cr_assert_not_null(p);
	cr_assert_str_eq(p->string_table[p->sample_type[1]->type], "gpu_kernel");
	int64_t attention = 0, mlp = 0, other = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		if (s->value[1] == 0 || s->n_location_id == 0) {
			continue;
		}
		const Perftools__Profiles__Location *l = p->location[s->location_id[0] - 1];
		const char *fn = p->string_table[p->function[l->line[0]->function_id - 1]->name];
		*(strcmp(fn, "capture_attention") == 0 ? &attention
		  : strcmp(fn, "capture_mlp") == 0     ? &mlp
						       : &other) += s->value[1];
	}
	cr_assert_eq(attention, LAUNCHES * INT64_C(20000));
	cr_assert_eq(mlp, LAUNCHES * INT64_C(60000));
	cr_assert_eq(other, 0, "no kernel time left with cudaGraphLaunch");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}
#endif
