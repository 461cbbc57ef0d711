/* SPDX-License-Identifier: MIT */
/* Attribution, HTA reference numbers, verdicts and rules on real and hand-made traces. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

static const char *const scenarios[] = {
	"balanced",  "cpu-bound-tokenize", "cupti-refused",	  "gpu-bound",
	"io-wait",   "launch-bound",	   "malloc-in-loop",	  "pageable-copies",
	"pipelined", "sync-heavy",	   "shim-then-gpu-bound", "input-wait",
};

Test(analysis, breakdown_sums_to_the_window)
{
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "scenarios/%s.json", scenarios[i]);
		struct isc_trace *t = load(rel);
		struct isc_analysis *a = analyse(t, NULL);
		int64_t sum = 0;
		for (int c = 0; c < ISC_CAT__COUNT; c++) {
			cr_assert_geq(a->cat_ns[c], 0);
			sum += a->cat_ns[c];
		}
		cr_assert_eq(sum, a->window.end - a->window.start, "%s: exact, not approximate",
			     scenarios[i]);
		isc_analysis_destroy(a);
		isc_trace_destroy(t);
	}
}

/* The reference numbers of tests/analyzer/data/kineto/README.md (HTA at f4d0062c). */
Test(analysis, kineto_matches_hta)
{
	struct isc_trace *t = load("kineto/simple_add_a100.pt.trace.json.gz");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->n_hta, 1);
	const struct isc_hta_temporal *h = &a->hta[0];
	cr_assert_eq(h->span, 16464339000LL);
	double span = (double)h->span;
	cr_assert(fabs(100.0 * (double)h->idle / span - 99.70) < 0.1);
	cr_assert(fabs(100.0 * (double)h->compute / span - 0.06) < 0.1);
	cr_assert(fabs(100.0 * (double)h->non_compute / span - 0.24) < 0.1);
	cr_assert_eq(h->idle, 16414376000LL);
	cr_assert_eq(h->compute, 10670000LL);
	cr_assert_eq(h->non_compute, 39293000LL);
	cr_assert_eq(a->n_streams, 2);
	for (size_t i = 0; i < a->n_streams; i++) {
		const struct isc_stream_idle *s = &a->streams[i];
		if (s->stream == 7) {
			cr_assert_eq(s->host_wait, 15976739000LL);
			cr_assert_eq(s->kernel_wait, 91000LL);
		} else {
			cr_assert_eq(s->stream, 20);
			cr_assert_eq(s->host_wait, 13582776000LL);
			cr_assert_eq(s->kernel_wait, 8000LL);
		}
	}
	const struct isc_launch_stats *l = &a->launch;
	cr_assert_eq(l->pairs, 98);
	cr_assert_eq(l->short_kernels, 29);
	cr_assert_eq(l->slow_launches, 10);
	cr_assert_eq(l->delay_outliers, 22);
	cr_assert_float_eq(l->median_launch_ns, 16000.0, 1e-9);
	cr_assert_float_eq(l->median_gpu_ns, 51500.0, 1e-9);
	cr_assert_float_eq(l->median_delay_ns, 3500.0, 1e-9);
	cr_assert_eq(a->verdict.type, ISC_BOUND_CPU, "the README calls it host bound");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* HTA's temporal breakdown of the whole trace (README's "HTA whole trace" column), in
 * percentage points of the GPU span. */
static void hta_whole(const char *rel, int device, double idle, double compute, double other)
{
	struct isc_trace *t = load(rel);
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->n_hta, 1, "%s", rel);
	const struct isc_hta_temporal *h = &a->hta[0];
	double span = (double)h->span;
	cr_assert_eq(h->device, device, "%s", rel);
	cr_assert(fabs(100.0 * (double)h->idle / span - idle) < 0.1, "%s: idle %.2f", rel,
		  100.0 * (double)h->idle / span);
	cr_assert(fabs(100.0 * (double)h->compute / span - compute) < 0.1, "%s: compute %.2f", rel,
		  100.0 * (double)h->compute / span);
	cr_assert(fabs(100.0 * (double)h->non_compute / span - other) < 0.1, "%s: non-compute %.2f",
		  rel, 100.0 * (double)h->non_compute / span);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(analysis, kineto_mi250_matches_hta)
{
	hta_whole("kineto/amd_mi250.pt.trace.json.gz", 2, 98.33, 1.24, 0.43);
}

/* HTA's whole-trace column says 69.01 / 14.62 / 16.37 for this rank; the union of its GPU
 * operations over their span (what the README states too: busy 35.6 %) is 64.40 / 17.13 /
 * 18.47, computed apart from the analyzer. The difference is HTA's, not understood yet:
 * the analyzer is held to the union. */
