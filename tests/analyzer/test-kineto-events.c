/* SPDX-License-Identifier: MIT */
/*
 * Waits on CUDA events in Kineto input: what the reader keeps of them and the
 * cross-stream event edges made of them (analyzer/causal/graph-events-kineto.c), on the
 * traces of data/causal/events-kineto*.json (make-causal.py: stream 7's `producer` is
 * recorded, stream 20's `consumer` waits for it, `side` runs on stream 7 after the record
 * and nothing waits for it; 20 steps) and on the real PyTorch trace of data/kineto/.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/causal/graph.h"
#include "analyzer/readers/reader.h"
#include "helpers.h"

#define STEPS 20
#define MS 1000000

static struct isc_analysis *analyse_with_questions(const struct isc_trace *t)
{
	static const char *const q[] = { "kernel:producer*0.5", "kernel:side*0.5" };
	struct isc_analyze_opts o = { .what_if = q, .n_what_if = 2 };
	struct isc_analysis *a = analyse(t, &o);
	cr_assert_not_null(a->causal);
	return a;
}

/* Every consumer waits for the producer of its step, never for the side kernel; the
 * path runs through both; halving the producer saves 1 ms a step, halving the side
 * kernel nothing. */
static void check_two_streams(const char *rel, uint64_t assumed)
{
	struct isc_trace *t = load(rel);
	struct isc_analysis *a = analyse_with_questions(t);
	const struct isc_causal *c = a->causal;
	cr_assert_eq(c->event_edges, STEPS, "%s: %llu event edges", rel,
		     (unsigned long long)c->event_edges);
	cr_assert_eq(c->event_assumed, assumed, "%s", rel);
	cr_assert_eq(c->event_refuted, 0, "%s", rel);
	cr_assert_eq(c->cycle_edges, 0, "%s", rel);
	cr_assert_eq(t->inputs[0].unknown_cats.n, 0, "%s: cuda_event is a known category", rel);
	int n = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		uint32_t x = isc_graph_xdep(c, i);
		if (x == ISC_GN_NONE) {
			continue;
		}
		cr_assert_str_eq(node_name(t, c, i), "consumer", "%s", rel);
		cr_assert_str_eq(node_name(t, c, x), "producer",
				 "%s: the wait is for the work "
				 "before the record, not the side kernel after it",
				 rel);
		cr_assert_leq(c->node[x].t1, isc_gn_t0(c, &c->node[i]));
		n++;
	}
	cr_assert_eq(n, STEPS);
	cr_assert_eq(path_ns(c, t, "producer"), STEPS * 2 * MS, "%s: producer on the path: %lld",
		     rel, (long long)path_ns(c, t, "producer"));
	cr_assert_eq(path_ns(c, t, "consumer"), STEPS * 1 * MS, "%s", rel);
	cr_assert_eq(path_ns(c, t, "side"), 0, "%s", rel);
	cr_assert_eq(c->n_whatif, 2);
	cr_assert(c->whatif[0].ok && c->whatif[1].ok);
	cr_assert_eq(c->whatif[0].before - c->whatif[0].after, STEPS * MS,
		     "%s: a 1 ms faster producer per step saves %lld ns", rel,
		     (long long)(c->whatif[0].before - c->whatif[0].after));
	cr_assert_eq(c->whatif[1].before, c->whatif[1].after, "%s: the side kernel saves %lld ns",
		     rel, (long long)(c->whatif[1].before - c->whatif[1].after));
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* The reader keeps what a wait names: its kind, the recorded stream, the record's
 * correlation (a cudaEventRecord call of the same input), none of it for other syncs. */
Test(kineto_events, the_reader_keeps_what_the_waits_name)
{
	struct isc_trace *t = load("causal/events-kineto-sync.json");
	int waits = 0, syncs = 0, other = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type != ISC_T_GPU_SYNC) {
			continue;
		}
		if (e->sub == ISC_GS_OTHER) {
			other++;
			continue;
		}
		struct isc_ev probe = { .corr = e->v.sync.record_corr, .input = e->input };
		const struct isc_ev *rec = isc_trace_launch_of(t, &probe);
		cr_assert_not_null(rec);
		cr_assert_str_eq(isc_trace_str(t, rec->name), "cudaEventRecord");
		cr_assert_lt(rec->corr, e->corr, "recorded before the wait");
		cr_assert_eq(e->v.sync.wait_stream, e->sub == ISC_GS_WAIT_EVENT ? 7 : 20);
		waits += e->sub == ISC_GS_WAIT_EVENT;
		syncs += e->sub == ISC_GS_EVENT_SYNC;
	}
	cr_assert_eq(waits, STEPS);
	cr_assert_eq(syncs, STEPS);
	cr_assert_eq(other, 0);
	isc_trace_destroy(t);
	/* The real trace: 20 waits naming streams 7, 20..27, no record correlation; its
	 * 21 stream and context synchronizes name nothing. */
	t = load("kineto/simple_add_a100.pt.trace.json.gz");
	waits = other = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_GPU_SYNC && e->sub == ISC_GS_WAIT_EVENT) {
			cr_assert_eq(e->v.sync.record_corr, 0);
			cr_assert(e->v.sync.wait_stream == 7 ||
				  (e->v.sync.wait_stream >= 20 && e->v.sync.wait_stream <= 27));
			waits++;
		} else if (e->type == ISC_T_GPU_SYNC) {
			cr_assert_eq(e->sub, ISC_GS_OTHER);
			other++;
		}
	}
	cr_assert_eq(waits, 20);
	cr_assert_eq(other, 21);
	isc_trace_destroy(t);
}

