/* SPDX-License-Identifier: MIT */
/* The dependency graph, its critical path, verdicts from it and gains from what-ifs
 * (issue 11) on the traces of data/causal/ (make-causal.py) and data/scenarios/. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/causal/graph.h"
#include "helpers.h"

static void no_estimate_above_100(const struct isc_analysis *a)
{
	for (size_t i = 0; i < a->n_sugg; i++) {
		cr_assert_leq(a->sugg[i].improvement_pct, 100.0, "%s", a->sugg[i].rule_id);
		cr_assert_geq(a->sugg[i].improvement_pct, 0.0, "%s", a->sugg[i].rule_id);
	}
}

Test(causal, full_launch_queue_is_gpu_bound_and_host_advice_is_not_given)
{
	struct isc_trace *t = load("causal/queue-full.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->verdict.type, ISC_BOUND_GPU, "%s", isc_bound_name(a->verdict.type));
	cr_assert_gt(a->causal->queue_full, 1000, "launches blocked on the full queue found");
	cr_assert_gt(isc_cp_gpu(a->causal), 9 * isc_cp_host(a->causal));
	cr_assert_lt(a->verdict.confidence, 1.0, "Kineto records no waits");
	for (size_t i = 0; i < a->n_sugg; i++) {
		cr_assert(strncmp(a->sugg[i].rule_id, "host.", 5) != 0 &&
				  strcmp(a->sugg[i].rule_id, "pipeline.overlapped") != 0 &&
				  strcmp(a->sugg[i].rule_id, "launch.tiny-kernels") != 0,
			  "%s speeds up host code", a->sugg[i].rule_id);
	}
	/* Faster host code gains nothing; faster kernels gain. */
	struct isc_change host = {
		.op = ISC_WI_SCALE, .sel = ISC_SEL_HOST_CODE, .factor = 0.5, .after = INT64_MIN
	};
	struct isc_change launches = host;
	launches.sel = ISC_SEL_LAUNCH;
	struct isc_change gpu = host;
	gpu.sel = ISC_SEL_ALL_GPU;
	int64_t b, e;
	double g;
	cr_assert_eq(isc_whatif_run(t, a, &host, &b, &e, &g), 0);
	cr_assert_float_eq(g, 0.0, 0.01);
	cr_assert_eq(isc_whatif_run(t, a, &launches, &b, &e, &g), 0);
	cr_assert_float_eq(g, 0.0, 0.01);
	cr_assert_eq(isc_whatif_run(t, a, &gpu, &b, &e, &g), 0);
	cr_assert_gt(g, 45.0);
	cr_assert_leq(g, 50.0);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(causal, estimates_stay_under_the_window_over_streams_and_threads)
{
	struct isc_trace *t = load("causal/streams-threads.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_gt(a->idle.other, 2 * (a->window.end - a->window.start),
		     "idle summed over streams is several windows");
	bool gaps = false;
	for (size_t i = 0; i < a->n_sugg; i++) {
		gaps |= strcmp(a->sugg[i].rule_id, "gpu.gaps") == 0;
	}
	cr_assert(gaps);
	no_estimate_above_100(a);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(causal, host_waiting_on_a_communicating_gpu_is_not_framework_overhead)
{
	struct isc_trace *t = load("causal/comm-stall.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_str_neq(a->verdict.cause, "framework_overhead");
	cr_assert_str_eq(a->verdict.cause, "communication");
	cr_assert_gt(a->causal->sync_waits, 0);
	cr_assert_gt(a->causal->copy_waits, 0);
	cr_assert_eq(a->causal->cat[ISC_CP_HOST] < a->causal->cat[ISC_CP_COMM], true);
	no_estimate_above_100(a);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(causal, unchanged_graph_retimes_to_the_recording)
{
	static const char *const names[] = { "scenarios/sync-heavy.json",
					     "scenarios/pipelined.json", "causal/queue-full.json",
					     "causal/comm-stall.json",
					     "scenarios/input-wait.json" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct isc_trace *t = load(names[i]);
		struct isc_analysis *a = analyse(t, NULL);
		struct isc_change same = {
			.op = ISC_WI_SCALE, .sel = ISC_SEL_ALL_GPU, .factor = 1, .after = INT64_MIN
		};
		int64_t b, e;
		double g;
		cr_assert_eq(isc_whatif_run(t, a, &same, &b, &e, &g), 0);
		cr_assert_eq(b, e, "%s", names[i]);
		cr_assert_eq(a->causal->cycle_edges, 0, "%s", names[i]);
		/* The path covers the window from its first to its last work. */
		cr_assert_leq(a->causal->path_ns, a->window.end - a->window.start);
		cr_assert_gt(a->causal->path_ns, (a->window.end - a->window.start) * 9 / 10);
		isc_analysis_destroy(a);
		isc_trace_destroy(t);
	}
}

Test(causal, what_if_questions_are_answered_from_the_graph)
{
	struct isc_trace *t = load("scenarios/cpu-bound-tokenize.json");
	static const char *const q[] = { "scope:tokenize*0.5", "kernel:*2", "nonsense" };
	struct isc_analyze_opts o = { .what_if = q, .n_what_if = 3 };
	struct isc_analysis *a = analyse(t, &o);
	const struct isc_causal *c = a->causal;
	cr_assert_eq(c->n_whatif, 3);
	cr_assert(c->whatif[0].ok);
	/* tokenize is 160 ms of host time on the path: half of it comes off the window. */
	cr_assert_eq(c->whatif[0].before - c->whatif[0].after, 80000000);
	cr_assert(c->whatif[1].ok);
	cr_assert_lt(c->whatif[1].gain_pct, 0.0, "slower kernels lengthen the window");
	cr_assert_not(c->whatif[2].ok);
	no_estimate_above_100(a);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(causal, what_if_option_on_the_command_line)
{
	char *out = NULL, *err = NULL;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s --what-if 'scope:tokenize*0.5' %s", getenv("ISC_ANALYZE"),
		 data_path("scenarios/cpu-bound-tokenize.json"));
	cr_assert_eq(run(cmd, &out, &err), 0);
	cr_assert_not_null(strstr(out, "## Critical path"));
	cr_assert_not_null(strstr(out, "## What-if"));
	cr_assert_not_null(strstr(out, "-80.000 ms"));
	free(out);
	free(err);
	snprintf(cmd, sizeof(cmd), "%s --what-if 'scope:tokenize' %s", getenv("ISC_ANALYZE"),
		 data_path("scenarios/cpu-bound-tokenize.json"));
	cr_assert_eq(run(cmd, &out, &err), 2);
	cr_assert_not_null(strstr(err, "--what-if"));
	free(out);
	free(err);
}

/* Host time no event covers is named by the function its CPU samples were in. */
Test(causal, sampled_functions_name_the_path)
{
	struct isc_trace *t = load("stacks/stacks-cpu.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_not_null(a->causal);
	const struct isc_cp_name *top = &a->causal->top[0];
	cr_assert_eq(top->kind, ISC_CPK_FUNCTION, "%s", isc_cp_kind_name(top->kind));
	cr_assert_str_eq(isc_trace_str(t, top->name), "tokenize");
	cr_assert_gt(top->ns, 0);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* A graph what-if: launches cost nothing, the kernels follow each other
 * launch.graph_node_gap_us apart; an unchanged launch-bound graph re-times exactly. */
Test(causal, graph_change_spaces_kernels_by_the_node_gap)
{
	struct isc_trace *t = load("scenarios/launch-bound.json");
	double gain[2];
	for (int k = 0; k < 2; k++) {
		struct isc_thresholds th;
		isc_thresholds_init(&th);
		th.v[ISC_THR_GRAPH_NODE_GAP_US] = k == 0 ? 0 : 5;
		struct isc_analyze_opts o = { .th = &th };
		struct isc_analysis *a = analyse(t, &o);
		struct isc_change same = {
			.op = ISC_WI_SCALE, .sel = ISC_SEL_ALL_GPU, .factor = 1, .after = INT64_MIN
		};
		struct isc_change graph = { .op = ISC_WI_GRAPH,
					    .sel = ISC_SEL_LAUNCH,
					    .after = INT64_MIN };
		int64_t b, e;
		cr_assert_eq(isc_whatif_run(t, a, &same, &b, &e, &gain[k]), 0);
		cr_assert_eq(b, e);
		cr_assert_eq(isc_whatif_run(t, a, &graph, &b, &e, &gain[k]), 0);
		cr_assert_gt(gain[k], 0, "launches that cost nothing shorten a launch-bound run");
		isc_analysis_destroy(a);
	}
	cr_assert_lt(gain[1], gain[0], "kernels 5 us apart gain less than back to back");
	isc_trace_destroy(t);
}

/* A server paced by its input (requests read from a pipe every 3 ms): its reads return
 * when the data came whatever the thread does before them, so faster code between reads
 * gains only after the last one, and the advice is about the writer. The same trace with
 * the reads not known to be paced credits every request's decode. */
Test(causal, paced_input_is_not_hurried_by_faster_code)
{
	struct isc_trace *t = load("scenarios/input-wait.json");
	struct isc_analysis *a = analyse(t, NULL);
	bool input = false;
	for (size_t i = 0; i < a->n_sugg; i++) {
		const char *id = a->sugg[i].rule_id;
		input |= strcmp(id, "host.input-wait") == 0;
		cr_assert(strcmp(id, "host.io-wait") != 0 &&
				  strcmp(id, "host.cpu-preprocessing") != 0 &&
				  strcmp(id, "sync.excessive") != 0,
			  "%s: advice this run cannot gain from", id);
	}
	cr_assert(input, "host.input-wait names the writer");
	cr_assert_str_eq(a->verdict.cause, "waiting_for_input");
	struct isc_change decode = { .op = ISC_WI_SCALE,
				     .sel = ISC_SEL_SCOPE,
				     .pattern = "decode",
				     .factor = 0,
				     .after = INT64_MIN };
	struct isc_change nosync = { .op = ISC_WI_NO_WAIT,
				     .sel = ISC_SEL_SYNC,
				     .after = INT64_MIN };
	int64_t b, e;
	double g;
	cr_assert_eq(isc_whatif_run(t, a, &decode, &b, &e, &g), 0);
	cr_assert_eq(b - e, 300000, "only the last request's decode: %lld ns", (long long)(b - e));
	cr_assert_eq(isc_whatif_run(t, a, &nosync, &b, &e, &g), 0);
	cr_assert_lt(b - e, 10000, "no sync gains at most the last one's: %lld",
		     (long long)(b - e));
	isc_analysis_destroy(a);
	/* unpaced: every decode is on the path */
	for (size_t i = 0; i < t->n; i++) {
		t->ev[i].flags &= (uint16_t)~ISC_F_PACED;
	}
	a = analyse(t, NULL);
	cr_assert_eq(isc_whatif_run(t, a, &decode, &b, &e, &g), 0);
	cr_assert_eq(b - e, 20 * 300000, "%lld ns", (long long)(b - e));
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* scope:NAME*F takes along what the scope stands for on a GPU (causal/scope-gpu-kineto,
 * 10 steps of 1260 us): its host time, the CUDA calls made in it and the kernels they
 * launched. Each step's scope `slow_norm` (220 us) launches four 50 us kernels 10 us
 * apart and waits for them; the kernels run back to back, from 10 us into the scope to
 * 5 us before the sync returns. The launch latency is 5 us (the first kernel's and the
 * gemm's gap after their launch). */
static int64_t whatif_gain(const struct isc_trace *t, const struct isc_analysis *a,
			   const char *spec)
{
	struct isc_change ch;
	char pat[64], err[128];
	int64_t b, e;
	double g;
	cr_assert_eq(isc_whatif_parse(spec, &ch, pat, sizeof(pat), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(isc_whatif_run(t, a, &ch, &b, &e, &g), 0);
	return b - e;
}

Test(causal, a_scope_what_if_takes_its_gpu_work_along)
{
	struct isc_trace *t = load("causal/scope-gpu-kineto.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->causal->launch_latency, 5000);
	/* *0: the scope, its launches, its sync and its kernels gone: each step 220 us
	 * shorter (the gemm starts its 5 us latency after its launch, 10 us after the
	 * scope's place, as recorded). */
	cr_assert_eq(whatif_gain(t, a, "scope:slow_norm*0"), 10 * 220000);
	/* *0.5: host segments and the sync's return halved, kernels 25 us. In a step: the
	 * launches end at 2.5, 7.5, 12.5, 17.5 us; the first kernel starts 5 us after its
	 * launch (7.5), the others back to back (ends 32.5, 57.5, 82.5, 107.5); the sync
	 * returns 2.5 us after (110), the scope's last 2.5 us of its own: it ends at 112.5
	 * where it ended at 220, and the rest of the step follows. */
	cr_assert_eq(whatif_gain(t, a, "scope:slow_norm*0.5"), 10 * 107500);
	/* Only the host time (the selector host.cpu-preprocessing uses, what scope:*0 did
	 * before): the kernels still run, and the sync waits for them: the scope ends at
	 * 205 us (the last kernel 5 us after the first launch + 4 x 50 us), 15 us earlier. */
	struct isc_change host = { .op = ISC_WI_SCALE,
				   .sel = ISC_SEL_SCOPE,
				   .pattern = "slow_norm",
				   .factor = 0,
				   .after = INT64_MIN };
	int64_t b, e;
	double g;
	cr_assert_eq(isc_whatif_run(t, a, &host, &b, &e, &g), 0);
	cr_assert_eq(b - e, 10 * 15000);
	/* call:NAME*0 of a launch call leaves its kernel: the launches cost nothing, 5 us a
	 * step in the scope (its kernels still bound it) and 5 us for the gemm's. */
	cr_assert_eq(whatif_gain(t, a, "call:cudaLaunchKernel*0"), 10 * 10000);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* overlap:NAME*K: the scope's instances go round K workers (causal/dataloader-kineto:
 * 10 steps of a 3 ms fetch, then 530 us of launch, kernel and sync). The workers start
 * at the first fetch and work back to back; fetch j is ready when its worker has done
 * it, and the loop takes it then or when it gets there (530 us after the previous one).
 * One worker: fetch j ready at (j + 1) x 3 ms, the loop always waits: 30 ms + 525 us.
 * Two: ready at 3, 3, 6, 6, ... ms; the loop takes them at 3, 3.53, 6, 6.53, ... 15.53 ms.
 * Three: at 3, 3.53, 4.06, 6, ..., 10.06, then 12 ms for the tenth. Recorded: 35.295 ms. */
Test(causal, overlap_runs_a_scope_on_k_workers)
{
	struct isc_trace *t = load("causal/dataloader-kineto.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(whatif_gain(t, a, "overlap:next_batch"), 35295000 - 30525000);
	cr_assert_eq(whatif_gain(t, a, "overlap:next_batch*1"), 35295000 - 30525000);
	cr_assert_eq(whatif_gain(t, a, "overlap:next_batch*2"), 35295000 - 16055000);
	cr_assert_eq(whatif_gain(t, a, "overlap:next**3"), 35295000 - 12525000);
	cr_assert_eq(whatif_gain(t, a, "overlap:next_*"), 35295000 - 30525000, "a prefix");
	struct isc_change ch;
	char pat[64], err[128];
	cr_assert_eq(
		isc_whatif_parse("overlap:next_batch*0", &ch, pat, sizeof(pat), err, sizeof(err)),
		-EINVAL);
	cr_assert_eq(
		isc_whatif_parse("overlap:next_batch*1.5", &ch, pat, sizeof(pat), err, sizeof(err)),
		-EINVAL);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}
