/* SPDX-License-Identifier: MIT */
/*
 * A whole job (analysis/job.h): several rank traces given together are analysed one at a
 * time and compared; the same job merged from the per-rank -f json results is the same
 * report; a broken rank file is left out, said and counted, and the others analysed.
 *
 * The ranks: RANKS InferScope traces on two hosts (two clocks booted apart, realtime off
 * by 1.5 ms on the second), a step of preprocessing, compute kernels and an all-reduce
 * that ends at the same true instant on every rank; rank 2 preprocesses 400 us longer
 * and arrives last at every all-reduce.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

#define RANKS 4
#define STEPS 40
#define SLOW 2

static char dir[] = "/tmp/isc-job-XXXXXX";

static void write_rank(int rank)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/rank%d.json", dir, rank);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	int host = rank / 2;
	double off = 5e8 * (host + 1); /* its monotonic clock: true time + off (us) */
	fprintf(f,
		"{\"format_version\":\"1.0\",\"trace_metadata\":{\"pid\":%d,\"hostname\":"
		"\"node-%d\",\"end_reason\":\"exit\",\"complete\":true,\"clock\":{\"domain\":"
		"\"CLOCK_MONOTONIC\",\"unit\":\"us\",\"anchor_monotonic_us\":%.3f,"
		"\"anchor_realtime_us\":%.3f},\"dropped_events\":{\"total\":0},\"cupti\":{"
		"\"status\":\"active\"}},\"system_info\":{\"cpu_count\":4},\"events\":[",
		100 + rank, host, 1000.0 + off, 1.7e12 + 1000.0 + 1500.0 * host);
	int id = 0;
	unsigned seed = 17u + (unsigned)rank;
	for (int k = 0; k < STEPS; k++) {
		double t0 = 2000.0 + k * 5000.0 + off;
		double pre = 1000.0 + (rank == SLOW ? 400.0 : 0.0) + rank;
		seed = seed * 1103515245u + 12345u;
		double end = t0 + 3500.0 + (double)((seed >> 8) % 5); /* the all-reduce's end */
		fprintf(f,
			"%s{\"id\":%d,\"type\":\"cpu_call\",\"name\":\"step\",\"timestamp_start_"
			"us\":"
			"%.3f,\"duration_us\":%.3f,\"metadata\":{\"thread_id\":1,\"call_depth\":1}"
			"}",
			id ? "," : "", id, t0, pre);
		id++;
		const char *names[2] = { "gemm_bf16", "ncclDevKernel_AllReduce_Sum" };
		double starts[2] = { t0 + pre + 20, t0 + pre + 1520 };
		double durs[2] = { 1400.0, end - (t0 + pre + 1520) };
		for (int i = 0; i < 2; i++) {
			fprintf(f,
				",{\"id\":%d,\"type\":\"cuda_api\",\"name\":\"cudaLaunchKernel\","
				"\"timestamp_start_us\":%.3f,\"duration_us\":5.0,\"metadata\":{"
				"\"thread_id\":1,\"correlation_id\":%d,\"stream_id\":7,"
				"\"return_code\":0,\"blocked\":false}}"
				",{\"id\":%d,\"type\":\"gpu_kernel\",\"name\":\"%s\","
				"\"timestamp_start_us\":%.3f,\"duration_us\":%.3f,\"metadata\":{"
				"\"thread_id\":1,\"correlation_id\":%d,\"device_id\":0,"
				"\"stream_id\":7}}",
				id, starts[i] - 15, 2 * k + i + 1, id + 1, names[i], starts[i],
				durs[i], 2 * k + i + 1);
			id += 2;
		}
	}
	fprintf(f, "]}\n");
	cr_assert_eq(fclose(f), 0);
}

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	for (int r = 0; r < RANKS; r++) {
		write_rank(r);
	}
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* The ranks' paths, quoted, from first to last (a static buffer). */
static const char *ranks(const char *suffix)
{
	static char s[2048];
	size_t n = 0;
	for (int r = 0; r < RANKS; r++) {
		n += (size_t)snprintf(s + n, sizeof(s) - n, " '%s/rank%d.json%s'", dir, r, suffix);
	}
	return s;
}

static char *cli(const char *args, int *status)
{
	char cmd[4096], *out = NULL, *err = NULL;
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s", dir, getenv("ISC_ANALYZE"), args);
	*status = run(cmd, &out, &err);
	cr_log_info("%s\nstderr: %s", cmd, err);
	free(err);
	return out;
}

/* Equal documents, or where they part. */
static void same(const char *a, const char *b)
{
	size_t i = 0;
	while (a[i] != '\0' && a[i] == b[i]) {
		i++;
	}
	size_t from = i > 80 ? i - 80 : 0;
	cr_assert(a[i] == b[i], "they part at byte %zu: ...%.160s\n--- against ---\n...%.160s", i,
		  a + from, b + from);
}

TestSuite(job, .init = setup, .fini = teardown);