/* Newer PyTorch: the wait names its cudaEventRecord (wait_on_cuda_event_record_corr_id),
 * and side is launched between the record and the wait: only the record's correlation
 * tells the producer from it. */
Test(kineto_events, record_correlation_pairs_exactly)
{
	check_two_streams("causal/events-kineto.json", 0);
}

/* Older PyTorch: wait_on_stream only; side is launched after the wait, so the last launch
 * onto the recorded stream before the wait is the producer. */
Test(kineto_events, recorded_stream_alone_ties_to_the_last_launch_before_the_wait)
{
	check_two_streams("causal/events-kineto-old.json", STEPS);
}

/* Older PyTorch with side launched before the wait: the fallback would tie the consumer to
 * side, which ended after the consumer started. The recording refutes that edge, so none
 * is made, and none is put in its place from timing. */
Test(kineto_events, an_assumed_edge_the_recording_contradicts_is_left_out)
{
	struct isc_trace *t = load("causal/events-kineto-old-late.json");
	struct isc_analysis *a = analyse_with_questions(t);
	const struct isc_causal *c = a->causal;
	cr_assert_eq(c->event_edges, 0);
	cr_assert_eq(c->event_refuted, STEPS);
	cr_assert_null(c->xdep);
	cr_assert_eq(c->whatif[0].before, c->whatif[0].after,
		     "no edge: the producer is not seen "
		     "to hold the consumer back");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* "Event Sync": the host's cudaEventSynchronize waits for exactly what its record (on
 * stream 20, after the consumer) marked. */
Test(kineto_events, event_synchronize_waits_for_its_record)
{
	check_two_streams("causal/events-kineto-sync.json", 0);
	struct isc_trace *t = load("causal/events-kineto-sync.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	cr_assert_eq(c->event_syncs, STEPS);
	cr_assert_eq(event_syncs_waiting_for(t, c, "consumer"), STEPS);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* The graph's event edges as "from>to" correlation ids, in node order. */
static void edge_list(const struct isc_trace *t, const struct isc_causal *c, char *out, size_t n)
{
	size_t k = 0;
	out[0] = '\0';
	for (uint32_t i = 0; i < c->n && k < n; i++) {
		uint32_t x = isc_graph_xdep(c, i);
		if (x != ISC_GN_NONE) {
			k += (size_t)snprintf(out + k, n - k, "%s%llu>%llu", k ? " " : "",
					      (unsigned long long)t->ev[c->node[x].ev].corr,
					      (unsigned long long)t->ev[c->node[i].ev].corr);
		}
	}
}

/*
 * The real trace (PyTorch of September 2023: wait_on_stream, no record correlation) has
 * 20 "Stream Wait Event" records in two iterations of ten. Per iteration, by hand from
 * the file (kernels by correlation id and stream):
 *   5170 stream 20 waits on 7: last launch onto 7 before it 5144, next onto 20 5181;
 *   5183 stream 20 waits on 7: 5178 -> 5188;
 *   5194 stream 7 waits on 20: 5190 -> 5213;
 *   5196..5208 stream 7 waits on streams 21..27, which run nothing: no edge;
 * and the same three in the second iteration (5586, 5599, 5610): 5560 -> 5597,
 * 5594 -> 5604, 5606 -> 5629. Six edges, all assumed, none contradicted.
 */
Test(kineto_events, the_real_trace_has_six_assumed_edges)
{
	struct isc_trace *t = load("kineto/simple_add_a100.pt.trace.json.gz");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	cr_assert_eq(c->event_edges, 6);
	cr_assert_eq(c->event_assumed, 6);
	cr_assert_eq(c->event_refuted, 0);
	cr_assert_eq(c->event_syncs, 0, "no Event Sync record in it");
	char got[512];
	edge_list(t, c, got, sizeof(got));
	cr_assert_str_eq(got, "5144>5181 5178>5188 5190>5213 5560>5597 5594>5604 5606>5629");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* The Chrome export writes the waits in Kineto's words, so that it reads back (and HTA
 * reads it) to the same edges: exact ones with their record, assumed ones without. */
static struct isc_causal_counts {
	uint64_t edges, assumed;
} exported(const char *rel)
{
	char tmp[] = "/tmp/isc-kineto-events-XXXXXX", cmd[2048];
	int fd = mkstemp(tmp);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s -f chrome -o %s %s", getenv("ISC_ANALYZE"), tmp,
		 data_path(rel));
	cr_assert_eq(run(cmd, NULL, NULL), 0, "%s", cmd);
	char *text = slurp(tmp, NULL);
	for (char *p = strstr(text, "\"cuda_sync\""); p != NULL;
	     p = strstr(p + 1, "\"cuda_sync\"")) {
		char *end = strstr(p, "}}");
		cr_assert_not_null(end);
		*end = '\0';
		cr_assert_null(strstr(p, "\"bytes\""), "a sync record has no bytes: %s", p);
		*end = '}';
	}
	free(text);
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d;
	cr_assert_eq(isc_read_file(t, tmp, NULL, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	unlink(tmp);
	struct isc_analysis *a = analyse(t, NULL);
	struct isc_causal_counts n = { a->causal->event_edges, a->causal->event_assumed };
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	return n;
}

Test(kineto_events, the_chrome_export_keeps_the_waits)
{
	struct isc_causal_counts n = exported("causal/events-kineto.json");
	cr_assert_eq(n.edges, STEPS);
	cr_assert_eq(n.assumed, 0);
	n = exported("kineto/simple_add_a100.pt.trace.json.gz");
	cr_assert_eq(n.edges, 6);
	cr_assert_eq(n.assumed, 6);
}
