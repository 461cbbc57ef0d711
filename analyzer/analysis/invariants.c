/* SPDX-License-Identifier: MIT */
/* The result's invariants (analysis.h, isc_analysis_check). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/causal/graph.h"

#define EPS 1e-6

/* Every "N %" or "N%" of a line is at most 100 (a share, a gain; negative gains too). */
static bool pcts_bounded(const char *line, const char *what, char *msg, size_t n)
{
	for (const char *p = line; *p != '\0'; p++) {
		if (!isdigit((unsigned char)*p) ||
		    (p > line && (isalnum((unsigned char)p[-1]) || p[-1] == '.'))) {
			continue;
		}
		char *end;
		double v = strtod(p, &end);
		const char *q = end;
		while (*q == ' ') {
			q++;
		}
		if (*q == '%' && v > 100.0 + EPS) {
			snprintf(msg, n, "%s: %.1f %% is more than 100 %%: \"%s\"", what, v, line);
			return false;
		}
		p = end - 1;
	}
	return true;
}

static bool no_gpu_word(const char *line, const char *what, char *msg, size_t n)
{
	static const char *const words[] = { "gpu", "cuda" };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		for (const char *p = line; *p != '\0'; p++) {
			if (strncasecmp(p, words[i], strlen(words[i])) == 0) {
				snprintf(msg, n,
					 "%s speaks of '%s' in a window without GPU work: \"%s\"",
					 what, words[i], line);
				return false;
			}
		}
	}
	return true;
}

static bool text_ok(const struct isc_analysis *a, const char *line, const char *what, char *msg,
		    size_t n)
{
	return pcts_bounded(line, what, msg, n) &&
	       (isc_has_gpu_work(a) || no_gpu_word(line, what, msg, n));
}

static bool shares_ok(const struct isc_analysis *a, char *msg, size_t n)
{
	int64_t w = a->window.end - a->window.start;
	struct {
		const char *what;
		int64_t ns;
	} v[ISC_CAT__COUNT + 24];
	size_t k = 0;
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		v[k++] = (typeof(v[0])){ isc_category_name((enum isc_category)c), a->cat_ns[c] };
	}
	v[k++] = (typeof(v[0])){ "GPU busy", a->gpu_busy_ns };
	v[k++] = (typeof(v[0])){ "host busy", a->host_busy_ns };
	v[k++] = (typeof(v[0])){ "I/O waits", a->waits.io_total };
	for (int s = 0; s < 8; s++) {
		v[k++] = (typeof(v[0])){ "a kind of wait", a->waits.total[s] };
		v[k++] = (typeof(v[0])){ "a kind of wait's top name", a->waits.top[s].ns };
	}
	if (a->causal != NULL) {
		v[k++] = (typeof(v[0])){ "the critical path", a->causal->path_ns };
	}
	for (size_t i = 0; i < k; i++) {
		if (v[i].ns < 0 || v[i].ns > w) {
			snprintf(msg, n, "%s: %lld ns of a %lld ns window", v[i].what,
				 (long long)v[i].ns, (long long)w);
			return false;
		}
	}
	return true;
}

static bool verdict_ok(const struct isc_analysis *a, char *msg, size_t n)
{
	const struct isc_verdict *v = &a->verdict;
	if (v->n_levers == 0) {
		return true;
	}
	/* A host lever gains at most the idle share of the busiest stream of the window the
	 * levers were weighed on (the slowest rank's, for several: ranks.c). */
	double idle = v->gpu_idle_pct;
	int best = 0;
	for (int i = 0; i < v->n_levers; i++) {
		const struct isc_lever_gain *l = &v->levers[i];
		if (l->gain_pct > 100.0 + EPS || l->gain_pct < -100.0 - EPS) {
			snprintf(msg, n, "lever %s gains %.3f %%", l->id, l->gain_pct);
			return false;
		}
		if (l->host && l->gain_pct > idle + 0.1) {
			snprintf(msg, n,
				 "host-side lever %s gains %.3f %%, the busiest GPU stream idles "
				 "%.3f %%",
				 l->id, l->gain_pct, idle);
			return false;
		}
		best = l->gain_pct > v->levers[best].gain_pct ? i : best;
	}
	const struct isc_lever_gain *b = &v->levers[best];
	double min = isc_thr(&a->th, ISC_THR_MIN_GAIN_PCT);
	double ratio = isc_thr(&a->th, ISC_THR_BALANCE_RATIO);
	bool ok;
	switch (v->type) {
	case ISC_BOUND_UNKNOWN:
		ok = false;
		break;
	case ISC_BOUND_IDLE:
		ok = b->gain_pct < min || b->bound == ISC_BOUND_IDLE;
		break;
	case ISC_BOUND_BALANCED:
		ok = strcmp(v->cause, "overlapped_pipeline") == 0 && v->pipeline_pct >= min &&
		     b->gain_pct < (1.0 - ratio) * v->pipeline_pct + EPS;
		for (int i = 0; i < v->n_levers && !ok; i++) {
			ok = v->levers[i].bound != b->bound &&
			     v->levers[i].gain_pct >= ratio * b->gain_pct - EPS;
		}
		break;
	default:
		ok = false;
		for (int i = 0; i < v->n_levers && !ok; i++) {
			ok = v->levers[i].bound == v->type &&
			     fabs(v->levers[i].gain_pct - b->gain_pct) < EPS &&
			     fabs(v->gain_pct - b->gain_pct) < EPS;
		}
		break;
	}
	if (!ok) {
		snprintf(msg, n,
			 "verdict %s (%s) contradicts its what-ifs: %s gains the most, %.2f %%",
			 isc_bound_name(v->type), v->cause, b->id, b->gain_pct);
	}
	return ok;
}

bool isc_analysis_check(const struct isc_analysis *a, char *msg, size_t n)
{
	if (!shares_ok(a, msg, n) || !verdict_ok(a, msg, n)) {
		return false;
	}
	const struct isc_verdict *v = &a->verdict;
	if (v->type == ISC_BOUND_UNKNOWN && strcmp(v->cause, "no_data") == 0) {
		/* Nothing judged: the one line names the kinds of events it looked for. */
		return true;
	}
	for (int i = 0; i < v->n_evidence; i++) {
		if (!text_ok(a, v->evidence[i], "verdict evidence", msg, n)) {
			return false;
		}
	}
	if (!isc_has_gpu_work(a) && !no_gpu_word(v->cause, "the verdict's cause", msg, n)) {
		return false;
	}
	for (size_t i = 0; i < a->n_sugg; i++) {
		const struct isc_suggestion *s = &a->sugg[i];
		if (s->improvement_pct > 100.0 + EPS) {
			snprintf(msg, n, "%s estimates %.2f %%", s->rule_id, s->improvement_pct);
			return false;
		}
		if (!text_ok(a, s->action, s->rule_id, msg, n) ||
		    !text_ok(a, s->rationale, s->rule_id, msg, n) ||
		    !text_ok(a, s->rule_id, "a rule id", msg, n)) {
			return false;
		}
		for (int k = 0; k < s->n_evidence; k++) {
			if (!text_ok(a, s->evidence[k], s->rule_id, msg, n)) {
				return false;
			}
		}
	}
	for (size_t i = 0; a->causal != NULL && i < a->causal->n_whatif; i++) {
		const struct isc_whatif_result *w = &a->causal->whatif[i];
		if (w->ok && w->gain_pct > 100.0 + EPS) {
			snprintf(msg, n, "--what-if %s gains %.2f %%", w->spec, w->gain_pct);
			return false;
		}
	}
	return true;
}
