/* SPDX-License-Identifier: MIT */
/*
 * Writes a synthetic InferScope trace of N events (default 5,000,000) for the analyzer
 * benchmark: an inference loop on two threads with scopes, CUDA calls, kernels, copies,
 * syscalls and CPU-time samples, in the shape and key order the preload writes. With
 * "stacks", also sampled stacks as the sampler writes them: two cpu_sample events per
 * iteration, a stack_id on every fourth launch, and a "stacks" section of 64 stacks. With
 * "graphs", the stacks too and each iteration's six kernels replayed by one
 * cudaGraphLaunch from a graph captured once (six created nodes with stacks, six copies),
 * each kernel carrying its node: the analyzer's path from a node back to its capture.
 * With "kineto", the same loop as the PyTorch profiler writes it (gen-trace-kineto.c).
 * Usage: gen-trace [N [stacks|graphs|kineto]] > trace.json
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen-trace.h"

struct gen {
	uint64_t id, corr, n, limit;
	int64_t t; /* ns */
	int stacks;
	int graphs;
};

#define STACKS 64
#define DEPTH 12

static void ts(const char *key, int64_t ns);

static void sample(struct gen *g, int64_t at, unsigned k)
{
	printf(",\n{\"type\":\"cpu_sample\",");
	ts("timestamp_us", at);
	printf(",\"thread_id\":%d,\"pid\":4242,\"weight_us\":10000,\"stack_id\":%u}",
	       k % 2 ? 4242 : 4243, 1 + k % STACKS);
	g->n++;
}

/* 64 stacks of 12 frames over 3 + 64 frames: Python frames spliced between native ones. */
static void stacks_section(void)
{
	printf(",\"stacks\":{\"frames\":[");
	printf("{\"id\":1,\"kind\":\"python\",\"function\":\"<module>\","
	       "\"module\":\"serve.py\",\"file\":\"serve.py\",\"line\":120},\n");
	printf("{\"id\":2,\"kind\":\"python\",\"function\":\"handle\","
	       "\"module\":\"serve.py\",\"file\":\"serve.py\",\"line\":88},\n");
	printf("{\"id\":3,\"kind\":\"native\",\"function\":\"_PyEval_EvalFrameDefault\","
	       "\"module\":\"libpython3.11.so.1.0\",\"address\":\"0x1d2e30\"}");
	for (unsigned f = 0; f < STACKS; f++) {
		printf(",\n{\"id\":%u,\"kind\":\"%s\",\"function\":\"fn_%u\","
		       "\"module\":\"%s\",\"address\":\"0x%x\"}",
		       4 + f, f % 2 ? "python" : "native", f,
		       f % 2 ? "model.py" : "libtorch_cpu.so", 0x1000 + f * 16);
	}
	printf("],\"stacks\":[");
	for (unsigned s = 0; s < STACKS; s++) {
		printf("%s{\"id\":%u,\"frames\":[", s ? ",\n" : "", s + 1);
		for (unsigned d = 0; d < DEPTH - 3; d++) {
			printf("%u,", 4 + (s + d * 7) % STACKS);
		}
		printf("3,2,1]}");
	}
	printf("]}");
}

static void ts(const char *key, int64_t ns)
{
	printf("\"%s\":%" PRId64 ".%03" PRId64, key, ns / 1000, ns % 1000);
}

static void head(struct gen *g, const char *type, const char *name, int64_t at, int64_t dur)
{
	printf("%s{\"id\":%" PRIu64 ",\"type\":\"%s\",\"name\":\"%s\",", g->id ? ",\n" : "", g->id,
	       type, name);
	ts("timestamp_start_us", at);
	putchar(',');
	ts("duration_us", dur);
	printf(",\"metadata\":{");
	g->id++;
	g->n++;
}

/* The graph's nodes: 6 captured in cudaLaunchKernel calls (stacks 1-6), then the copies
 * cudaGraphInstantiate made of them (ids 7-12), which the replays carry. */
static void graph_nodes(struct gen *g)
{
	for (unsigned i = 0; i < 12; i++) {
		head(g, "cuda_graph_node", i < 6 ? "cudaLaunchKernel" : "cudaGraphInstantiate",
		     g->t + i * 1000, 0);
		printf("\"thread_id\":4242,\"operation\":\"%s\",\"graph_node_id\":%u,",
		       i < 6 ? "created" : "cloned", i + 1);
		if (i < 6) {
			printf("\"graph_id\":1,\"kind\":\"kernel\",\"stack_id\":%u}}", i + 1);
		} else {
			printf("\"original_node_id\":%u,\"graph_id\":1,\"kind\":\"kernel\"}}",
			       i - 5);
		}
	}
	g->t += 20000;
}

