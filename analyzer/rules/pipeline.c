/* SPDX-License-Identifier: MIT */
/* Pipeline family: host and GPU both busy at once, no single bottleneck. */
#include <math.h>

#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/rules/rules.h"

static bool overlapped(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	double to = isc_thr(&a->th, ISC_THR_OVERLAP_BUSY_SHARE);
	double gb = isc_share(a, a->gpu_busy_ns), hb = isc_share(a, a->host_busy_ns);
	/* The verdict tells a pipeline from a bound whose other side only looks busy
	 * (blocked in launches on a full queue). */
	if (gb < to || hb < to || strcmp(a->verdict.cause, "overlapped_pipeline") != 0) {
		return false;
	}
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "No single bottleneck: host preprocessing "
		      "and GPU work overlap at similar cost. Speed up both sides together (a "
		      "faster preprocessing and faster kernels, or more of both: batching, a "
		      "second stream or process); speeding up one alone gains little");
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "In a pipeline the slower stage sets "
		      "the pace: making one side faster only helps until it waits for the other");
	isc_sugg_evidence(s,
			  "the GPU is busy for %s of the window and the host computes for "
			  "%s, mostly at the same time",
			  isc_fmt_pct(b1, gb), isc_fmt_pct(b2, hb));
	isc_sugg_evidence(s, "speeding up one side alone gains at most the difference: %s",
			  isc_fmt_pct(b1, fabs(gb - hb)));
	struct isc_change gpu = {
		.op = ISC_WI_SCALE, .sel = ISC_SEL_ALL_GPU, .factor = 0.5, .after = INT64_MIN
	};
	struct isc_change both = { .op = ISC_WI_SCALE,
				   .sel = ISC_SEL_HOST_CODE,
				   .factor = 0.5,
				   .after = INT64_MIN,
				   .also = &gpu };
	s->improvement_pct =
		isc_sugg_simulate(c, &both, s, "host code and GPU work both 2 x faster");
	s->priority = "medium";
	return true;
}

const struct isc_rule isc_rules_pipeline[] = {
	{ "pipeline.overlapped", "host and GPU both busy and overlapped: no single bottleneck",
	  true, overlapped },
	{ NULL, NULL, false, NULL },
};
