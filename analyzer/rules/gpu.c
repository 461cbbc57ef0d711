/* SPDX-License-Identifier: MIT */
/* GPU family: gaps the host does not explain, kernels with low theoretical occupancy. */
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/rules/rules.h"

static bool gaps(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	double other = (double)a->idle.other;
	if (a->idle.gaps == 0 || other < isc_thr(&a->th, ISC_THR_GPU_GAP_SHARE) * c->window_ns) {
		return false;
	}
	const struct isc_stream_idle *worst = &a->streams[0];
	for (size_t i = 1; i < a->n_streams; i++) {
		worst = a->streams[i].other > worst->other ? &a->streams[i] : worst;
	}
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Find what GPU stream %d waits for between "
		      "operations: cross-stream dependencies (cudaStreamWaitEvent), host "
		      "callbacks or work that was launched early but queued behind others",
		      worst->stream);
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "These gaps are neither the host "
		      "launching late (host wait) nor launch latency (kernel wait): the work was "
		      "queued but something held it back");
	/* Summed over streams: a share of the streams' time (window x streams), per stream
	 * a share of the window. */
	double streams = (double)(a->n_streams > 0 ? a->n_streams : 1);
	isc_sugg_evidence(s,
			  "GPU idle that is neither host wait nor kernel wait, summed over %zu "
			  "streams: %s (%s of the streams' time)",
			  a->n_streams, isc_fmt_dur(b1, other),
			  isc_fmt_pct(b2, c->window_ns > 0 ? other / (c->window_ns * streams) : 0));
	isc_sugg_evidence(
		s, "stream %d alone: %s over %llu gaps (%s of the window)", worst->stream,
		isc_fmt_dur(b1, (double)worst->other), (unsigned long long)worst->gaps,
		isc_fmt_pct(b2, c->window_ns > 0 ? (double)worst->other / c->window_ns : 0));
	struct isc_change ch = {
		.op = ISC_WI_NO_GPU_GAPS, .sel = ISC_SEL_ALL_GPU, .factor = 1, .after = INT64_MIN
	};
	s->improvement_pct = isc_sugg_simulate(
		c, &ch, s, "streams start each operation as soon as the previous one ends");
	return true;
}

/*
 * Kernels of the vendor libraries (cuBLAS/cuBLASLt "sm90_xmma_..." and "nvjet_...",
 * CUTLASS, cuDNN): their tile shapes trade occupancy for instruction-level
 * parallelism on purpose (a 128x128 GEMM tile at 12 % occupancy is normal), and the
 * user cannot change their launch bounds. Advising to raise their occupancy is wrong
 * advice, so the rule leaves them out.
 */
static bool library_kernel(const char *n)
{
	static const char *const marks[] = { "xmma", "cutlass", "cublas", "cudnn", "nvjet", NULL };
	if (n == NULL) {
		return false;
	}
	for (unsigned i = 0; marks[i]; i++) {
		if (strstr(n, marks[i]) != NULL) {
			return true;
		}
	}
	return false;
}

/* Time assumed to shrink in proportion up to the target occupancy. */
static double occupancy_scale(const struct isc_trace *t, const struct isc_ev *e, const void *arg)
{
	const struct isc_analysis *a = arg;
	double low = isc_thr(&a->th, ISC_THR_LOW_OCCUPANCY);
	double target = isc_thr(&a->th, ISC_THR_OCCUPANCY_TARGET);
	if (e->type != ISC_T_KERNEL || e->occupancy < 0 || e->occupancy >= low ||
	    library_kernel(isc_trace_str(t, e->name))) {
		return -1;
	}
	return (double)e->occupancy / target;
}