Test(analysis, kineto_nccl_rank_gpu_time_is_the_union_of_its_operations)
{
	hta_whole("kineto/nccl_a100_rank0.pt.trace.json.gz", 0, 64.40, 17.13, 18.47);
}

/* Checks every line "NAME VERDICT TOP" of DIR/expected.txt on DIR/NAME.SUFFIX. */
static int check_expected(const char *dir, const char *suffix)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/expected.txt", dir);
	char *text = slurp(data_path(path), NULL);
	cr_assert_not_null(text);
	int checked = 0;
	for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char name[64], verdict[32], top[64];
		if (line[0] == '#' || sscanf(line, "%63s %31s %63s", name, verdict, top) != 3) {
			continue;
		}
		char rel[128];
		snprintf(rel, sizeof(rel), "%s/%s%s", dir, name, suffix);
		struct isc_trace *t = load(rel);
		struct isc_analysis *a = analyse(t, NULL);
		cr_assert_str_eq(isc_bound_name(a->verdict.type), verdict, "%s", name);
		cr_assert_gt(a->n_sugg, 0, "%s", name);
		cr_assert_str_eq(a->sugg[0].rule_id, top, "%s", name);
		cr_assert_gt(a->verdict.confidence, 0);
		cr_assert_leq(a->verdict.confidence, 1);
		for (size_t i = 0; i < a->n_sugg; i++) {
			cr_assert_gt(a->sugg[i].n_evidence, 0, "every suggestion has evidence");
		}
		isc_analysis_destroy(a);
		isc_trace_destroy(t);
		checked++;
	}
	free(text);
	return checked;
}

Test(analysis, scenarios_get_their_verdict_and_top_suggestion)
{
	cr_assert_eq(check_expected("scenarios", ".json"), 12);
}

/* The workloads' README table, on traces the preload recorded on the simulated GPU. */
Test(analysis, recorded_workloads_get_their_readme_verdicts)
{
	cr_assert_eq(check_expected("workloads", ".json.gz"), 8);
}

/* An exec chain's start-up images (a shim reading a pipe for 1 s) are not the program:
 * the default window starts at the program's image, and says what it left out. */
