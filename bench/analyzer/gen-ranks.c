/* SPDX-License-Identifier: MIT */
/*
 * Writes the InferScope traces of a synthetic data-parallel job for the whole-job
 * benchmark (docs/benchmarks.md, "A whole job"): RANKS ranks, PER_HOST to a host (hosts
 * node-0, node-1, ...), each trace about MB megabytes, in DIR/rankNNN/trace.json.
 *
 * Every rank runs the same step: preprocessing on the host (a "step" scope), six compute
 * kernels, then an all-reduce (an NCCL kernel) that starts when the rank arrives and ends
 * at the same true instant on every rank, give or take 2 us. One rank, the straggler
 * (RANKS / 2 + 1), preprocesses 300 us longer, so it arrives last and the others wait in
 * the all-reduce. Each host has its own monotonic clock (booted 1000 s apart) and a
 * realtime clock off by 0.7 ms per host number (NTP), so the analyzer must align hosts
 * from the anchors and then the collectives.
 * Usage: gen-ranks DIR RANKS MB [PER_HOST (default 8)]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PERIOD_NS 2500000 /* one step */
#define PRE_NS 600000
#define STRAGGLE_NS 300000
#define COMPUTE_NS 130000     /* each of six kernels */
#define REDUCE_END_NS 2300000 /* the all-reduce's end, after the step's start */
#define REAL0_NS 1700000000000000000LL

struct gen {
	FILE *f;
	uint64_t id, corr;
	unsigned seed;
};

static int64_t jitter(struct gen *g, int64_t span)
{
	g->seed = g->seed * 1103515245u + 12345u;
	return (int64_t)((g->seed >> 8) % (unsigned)(2 * span + 1)) - span;
}

static void ts(FILE *f, const char *key, int64_t ns)
{
	fprintf(f, "\"%s\":%" PRId64 ".%03" PRId64, key, ns / 1000, ns % 1000);
}

static void head(struct gen *g, const char *type, const char *name, int64_t at, int64_t dur)
{
	fprintf(g->f, "%s{\"id\":%" PRIu64 ",\"type\":\"%s\",\"name\":\"%s\",", g->id ? ",\n" : "",
		g->id, type, name);
	ts(g->f, "timestamp_start_us", at);
	fputc(',', g->f);
	ts(g->f, "duration_us", dur);
	fprintf(g->f, ",\"metadata\":{");
	g->id++;
}

static void kernel(struct gen *g, const char *name, int64_t launch, int64_t start, int64_t dur)
{
	g->corr++;
	head(g, "cuda_api", "cudaLaunchKernel", launch, 4000);
	fprintf(g->f,
		"\"thread_id\":100,\"correlation_id\":%" PRIu64 ",\"stream_id\":7,"
		"\"return_code\":0,\"blocked\":false,\"kernel\":\"%s\",\"source\":\"interposer\"}}",
		g->corr, name);
	head(g, "gpu_kernel", name, start, dur);
	fprintf(g->f,
		"\"thread_id\":100,\"correlation_id\":%" PRIu64 ",\"device_id\":0,"
		"\"stream_id\":7,\"context_id\":1,\"grid_dim\":[128,1,1],\"block_dim\":[256,1,1],"
		"\"shared_memory_bytes\":0,\"registers_per_thread\":32,\"occupancy\":0.75}}",
		g->corr);
}

/* One step from true time t0 on a clock that reads true time + off. */
static void step(struct gen *g, int64_t t0, int64_t off, int straggler)
{
	int64_t pre = PRE_NS + (straggler ? STRAGGLE_NS : 0) + jitter(g, 3000);
	head(g, "cpu_call", "step", t0 + off, pre);
	fprintf(g->f,
		"\"thread_id\":100,\"cpu_id\":3,\"call_depth\":1,\"scope_id\":%" PRIu64
		",\"parent_scope_id\":null,\"source\":\"api\"}}",
		g->id);
	int64_t t = t0 + pre;
	for (int i = 0; i < 6; i++) {
		kernel(g, i % 2 ? "gemm_bf16_128x64" : "elementwise_bias_gelu", t + off,
		       t + 5000 + off, COMPUTE_NS - 5000);
		t += COMPUTE_NS;
	}
	int64_t end = t0 + REDUCE_END_NS + jitter(g, 2000);
	kernel(g, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", t + off, t + 1000 + off,
	       end - t - 1000);
}

static int write_rank(const char *dir, int rank, int per_host, uint64_t bytes, int ranks)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/rank%03d", dir, rank);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/rank%03d/trace.json", dir, rank);
	struct gen g = { .f = fopen(path, "w"), .seed = 77u + (unsigned)rank };
	if (g.f == NULL) {
		perror(path);
		return 1;
	}
	static char buf[1 << 20];
	setvbuf(g.f, buf, _IOFBF, sizeof(buf));
	int host = rank / per_host;
	int64_t off = 1000000000000LL * (host + 1); /* booted 1000 s apart */
	int64_t anchor = 1000000;
	fprintf(g.f,
		"{\"format_version\":\"1.0\",\"trace_metadata\":{\"pid\":%d,\"hostname\":"
		"\"node-%d\",\"end_reason\":\"exit\",\"complete\":true,\"clock\":{\"domain\":"
		"\"CLOCK_MONOTONIC\",\"unit\":\"us\",",
		1000 + rank, host);
	ts(g.f, "anchor_monotonic_us", anchor + off);
	fputc(',', g.f);
	ts(g.f, "anchor_realtime_us", REAL0_NS + anchor + 700000LL * host);
	fprintf(g.f, "},\"dropped_events\":{\"total\":0},\"cupti\":{\"status\":\"active\"}},"
		     "\"system_info\":{\"cpu_count\":16},\"events\":[\n");
	int straggler = rank == ranks / 2 + 1;
	for (int64_t k = 0; ftell(g.f) < (long)bytes; k++) {
		step(&g, 2000000 + k * PERIOD_NS, off, straggler);
	}
	fprintf(g.f, "],\"relationships\":{\"scopes\":[]}}\n");
	int bad = ferror(g.f);
	return fclose(g.f) != 0 || bad;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: gen-ranks DIR RANKS MB [PER_HOST]\n");
		return 2;
	}
	int ranks = atoi(argv[2]);
	uint64_t bytes = strtoull(argv[3], NULL, 10) << 20;
	int per_host = argc > 4 ? atoi(argv[4]) : 8;
	if (ranks < 1 || per_host < 1) {
		fprintf(stderr, "gen-ranks: RANKS and PER_HOST must be positive\n");
		return 2;
	}
	for (int r = 0; r < ranks; r++) {
		if (write_rank(argv[1], r, per_host, bytes, ranks) != 0) {
			return 1;
		}
	}
	return 0;
}
