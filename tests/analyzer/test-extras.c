/* SPDX-License-Identifier: MIT */
/*
 * Issue 11's smaller items, device categories the reader does not model, ranks and steps,
 * on the small traces tests/analyzer/make-extras.py writes into data/extras/.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis/extras.h"
#include "helpers.h"
#include "analyzer/readers/reader.h"

static char *cli(const char *args, int *status)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s' %s", getenv("ISC_ANALYZE"), args);
	char *out = NULL;
	*status = run(cmd, &out, NULL);
	return out;
}

__attribute__((noinline)) static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0, at = 0, len = strlen(hay);
	while (at < len) {
		const char *p = strstr(hay + at, needle);
		if (p == NULL) {
			break;
		}
		n++;
		at = (size_t)(p - hay) + 1;
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

/* A non-CUDA accelerator's device events, in a category the reader does not model, are
 * named in the data quality and lower the confidence (before: cpu_bound, no warning). */
Test(extras, unmodelled_device_category_lowers_confidence)
{
	struct isc_trace *t = load("extras/accelerator.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_not_null(a->extras);
	cr_assert_eq(a->extras->n_unknown, 2);
	cr_assert_eq(a->extras->unknown_device_events, 10);
	cr_assert_eq(a->extras->unknown_device_ns, 9000000);
	/* all the device time is unseen: the confidence without them, halved */
	struct isc_agg_list saved = t->inputs[0].unknown_cats;
	t->inputs[0].unknown_cats.n = 0;
	struct isc_analysis *base = analyse(t, NULL);
	t->inputs[0].unknown_cats = saved;
	cr_assert_lt(a->verdict.confidence, base->verdict.confidence);
	cr_assert_float_eq(a->verdict.confidence,
			   round(base->verdict.confidence * 0.5 * 100.0) / 100.0, 1e-9);
	isc_analysis_destroy(base);
	bool said = false;
	for (int i = 0; i < a->verdict.n_evidence; i++) {
		said |= strstr(a->verdict.evidence[i], "mtia_ccp_events") != NULL;
	}
	cr_assert(said, "the verdict's evidence names the category");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);

	int st;
	char args[1024];
	snprintf(args, sizeof(args), "'%s'", data_path("extras/accelerator.json"));
	char *md = cli(args, &st);
	cr_assert_not_null(strstr(md, "- category not modelled: `mtia_ccp_events`, 10 events, "
				      "9.000 ms (device work"));
	cr_assert_not_null(strstr(md, "- category not modelled: `mtia_runtime`, 10 events"));
	free(md);
	snprintf(args, sizeof(args), "-f json '%s'", data_path("extras/accelerator.json"));
	char *js = cli(args, &st);
	cr_assert_not_null(strstr(js, "\"category\": \"mtia_ccp_events\""));
	cr_assert_not_null(strstr(js, "\"device_events\": 10"));
	free(js);
	snprintf(args, sizeof(args), "-f html '%s'", data_path("extras/accelerator.json"));
	char *html = cli(args, &st);
	cr_assert_not_null(strstr(html, "<code>mtia_ccp_events</code>, 10 events"));
	free(html);
}

/* Profiler steps: a 6 ms warm-up step, then 8 steady steps of 2 ms; before them 55 ms of
 * start-up (a 50 ms first CUDA call, 4 ms of module loading, 0.6 ms of allocations). */
