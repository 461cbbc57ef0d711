/* SPDX-License-Identifier: MIT */
/*
 * Cross-stream event edges (analyzer/causal/graph-events.c) on a recorded run: the
 * workload wl-event-streams (tests/workloads/c/event-streams.c) runs under the preload
 * on the simulated GPU with virtual host time. Stream B's `consumer` waits, through
 * cudaEventRecord + cudaStreamWaitEvent, for stream A's `producer` (2 ms); A's `side`
 * kernel comes after the record and is not waited for. Every number asserted is the
 * simulated device's (fixed durations) or a count.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "analyzer/causal/graph.h"
#include "analyzer/readers/reader.h"

#define STEPS 30
#define MS 1000000.0

static struct isc_trace *record(const char *args)
{
	const char *bin = getenv("ISC_WORKLOADS"), *preload = getenv("ISC_PRELOAD");
	const char *vtime = getenv("ISC_VTIME");
	cr_assert(bin != NULL && preload != NULL && vtime != NULL);
	char dir[] = "/tmp/isc-events-XXXXXX", cmd[8192], path[4200];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && timeout 300 env INFERSCOPE_OUTPUT=trace.json LD_PRELOAD=%s:%s "
		 "%s/wl-event-streams %s >/dev/null",
		 dir, vtime, preload, bin, args);
	cr_assert_eq(run(cmd, NULL, NULL), 0, "wl-event-streams %s: the run failed", args);
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d;
	cr_assert_eq(isc_read_file(t, path, NULL, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

/* From the first step to the end (CUDA's start-up before it is not the question). */
static struct isc_analysis *analyse_steps(const struct isc_trace *t)
{
	static const char *const q[] = { "kernel:producer*0.5", "kernel:side*0.5" };
	struct isc_analyze_opts o = { .window_explicit = true, .what_if = q, .n_what_if = 2 };
	o.window_start = INT64_MAX;
	o.window_end = INT64_MIN;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_SCOPE && strcmp(isc_trace_str(t, e->name), "step") == 0) {
			o.window_start = e->ts < o.window_start ? e->ts : o.window_start;
		}
		o.window_end = e->ts + e->dur > o.window_end ? e->ts + e->dur : o.window_end;
	}
	cr_assert(o.window_start != INT64_MAX, "no step scope");
	struct isc_analysis *a = analyse(t, &o);
	cr_assert_not_null(a->causal);
	return a;
}

static const struct isc_ev *kernel_by_corr(const struct isc_trace *t, const struct isc_ev *api)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->ev[i].type == ISC_T_KERNEL && t->ev[i].corr == api->corr) {
			return &t->ev[i];
		}
	}
	return NULL;
}

/* The simulator honours the wait: no consumer starts before the producer launched just
 * before it (the record's mark) has ended; the side kernel after the record may. */
Test(events, simulator_orders_the_streams)
{
	struct isc_trace *t = record("");
	const struct isc_ev *prod = NULL;
	int n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type != ISC_T_CUDA_API || e->sub != ISC_AC_LAUNCH) {
			continue;
		}
		const struct isc_ev *k = kernel_by_corr(t, e);
		cr_assert_not_null(k, "a launch without its kernel");
		const char *name = isc_trace_str(t, k->name);
		if (strcmp(name, "producer") == 0) {
			prod = k;
		} else if (strcmp(name, "consumer") == 0) {
			cr_assert_not_null(prod);
			cr_assert_geq(k->ts, prod->ts + prod->dur,
				      "consumer %d started at %lld, "
				      "before its producer ended (%lld)",
				      n, (long long)k->ts, (long long)(prod->ts + prod->dur));
			n++;
		}
	}
	cr_assert_eq(n, STEPS);
	isc_trace_destroy(t);
}

Test(events, handles_reach_the_model)
{
	struct isc_trace *t = record("");
	int rec = 0, wait = 0;
	uint64_t h[2] = { 0, 0 };
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type != ISC_T_CUDA_API) {
			continue;
		}
		enum isc_event_call k = isc_api_event_call(isc_trace_str(t, e->name));
		if (k == ISC_EC_RECORD) {
			cr_assert_neq(e->v.handle, 0, "cudaEventRecord without its handle");
			h[rec % 2] = rec < 2 ? e->v.handle : h[rec % 2];
			cr_assert_eq(e->v.handle, h[rec % 2], "the two events alternate");
			rec++;
		} else if (k == ISC_EC_WAIT) {
			cr_assert_eq(e->v.handle, h[(rec - 1) % 2],
				     "the wait names the last record");
			wait++;
		}
	}
	cr_assert_eq(rec, STEPS);
	cr_assert_eq(wait, STEPS);
	cr_assert_neq(h[0], h[1]);
	isc_trace_destroy(t);
}

Test(events, the_wait_is_an_edge_and_the_path_crosses_it)
{
	struct isc_trace *t = record("");
	struct isc_analysis *a = analyse_steps(t);
	const struct isc_causal *c = a->causal;
	cr_assert_eq(c->event_edges, STEPS);
	int n = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		uint32_t x = isc_graph_xdep(c, i);
		if (x == ISC_GN_NONE) {
			continue;
		}
		cr_assert_str_eq(node_name(t, c, i), "consumer");
		cr_assert_str_eq(node_name(t, c, x), "producer",
				 "the wait is for the work "
				 "before the record, not the side kernel after it");
		cr_assert_leq(c->node[x].t1, isc_gn_t0(c, &c->node[i]));
		n++;
	}
	cr_assert_eq(n, STEPS);
	/* Host waits for B, B for A: the path runs through both kernels of every step. */
	cr_assert_geq(path_ns(c, t, "producer"), 0.95 * STEPS * 2 * MS,
		      "producer on the path: %lld", (long long)path_ns(c, t, "producer"));
	cr_assert_geq(path_ns(c, t, "consumer"), 0.95 * STEPS * 1 * MS);
	cr_assert_lt(path_ns(c, t, "side"), 0.05 * STEPS * 0.5 * MS);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* Halving the producer moves every consumer, and so the run, 1 ms a step earlier;
 * halving the side kernel, which nothing waits for, moves nothing. */
Test(events, what_if_a_faster_producer_ends_b_earlier)
{
	struct isc_trace *t = record("");
	struct isc_analysis *a = analyse_steps(t);
	const struct isc_causal *c = a->causal;
	cr_assert_eq(c->n_whatif, 2);
	cr_assert(c->whatif[0].ok && c->whatif[1].ok);
	double saved = (double)(c->whatif[0].before - c->whatif[0].after);
	cr_assert(saved >= 0.9 * STEPS * MS && saved <= 1.1 * STEPS * MS,
		  "a 1 ms faster producer per step saves %.3f ms", saved / MS);
	double side = (double)(c->whatif[1].before - c->whatif[1].after);
	cr_assert(side >= 0 && side < 0.05 * STEPS * MS, "the side kernel saves %.3f ms",
		  side / MS);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* cudaEventSynchronize waits for exactly what its record marked: B's consumer. */
Test(events, event_synchronize_waits_for_its_record)
{
	struct isc_trace *t = record("event-sync");
	struct isc_analysis *a = analyse_steps(t);
	const struct isc_causal *c = a->causal;
	cr_assert_eq(c->event_syncs, STEPS);
	cr_assert_eq(event_syncs_waiting_for(t, c, "consumer"), STEPS);
	double saved = (double)(c->whatif[0].before - c->whatif[0].after);
	cr_assert(saved >= 0.9 * STEPS * MS && saved <= 1.1 * STEPS * MS,
		  "a 1 ms faster producer per step saves %.3f ms", saved / MS);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}
