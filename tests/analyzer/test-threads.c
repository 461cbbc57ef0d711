/* SPDX-License-Identifier: MIT */
/* The mechanisms real multi-threaded runs need (issue 21): pollers, untraced time,
 * hand-offs between threads, blocked Kineto calls told from their GPU partners, stream
 * and communication waits. Built traces of data/causal/ (make-causal.py) and the real
 * ones of data/kineto/ (their README). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "analyzer/causal/graph.h"
#include "helpers.h"

static struct isc_change scale(enum isc_selector sel, const char *pattern, double f)
{
	return (struct isc_change){
		.op = ISC_WI_SCALE, .sel = sel, .pattern = pattern, .factor = f, .after = INT64_MIN
	};
}

static double gain(const struct isc_trace *t, const struct isc_analysis *a, struct isc_change ch)
{
	int64_t b, e;
	double g;
	cr_assert_eq(isc_whatif_run(t, a, &ch, &b, &e, &g), 0);
	return g;
}

/* The latest end of the trace's events of one type, and in *first their earliest start. */
static int64_t span_of(const struct isc_trace *t, uint8_t type, int64_t *first)
{
	int64_t last = 0;
	*first = INT64_MAX;
	for (size_t i = 0; i < t->n; i++) {
		if (t->ev[i].type == type) {
			*first = t->ev[i].ts < *first ? t->ev[i].ts : *first;
			last = t->ev[i].ts + t->ev[i].dur > last ? t->ev[i].ts + t->ev[i].dur
								 : last;
		}
	}
	return last;
}

/* What every trace must hold: the path fits the window, ends where the run's work ends
 * and never on a poller; an unchanged graph re-times to the recording. */
static void invariants(const struct isc_trace *t, const struct isc_analysis *a)
{
	const struct isc_causal *c = a->causal;
	cr_assert_leq(c->path_ns, a->window.end - a->window.start);
	int64_t end = a->window.start;
	for (size_t i = 0; i < c->n; i++) {
		if (!(c->node[i].flags & (ISC_GN_POLL | ISC_GN_IDLE | ISC_GN_TEARDOWN)) &&
		    (c->samples_only || (c->node[i].flags & ISC_GN_GPU) ||
		     t->ev[c->node[i].ev].type != ISC_T_CPU_SAMPLE)) {
			end = c->node[i].t1 > end ? c->node[i].t1 : end;
		}
	}
	cr_assert_eq(c->end, end);
	/* A node's start is read from its event and the segment before it: each segment lies
	 * in its event, after the one before it on its thread. */
	for (size_t i = 0; i < c->n; i++) {
		const struct isc_gnode *g = &c->node[i];
		int64_t t0 = isc_gn_t0(c, g);
		cr_assert_leq(t0, g->t1);
		cr_assert_geq(t0, t->ev[g->ev].ts);
		if (!(g->flags & (ISC_GN_GPU | ISC_GN_FIRST))) {
			cr_assert_eq(c->node[i - 1].lane, g->lane);
			cr_assert_geq(t0, c->node[i - 1].t1);
		}
	}
	/* The pieces keep their starts only: the path must be contiguous to add up. */
	int64_t sum = 0;
	for (size_t i = 0; i < c->n_pieces; i++) {
		cr_assert_gt(isc_cp_piece_end(c, i), c->pieces[i].s);
		sum += isc_cp_piece_end(c, i) - c->pieces[i].s;
	}
	cr_assert_eq(sum, c->path_ns);
	if (c->n_pieces > 0) {
		const struct isc_cp_piece *p = &c->pieces[c->n_pieces - 1];
		if (p->ev != ISC_GN_NONE && !p->gpu) {
			for (uint32_t k = 0; k < c->n_pollers && k < 4; k++) {
				cr_assert_neq(t->ev[p->ev].thread, c->poller[k],
					      "the path ends on a poller");
			}
		}
	}
	cr_assert_eq(gain(t, a, scale(ISC_SEL_ALL_GPU, NULL, 1)), 0.0);
	cr_assert_leq(isc_cp_gpu(c) + isc_cp_copies(c) + isc_cp_host(c), c->path_ns);
}

