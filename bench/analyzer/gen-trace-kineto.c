/* SPDX-License-Identifier: MIT */
/*
 * gen-trace's Kineto mode: the benchmark's inference loop as the PyTorch profiler writes
 * it (newer PyTorch: cudaEventRecord calls, cuda_event records and waits naming their
 * record's correlation). Per iteration: a ProfilerStep annotation and an operator; six
 * launches onto stream 7, each with its kernel and its ac2g flow pair; an event recorded on
 * stream 7 that stream 20 waits for before its own kernel; an asynchronous copy. Times in
 * microseconds with nanosecond decimals, as Kineto writes them today.
 */
#include <inttypes.h>
#include <stdio.h>

#include "gen-trace.h"

struct kgen {
	uint64_t n, corr;
	int64_t t; /* ns */
};

static void us(const char *key, int64_t ns)
{
	printf("\"%s\":%" PRId64 ".%03" PRId64, key, ns / 1000, ns % 1000);
}

/* A complete event up to its args' opening brace. */
static void x(struct kgen *g, const char *cat, const char *name, int pid, int tid, int64_t at,
	      int64_t dur)
{
	printf("%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,",
	       g->n ? ",\n" : "", cat, name, pid, tid);
	us("ts", at);
	putchar(',');
	us("dur", dur);
	printf(",\"args\":{");
	g->n++;
}

static uint64_t runtime(struct kgen *g, const char *name, int64_t at, int64_t dur, int cbid)
{
	g->corr++;
	x(g, "cuda_runtime", name, 4242, 4242, at, dur);
	printf("\"External id\":%" PRIu64 ",\"cbid\":%d,\"correlation\":%" PRIu64 "}}", g->corr,
	       cbid, g->corr);
	return g->corr;
}

static void kernel(struct kgen *g, const char *name, int stream, uint64_t corr, int64_t launch,
		   int64_t at, int64_t dur)
{
	x(g, "kernel", name, 0, stream, at, dur);
	printf("\"External id\":%" PRIu64 ",\"queued\":0,\"device\":0,\"context\":1,"
	       "\"stream\":%d,\"correlation\":%" PRIu64 ",\"registers per thread\":32,"
	       "\"shared memory\":0,\"blocks per SM\":0.5,\"warps per SM\":4.0,"
	       "\"grid\":[128,1,1],\"block\":[256,1,1],\"est. achieved occupancy %%\":75}}",
	       corr, stream, corr);
	printf(",\n{\"ph\":\"s\",\"id\":%" PRIu64 ",\"pid\":4242,\"tid\":4242,", corr);
	us("ts", launch);
	printf(",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
	printf(",\n{\"ph\":\"f\",\"id\":%" PRIu64 ",\"pid\":0,\"tid\":%d,", corr, stream);
	us("ts", at);
	printf(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
	g->n += 2;
}

static void iteration(struct kgen *g, unsigned k)
{
	int64_t t = g->t, gpu = t + 20000;
	x(g, "user_annotation", "ProfilerStep#", 4242, 4242, t, 280000);
	printf("\"External id\":%u}}", k);
	x(g, "cpu_op", "aten::linear", 4242, 4242, t + 1000, 270000);
	printf("\"External id\":%u,\"Sequence number\":%u,\"Fwd thread id\":0}}", k, k);
	t += 180000;
	for (unsigned i = 0; i < 6; i++) {
		uint64_t c = runtime(g, "cudaLaunchKernel", t, 4500, 211);
		kernel(g, i % 2 ? "gemm_128x64" : "elementwise_add", 7, c, t, gpu,
		       i % 2 ? 6000 : 800);
		gpu += i % 2 ? 6000 : 800;
		t += 5000;
	}
	uint64_t rec = runtime(g, "cudaEventRecord", t, 1500, 135);
	x(g, "cuda_event", "cudaEvent", 0, 7, gpu, 0);
	printf("\"event_id\":1,\"stream\":7,\"correlation\":%" PRIu64 ",\"device\":0,"
	       "\"context\":1}}",
	       rec);
	uint64_t w = runtime(g, "cudaStreamWaitEvent", t + 2000, 1500, 147);
	x(g, "cuda_sync", "Stream Wait Event", 0, 20, t + 2500, 1000);
	printf("\"cuda_sync_kind\":\"Stream Wait Event\",\"wait_on_stream\":7,"
	       "\"wait_on_cuda_event_record_corr_id\":%" PRIu64 ",\"wait_on_cuda_event_id\":1,"
	       "\"stream\":20,\"correlation\":%" PRIu64 ",\"device\":0,\"context\":1}}",
	       rec, w);
	uint64_t c = runtime(g, "cudaLaunchKernel", t + 4000, 4500, 211);
	kernel(g, "consumer", 20, c, t + 4000, gpu + 2000, 3000);
	c = runtime(g, "cudaMemcpyAsync", t + 9000, 6000, 41);
	x(g, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 0, 7, gpu + 5000, 20000);
	printf("\"device\":0,\"context\":1,\"stream\":7,\"correlation\":%" PRIu64 ","
	       "\"bytes\":1048576,\"memory bandwidth (GB/s)\":52.4}}",
	       c);
	g->t += 300000;
}

void isc_bench_kineto(uint64_t n)
{
	struct kgen g = { .t = 1000000000 };
	printf("{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"bench\","
	       "\"numSms\":108,\"maxThreadsPerMultiprocessor\":2048,"
	       "\"regsPerMultiprocessor\":65536,\"sharedMemPerMultiprocessor\":167936,"
	       "\"warpSize\":32}],\"traceEvents\":[\n");
	for (unsigned k = 0; g.n < n; k++) {
		iteration(&g, k);
	}
	printf("]}\n");
}
