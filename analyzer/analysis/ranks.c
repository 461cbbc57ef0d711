/* SPDX-License-Identifier: MIT */
/*
 * Ranks analysed apart and together. A rank is an input with a distributed rank
 * (Kineto's distributedInfo.rank) or, without one, an input with GPU work of its own; with
 * two or more, each is analysed on its own timeline (its events only, the same window
 * options), so that two ranks' device 0 are never one GPU and a clock offset between
 * hosts changes nothing. The union analysis stays for the whole picture, but its verdict
 * becomes the slowest rank's: the run goes as fast as its slowest rank, and the union of
 * shifted timelines says nothing about either of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis/extras.h"
#include "analyzer/base/fmt.h"
#include "analyzer/model/hosts.h"

/* The input's rank, or -1 when the input is not a rank. */
static int rank_of(const struct isc_trace *t, size_t input, const bool *gpu)
{
	if (t->inputs[input].rank >= 0) {
		return t->inputs[input].rank;
	}
	return gpu[input] ? (int)input : -1;
}

/* A view of one input's events over the shared strings, threads and inputs. */
static int sub_trace(const struct isc_trace *t, uint16_t input, struct isc_trace *sub)
{
	*sub = *t;
	sub->corr_slots = NULL;
	sub->corr_direct = NULL;
	sub->extra = NULL;
	sub->finalized = false;
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		n += t->ev[i].input == input;
	}
	sub->ev = malloc((n + 1) * sizeof(*sub->ev));
	if (sub->ev == NULL) {
		return -ENOMEM;
	}
	sub->n = sub->cap = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (t->ev[i].input == input) {
			sub->ev[sub->n++] = t->ev[i];
		}
	}
	sub->cap = n + 1;
	return isc_trace_finalize(sub);
}

static void sub_free(struct isc_trace *sub)
{
	free(sub->ev);
	free(sub->corr_slots);
	for (size_t i = 0; sub->corr_direct != NULL && i < sub->n_inputs; i++) {
		free(sub->corr_direct[i].idx);
	}
	free(sub->corr_direct);
}

/* NCCL kernels against the others on this rank's GPUs: what communication costs and how
 * much of it hides behind computation. */
int isc_rank_overlap(const struct isc_trace *sub, const struct isc_analysis *ra, struct isc_rank *r)
{
	struct isc_ivec comm = { 0 }, comp = { 0 };
	int rc = 0;
	for (size_t i = 0; i < sub->n && rc == 0; i++) {
		const struct isc_ev *e = &sub->ev[i];
		if (e->type != ISC_T_KERNEL || !isc_in_window(sub, ra, e)) {
			continue;
		}
		bool nccl = strstr(isc_trace_str(sub, e->name), "nccl") != NULL;
		rc = isc_ivec_add(nccl ? &comm : &comp, e->ts, e->ts + e->dur, INT64_MIN,
				  INT64_MAX);
	}
	rc = rc == 0 ? isc_ivec_union(&comm) : rc;
	rc = rc == 0 ? isc_ivec_union(&comp) : rc;
	r->comm_ns = isc_ivec_total(&comm);
	r->compute_ns = isc_ivec_total(&comp);
	for (size_t i = 0; i < comm.n && rc == 0; i++) {
		r->overlap_ns += isc_ivec_overlap(&comp, comm.v[i].s, comm.v[i].e);
	}
	isc_ivec_free(&comm);
	isc_ivec_free(&comp);
	return rc;
}

