/* SPDX-License-Identifier: MIT */
/* Allocation family: device allocations in the steady state, host allocation churn. */
#include <math.h>

#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/rules/rules.h"

static bool device_steady(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	const struct isc_ivec *ops = isc_rules_gpu_ops(c);
	int64_t warm = a->window.start +
		       (int64_t)(isc_thr(&a->th, ISC_THR_WARMUP_FRACTION) * c->window_ns);
	uint64_t n = 0;
	int64_t ns = 0, idle = 0;
	uint32_t top = 0;
	for (size_t i = 0; i < c->n_list[ISC_RL_ALLOC_API]; i++) {
		const struct isc_ev *e = isc_rules_ev(c, ISC_RL_ALLOC_API, i);
		if (e->ts < warm) {
			continue;
		}
		n++;
		ns += e->dur;
		/* cudaFree waits for the device; only the part with the GPU idle is lost. */
		idle += e->dur - isc_ivec_overlap(ops, e->ts, e->ts + e->dur);
		top = e->sub == ISC_AC_MALLOC || top == 0 ? e->name : top;
	}
	if (n < isc_thr(&a->th, ISC_THR_ALLOC_MIN_COUNT)) {
		return false;
	}
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Stop allocating device memory in the "
		      "steady state (%s): reuse buffers across iterations, use a caching "
		      "allocator or cudaMallocAsync with a memory pool",
		      isc_trace_str(c->t, top));
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "cudaMalloc and cudaFree are slow "
		      "driver calls and cudaFree synchronises the device, so every iteration "
		      "pays them and drains the GPU");
	isc_sugg_evidence(s, "%llu device allocation/free calls after the warm-up take %s",
			  (unsigned long long)n, isc_fmt_dur(b1, (double)ns));
	isc_sugg_evidence(s, "the GPU is idle for %s of that time (%s of the window)",
			  isc_fmt_dur(b1, (double)idle),
			  isc_fmt_pct(b2, c->window_ns > 0 ? (double)idle / c->window_ns : 0));
	struct isc_change ch = { .op = ISC_WI_NO_WAIT,
				 .sel = ISC_SEL_API_CLASS,
				 .sub = (1u << ISC_AC_MALLOC) | (1u << ISC_AC_FREE),
				 .after = warm };
	s->improvement_pct = isc_sugg_simulate(
		c, &ch, s, "no device allocation or free after the warm-up (buffers reused)");
	return true;
}

static bool host_churn(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	uint64_t calls = 0, sampled = 0, bytes = 0;
	for (size_t i = 0; i < c->t->n_inputs; i++) {
		calls += c->t->inputs[i].malloc_calls;
		bytes += c->t->inputs[i].malloc_bytes;
	}
	/* Time per allocation comes from the sampled allocation events' durations. */
	int64_t sample_ns = 0;
	for (size_t i = 0; i < c->n_list[ISC_RL_HOST_ALLOC]; i++) {
		sampled++;
		sample_ns += isc_rules_ev(c, ISC_RL_HOST_ALLOC, i)->dur;
	}
	double secs = c->window_ns / 1e9;
	double rate = secs > 0 ? (double)calls / secs : 0;
	if (rate < isc_thr(&a->th, ISC_THR_MALLOC_RATE) || sampled == 0 || sample_ns == 0) {
		return false;
	}
	double est = (double)sample_ns / (double)sampled * (double)calls;
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Reduce host allocation churn: reuse "
		      "buffers and tensors across requests, preallocate, or use a faster "
		      "allocator (jemalloc/tcmalloc)");
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "Hundreds of thousands of small "
		      "allocations per second cost CPU time on the critical path and fragment "
		      "the heap");
	isc_sugg_evidence(s, "%llu host allocations (%s) in the window: %.0f per second",
			  (unsigned long long)calls, isc_fmt_bytes(b1, (double)bytes), rate);
	isc_sugg_evidence(s, "sampled allocations take %s each on average: about %s in all",
			  isc_fmt_dur(b1, (double)sample_ns / (double)sampled),
			  isc_fmt_dur(b2, est));
	/* Allocations are sampled, so their time cannot be re-timed one by one: the estimate
	 * is bounded by the simulation of host code that costs nothing at all. */
	struct isc_change ch = {
		.op = ISC_WI_SCALE, .sel = ISC_SEL_HOST_CODE, .factor = 0, .after = INT64_MIN
	};
	double bound = isc_sugg_simulate(c, &ch, s, "host code costs nothing (upper bound)");
	s->improvement_pct = fmin(isc_rules_pct(c, est > c->window_ns ? c->window_ns : est), bound);
	return true;
}

const struct isc_rule isc_rules_alloc[] = {
	{ "alloc.device-steady-state",
	  "device allocation in the steady state: caching "
	  "allocator or cudaMallocAsync pools",
	  false, device_steady },
	{ "alloc.host-churn", "host allocation churn: reuse buffers or a faster allocator", false,
	  host_churn },
	{ NULL, NULL, false, NULL },
};
