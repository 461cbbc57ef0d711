/* SPDX-License-Identifier: MIT */
/*
 * Issue 11's smaller items, device categories the reader does not model, ranks and steps,
 * on the small traces tests/analyzer/make-extras.py writes into data/extras/.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static char *cli(const char *args, int *status)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s' %s", getenv("ISC_ANALYZE"), args);
	char *out = NULL;
	*status = run(cmd, &out, NULL);
	return out;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

/* 3 graph launches of 10 nodes each and 2 plain launches are 5 launches, not 32. */
Test(extras, graph_launch_is_one_launch)
{
	struct isc_trace *t = load("extras/graph-launch.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->launch.pairs, 5);
	cr_assert_eq(a->launch.slow_launches, 3, "the three 60 us graph launches, once each");
	cr_assert_eq(a->launch.launch_total_ns, 3 * 60000 + 2 * 5000);
	/* every GPU op still counts on its stream */
	cr_assert_eq(a->idle.ops, 32);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(extras, export_has_one_flow_per_launch)
{
	int st;
	char args[1024];
	snprintf(args, sizeof(args), "-f chrome '%s'", data_path("extras/graph-launch.json"));
	char *out = cli(args, &st);
	cr_assert_eq(st, 0);
	cr_assert_eq(count_of(out, "\"ph\":\"s\""), 5, "one flow start per launch call");
	cr_assert_eq(count_of(out, "\"ph\":\"f\""), 5);
	for (int id = 100; id < 105; id++) {
		char key[64];
		snprintf(key, sizeof(key), "\"ph\":\"s\",\"id\":%d,", id);
		cr_assert_eq(count_of(out, key), 1, "flow id %d once", id);
	}
	free(out);
}

/* HTA's temporal breakdown leaves stream -1 records out: the Context Sync at 9-10 ms
 * neither stretches the span nor counts as non-compute time. */
Test(extras, stream_minus_one_sync_is_not_gpu_time)
{
	struct isc_trace *t = load("extras/graph-launch.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->n_hta, 1);
	/* first node 1080 us to the last plain kernel's end 5150 us */
	cr_assert_eq(a->hta[0].span, 5150000 - 1080000);
	cr_assert_eq(a->hta[0].non_compute, 0);
	cr_assert_eq(a->hta[0].compute, 30 * 15000 + 2 * 40000);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* rules.md: in a trimmed window a kernel belongs to its launch's window, wherever the GPU
 * runs it; the window runs on until that work ends. */
Test(extras, window_keeps_the_gpu_work_it_launched)
{
	struct isc_trace *t = load("extras/window-tail.json");
	struct isc_analyze_opts o = { .window_scope = "ProfilerStep#1" };
	struct isc_analysis *a = analyse(t, &o);
	cr_assert_eq(a->window.start, 1000000);
	cr_assert_eq(a->window.host_end, 2000000);
	cr_assert_eq(a->window.end, 2500000, "the tail kernel ends at 2.5 ms");
	cr_assert_eq(a->cat_ns[ISC_CAT_GPU], 550000, "the whole tail kernel, not 50 us");
	cr_assert_eq(a->count[ISC_T_KERNEL], 1, "the kernel launched before the step is not in it");
	int64_t sum = 0;
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		sum += a->cat_ns[c];
	}
	cr_assert_eq(sum, a->window.end - a->window.start);
	cr_assert_eq(a->n_hta, 1);
	cr_assert_eq(a->hta[0].compute, 550000);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(extras, explicit_window_keeps_the_gpu_work_it_launched)
{
	struct isc_trace *t = load("extras/window-tail.json");
	struct isc_analyze_opts o = { .window_explicit = true,
				      .window_start = 1000000,
				      .window_end = 2000000 };
	struct isc_analysis *a = analyse(t, &o);
	cr_assert_eq(a->window.end, 2500000);
	cr_assert_eq(a->cat_ns[ISC_CAT_GPU], 550000);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* The export keeps what HTA reads beside the events. */
Test(extras, export_keeps_what_hta_reads)
{
	int st;
	char args[1024];
	snprintf(args, sizeof(args), "-f chrome '%s'", data_path("extras/hta-metadata.json"));
	char *out = cli(args, &st);
	cr_assert_eq(st, 0);
	cr_assert_not_null(strstr(
		out, "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":1,\"world_size\":2}"));
	cr_assert_not_null(strstr(out, "\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA "
				       "A100-SXM4-80GB\",\"totalGlobalMem\":85051572224,"));
	cr_assert_not_null(strstr(out, "\"sharedMemPerBlockOptin\":166912}]"));
	cr_assert_not_null(strstr(out, "\"grid\":[864,1,1],\"block\":[256,1,1],"
				       "\"registers per thread\":47,\"shared memory\":4096"));
	cr_assert_not_null(strstr(out, "\"cat\":\"gpu_user_annotation\",\"name\":\"forward\","
				       "\"pid\":0,\"tid\":7,\"ts\":140.000,\"dur\":300.000"));
	free(out);
}

/* Kineto's unsigned stream 4294967295 is a stream for HTA: the export keeps it so. */
Test(extras, export_keeps_unsigned_streams)
{
	int st;
	char args[1024];
	snprintf(args, sizeof(args), "-f chrome '%s'",
		 data_path("kineto/simple_add_a100.pt.trace.json.gz"));
	char *out = cli(args, &st);
	cr_assert_eq(st, 0);
	cr_assert_eq(count_of(out, "\"name\":\"Context Sync\",\"pid\":0,\"tid\":4294967295"), 5);
	cr_assert_not_null(strstr(out, "\"distributedInfo\":{\"rank\":0}"));
	free(out);
}
