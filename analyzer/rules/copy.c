/* SPDX-License-Identifier: MIT */
/* Copy family: pageable host memory, synchronous copies, copies not overlapped. */
#include <math.h>
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/rules/rules.h"

struct copy_sums {
	uint64_t n, bytes;
	int64_t ns;
};

static void sum_copies(const struct isc_rule_ctx *c, uint16_t flag, struct copy_sums *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < c->n_list[ISC_RL_COPY]; i++) {
		const struct isc_ev *e = isc_rules_ev(c, ISC_RL_COPY, i);
		if (e->flags & flag) {
			s->n++;
			s->bytes += e->v.bytes;
			s->ns += e->dur;
		}
	}
}

static double gbps(const struct copy_sums *s)
{
	return s->ns > 0 ? (double)s->bytes / (double)s->ns : 0; /* bytes/ns = GB/s */
}

static bool pageable(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	struct copy_sums pg, pin;
	sum_copies(c, ISC_F_PAGEABLE, &pg);
	sum_copies(c, ISC_F_PINNED, &pin);
	double share = c->window_ns > 0 ? (double)pg.ns / c->window_ns : 0;
	if (pg.n == 0 || pg.bytes == 0 || share < isc_thr(&c->a->th, ISC_THR_COPY_MIN_SHARE)) {
		return false;
	}
	double bw = gbps(&pg);
	double ref = pin.n > 0 && gbps(&pin) > bw ? gbps(&pin)
						  : bw * isc_thr(&c->a->th, ISC_THR_PINNED_SPEEDUP);
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Use pinned (page-locked) host memory for "
		      "the %llu pageable copies: cudaMallocHost/cudaHostAlloc buffers, or "
		      "pin_memory=True in a PyTorch DataLoader",
		      (unsigned long long)pg.n);
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "A copy from pageable memory is "
		      "staged by the driver through a pinned bounce buffer and runs "
		      "synchronously at a fraction of the bus bandwidth; pinned memory is copied "
		      "by DMA directly and can overlap with kernels");
	isc_sugg_evidence(s, "%llu pageable copies move %s in %s (%.2f GB/s), %s of the window",
			  (unsigned long long)pg.n, isc_fmt_bytes(b1, (double)pg.bytes),
			  isc_fmt_dur(b2, (double)pg.ns), bw, isc_fmt_pct(b3, share));
	if (pin.n > 0) {
		isc_sugg_evidence(s, "pinned copies in this trace reach %.2f GB/s", gbps(&pin));
	} else {
		isc_sugg_evidence(s,
				  "no pinned copy to measure: pinned assumed %.1fx faster "
				  "(copy.pinned_speedup)",
				  isc_thr(&c->a->th, ISC_THR_PINNED_SPEEDUP));
	}
	struct isc_change ch = {
		.op = ISC_WI_SCALE, .sel = ISC_SEL_PAGEABLE, .factor = bw / ref, .after = INT64_MIN
	};
	char what[ISC_LINE];
	isc_sugg_text(what, sizeof(what), "pageable copies at %.2f GB/s (pinned)", ref);
	s->improvement_pct = isc_sugg_simulate(c, &ch, s, what);
	return true;
}

