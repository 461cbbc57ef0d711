/* SPDX-License-Identifier: MIT */
#include "rules.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct isc_rule *const families[] = {
	isc_rules_copy, isc_rules_launch, isc_rules_sync, isc_rules_alloc,
	isc_rules_gpu, isc_rules_host, isc_rules_data,
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
	if (c->gpu_ops_ready) {
		return &c->gpu_ops;
	}
	c->gpu_ops_ready = true;
	const struct isc_analysis *a = c->a;
	for (size_t i = 0; i < c->t->n; i++) {
		const struct isc_ev *e = &c->t->ev[i];
		if (isc_type_is_gpu(e->type) && e->type != ISC_T_GPU_SYNC &&
		    isc_ivec_add(&c->gpu_ops, e->ts, e->ts + e->dur, a->window.start,
				 a->window.end) < 0) {
			break;
		}
	}
	isc_ivec_union(&c->gpu_ops);
	return &c->gpu_ops;
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
		return;	/* every suggestion is backed by evidence, or it is not made */
	}
	double min = isc_thr(&run->a->th, ISC_THR_MIN_IMPROVEMENT_PCT);
	if (!r->advisory && s.improvement_pct < min) {
		return;
	}
	s.rule_id = r->id;
	s.table_order = order;
	if (s.priority == NULL) {
		s.priority = s.improvement_pct >= 10 ? "high" : s.improvement_pct >= 3 ? "medium"
											: "low";
	}
	struct isc_suggestion *v = realloc(run->a->sugg, (run->a->n_sugg + 1) * sizeof(*v));
	if (v == NULL) {
		run->err = -1;
		return;
	}
	run->a->sugg = v;
	v[run->a->n_sugg++] = s;
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
	struct run run = { .ctx = { .t = t, .a = a,
				    .window_ns = (double)(a->window.end - a->window.start) },
			   .a = a };
	isc_rules_each(run_one, &run);
	isc_ivec_free(&run.ctx.gpu_ops);
	if (run.err != 0) {
		return -ENOMEM;
	}
	qsort(a->sugg, a->n_sugg, sizeof(*a->sugg), cmp_sugg);
	return 0;
}
