/* SPDX-License-Identifier: MIT */
/*
 * Waits on CUDA events in Kineto input: what the reader keeps of them, on the traces of
 * data/causal/events-kineto*.json (make-causal.py: stream 7's `producer` is recorded,
 * stream 20's `consumer` waits for it, `side` runs on stream 7 after the record and
 * nothing waits for it; 20 steps) and on the real PyTorch trace of data/kineto/.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"

#define STEPS 20

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