static int one_rank(const struct isc_trace *t, const struct isc_analyze_opts *o, uint16_t input,
		    struct isc_rank *r)
{
	struct isc_trace sub;
	int rc = sub_trace(t, input, &sub);
	struct isc_analyze_opts ro = o != NULL ? *o : (struct isc_analyze_opts){ 0 };
	ro.one_rank = true;
	struct isc_analysis *ra = NULL;
	struct isc_diag d = { "" };
	rc = rc == 0 ? isc_analyze(&sub, &ro, &ra, &d) : rc;
	if (rc == -ENOENT || rc == -EINVAL) {
		rc = 0; /* e.g. --window-scope names no scope of this rank: nothing to say */
	} else if (rc == 0) {
		r->start = ra->window.start;
		r->end = ra->window.end;
		memcpy(r->cat_ns, ra->cat_ns, sizeof(r->cat_ns));
		r->bound = ra->verdict.type;
		snprintf(r->cause, sizeof(r->cause), "%s", ra->verdict.cause);
		r->confidence = ra->verdict.confidence;
		r->verdict = ra->verdict;
		r->steps = ra->extras->steps.n;
		r->step_mean_ns = ra->extras->steps.step.mean;
		rc = isc_rank_overlap(&sub, ra, r);
	}
	isc_analysis_destroy(ra);
	sub_free(&sub);
	return rc;
}

/* A rank's pace: its mean steady step when every rank has steps, else its window. */
static double pace(const struct isc_rank *v, size_t n, size_t i)
{
	bool steps = true;
	for (size_t k = 0; k < n; k++) {
		steps &= v[k].steps > 0;
	}
	return steps ? v[i].step_mean_ns : (double)(v[i].end - v[i].start);
}

size_t isc_ranks_slowest(const struct isc_rank *v, size_t n, char *why)
{
	size_t s = 0;
	for (size_t i = 1; i < n; i++) {
		s = pace(v, n, i) > pace(v, n, s) ? i : s;
	}
	const struct isc_rank *r = &v[s];
	/* Why: the category where it spends the most beyond the other ranks' mean. */
	int worst = -1;
	double excess = 0;
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		double others = 0;
		for (size_t i = 0; i < n; i++) {
			others += i != s ? (double)v[i].cat_ns[c] : 0;
		}
		others /= (double)(n - 1);
		if ((double)r->cat_ns[c] - others > excess) {
			excess = (double)r->cat_ns[c] - others;
			worst = c;
		}
	}
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	double p = pace(v, n, s);
	if (worst < 0) {
		snprintf(why, ISC_LINE,
			 "rank %d (%s, %s): no category exceeds the other ranks' mean", r->rank,
			 isc_bound_name(r->bound), isc_fmt_dur(b1, p));
	} else {
		snprintf(why, ISC_LINE,
			 "rank %d is the slowest (%s%s, %s/%s): %s more %s than the other ranks' "
			 "mean",
			 r->rank, isc_fmt_dur(b1, p),
			 r->steps > 0 && p == r->step_mean_ns ? " per step" : "",
			 isc_bound_name(r->bound), r->cause, isc_fmt_dur(b2, excess),
			 isc_category_name((enum isc_category)worst));
	}
	return s;
}

/* Several hosts: how each was put on the first one's clock (model/hosts.h). */
static void host_clocks(const struct isc_trace *t, struct isc_extras *x)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN];
	for (size_t i = 0; i < t->hosts->n && x->n_clocks < 4; i++) {
		const struct isc_host_clock *c = &t->hosts->v[i];
		char *line = x->clocks[x->n_clocks++];
		const char *host = isc_trace_str(t, c->host);
		if (c->reference) {
			snprintf(line, ISC_LINE, "host %s: the reference clock (%u input(s))", host,
				 c->inputs);
			continue;
		}
		int n = snprintf(line, ISC_LINE, "host %s: %s%s", host,
				 c->anchored ? "realtime anchors shift it by " : "no anchor pair",
				 c->anchored ? isc_fmt_dur(b1, (double)c->anchor_shift_ns) : "");
		if (c->estimated) {
			snprintf(
				line + n, ISC_LINE - (size_t)n,
				"; collectives: a further %s +/- %s (%u NCCL kernel ends matched); "
				"shifted by %s",
				isc_fmt_dur(b2, (double)c->offset_ns),
				isc_fmt_dur(b3, (double)c->uncertainty_ns), c->matched,
				isc_fmt_dur(b1, (double)c->applied_ns));
		} else {
			snprintf(line + n, ISC_LINE - (size_t)n, "; no collectives to match: %s",
				 c->anchored ? "the anchors alone (as good as NTP, about 1 ms)"
					     : "not aligned, compare ranks on their own timelines");
		}
	}
}