/* A thread the exit woke (the CUDA runtime's helper, posted by its atexit teardown) does
 * not end the run: the path ends with the main thread's last step, never in the wait. */
Test(threads, the_exit_teardown_never_ends_the_run)
{
	struct isc_trace *t = load("causal/exit-teardown.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	int64_t first_step, last_step = span_of(t, ISC_T_SCOPE, &first_step);
	size_t teardown = 0;
	for (size_t i = 0; i < c->n; i++) {
		teardown += (c->node[i].flags & ISC_GN_TEARDOWN) != 0;
	}
	cr_assert_eq(teardown, 1, "the ioctl after the wait, only it: %zu", teardown);
	cr_assert_eq(c->end, last_step, "%lld %lld", (long long)c->end, (long long)last_step);
	cr_assert_eq(c->path_ns, last_step - first_step, "the steps, end to end: %lld",
		     (long long)c->path_ns);
	cr_assert_eq(c->cat[ISC_CP_HOST_WAIT], 0, "the wait is not on the path");
	/* Halving the steps' host work halves the path's steps. */
	int64_t b, e;
	double g;
	struct isc_change half = scale(ISC_SEL_SCOPE, "step", 0.5);
	cr_assert_eq(isc_whatif_run(t, a, &half, &b, &e, &g), 0);
	cr_assert_eq(b - e, INT64_C(20) * 1000000, "%lld", (long long)(b - e));
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* A thread that only the clock wakes (its timed waits end by their timeout) is a poller
 * after two ticks, too few for a period: its last tick does not end the run. */
Test(threads, a_thread_woken_by_timeouts_is_a_poller)
{
	struct isc_trace *t = load("causal/ticker.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_eq(c->n_pollers, 1);
	int64_t first_step, last_step = span_of(t, ISC_T_SCOPE, &first_step);
	cr_assert_eq(c->end, last_step, "%lld %lld", (long long)c->end, (long long)last_step);
	cr_assert_eq(c->cat[ISC_CP_HOST_WAIT], 0, "no timed wait on the path");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, a_poller_never_ends_the_run)
{
	struct isc_trace *t = load("causal/poller.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_eq(c->n_pollers, 1);
	/* The run ends with the last step's scope, 10 us after its kernel. */
	int64_t first_gpu, last_gpu = span_of(t, ISC_T_KERNEL, &first_gpu);
	cr_assert_eq(c->end, last_gpu + 10000, "%lld %lld", (long long)c->end, (long long)last_gpu);
	/* The 11 ms after it are not on the path: kernels are 6 of each 8.02 ms step. */
	cr_assert_gt(isc_cp_gpu(c), c->path_ns * 7 / 10);
	/* Halving the kernels saves 50 x 3 ms, whatever the poller does. */
	struct isc_change half = scale(ISC_SEL_ALL_GPU, NULL, 0.5);
	int64_t b, e;
	double g;
	cr_assert_eq(isc_whatif_run(t, a, &half, &b, &e, &g), 0);
	cr_assert_eq(b - e, INT64_C(50) * 3000000, "%lld", (long long)(b - e));
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, untraced_time_is_not_host_computing)
{
	struct isc_trace *t = load("causal/untraced.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	/* 19 gaps of 18 ms between the 20 steps */
	cr_assert_geq(c->cat[ISC_CP_UNTRACED], INT64_C(19) * 18000000);
	cr_assert_geq(c->untraced, INT64_C(19) * 18000000);
	cr_assert_lt(isc_cp_host(c), c->path_ns / 10);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, cpu_samples_show_untraced_time_computing)
{
	struct isc_trace *t = load("causal/untraced-sampled.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_eq(c->cat[ISC_CP_UNTRACED], 0);
	cr_assert_eq(c->untraced, 0);
	cr_assert_geq(c->cat[ISC_CP_HOST], INT64_C(19) * 20000000);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, backward_waits_for_the_autograd_thread)
{
	struct isc_trace *t = load("causal/handoff-kineto.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_eq(c->handoffs, 10);
	cr_assert_eq(c->wakes, 10);
	/* The autograd thread's operators are on the path, not the scope's self time. */
	int64_t mm = 0, bw = 0;
	for (int i = 0; i < ISC_CP_TOP; i++) {
		const char *n = isc_trace_str(t, c->top[i].name);
		mm += strcmp(n, "MmBackward0") == 0 ? c->top[i].ns : 0;
		bw += strcmp(n, "## backward ##") == 0 ? c->top[i].ns : 0;
	}
	cr_assert_geq(mm, INT64_C(10) * 4 * 1890000); /* less the launches */
	cr_assert_lt(bw, INT64_C(10) * 100000);
	/* 10 x 4 x 0.95 ms off a 95.7 ms window */
	double g = gain(t, a, scale(ISC_SEL_SCOPE, "MmBackward0", 0.5));
	cr_assert_gt(g, 38.0, "%f", g);
	cr_assert_lt(g, 41.0, "%f", g);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* The autograd thread mostly waits for the GPU (a synchronous copy after its kernel), so
 * its recorded work fills a sliver of `## backward ##`; the fwdbwd flow from the step's
 * aten::linear to MmBackward0 says the scope waits for it all the same. */
Test(threads, a_fwdbwd_flow_makes_backward_wait_for_the_autograd_thread)
{
	struct isc_trace *t = load("causal/handoff-fwdbwd.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_eq(c->handoffs, 10);
	int64_t bw = 0;
	for (int i = 0; i < ISC_CP_TOP; i++) {
		const char *n = isc_trace_str(t, c->top[i].name);
		bw += strcmp(n, "## backward ##") == 0 ? c->top[i].ns : 0;
	}
	/* the scope's self time is a wait, not host computing: the 6 ms kernels are the path */
	cr_assert_lt(bw, INT64_C(10) * 100000);
	cr_assert_geq(c->cat[ISC_CP_KERNEL], INT64_C(10) * 6000000);
	cr_assert_lt(c->cat[ISC_CP_HOST], c->path_ns / 4);
	/* 10 x 3 ms of backward kernels (and 0.1 ms of the others) off an 80.9 ms window */
	double g = gain(t, a, scale(ISC_SEL_ALL_GPU, NULL, 0.5));
	cr_assert_gt(g, 36.0, "%f", g);
	cr_assert_lt(g, 40.0, "%f", g);
	cr_assert_eq(a->verdict.type, ISC_BOUND_GPU);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, a_condition_wait_is_tied_to_the_thread_that_released_it)
{
	struct isc_trace *t = load("causal/handoff-wait.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_eq(c->handoffs, 20);
	cr_assert_eq(c->wakes, 20);
	cr_assert_lt(c->cat[ISC_CP_HOST_WAIT], c->path_ns / 10);
	/* 20 x 2.5 ms off a 108 ms window */
	double g = gain(t, a, scale(ISC_SEL_SCOPE, "decode", 0.5));
	cr_assert_gt(g, 45.0, "%f", g);
	cr_assert_lt(g, 47.0, "%f", g);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* A synchronisation removed (--what-if no-wait:NAME) is not a wait made free: the wait
 * scaled by 0 still ends when the worker releases it, the wait removed does not. */
Test(threads, a_wait_removed_no_longer_waits_for_the_other_thread)
{
	struct isc_trace *t = load("causal/handoff-wait.json");
	struct isc_analysis *a = analyse(t, NULL);
	invariants(t, a);
	struct isc_change ch;
	char pat[64], err[256];
	cr_assert_eq(isc_whatif_parse("no-wait:pthread_cond_wait", &ch, pat, sizeof(pat), err,
				      sizeof(err)),
		     0, "%s", err);
	/* The worker's 20 decodes back to back, no longer 5.4 ms apart: 101.1 ms of work
	 * instead of 109 ms, off a 108 ms window. */
	double g = gain(t, a, ch);
	cr_assert_gt(g, 6.5, "%f", g);
	cr_assert_lt(g, 8.0, "%f", g);
	double scaled = gain(t, a, scale(ISC_SEL_CALL, "pthread_cond_wait", 0));
	cr_assert_lt(scaled, 1.0, "%f", scaled);
	cr_assert_eq(isc_whatif_parse("no-wait:", &ch, pat, sizeof(pat), err, sizeof(err)),
		     -EINVAL);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, a_kineto_copy_that_returns_with_its_operation_waited)
{
	struct isc_trace *t = load("causal/sync-copy-kineto.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_eq(c->inferred_waits, 20);
	cr_assert_eq(c->copy_waits, 20);
	cr_assert_lt(isc_cp_host(c), c->path_ns / 5);
	double g = gain(t, a, scale(ISC_SEL_ALL_GPU, NULL, 0.5));
	cr_assert_gt(g, 40.0, "%f", g);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, launches_blocked_below_the_deepest_queue_wait)
{
	struct isc_trace *t = load("causal/queue-saturated.json.gz");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_gt(c->queue_full, 2000);
	cr_assert_geq(c->max_queue_depth, 1000);
	/* The GPU runs from the first launch to the end: halving it halves the run. */
	double g = gain(t, a, scale(ISC_SEL_ALL_GPU, NULL, 0.5));
	cr_assert_gt(g, 45.0, "%f", g);
	cr_assert_leq(g, 50.0, "%f", g);
	cr_assert_lt(gain(t, a, scale(ISC_SEL_LAUNCH, NULL, 0.5)), 0.1);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, communication_and_stream_gaps_are_not_host_time)
{
	struct isc_trace *t = load("causal/comm-kineto.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_geq(c->cat[ISC_CP_COMM_WAIT], INT64_C(20) * 4000000);
	cr_assert_lt(isc_cp_host(c), c->path_ns / 20);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	/* Four streams the GPU runs one after the other: each kernel starts as another
	 * stream's ends, long after its own stream and launch let it (no cuda_sync records),
	 * so the path runs through every kernel: GPU work, never the host. */
	t = load("causal/streams-threads.json");
	a = analyse(t, NULL);
	invariants(t, a);
	cr_assert_geq(a->causal->cat[ISC_CP_KERNEL], INT64_C(40) * 1000000);
	cr_assert_lt(isc_cp_host(a->causal), a->causal->path_ns / 20);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	/* Stream 20 waits for stream 7's producer through an event. */
	t = load("causal/events-kineto.json");
	a = analyse(t, NULL);
	invariants(t, a);
	cr_assert_gt(a->causal->cat[ISC_CP_STREAM_WAIT], 0);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* A Kineto trace without cuda_sync records: the NCCL stream waits for the backward kernel,
 * the compute stream for the all-reduce; only the order of their operations says so. */
Test(threads, stream_waits_without_records_are_told_from_order)
{
	struct isc_trace *t = load("causal/stream-wait-kineto.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_eq(c->event_ordered, 20);
	cr_assert_eq(c->event_edges, 20);
	/* the all-reduces are on the path, and the waits are the streams', never gaps */
	cr_assert_geq(c->cat[ISC_CP_COMM], INT64_C(10) * 3000000);
	cr_assert_gt(c->cat[ISC_CP_COMM_WAIT], 0);
	cr_assert_gt(c->cat[ISC_CP_STREAM_WAIT], 0);
	cr_assert_lt(c->cat[ISC_CP_GPU_GAP] + c->cat[ISC_CP_LAUNCH], c->path_ns / 100);
	cr_assert_lt(isc_cp_host(c), c->path_ns / 50);
	/* a 2 x faster all-reduce shortens each 5.5 ms step by 1.5 ms */
	double g = gain(t, a, scale(ISC_SEL_KERNEL, "nccl*", 0.5));
	cr_assert_gt(g, 25.0, "nccl what-if gains %.2f %%", g);
	cr_assert_lt(g, 28.0, "nccl what-if gains %.2f %%", g);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	/* where waits are recorded, none is assumed from order */
	t = load("causal/events-kineto-old.json");
	a = analyse(t, NULL);
	cr_assert_eq(a->causal->event_ordered, 0);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* The real traces of data/kineto/ (README): the failures it describes, on the general
 * mechanisms. */
Test(threads, real_nccl_rank)
{
	struct isc_trace *t = load("kineto/nccl_a100_rank0.pt.trace.json.gz");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	/* threads that only call cudaEventQuery */
	cr_assert_geq(c->n_pollers, 1);
	/* synchronous D2H cudaMemcpyAsync calls */
	cr_assert_gt(c->inferred_waits, 10);
	cr_assert_gt(c->copy_waits, 10);
	/* ## backward ## waits for the autograd thread */
	cr_assert_gt(c->handoffs, 0);
	/* no cuda_sync records: the NCCL streams' waits for the compute stream and back are
	 * told from order; the all-reduces are on the path, the unexplained stream gaps
	 * down from 81 % of it */
	cr_assert_gt(c->event_ordered, 50);
	cr_assert_gt(c->cat[ISC_CP_COMM], INT64_C(100000000));
	cr_assert_lt(c->cat[ISC_CP_GPU_GAP], c->path_ns * 7 / 10);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, real_mi250_launch_on_the_second_thread)
{
	struct isc_trace *t = load("kineto/amd_mi250.pt.trace.json.gz");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_causal *c = a->causal;
	invariants(t, a);
	cr_assert_geq(c->handoffs, 1);
	int64_t launch = 0, step = 0;
	for (int i = 0; i < ISC_CP_TOP; i++) {
		const char *n = isc_trace_str(t, c->top[i].name);
		launch += strcmp(n, "hipLaunchKernel") == 0 ? c->top[i].ns : 0;
		step += strcmp(n, "ProfilerStep#1") == 0 ? c->top[i].ns : 0;
	}
	/* the 6.5 ms hipLaunchKernel of the autograd thread, not the step's self time */
	cr_assert_gt(launch, 6500000);
	cr_assert_lt(step, 1000000);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(threads, real_simple_add_keeps_the_invariants)
{
	struct isc_trace *t = load("kineto/simple_add_a100.pt.trace.json.gz");
	struct isc_analysis *a = analyse(t, NULL);
	invariants(t, a);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* The path's figures per thread come from its pieces; an analysis that keeps none (no
 * output draws them) has the same figures. */
Test(threads, the_path_per_thread_without_its_pieces)
{
	static const char *const traces[] = { "causal/handoff-wait.json", "causal/poller.json",
					      "causal/handoff-kineto.json",
					      "causal/streams-threads.json" };
	bool any = false; /* host computing on some path */
	for (size_t j = 0; j < sizeof(traces) / sizeof(traces[0]); j++) {
		struct isc_trace *t = load(traces[j]);
		struct isc_analysis *a = analyse(t, NULL);
		struct isc_analyze_opts o = { .no_path_pieces = true };
		struct isc_analysis *b = analyse(t, &o);
		const struct isc_causal *c = a->causal, *d = b->causal;
		cr_assert_gt(c->n_pieces, 1, "%s", traces[j]);
		cr_assert_null(d->pieces);
		cr_assert_eq(d->n_pieces, 0);
		cr_assert_eq(d->path_ns, c->path_ns);
		for (size_t k = 0; k < t->n_threads; k++) {
			int64_t host = 0;
			bool on = false;
			for (size_t i = 0; i < c->n_pieces; i++) {
				const struct isc_cp_piece *p = &c->pieces[i];
				if (p->ev != ISC_GN_NONE && t->ev[p->ev].thread == k) {
					on |= !p->gpu;
					host += p->cat == ISC_CP_HOST
							? isc_cp_piece_end(c, i) - p->s
							: 0;
				}
			}
			any |= host > 0;
			cr_assert_eq(c->path_thread[k].host_ns, host, "%s", traces[j]);
			cr_assert_eq(c->path_thread[k].on_path, on, "%s", traces[j]);
			cr_assert_eq(d->path_thread[k].host_ns, host, "%s", traces[j]);
			cr_assert_eq(d->path_thread[k].on_path, on, "%s", traces[j]);
		}
		isc_analysis_destroy(b);
		isc_analysis_destroy(a);
		isc_trace_destroy(t);
	}
	cr_assert(any, "no host computing on any path");
}
