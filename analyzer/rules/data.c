/* SPDX-License-Identifier: MIT */
/* Data family: what the trace cannot tell. Advisories, with no improvement estimate. */
#include "analyzer/base/fmt.h"
#include "analyzer/rules/rules.h"

static bool dropped(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	if (a->dropped == 0 && a->cupti_dropped == 0) {
		return false;
	}
	double frac = (double)a->dropped / (double)(a->dropped + a->events_total);
	char b1[ISC_FMT_LEN];
	s->priority = frac >= isc_thr(&a->th, ISC_THR_DROPPED_FRACTION) ? "high" : "low";
	isc_sugg_text(s->action, sizeof(s->action),
		      "Re-run with a larger recording memory "
		      "cap or a shorter capture window (see libinferscope(7)) so that no event "
		      "is dropped");
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "Dropped events leave holes in the "
		      "timeline: the breakdown and every estimate above undercount what they "
		      "miss");
	if (a->dropped > 0) {
		isc_sugg_evidence(s, "%llu events dropped at the memory cap (%s of all events)",
				  (unsigned long long)a->dropped, isc_fmt_pct(b1, frac));
	}
	if (a->cupti_dropped > 0) {
		isc_sugg_evidence(s, "%llu GPU activity records dropped by CUPTI",
				  (unsigned long long)a->cupti_dropped);
	}
	s->improvement_pct = 0;
	return true;
}

static bool no_gpu(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	bool calls_cuda = a->count[ISC_T_CUDA_API] > 0;
	if (!(calls_cuda && !a->gpu_timeline) && !a->cupti_degraded) {
		return false;
	}
	s->priority = "high";
	const char *status = "", *reason = "";
	for (size_t i = 0; i < c->t->n_inputs; i++) {
		const struct isc_input *in = &c->t->inputs[i];
		if (in->cupti_status != 0 && *isc_trace_str(c->t, in->cupti_status) != 'a') {
			status = isc_trace_str(c->t, in->cupti_status);
			reason = isc_trace_str(c->t, in->cupti_reason);
		}
	}
	isc_sugg_text(s->action, sizeof(s->action),
		      "Re-run with CUPTI available to InferScope: "
		      "no other profiler (nsys, ncu, torch.profiler) holding it, and the "
		      "process's own libcupti findable");
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "Without CUPTI's activity records the "
		      "GPU side of the timeline is missing: GPU time, copies and gaps cannot be "
		      "measured, only the host's calls into CUDA");
	if (calls_cuda && !a->gpu_timeline) {
		isc_sugg_evidence(s, "%llu CUDA API calls but no GPU kernel, copy or memset record",
				  (unsigned long long)a->count[ISC_T_CUDA_API]);
	}
	if (*status != '\0') {
		isc_sugg_evidence(s, "CUPTI status '%s'%s%s", status, *reason ? ": " : "", reason);
	}
	s->improvement_pct = 0;
	return true;
}

const struct isc_rule isc_rules_data[] = {
	{ "data.dropped-events", "events were dropped: the timeline has holes", true, dropped },
	{ "data.no-gpu-timeline", "CUDA was used but the GPU timeline is missing (CUPTI)", true,
	  no_gpu },
	{ NULL, NULL, false, NULL },
};