static void iteration(struct gen *g, unsigned k)
{
	int64_t t = g->t;
	head(g, "cpu_call", "tokenize", t, 180000);
	printf("\"thread_id\":4242,\"cpu_id\":3,\"call_depth\":1,\"scope_id\":%" PRIu64 ","
	       "\"parent_scope\":\"request\",\"parent_scope_id\":null,\"allocations_bytes\":0,"
	       "\"source\":\"api\"}}",
	       g->id);
	head(g, "cpu_syscall", "read", t - 40000, 35000);
	printf("\"thread_id\":4243,\"syscall_number\":0,\"fd\":7,\"target\":\"file\","
	       "\"bytes\":65536,\"return_value\":65536,\"category\":\"io\"}}");
	t += 180000;
	if (g->graphs) {
		g->corr++;
		head(g, "cuda_api", "cudaGraphLaunch", t, 4500);
		printf("\"thread_id\":4242,\"correlation_id\":%" PRIu64 ",\"stream_id\":7,"
		       "\"return_code\":0,\"blocked\":false,\"source\":\"interposer\"}}",
		       g->corr);
	}
	for (unsigned i = 0; i < 6 && g->n < g->limit; i++) {
		if (g->graphs) {
			head(g, "gpu_kernel", i % 2 ? "gemm_128x64" : "elementwise_add", t + 6000,
			     i % 2 ? 60000 : 8000);
			printf("\"thread_id\":4242,\"correlation_id\":%" PRIu64 ",\"device_id\":0,"
			       "\"stream_id\":7,\"context_id\":1,\"grid_dim\":[128,1,1],"
			       "\"block_dim\":[256,1,1],\"shared_memory_bytes\":0,"
			       "\"registers_per_thread\":32,\"occupancy\":0.75,\"graph_id\":1,"
			       "\"graph_node_id\":%u}}",
			       g->corr, 7 + i);
			t += 5000;
			continue;
		}
		g->corr++;
		head(g, "cuda_api", "cudaLaunchKernel", t, 4500);
		printf("\"thread_id\":4242,\"correlation_id\":%" PRIu64 ",\"stream_id\":7,"
		       "\"return_code\":0,\"blocked\":false,\"kernel\":\"gemm_%u\","
		       "\"source\":\"interposer\"",
		       g->corr, i);
		if (g->stacks && i == 0 && k % 4 == 0) {
			printf(",\"stack_id\":%u", 1 + (k / 4) % STACKS);
		}
		printf("}}");
		head(g, "gpu_kernel", i % 2 ? "gemm_128x64" : "elementwise_add", t + 6000,
		     i % 2 ? 60000 : 8000);
		printf("\"thread_id\":4242,\"correlation_id\":%" PRIu64 ",\"device_id\":0,"
		       "\"stream_id\":7,\"context_id\":1,\"grid_dim\":[128,1,1],"
		       "\"block_dim\":[256,1,1],\"shared_memory_bytes\":0,"
		       "\"registers_per_thread\":32,\"occupancy\":0.75}}",
		       g->corr);
		t += 5000;
	}
	g->corr++;
	head(g, "h2d_copy", "cudaMemcpyAsync", t, 20000);
	printf("\"thread_id\":4242,\"correlation_id\":%" PRIu64 ",\"device_id\":0,"
	       "\"stream_id\":7,\"bytes\":1048576,\"kind\":\"pinned\",\"throughput_gbps\":52.4}}",
	       g->corr);
	if (k % 4 == 0) {
		head(g, "counter", "cpu_time", t, 0);
		printf("\"thread_id\":4242,\"value\":%" PRIu64 ".0,\"unit\":\"us\"}}",
		       (uint64_t)k * 190);
	}
	for (unsigned i = 0; g->stacks && i < 2 && g->n < g->limit; i++) {
		sample(g, t + 1000 * i, 2 * k + i);
	}
	g->t = t + 300000;
}

int main(int argc, char **argv)
{
	struct gen g = { .limit = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000,
			 .t = 1000000000,
			 .graphs = argc > 2 && strcmp(argv[2], "graphs") == 0 };
	g.stacks = g.graphs || (argc > 2 && strcmp(argv[2], "stacks") == 0);
	static char buf[1 << 20];
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	if (argc > 2 && strcmp(argv[2], "kineto") == 0) {
		isc_bench_kineto(g.limit);
		return ferror(stdout) ? 1 : 0;
	}
	printf("{\"format_version\":\"1.0\",\"trace_metadata\":{\"pid\":4242,"
	       "\"hostname\":\"bench\",\"end_reason\":\"exit\",\"complete\":true,"
	       "\"dropped_events\":{\"total\":0},\"cupti\":{\"status\":\"active\"}},"
	       "\"system_info\":{\"cpu_count\":16},\"events\":[\n");
	if (g.graphs) {
		graph_nodes(&g);
	}
	for (unsigned k = 0; g.n < g.limit; k++) {
		iteration(&g, k);
	}
	printf("],\"relationships\":{\"scopes\":[]}");
	if (g.stacks) {
		stacks_section();
	}
	printf("}\n");
	return ferror(stdout) ? 1 : 0;
}
