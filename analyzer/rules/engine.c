/* SPDX-License-Identifier: MIT */
#include "analyzer/rules/rules.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/grow.h"
#include "analyzer/base/sort.h"

static const struct isc_rule *const families[] = {
	isc_rules_copy, isc_rules_launch, isc_rules_sync,     isc_rules_alloc,
	isc_rules_gpu,	isc_rules_host,	  isc_rules_pipeline, isc_rules_data,
};

void isc_rules_each(void (*fn)(const struct isc_rule *r, void *ctx), void *ctx)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		for (const struct isc_rule *r = families[f]; r->id != NULL; r++) {
			fn(r, ctx);
		}
	}
}

void isc_sugg_evidence(struct isc_suggestion *s, const char *fmt, ...)
{
	if (s->n_evidence >= ISC_SUGGESTION_EVIDENCE) {
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->evidence[s->n_evidence++], ISC_LINE, fmt, ap);
	va_end(ap);
}

void isc_sugg_text(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, n, fmt, ap);
	va_end(ap);
}

double isc_rules_pct(const struct isc_rule_ctx *c, double ns)
{
	return c->window_ns > 0 ? 100.0 * ns / c->window_ns : 0;
}

const struct isc_ivec *isc_rules_gpu_ops(struct isc_rule_ctx *c)
{
	return &c->gpu_ops;
}

static int list_of(const struct isc_ev *e)
{
	switch (e->type) {
	case ISC_T_H2D:
	case ISC_T_D2H:
		return ISC_RL_COPY;
	case ISC_T_KERNEL:
		return ISC_RL_KERNEL;
	case ISC_T_CUDA_API:
		switch (e->sub) {
		case ISC_AC_MEMCPY:
			return ISC_RL_MEMCPY_API;
		case ISC_AC_SYNC:
			return ISC_RL_SYNC_API;
		case ISC_AC_MALLOC:
		case ISC_AC_FREE:
			return ISC_RL_ALLOC_API;
		default:
			return -1;
		}
	default:
		return -1;
	}
}

static int push_index(struct isc_rule_ctx *c, int l, size_t i, size_t *cap)
{
	if (ISC_GROW(c->list[l], cap[l], c->n_list[l] + 1, 256) < 0) {
		return -ENOMEM;
	}
	c->list[l][c->n_list[l]++] = (uint32_t)i;
	return 0;
}

/* A call that queues work on the GPU: a launch, an asynchronous copy or memset. */
static bool submits_work(const struct isc_trace *t, const struct isc_ev *e)
{
	if (e->type != ISC_T_CUDA_API) {
		return false;
	}
	if (e->sub == ISC_AC_LAUNCH) {
		return true;
	}
	return (e->sub == ISC_AC_MEMCPY || e->sub == ISC_AC_MEMSET) &&
	       strstr(isc_trace_str(t, e->name), "Async") != NULL;
}

/* The one pass over the trace the rules need. */
static int gather(struct isc_rule_ctx *c)
{
	const struct isc_analysis *a = c->a;
	size_t cap[ISC_RL__COUNT] = { 0 };
	int r = 0;
	for (size_t i = 0; i < c->t->n && r == 0; i++) {
		const struct isc_ev *e = &c->t->ev[i];
		bool in = isc_in_window(c->t, a, e);
		if (isc_type_is_gpu(e->type) && e->type != ISC_T_GPU_SYNC &&
		    (in || !a->window.trimmed)) {
			r = isc_ivec_add(&c->gpu_ops, e->ts, e->ts + e->dur, a->window.start,
					 a->window.end);
		}
		c->launches += in && submits_work(c->t, e);
		int l = list_of(e);
		if (r == 0 && l >= 0 && in) {
			r = push_index(c, l, i, cap);
		}
	}
	return r == 0 ? isc_ivec_union(&c->gpu_ops) : r;
}

struct run {
	struct isc_rule_ctx ctx;
	struct isc_analysis *a;
	int order;
	int err;
};

static void run_one(const struct isc_rule *r, void *p)
{
	struct run *run = p;
	struct isc_suggestion s;
	memset(&s, 0, sizeof(s));
	int order = run->order++;
	if (run->err != 0 || !r->eval(&run->ctx, &s) || s.n_evidence == 0) {
		return; /* every suggestion is backed by evidence, or it is not made */
	}
	double min = isc_thr(&run->a->th, ISC_THR_MIN_IMPROVEMENT_PCT);
	if (!r->advisory && s.improvement_pct < min) {
		return;
	}
	s.rule_id = r->id;
	s.table_order = order;
	if (s.priority == NULL) {
		s.priority = s.improvement_pct >= 10  ? "high"
			     : s.improvement_pct >= 3 ? "medium"
						      : "low";
	}
	if (ISC_RESIZE(run->a->sugg, run->a->n_sugg + 1) < 0) {
		run->err = -1;
		return;
	}
	run->a->sugg[run->a->n_sugg++] = s;
}

static int cmp_sugg(const void *x, const void *y)
{
	const struct isc_suggestion *a = x, *b = y;
	if (a->improvement_pct != b->improvement_pct) {
		return a->improvement_pct > b->improvement_pct ? -1 : 1;
	}
	return a->table_order - b->table_order;
}

int isc_rules_run(const struct isc_trace *t, struct isc_analysis *a)
{
	struct run run = {
		.ctx = { .t = t, .a = a, .window_ns = (double)(a->window.end - a->window.start) },
		.a = a
	};
	if (gather(&run.ctx) == 0) {
		isc_rules_each(run_one, &run);
	} else {
		run.err = -1;
	}
	isc_ivec_free(&run.ctx.gpu_ops);
	for (int l = 0; l < ISC_RL__COUNT; l++) {
		free(run.ctx.list[l]);
	}
	if (run.err != 0) {
		return -ENOMEM;
	}
	if (a->n_sugg > 1) {
		isc_qsort(a->sugg, a->n_sugg, sizeof(*a->sugg), cmp_sugg);
	}
	return 0;
}