Test(extras, steps_and_startup)
{
	struct isc_trace *t = load("extras/steps.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_steps *s = &a->extras->steps;
	cr_assert_eq(s->n, 8);
	cr_assert_eq(s->warmup, 1);
	cr_assert_float_eq(s->step.mean, 2000000.0, 1e-6);
	cr_assert_float_eq(s->step.p90, 2000000.0, 1e-6);
	cr_assert_float_eq(s->step.max, 2000000.0, 1e-6);
	cr_assert_eq(s->step.n, 8);
	/* each steady step: kernel 520-1820 us of the step, host preprocessing before it */
	cr_assert_float_eq(s->cat[ISC_CAT_GPU].mean, 1300000.0, 1e-6);
	double sum = 0;
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		sum += s->cat[c].mean;
	}
	cr_assert_float_eq(sum, 2000000.0, 1e-3, "a step's categories add up to the step");
	cr_assert_eq(s->steady_start, 66000000);
	cr_assert_eq(s->startup_ns, 66000000 - 1000000);
	cr_assert_eq(s->startup[ISC_SU_CONTEXT], 50000000);
	cr_assert_eq(s->startup[ISC_SU_MODULES], 4000000);
	cr_assert_eq(s->startup[ISC_SU_ALLOC], 600000);
	cr_assert_eq(s->startup[ISC_SU_WARMUP], 4000000);
	bool said = false;
	for (int i = 0; i < a->verdict.n_evidence; i++) {
		said |= strstr(a->verdict.evidence[i], "start-up takes") != NULL;
	}
	cr_assert(said, "a window mostly of start-up says so");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);

	int st;
	char args[1024];
	snprintf(args, sizeof(args), "'%s'", data_path("extras/steps.json"));
	char *md = cli(args, &st);
	cr_assert_not_null(strstr(md, "## Steps\n\n8 steady steps (found by ProfilerStep#N "
				      "annotations), 1 warm-up. Start-up: 65.000 ms (context "
				      "creation 50.000 ms, module loading 4.000 ms"));
	cr_assert_not_null(
		strstr(md, "| step time | 8 | 2.000 ms | 2.000 ms | 2.000 ms | 2.000 ms |"));
	free(md);
	snprintf(args, sizeof(args), "-f json '%s'", data_path("extras/steps.json"));
	char *js = cli(args, &st);
	cr_assert_not_null(strstr(js, "\"steady_steps\": 8"));
	cr_assert_not_null(strstr(js, "\"context_creation_us\": 50000"));
	free(js);
	snprintf(args, sizeof(args), "-f html '%s'", data_path("extras/steps.json"));
	char *html = cli(args, &st);
	cr_assert_not_null(strstr(html, "<p id=\"steps\">8 steady steps"));
	free(html);
}