Test(job, streamed_equals_merged_per_rank_results)
{
	int st;
	char args[3000];
	snprintf(args, sizeof(args), "--jobs 1 -f json%s", ranks(""));
	char *job = cli(args, &st);
	cr_assert_eq(st, 0);
	cr_assert_not_null(strstr(job, "\"ranks_analysed\": 4"));
	cr_assert_not_null(strstr(job, "\"traces_held_at_once\": 1"), "one trace at a time");
	/* the straggler, and the second host put back on the first one's clock */
	cr_assert_not_null(strstr(job, "\"straggler\": {\n    \"rank\": 2,"), "%s", job);
	cr_assert_not_null(strstr(job, "\"anchor_shift_us\": -499998500,"), "%s", job);
	const char *o = strstr(job, "\"offset_us\": 0,");
	cr_assert_not_null(o, "the reference host is not shifted");
	o = strstr(o + 1, "\"offset_us\": ");
	cr_assert_not_null(o);
	double off = atof(o + strlen("\"offset_us\": "));
	cr_assert(off > -1505 && off < -1495, "the realtime error of node-1 found: %f us", off);

	/* Each rank alone (where its trace is written), then the merge of the results. */
	for (int r = 0; r < RANKS; r++) {
		char *one;
		snprintf(args, sizeof(args), "-f json -o '%s/rank%d.json.result' '%s/rank%d.json'",
			 dir, r, dir, r);
		one = cli(args, &st);
		cr_assert_eq(st, 0);
		free(one);
	}
	snprintf(args, sizeof(args), "--merge -f json%s", ranks(".result"));
	char *merged = cli(args, &st);
	cr_assert_eq(st, 0);
	/* The per-rank results name their input by the path they were given. */
	same(merged, job);

	snprintf(args, sizeof(args), "--jobs 1%s", ranks(""));
	char *md = cli(args, &st);
	snprintf(args, sizeof(args), "--merge%s", ranks(".result"));
	char *md2 = cli(args, &st);
	same(md, md2);
	cr_assert_not_null(strstr(md, "- straggler: rank 2 arrives"), "%s", md);
	cr_assert_not_null(strstr(md, "the straggler's (rank 2)"), "%s", md);
	cr_assert_not_null(strstr(md, "| cpu_preprocessing |"));

	/* A per-host job result merges like per-rank ones. */
	snprintf(
		args, sizeof(args),
		"--jobs 1 -f json -o '%s/h0.json' '%s/rank0.json' '%s/rank1.json' && '%s' --jobs 1 "
		"-f json -o '%s/h1.json' '%s/rank2.json' '%s/rank3.json' && '%s' --merge -f json "
		"'%s/h0.json' '%s/h1.json'",
		dir, dir, dir, getenv("ISC_ANALYZE"), dir, dir, dir, getenv("ISC_ANALYZE"), dir,
		dir);
	char *hosts = cli(args, &st);
	cr_assert_eq(st, 0);
	same(hosts, job);
	free(hosts);
	free(md);
	free(md2);
	free(merged);
	free(job);
}

Test(job, two_at_once_hold_at_most_two)
{
	int st;
	char args[3000];
	snprintf(args, sizeof(args), "--jobs 2 -f json%s", ranks(""));
	char *job = cli(args, &st);
	cr_assert_eq(st, 0);
	cr_assert_not_null(strstr(job, "\"ranks_analysed\": 4"));
	const char *h = strstr(job, "\"traces_held_at_once\": ");
	cr_assert_not_null(h);
	int held = atoi(h + strlen("\"traces_held_at_once\": "));
	cr_assert(held >= 1 && held <= 2, "held %d", held);
	free(job);
}

Test(job, a_broken_rank_is_counted_and_the_rest_analysed)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/rank1.json", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "{\"format_version\":\"1.0\",\"events\":[{\"id\":1,");
	fclose(f);
	int st;
	char args[3000], cmd[3200], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "--jobs 1%s", ranks(""));
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s", dir, getenv("ISC_ANALYZE"), args);
	st = run(cmd, &out, &err);
	cr_assert_eq(st, 3, "an input left out is exit 3, the report still written");
	cr_assert_not_null(strstr(out, "3 rank(s) analysed, 1 input(s) not analysed"), "%s", out);
	cr_assert_not_null(strstr(out, "## Inputs not analysed"));
	cr_assert_not_null(strstr(out, "rank1.json"));
	cr_assert_not_null(strstr(err, "rank1.json"), "%s", err);
	cr_assert_not_null(strstr(err, "1 of 4 inputs not analysed"), "%s", err);
	free(out);
	free(err);
	/* and a merge of a result that is not one */
	snprintf(args, sizeof(args), "--merge '%s/rank0.json'", dir);
	char *m = cli(args, &st);
	cr_assert_eq(st, 3);
	free(m);
}

/* A parent process without GPU work beside its child is one run, not a job. */
Test(job, a_parent_and_its_child_stay_one_run)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/parent.json", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "{\"format_version\":\"1.0\",\"trace_metadata\":{\"pid\":99,\"hostname\":"
		   "\"node-0\"},\"events\":[{\"id\":1,\"type\":\"cpu_call\",\"name\":\"launch\","
		   "\"timestamp_start_us\":500000001000.0,\"duration_us\":10.0,\"metadata\":{"
		   "\"thread_id\":9}}]}\n");
	fclose(f);
	int st;
	char args[1000];
	snprintf(args, sizeof(args), "'%s/parent.json' '%s/rank0.json'", dir, dir);
	char *md = cli(args, &st);
	cr_assert_eq(st, 0);
	cr_assert_null(strstr(md, "# InferScope job report"), "%s", md);
	free(md);
}
