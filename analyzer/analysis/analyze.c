/* SPDX-License-Identifier: MIT */
/* Runs the stages in order on a finalized trace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/base/par.h"
#include "analyzer/rules/rules.h"
#include "analyzer/causal/graph.h"
#include "analyzer/analysis/extras.h"
#include "analyzer/model/profile.h"

static void data_quality(const struct isc_trace *t, struct isc_analysis *a)
{
	a->events_total = t->n;
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_input *in = &t->inputs[i];
		a->skipped += in->skipped;
		a->dropped += in->dropped_total;
		a->cupti_dropped += in->cupti_dropped;
		const char *st = isc_trace_str(t, in->cupti_status);
		a->cupti_degraded |= in->cupti_status != 0 && strcmp(st, "active") != 0 &&
				     strcmp(st, "not_used") != 0;
		a->incomplete |= in->complete == 0;
		a->unsampled_threads += in->unsampled_threads;
		a->unwritten += in->unwritten_events;
	}
	for (size_t i = 0; i < t->n && !a->gpu_timeline; i++) {
		a->gpu_timeline = isc_type_is_gpu(t->ev[i].type);
	}
}

/* A --what-if whose selector picks nothing in the window answers nothing: an error that
 * says what it looked for, as --window-scope's (exit 2). */
static int whatif_matched(const struct isc_analysis *a, struct isc_diag *d)
{
	const struct isc_causal *c = a->causal;
	for (size_t i = 0; c != NULL && i < c->n_whatif; i++) {
		const struct isc_whatif_result *w = &c->whatif[i];
		if (w->ok && w->picked == 0) {
			isc_diag_set(d, "--what-if '%s': nothing in the window matches (%s)",
				     w->spec, w->what);
			return -ENOENT;
		}
	}
	return 0;
}

/*
 * The stages after the window read the model and write fields of their own, so they run
 * as jobs on the analysis threads, in two rounds. First the attribution, the dependency
 * graph with its critical path (which reads only the window and the thresholds) and the
 * GPU numbers: with two workers the graph, the longest, has one to itself while the other
 * takes the attribution and then the GPU numbers; with one, the attribution's arrays are
 * freed before the graph is built (a peak 5 MiB lower on 2 M events than the graph first).
 * Then the verdict, which reads all three, beside the operation statistics, which only the
 * rules and the reports read. Which thread runs which does not change a result.
 */
struct stage_jobs {
	const struct isc_trace *t;
	struct isc_analysis *a;
	bool verdict; /* the second round */
	int r[3];
};

static void stage_job(void *arg, size_t i, unsigned worker)
{
	(void)worker;
	struct stage_jobs *s = arg;
	if (s->verdict) {
		if (i == 0) {
			isc_classify(s->t, s->a);
		} else {
			s->r[1] = isc_stats_compute(s->t, s->a);
		}
		return;
	}
	switch (i) {
	case 0:
		s->r[0] = isc_timeline_attribute(s->t, s->a);
		break;
	case 1:
		s->r[1] = isc_causal_build(s->t, s->a);
		break;
	default:
		s->r[2] = isc_timeline_gpu(s->t, s->a);
		break;
	}
}

static int stages(const struct isc_trace *t, struct isc_analysis *a, bool verdict)
{
	struct stage_jobs s = { .t = t, .a = a, .verdict = verdict };
	size_t n = verdict ? 2 : 3;
	isc_par_run(n, (unsigned)n, stage_job, &s);
	for (size_t i = 0; i < n; i++) {
		if (s.r[i] != 0) {
			return s.r[i];
		}
	}
	return 0;
}

int isc_analyze(const struct isc_trace *t, const struct isc_analyze_opts *o,
		struct isc_analysis **out, struct isc_diag *d)
{
	struct isc_analysis *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		isc_diag_set(d, "out of memory");
		return -ENOMEM;
	}
	if (o != NULL && o->th != NULL) {
		a->th = *o->th;
	} else {
		isc_thresholds_init(&a->th);
	}
	data_quality(t, a);
	int r = isc_timeline_window(t, o, a, d);
	if (r == 0) {
		isc_window_extend(t, a);
		r = isc_extras_prepare(t, a);
	}
	a->no_path_pieces = o != NULL && o->no_path_pieces;
	r = r == 0 ? stages(t, a, false) : r;
	r = r == 0 ? isc_profile_build(t, a) : r;
	r = r == 0 ? stages(t, a, true) : r;
	if (r == 0) {
		/* Nothing to judge (an empty window): no rule may speak of it. */
		bool empty = a->verdict.type == ISC_BOUND_UNKNOWN &&
			     strcmp(a->verdict.cause, "no_data") == 0;
		r = empty ? 0 : isc_rules_run(t, a);
	}
	if (r == 0 && o != NULL) {
		r = isc_whatif_answer(t, a, o->what_if, o->n_what_if);
		r = r == 0 ? whatif_matched(a, d) : r;
	}
	r = r == 0 ? isc_extras_run(t, o, a) : r;
	r = r == 0 ? isc_rules_where(t, a) : r;
	if (r < 0) {
		if (r == -ENOMEM) {
			isc_diag_set(d, "out of memory");
		}
		isc_analysis_destroy(a);
		return r;
	}
	*out = a;
	return 0;
}

void isc_analysis_destroy(struct isc_analysis *a)
{
	if (a == NULL) {
		return;
	}
	free(a->streams);
	free(a->hta);
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		free(a->stats[g].rows);
	}
	free(a->scopes);
	free(a->sugg);
	isc_extras_destroy(a->extras);
	isc_profile_destroy(a->prof);
	isc_causal_destroy(a->causal);
	isc_ivec_free(&a->host_active);
	free(a);
}