Test(analysis, exec_chain_start_up_is_left_out_of_the_window)
{
	struct isc_trace *t = load("scenarios/shim-then-gpu-bound.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->window.start, t->inputs[0].meta_start_ns);
	cr_assert_eq(t->inputs[0].dropped_total, 3, "the shim's drops count for the trace");
	cr_assert(strstr(a->window.how, "start-up in 1 earlier image"), "%s", a->window.how);
	cr_assert(strstr(a->window.how, "1.000 s"), "%s", a->window.how);
	cr_assert_eq(a->waits.on_idle[ISC_SYS_IO], 0, "the shim's reads are outside");
	isc_analysis_destroy(a);
	/* an explicit window still sees them */
	struct isc_analyze_opts o = { 0 };
	o.window_explicit = true;
	o.window_start = INT64_MIN / 4;
	o.window_end = INT64_MAX / 4;
	a = analyse(t, &o);
	cr_assert_eq(a->waits.on_idle[ISC_SYS_IO], 1000000000, "10 reads of 100 ms");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(analysis, missing_gpu_timeline_lowers_confidence)
{
	struct isc_trace *t = load("scenarios/cupti-refused.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_lt(a->verdict.confidence, 0.5);
	bool advisory = false;
	for (size_t i = 0; i < a->n_sugg; i++) {
		advisory |= strcmp(a->sugg[i].rule_id, "data.no-gpu-timeline") == 0;
	}
	cr_assert(advisory);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(analysis, cpu_samples_tell_waiting_from_computing)
{
	/* io-wait: the read sits inside the 'load_image' scope; the samples say the thread
	 * waited there, so only 'decode' counts as preprocessing. */
	struct isc_trace *t = load("scenarios/io-wait.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert(a->cpu_samples);
	cr_assert_gt(a->cat_ns[ISC_CAT_IDLE], a->cat_ns[ISC_CAT_CPU] * 5);
	cr_assert_str_eq(a->verdict.cause, "host_io_wait");
	cr_assert_str_eq(isc_trace_str(t, a->scopes[0].name), "decode");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(analysis, window_trims_to_scopes)
{
	struct isc_trace *t = load("scenarios/cpu-bound-tokenize.json");
	struct isc_analyze_opts o = { .window_scope = "tokenize" };
	struct isc_analysis *a = analyse(t, &o);
	cr_assert(a->window.trimmed);
	struct isc_analysis *whole = analyse(t, NULL);
	cr_assert_lt(a->window.end - a->window.start, whole->window.end - whole->window.start);
	o.window_scope = "tok*";
	struct isc_analysis *prefix = analyse(t, &o);
	cr_assert_eq(prefix->window.start, a->window.start);
	struct isc_analysis *none = NULL;
	struct isc_diag d;
	o.window_scope = "no-such-scope";
	cr_assert_eq(isc_analyze(t, &o, &none, &d), -ENOENT);
	isc_analysis_destroy(prefix);
	isc_analysis_destroy(whole);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(analysis, thresholds_change_the_verdict)
{
	struct isc_trace *t = load("scenarios/gpu-bound.json");
	struct isc_thresholds th;
	isc_thresholds_init(&th);
	th.v[ISC_THR_MIN_GAIN_PCT] = 60; /* GPU work twice as fast gains 49 % */
	struct isc_analyze_opts o = { .th = &th };
	struct isc_analysis *a = analyse(t, &o);
	cr_assert_neq(a->verdict.type, ISC_BOUND_GPU);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(analysis, empty_trace_is_unknown)
{
	struct isc_trace *t = isc_trace_create();
	isc_trace_add_input(t, "none");
	cr_assert_eq(isc_trace_finalize(t), 0);
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->verdict.type, ISC_BOUND_UNKNOWN);
	cr_assert_float_eq(a->verdict.confidence, 0.0, 1e-12);
	cr_assert_gt(a->verdict.n_evidence, 0);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/*
 * A host process that read 1000 times: 995 fast reads the hooks only counted, five slow
 * ones that became events. The syscall table is the aggregates' (every call), its
 * percentiles the latency histogram's; a trace without histograms keeps the events'
 * percentiles and says so; a trimmed window has only the events to count.
 */
Test(analysis, syscall_table_counts_every_call)
{
	struct isc_trace *t = load("host/syscall-aggregates.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_stat_table *tab = &a->stats[ISC_SG_SYSCALL];
	cr_assert(tab->exact && !tab->pct_from_events);
	cr_assert_eq(tab->n, 1);
	cr_assert_eq(tab->events, 5);
	cr_assert_eq(tab->calls, 1000);
	const struct isc_stat *r = &tab->rows[0];
	cr_assert_eq(r->count, 1000, "every call, not the %llu events", (unsigned long long)5);
	cr_assert_eq(r->total, 4500000);
	cr_assert_eq(r->max, 600000);
	cr_assert_eq(r->bytes, 4096000);
	/* 900 calls in [1, 2) us, 95 in [2, 4), 5 in [524, 600]: the median is the 500th
	 * call, 500/900 into the first bucket; p99 the 990th, 90/95 into the second */
	cr_assert_float_eq(r->pct[3], 1000 + 1000 * 500.0 / 900, 1.0, "p50 %.1f", r->pct[3]);
	cr_assert_float_eq(r->pct[7], 2000 + 2000 * 90.0 / 95, 1.0, "p99 %.1f", r->pct[7]);
	cr_assert_eq(r->min, 1000);
	cr_assert_eq(r->hist[1] + r->hist[2], 995, "the fast calls in the 1-2-5 histogram");
	/* the allocations are the malloc hooks' counters of both threads, not the events */
	cr_assert(a->allocs.present);
	cr_assert_eq(a->allocs.calls, 4000);
	cr_assert_eq(a->allocs.frees, 4000);
	cr_assert_eq(a->allocs.failed, 1);
	cr_assert_eq(a->allocs.bytes, 400000);
	cr_assert_eq(a->allocs.bytes_freed, 400000);
	cr_assert_eq(a->allocs.live, 0, "one thread frees what the other allocated");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);

	t = load("host/syscall-aggregates-no-histogram.json");
	a = analyse(t, NULL);
	tab = &a->stats[ISC_SG_SYSCALL];
	cr_assert(tab->exact && tab->pct_from_events, "an older trace: percentiles of events");
	cr_assert_eq(tab->rows[0].count, 1000);
	cr_assert_float_eq(tab->rows[0].pct[3], 600000, 1.0);
	isc_analysis_destroy(a);

	struct isc_analyze_opts o = { .window_explicit = true,
				      .window_start = 1000000,
				      .window_end = 2500000 };
	a = analyse(t, &o);
	tab = &a->stats[ISC_SG_SYSCALL];
	cr_assert(!tab->exact, "the aggregates cover the whole run, not a window");
	cr_assert_eq(tab->n, 1);
	cr_assert_eq(tab->rows[0].count, 2, "%llu in the window",
		     (unsigned long long)tab->rows[0].count);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}