/* Without profiler steps, the scope that repeats and covers the window is the step. */
Test(extras, repeated_scope_is_the_step)
{
	struct isc_trace *t = load("scenarios/cpu-bound-tokenize.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->extras->steps.n, 20, "20 requests");
	cr_assert_not_null(strstr(a->extras->steps.how, "'request'"));
	cr_assert_float_eq(a->extras->steps.cat[ISC_CAT_GPU].mean, 1500000.0, 1e-6);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

static struct isc_trace *load2(const char *a, const char *b)
{
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d = { "" };
	cr_assert_eq(isc_read_file(t, data_path(a), NULL, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_read_file(t, data_path(b), NULL, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

/* Two ranks, each on its device 0: two GPUs, analysed apart; rank 1 preprocesses 300 us
 * longer per step and is the slowest for that reason. */
Test(extras, ranks_apart_and_the_slowest)
{
	struct isc_trace *t = load2("extras/rank0.json", "extras/rank1.json");
	cr_assert_eq(t->inputs[0].rank, 0);
	cr_assert_eq(t->inputs[1].rank, 1);
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->n_hta, 2, "device 0 of two ranks is two GPUs");
	cr_assert_neq(a->hta[0].input, a->hta[1].input);
	const struct isc_extras *x = a->extras;
	cr_assert_eq(x->n_ranks, 2);
	cr_assert_eq(x->ranks[x->slowest].rank, 1);
	cr_assert_float_eq(x->ranks[0].step_mean_ns, 1400000.0, 1e-6);
	cr_assert_float_eq(x->ranks[1].step_mean_ns, 1700000.0, 1e-6);
	cr_assert_not_null(strstr(x->slowest_why, "more cpu_preprocessing"));
	/* the all-reduce (400 us a step) overlaps the last compute kernel for 220 us */
	for (size_t k = 0; k < 2; k++) {
		cr_assert_eq(x->ranks[k].comm_ns, 5 * 400000);
		cr_assert_eq(x->ranks[k].overlap_ns, 5 * 220000);
	}
	cr_assert_eq(x->n_clocks, 1);
	cr_assert_not_null(strstr(x->clocks[0], "timelines overlap"));
	isc_analysis_destroy(a);
	isc_trace_destroy(t);

	int st;
	char args[2048], r0[1024];
	/* data_path() returns a static buffer: one path at a time */
	snprintf(r0, sizeof(r0), "%s", data_path("extras/rank0.json"));
	snprintf(args, sizeof(args), "'%s' '%s'", r0, data_path("extras/rank1.json"));
	char *md = cli(args, &st);
	cr_assert_not_null(strstr(md, "## Ranks"));
	cr_assert_not_null(strstr(md, "rank 1 is the slowest (1.700 ms per step"));
	free(md);
	snprintf(args, sizeof(args), "-f json '%s' '%s'", r0, data_path("extras/rank1.json"));
	char *js = cli(args, &st);
	cr_assert_not_null(strstr(js, "\"slowest_rank\": 1"));
	/* two ranks are a job (analysis/job.h): the rank summaries carry the overlap */
	cr_assert_not_null(strstr(js, "\"overlap_ns\": 1100000"));
	free(js);
	snprintf(args, sizeof(args), "-f html '%s' '%s'", r0, data_path("extras/rank1.json"));
	char *html = cli(args, &st);
	cr_assert_not_null(strstr(html, "<table id=\"ranks\">"));
	free(html);
}

/* Two identical ranks: a pure clock offset between them changes no verdict. */
Test(extras, clock_offset_keeps_the_verdict)
{
	struct isc_trace *t1 = load2("extras/same0.json", "extras/same1.json");
	struct isc_trace *t2 = load2("extras/same0.json", "extras/same1-offset.json");
	struct isc_analysis *a1 = analyse(t1, NULL), *a2 = analyse(t2, NULL);
	cr_assert_eq(a1->verdict.type, a2->verdict.type);
	cr_assert_str_eq(a1->verdict.cause, a2->verdict.cause);
	cr_assert_float_eq(a1->verdict.confidence, a2->verdict.confidence, 1e-9);
	cr_assert_eq(a2->extras->ranks[1].offset, 7000000000LL);
	cr_assert_not_null(strstr(a2->extras->clocks[0], "clocks not aligned"));
	isc_analysis_destroy(a1);
	isc_analysis_destroy(a2);
	isc_trace_destroy(t1);
	isc_trace_destroy(t2);
}

/* The InferScope format's kernel geometry reaches the export too. */
Test(extras, export_keeps_inferscope_geometry)
{
	int st;
	char args[1024];
	snprintf(args, sizeof(args), "-f chrome '%s'", data_path("scenarios/gpu-bound.json"));
	char *out = cli(args, &st);
	cr_assert_eq(st, 0);
	cr_assert_eq(count_of(out, "\"grid\":[128,1,1],\"block\":[256,1,1],\"registers per "
				   "thread\":32,\"shared memory\":0}"),
		     200);
	free(out);
}

/* Device allocations all before the first profiler step: the allocation rule still fires
 * (they are past its warm-up fraction) but says its evidence is start-up. */
Test(extras, startup_evidence_is_named)
{
	struct isc_trace *t = load("extras/startup-alloc.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->extras->steps.n, 10);
	cr_assert_eq(a->extras->steps.steady_start, 50000000);
	const struct isc_suggestion *s = NULL;
	for (size_t i = 0; i < a->n_sugg; i++) {
		s = strcmp(a->sugg[i].rule_id, "alloc.device-steady-state") == 0 ? &a->sugg[i] : s;
	}
	cr_assert_not_null(s);
	bool said = false;
	for (int i = 0; i < s->n_evidence; i++) {
		said |= strstr(s->evidence[i], "start-up: 30 of its 30 events") != NULL;
	}
	cr_assert(said, "the suggestion says its evidence is start-up");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}