static bool synchronous(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	uint64_t n = 0;
	int64_t ns = 0;
	for (size_t i = 0; i < c->n_list[ISC_RL_MEMCPY_API]; i++) {
		const struct isc_ev *e = isc_rules_ev(c, ISC_RL_MEMCPY_API, i);
		const char *name = isc_trace_str(c->t, e->name);
		if ((e->flags & ISC_F_BLOCKED) || strstr(name, "Async") == NULL) {
			n++;
			ns += e->dur;
		}
	}
	double share = c->window_ns > 0 ? (double)ns / c->window_ns : 0;
	if (n == 0 || share < isc_thr(&a->th, ISC_THR_COPY_MIN_SHARE)) {
		return false;
	}
	/*
	 * What an asynchronous copy lets overlap: host work that now runs with the GPU idle
	 * (it could run while the host would otherwise wait), and kernels beside the copies
	 * that run alone on the GPU (on another stream), at most as long as those copies.
	 * Kernels the host already waits for while blocked gain nothing by it.
	 */
	double copies = (double)(a->cat_ns[ISC_CAT_H2D] + a->cat_ns[ISC_CAT_D2H]);
	double other =
		(double)a->cat_ns[ISC_CAT_CPU] + fmin((double)a->cat_ns[ISC_CAT_GPU], copies);
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Make the %llu synchronous copies "
		      "asynchronous (cudaMemcpyAsync on a non-default stream, from pinned "
		      "memory) so that the host and the GPU keep working during transfers",
		      (unsigned long long)n);
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "A synchronous cudaMemcpy blocks "
		      "the calling thread until the transfer ends and serialises it with every "
		      "kernel on the legacy default stream");
	isc_sugg_evidence(s,
			  "%llu synchronous copy calls block the host for %s (%s of the "
			  "window)",
			  (unsigned long long)n, isc_fmt_dur(b1, (double)ns),
			  isc_fmt_pct(b2, share));
	isc_sugg_evidence(s,
			  "work that could run beside them: %s (host computing with the GPU idle, "
			  "and kernels that could overlap the copies alone on the GPU)",
			  isc_fmt_dur(b1, other));
	struct isc_change ch = {
		.op = ISC_WI_ASYNC, .sel = ISC_SEL_COPY_WAIT, .factor = 1, .after = INT64_MIN
	};
	s->improvement_pct = isc_sugg_simulate(
		c, &ch, s, "synchronous copies return at once, the host does not wait");
	(void)other;
	return true;
}

static bool no_overlap(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	double minshare = isc_thr(&a->th, ISC_THR_COPY_MIN_SHARE);
	double copy = (double)a->copy_union_ns, kern = (double)a->cat_ns[ISC_CAT_GPU];
	double overlap = copy > 0 ? (double)a->copy_overlap_ns / copy : 0;
	if (copy < minshare * c->window_ns || kern < minshare * c->window_ns ||
	    overlap >= isc_thr(&a->th, ISC_THR_OVERLAP_MAX)) {
		return false;
	}
	double exposed = (double)(a->cat_ns[ISC_CAT_H2D] + a->cat_ns[ISC_CAT_D2H]);
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Overlap copies with compute: copy the "
		      "next batch on a second stream while the current one computes (double "
		      "buffering, pinned memory, cudaMemcpyAsync)");
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "The GPU has separate copy engines; "
		      "copies issued on another stream run while kernels execute, so the "
		      "shorter of the two disappears from the critical path");
	isc_sugg_evidence(s, "copies take %s of which only %s overlaps with kernels",
			  isc_fmt_dur(b1, copy), isc_fmt_pct(b2, overlap));
	isc_sugg_evidence(s, "kernels take %s of the window alone", isc_fmt_dur(b1, kern));
	struct isc_change ch = {
		.op = ISC_WI_SCALE, .sel = ISC_SEL_COPIES, .factor = 0, .after = INT64_MIN
	};
	/* Overlap hides at most the copies themselves: the simulation of copies that cost
	 * nothing bounds the share-based estimate. */
	double sim = isc_sugg_simulate(c, &ch, s, "copies hidden behind kernels entirely");
	s->improvement_pct = fmin(isc_rules_pct(c, fmin(exposed, kern)), sim);
	return true;
}

const struct isc_rule isc_rules_copy[] = {
	{ "copy.pageable", "host-device copies from pageable memory: use pinned memory", false,
	  pageable },
	{ "copy.sync", "synchronous copies block the host: use cudaMemcpyAsync and streams", false,
	  synchronous },
	{ "copy.no-overlap", "copies and kernels do not overlap: double-buffer on streams", false,
	  no_overlap },
	{ NULL, NULL, false, NULL },
};