/* Per host: do its ranks' timelines overlap (one clock), and how far apart they start. */
static void clocks(const struct isc_trace *t, struct isc_extras *x)
{
	if (t->hosts != NULL) {
		host_clocks(t, x);
		return;
	}
	char b1[ISC_FMT_LEN];
	for (size_t i = 0; i < x->n_ranks && x->n_clocks < 4; i++) {
		bool first = true;
		for (size_t k = 0; k < i; k++) {
			first &= x->ranks[k].host != x->ranks[i].host;
		}
		if (!first) {
			continue;
		}
		int n = 0, apart = 0;
		int64_t max_off = 0;
		for (size_t k = 0; k < x->n_ranks; k++) {
			const struct isc_rank *q = &x->ranks[k];
			if (q->host != x->ranks[i].host) {
				continue;
			}
			n++;
			max_off = q->offset > max_off ? q->offset : max_off;
			for (size_t m = 0; m < x->n_ranks; m++) {
				const struct isc_rank *p = &x->ranks[m];
				apart += p->host == q->host && m != k &&
					 (p->end < q->start || q->end < p->start);
			}
		}
		const char *host =
			x->ranks[i].host ? isc_trace_str(t, x->ranks[i].host) : "unnamed";
		snprintf(
			x->clocks[x->n_clocks++], ISC_LINE,
			"host %s: %d rank(s), starts up to %s apart; %s", host, n,
			isc_fmt_dur(b1, (double)max_off),
			apart > 0
				? "their timelines do not overlap: clocks not aligned, ranks "
				  "compared on their own timelines"
				: "timelines overlap: one clock assumed (Kineto and InferScope use "
				  "the host's monotonic clock)");
	}
}

int isc_ranks_analyse(const struct isc_trace *t, const struct isc_analyze_opts *o,
		      struct isc_analysis *a)
{
	struct isc_extras *x = a->extras;
	bool *gpu = calloc(t->n_inputs + 1, sizeof(*gpu));
	if (gpu == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++) {
		gpu[t->ev[i].input] |= isc_type_is_gpu(t->ev[i].type);
	}
	size_t n = 0;
	for (size_t i = 0; i < t->n_inputs; i++) {
		n += rank_of(t, i, gpu) >= 0;
	}
	int rc = 0;
	if (n >= 2) {
		x->ranks = calloc(n, sizeof(*x->ranks));
		rc = x->ranks == NULL ? -ENOMEM : 0;
	}
	for (size_t i = 0; n >= 2 && i < t->n_inputs && rc == 0; i++) {
		int rk = rank_of(t, i, gpu);
		if (rk < 0) {
			continue;
		}
		struct isc_rank *r = &x->ranks[x->n_ranks++];
		r->rank = rk;
		r->input = (uint16_t)i;
		r->host = t->inputs[i].hostname;
		rc = one_rank(t, o, (uint16_t)i, r);
	}
	free(gpu);
	if (rc != 0 || x->n_ranks < 2) {
		return rc;
	}
	int64_t first = x->ranks[0].start;
	for (size_t i = 1; i < x->n_ranks; i++) {
		first = x->ranks[i].start < first ? x->ranks[i].start : first;
	}
	for (size_t i = 0; i < x->n_ranks; i++) {
		x->ranks[i].offset = x->ranks[i].start - first;
	}
	x->slowest = (int)isc_ranks_slowest(x->ranks, x->n_ranks, x->slowest_why);
	clocks(t, x);
	const struct isc_rank *s = &x->ranks[x->slowest];
	struct isc_verdict *v = &a->verdict;
	*v = s->verdict;
	if (v->n_evidence < ISC_MAX_EVIDENCE) {
		char *line = v->evidence[v->n_evidence++];
		snprintf(line, ISC_LINE,
			 "%zu ranks analysed apart; the verdict is the slowest rank's: ",
			 x->n_ranks);
		isc_fmt_append(line, ISC_LINE, x->slowest_why);
	}
	return 0;
}
