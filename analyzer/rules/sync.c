/* SPDX-License-Identifier: MIT */
/* Sync family: the host synchronises with the GPU too often. */
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/rules/rules.h"

static bool blocking_sync(const struct isc_rule_ctx *c, const struct isc_ev *e)
{
	if (e->type != ISC_T_CUDA_API || e->sub != ISC_AC_SYNC) {
		return false;
	}
	/* cudaStreamWaitEvent orders streams on the device; the host does not wait. */
	return strstr(isc_trace_str(c->t, e->name), "WaitEvent") == NULL;
}

/* End of the last GPU operation that ended by t; INT64_MIN when none. */
static int64_t last_gpu_end(const struct isc_ivec *ops, int64_t t)
{
	size_t lo = 0, hi = ops->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ops->v[mid].e <= t) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo > 0 ? ops->v[lo - 1].e : INT64_MIN;
}

/* First GPU operation starting at or after t; INT64_MAX when none. */
static int64_t next_gpu(const struct isc_ivec *ops, int64_t t)
{
	size_t lo = 0, hi = ops->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ops->v[mid].s < t) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo < ops->n ? ops->v[lo].s : INT64_MAX;
}

static bool excessive(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	const struct isc_ivec *ops = isc_rules_gpu_ops(c);
	uint64_t n = 0, launches = c->launches;
	int64_t blocked = 0, bubbles = 0, prev_end = INT64_MIN;
	uint32_t top = 0;
	/* From the moment the work a sync waited for ends until the host launches again,
	 * the GPU idles: the sync drained its queue. What the sync costs is the host work
	 * in that gap (returning from the sync, computing, launching), which could have
	 * run while the GPU still had work; host waits there (I/O, sleep) would stall the
	 * GPU anyway. */
	int64_t drained = INT64_MIN;
	for (size_t i = 0; i < c->n_list[ISC_RL_SYNC_API]; i++) {
		const struct isc_ev *e = isc_rules_ev(c, ISC_RL_SYNC_API, i);
		if (!blocking_sync(c, e)) {
			continue;
		}
		if (prev_end != INT64_MIN) {
			int64_t next = next_gpu(ops, prev_end);
			int64_t stop = next < e->ts ? next : e->ts;
			bubbles += stop > drained ? isc_ivec_overlap(&a->host_active, drained, stop)
						  : 0;
		}
		prev_end = e->ts + e->dur;
		int64_t done = last_gpu_end(ops, prev_end);
		drained = done > e->ts ? done : e->ts;
		n++;
		blocked += e->dur;
		top = e->name;
	}
	if (prev_end != INT64_MIN) {
		int64_t next = next_gpu(ops, prev_end);
		bubbles += next != INT64_MAX && next > drained
				   ? isc_ivec_overlap(&a->host_active, drained, next)
				   : 0;
	}
	/* Without GPU records the refill gaps cannot be measured. */
	if (ops->n == 0 || n < isc_thr(&a->th, ISC_THR_SYNC_MIN_COUNT) ||
	    (double)n < isc_thr(&a->th, ISC_THR_SYNC_PER_LAUNCH) * (double)launches) {
		return false;
	}
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Synchronise less: remove per-operation "
		      "%s calls, order work with events (cudaEventRecord + "
		      "cudaStreamWaitEvent) and wait once per batch",
		      isc_trace_str(c->t, top));
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "Every blocking synchronisation "
		      "drains the GPU's queue: the host stops feeding it, and after the call "
		      "returns the GPU waits until new work is launched");
	isc_sugg_evidence(s,
			  "%llu blocking synchronisations for %llu launches and asynchronous "
			  "copies; the host waits "
			  "in them for %s",
			  (unsigned long long)n, (unsigned long long)launches,
			  isc_fmt_dur(b1, (double)blocked));
	isc_sugg_evidence(s,
			  "host work from the end of the synchronised work to the next GPU "
			  "operation, with the GPU idle: %s (%s of the window)",
			  isc_fmt_dur(b1, (double)bubbles),
			  isc_fmt_pct(b2, c->window_ns > 0 ? (double)bubbles / c->window_ns : 0));
	struct isc_change ch = {
		.op = ISC_WI_NO_WAIT, .sel = ISC_SEL_SYNC, .factor = 0, .after = INT64_MIN
	};
	s->improvement_pct = isc_sugg_simulate(c, &ch, s, "no synchronisation in the loop");
	return true;
}

const struct isc_rule isc_rules_sync[] = {
	{ "sync.excessive",
	  "excessive host-device synchronisation: order with events, wait "
	  "once per batch",
	  false, excessive },
	{ NULL, NULL, false, NULL },
};