static bool low_occupancy(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	double low = isc_thr(&a->th, ISC_THR_LOW_OCCUPANCY);
	double target = isc_thr(&a->th, ISC_THR_OCCUPANCY_TARGET);
	int64_t kern = 0, low_ns = 0, top_ns = 0;
	double saving = 0, top_occ = 0;
	uint32_t top = 0;
	for (size_t i = 0; i < c->n_list[ISC_RL_KERNEL]; i++) {
		const struct isc_ev *e = isc_rules_ev(c, ISC_RL_KERNEL, i);
		kern += e->dur;
		if (e->occupancy < 0 || e->occupancy >= low ||
		    library_kernel(isc_trace_str(c->t, e->name))) {
			continue;
		}
		low_ns += e->dur;
		/* Time assumed to shrink in proportion up to the target occupancy. */
		saving += (double)e->dur * (1.0 - (double)e->occupancy / target);
		if (e->dur > top_ns) {
			top_ns = e->dur;
			top = e->name;
			top_occ = e->occupancy;
		}
	}
	if (kern == 0 || (double)low_ns < isc_thr(&a->th, ISC_THR_LOW_OCC_SHARE) * (double)kern) {
		return false;
	}
	(void)saving;
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Raise the occupancy of kernels such as "
		      "%s: more threads per block or blocks per launch, fewer registers "
		      "(__launch_bounds__), less shared memory per block, or larger batches",
		      isc_trace_str(c->t, top));
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "With few resident warps per SM the "
		      "GPU cannot hide memory latency; kernels below %.0f %% theoretical "
		      "occupancy leave most of each SM unused",
		      low * 100.0);
	isc_sugg_evidence(s, "kernels below %.0f %% occupancy take %s, %s of kernel time",
			  low * 100.0, isc_fmt_dur(b1, (double)low_ns),
			  isc_fmt_pct(b2, (double)low_ns / (double)kern));
	isc_sugg_evidence(s, "the longest of them runs at %.0f %% occupancy for %s",
			  top_occ * 100.0, isc_fmt_dur(b1, (double)top_ns));
	struct isc_change ch = { .op = ISC_WI_SCALE,
				 .sel = ISC_SEL_CALLBACK,
				 .scale_of = occupancy_scale,
				 .arg = a,
				 .after = INT64_MIN };
	char what[ISC_LINE];
	isc_sugg_text(what, sizeof(what),
		      "kernels below %.0f %% occupancy faster in proportion up to %.0f %%",
		      low * 100.0, target * 100.0);
	s->improvement_pct = isc_sugg_simulate(c, &ch, s, what);
	return true;
}

static bool dominant_kernels(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	const struct isc_stat_table *k = &a->stats[ISC_SG_KERNEL];
	double g = isc_share(a, a->cat_ns[ISC_CAT_GPU]);
	if (a->verdict.type != ISC_BOUND_GPU || k->n == 0) {
		return false;
	}
	int64_t all = 0;
	for (size_t i = 0; i < k->n; i++) {
		all += k->rows[i].total;
	}
	const struct isc_stat *top = &k->rows[0];
	/* What this trace shows the kernel can do: every call as fast as its 5th
	 * percentile, counted on the part of kernel time alone on the critical path. */
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN], b4[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Optimise the dominant kernels, %s first: "
		      "lower precision or tensor cores, fusion with its neighbours, a better "
		      "GEMM/convolution configuration, larger batches",
		      isc_trace_str(c->t, top->name));
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "The GPU computes for most of the "
		      "window: only faster kernels (or less work) shorten it, and the longest "
		      "kernels are where it pays");
	isc_sugg_evidence(s, "kernels run alone for %s of the window", isc_fmt_pct(b1, g));
	isc_sugg_evidence(s, "%s: %llu calls, %s, %s of kernel time (mean %s, p5 %s)",
			  isc_trace_str(c->t, top->name), (unsigned long long)top->count,
			  isc_fmt_dur(b1, (double)top->total),
			  isc_fmt_pct(b2, (double)top->total / (double)all),
			  isc_fmt_dur(b3, top->mean), isc_fmt_dur(b4, top->pct[0]));
	/* What this trace shows the kernel can do: every call as fast as its 5th
	 * percentile. */
	double f = top->mean > 0 ? top->pct[0] / top->mean : 1;
	struct isc_change ch = { .op = ISC_WI_SCALE,
				 .sel = ISC_SEL_KERNEL,
				 .pattern = isc_trace_str(c->t, top->name),
				 .factor = f < 1 ? f : 1,
				 .after = INT64_MIN };
	char what[ISC_LINE];
	isc_sugg_text(what, sizeof(what), "%s %.2f x faster (its p5 for every call)",
		      isc_trace_str(c->t, top->name), f > 0 ? 1.0 / f : 1.0);
	s->improvement_pct = isc_sugg_simulate(c, &ch, s, what);
	return true;
}

const struct isc_rule isc_rules_gpu[] = {
	{ "gpu.dominant-kernels", "GPU compute dominates: optimise the longest kernels", true,
	  dominant_kernels },
	{ "gpu.gaps", "GPU gaps that are neither host wait nor launch latency", false, gaps },
	{ "gpu.low-occupancy", "kernels with low theoretical occupancy", false, low_occupancy },
	{ NULL, NULL, false, NULL },
};
