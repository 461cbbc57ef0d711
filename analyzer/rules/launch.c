/* SPDX-License-Identifier: MIT */
/* Launch family: many tiny kernels whose launches cost more than their work. */
#include <math.h>

#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/rules/rules.h"

static bool tiny_kernels(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	const struct isc_launch_stats *l = &a->launch;
	if (l->pairs == 0 || l->short_kernels < isc_thr(&a->th, ISC_THR_TINY_KERNEL_MIN_COUNT) ||
	    (double)l->short_kernels <
		    isc_thr(&a->th, ISC_THR_TINY_KERNEL_FRACTION) * (double)l->pairs) {
		return false;
	}
	/* What launches cost on the critical path: the GPU idle before each short kernel
	 * (at most its launch call), or the framework time spent in launch calls. */
	const struct isc_stat_table *api = &a->stats[ISC_SG_CUDA_API];
	int64_t api_total = 0;
	for (size_t i = 0; i < api->n; i++) {
		api_total += api->rows[i].total;
	}
	double fw_launch = api_total > 0 ? (double)a->cat_ns[ISC_CAT_FRAMEWORK] *
						   (double)l->launch_total_ns / (double)api_total
					 : 0;
	double saving = fmax((double)l->short_kernel_gap_ns, fw_launch);
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Cut launch overhead: capture the "
		      "repeated sequence of %llu short kernels in a CUDA Graph "
		      "(torch.cuda.graphs / torch.compile mode=\"reduce-overhead\") or fuse them",
		      (unsigned long long)l->short_kernels);
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "Each launch costs the host several "
		      "microseconds; kernels shorter than their launch leave the GPU waiting for "
		      "the next one. A graph launches the whole sequence with one call");
	isc_sugg_evidence(s,
			  "%llu of %llu launches (%s) are short kernels: GPU time below the "
			  "launch call's",
			  (unsigned long long)l->short_kernels, (unsigned long long)l->pairs,
			  isc_fmt_pct(b1, (double)l->short_kernels / (double)l->pairs));
	isc_sugg_evidence(s, "median launch call %s, median GPU time %s, median launch delay %s",
			  isc_fmt_dur(b1, l->median_launch_ns), isc_fmt_dur(b2, l->median_gpu_ns),
			  isc_fmt_dur(b3, l->median_delay_ns));
	isc_sugg_evidence(s,
			  "GPU idle before short kernels: %s; host in launch calls with the "
			  "GPU idle: %s",
			  isc_fmt_dur(b1, (double)l->short_kernel_gap_ns),
			  isc_fmt_dur(b2, fw_launch));
	struct isc_change ch = {
		.op = ISC_WI_GRAPH, .sel = ISC_SEL_LAUNCH, .factor = 0, .after = INT64_MIN
	};
	(void)saving;
	char what[ISC_LINE];
	isc_sugg_text(what, sizeof(what),
		      "launch calls cost nothing, a CUDA graph replays the kernels %.1f us "
		      "apart (launch.graph_node_gap_us)",
		      isc_thr(&a->th, ISC_THR_GRAPH_NODE_GAP_US));
	s->improvement_pct = isc_sugg_simulate(c, &ch, s, what);
	return true;
}

const struct isc_rule isc_rules_launch[] = {
	{ "launch.tiny-kernels",
	  "launch-bound: many kernels shorter than their launch: CUDA "
	  "Graphs or fusion",
	  false, tiny_kernels },
	{ NULL, NULL, false, NULL },
};
