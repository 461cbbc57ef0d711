/* SPDX-License-Identifier: MIT */
/* The extras' sections (extras.h) in the markdown, JSON and HTML reports. */
#include <stdio.h>
#include <string.h>

#include "analyzer/analysis/extras.h"
#include "analyzer/model/hosts.h"
#include "analyzer/base/fmt.h"
#include "analyzer/report/svg.h"
#include "format/json-writer.h"
#include "analyzer/report/report.h"

static const char *const su_names[ISC_SU__COUNT] = {
	[ISC_SU_CONTEXT] = "context creation",
	[ISC_SU_MODULES] = "module loading",
	[ISC_SU_ALLOC] = "first allocations",
	[ISC_SU_WARMUP] = "warm-up steps",
};

static const char *const su_keys[ISC_SU__COUNT] = {
	[ISC_SU_CONTEXT] = "context_creation_us",
	[ISC_SU_MODULES] = "module_loading_us",
	[ISC_SU_ALLOC] = "first_allocations_us",
	[ISC_SU_WARMUP] = "warmup_steps_us",
};

static void md_dist(FILE *f, const char *what, const struct isc_dist *d)
{
	char b[4][ISC_FMT_LEN];
	fprintf(f, "| %s | %llu | %s | %s | %s | %s |\n", what, (unsigned long long)d->n,
		isc_fmt_dur(b[0], d->mean), isc_fmt_dur(b[1], d->p50), isc_fmt_dur(b[2], d->p90),
		isc_fmt_dur(b[3], d->max));
}

static void md_steps(FILE *f, const struct isc_steps *s)
{
	char b1[ISC_FMT_LEN];
	fprintf(f, "## Steps\n\n%llu steady steps (found by %s), %llu warm-up. Start-up: %s",
		(unsigned long long)s->n, s->how, (unsigned long long)s->warmup,
		isc_fmt_dur(b1, (double)s->startup_ns));
	const char *sep = " (";
	for (int k = 0; k < ISC_SU__COUNT; k++) {
		if (s->startup[k] > 0) {
			fprintf(f, "%s%s %s", sep, su_names[k],
				isc_fmt_dur(b1, (double)s->startup[k]));
			sep = ", ";
		}
	}
	fprintf(f,
		"%s before the first steady step; the distributions below are of the "
		"steady steps.\n\n| per step | count | mean | p50 | p90 | max |\n"
		"|---|---:|---:|---:|---:|---:|\n",
		sep[0] == ',' ? ")" : "");
	md_dist(f, "step time", &s->step);
	for (int i = 0; i < ISC_CAT__COUNT; i++) {
		enum isc_category c = isc_category_order[i];
		md_dist(f, isc_category_name(c), &s->cat[c]);
	}
	fputc('\n', f);
}

static void md_ranks(FILE *f, const struct isc_trace *t, const struct isc_extras *x)
{
	char b[4][ISC_FMT_LEN];
	fprintf(f, "## Ranks\n\nEach rank analysed on its own timeline (its own GPUs).\n\n"
		   "| rank | start offset | window | step mean |");
	for (int i = 0; i < ISC_CAT__COUNT; i++) {
		fprintf(f, " %s |", isc_category_name(isc_category_order[i]));
	}
	fprintf(f, " verdict | NCCL kernels | hidden behind compute |\n|---|---:|---:|---:|");
	for (int i = 0; i < ISC_CAT__COUNT; i++) {
		fprintf(f, "---:|");
	}
	fprintf(f, "---|---:|---:|\n");
	for (size_t k = 0; k < x->n_ranks; k++) {
		const struct isc_rank *r = &x->ranks[k];
		double w = (double)(r->end - r->start);
		fprintf(f, "| %d | %s | %s | %s |", r->rank, isc_fmt_dur(b[0], (double)r->offset),
			isc_fmt_dur(b[1], w), r->steps ? isc_fmt_dur(b[2], r->step_mean_ns) : "-");
		for (int i = 0; i < ISC_CAT__COUNT; i++) {
			int64_t ns = r->cat_ns[isc_category_order[i]];
			fprintf(f, " %s |", isc_fmt_pct(b[0], w > 0 ? (double)ns / w : 0));
		}
		fprintf(f, " %s (%s, %.2f) | %s | %s |\n", isc_bound_name(r->bound), r->cause,
			r->confidence, isc_fmt_dur(b[0], (double)r->comm_ns),
			isc_fmt_pct(b[1], r->comm_ns > 0
						  ? (double)r->overlap_ns / (double)r->comm_ns
						  : 0));
	}
	fprintf(f, "\n- %s\n", x->slowest_why);
	for (int i = 0; i < x->n_clocks; i++) {
		fprintf(f, "- clock: %s\n", x->clocks[i]);
	}
	fputc('\n', f);
	(void)t;
}

void isc_extras_md(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	const struct isc_extras *x = a->extras;
	if (x == NULL) {
		return;
	}
	if (x->steps.n > 0) {
		md_steps(f, &x->steps);
	}
	if (x->n_ranks >= 2) {
		md_ranks(f, t, x);
	}
}

void isc_extras_md_quality(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	const struct isc_extras *x = a->extras;
	char b1[ISC_FMT_LEN];
	for (size_t i = 0; x != NULL && i < x->n_unknown; i++) {
		const struct isc_unknown_cat *u = &x->unknown[i];
		fprintf(f, "- category not modelled: `%s`, %llu events, %s%s\n",
			isc_trace_str(t, u->name), (unsigned long long)u->count,
			isc_fmt_dur(b1, (double)u->ns),
			u->device ? " (device work: not in the breakdown, confidence lowered)"
				  : "");
	}
}

static void json_dist(struct isc_json *j, const char *key, const struct isc_dist *d)
{
	isc_json_key(j, key);
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "count", d->n);
	isc_json_kv_double(j, "mean_us", d->mean / 1000.0, 3);
	isc_json_kv_double(j, "p50_us", d->p50 / 1000.0, 3);
	isc_json_kv_double(j, "p90_us", d->p90 / 1000.0, 3);
	isc_json_kv_double(j, "max_us", d->max / 1000.0, 3);
	isc_json_end_object(j);
}

static void json_steps(struct isc_json *j, const struct isc_steps *s)
{
	isc_json_key(j, "steps");
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "steady_steps", s->n);
	isc_json_kv_uint(j, "warmup_steps", s->warmup);
	isc_json_kv_string(j, "found_by", s->how);
	isc_json_kv_double(j, "startup_us", (double)s->startup_ns / 1000.0, 3);
	isc_json_key(j, "startup");
	isc_json_begin_object(j);
	for (int k = 0; k < ISC_SU__COUNT; k++) {
		isc_json_kv_double(j, su_keys[k], (double)s->startup[k] / 1000.0, 3);
	}
	isc_json_end_object(j);
	json_dist(j, "step_time", &s->step);
	isc_json_key(j, "per_step");
	isc_json_begin_object(j);
	for (int i = 0; i < ISC_CAT__COUNT; i++) {
		enum isc_category c = isc_category_order[i];
		json_dist(j, isc_category_name(c), &s->cat[c]);
	}
	isc_json_end_object(j);
	isc_json_end_object(j);
}

static void json_rank(struct isc_json *j, const struct isc_trace *t, const struct isc_rank *r)
{
	isc_json_begin_object(j);
	isc_json_kv_int(j, "rank", r->rank);
	isc_json_kv_string(j, "input", t->inputs[r->input].path);
	isc_json_kv_string(j, "host", r->host ? isc_trace_str(t, r->host) : "");
	isc_json_kv_double(j, "start_offset_us", (double)r->offset / 1000.0, 3);
	isc_json_kv_double(j, "window_us", (double)(r->end - r->start) / 1000.0, 3);
	isc_json_kv_uint(j, "steps", r->steps);
	isc_json_kv_double(j, "step_mean_us", r->step_mean_ns / 1000.0, 3);
	isc_json_key(j, "breakdown_us");
	isc_json_begin_object(j);
	for (int i = 0; i < ISC_CAT__COUNT; i++) {
		enum isc_category c = isc_category_order[i];
		isc_json_kv_double(j, isc_category_name(c), (double)r->cat_ns[c] / 1000.0, 3);
	}
	isc_json_end_object(j);
	isc_json_kv_string(j, "verdict", isc_bound_name(r->bound));
	isc_json_kv_string(j, "cause", r->cause);
	isc_json_kv_double(j, "confidence", r->confidence, 2);
	isc_json_kv_double(j, "nccl_kernels_us", (double)r->comm_ns / 1000.0, 3);
	isc_json_kv_double(j, "compute_kernels_us", (double)r->compute_ns / 1000.0, 3);
	isc_json_kv_double(j, "nccl_overlapped_us", (double)r->overlap_ns / 1000.0, 3);
	isc_json_end_object(j);
}

/* Several hosts: each one's shift onto the reference clock (model/hosts.h), in
 * microseconds like the trace's timestamps. */
static void json_hosts(struct isc_json *j, const struct isc_trace *t)
{
	isc_json_key(j, "hosts");
	isc_json_begin_array(j);
	for (size_t i = 0; i < t->hosts->n; i++) {
		const struct isc_host_clock *c = &t->hosts->v[i];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "host", isc_trace_str(t, c->host));
		isc_json_kv_bool(j, "reference", c->reference);
		isc_json_kv_int(j, "inputs", c->inputs);
		isc_json_kv_bool(j, "anchored", c->anchored);
		isc_json_key(j, "anchor_shift_us");
		isc_json_ns_as_us(j, c->anchor_shift_ns);
		isc_json_kv_bool(j, "estimated", c->estimated);
		isc_json_key(j, "offset_us");
		isc_json_ns_as_us(j, c->offset_ns);
		isc_json_key(j, "uncertainty_us");
		isc_json_ns_as_us(j, c->uncertainty_ns);
		isc_json_kv_int(j, "collectives_matched", c->matched);
		isc_json_key(j, "applied_shift_us");
		isc_json_ns_as_us(j, c->applied_ns);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

void isc_extras_json(struct isc_json *j, const struct isc_trace *t, const struct isc_analysis *a)
{
	const struct isc_extras *x = a->extras;
	if (x == NULL) {
		return;
	}
	if (x->steps.n > 0) {
		json_steps(j, &x->steps);
	}
	if (t->hosts != NULL) {
		json_hosts(j, t);
	}
	if (x->n_ranks < 2) {
		return;
	}
	isc_json_key(j, "ranks");
	isc_json_begin_object(j);
	isc_json_key(j, "per_rank");
	isc_json_begin_array(j);
	for (size_t k = 0; k < x->n_ranks; k++) {
		json_rank(j, t, &x->ranks[k]);
	}
	isc_json_end_array(j);
	isc_json_kv_int(j, "slowest_rank", x->ranks[x->slowest].rank);
	isc_json_kv_string(j, "slowest_why", x->slowest_why);
	isc_json_key(j, "clock_alignment");
	isc_json_begin_array(j);
	for (int i = 0; i < x->n_clocks; i++) {
		isc_json_string(j, x->clocks[i]);
	}
	isc_json_end_array(j);
	isc_json_end_object(j);
}

void isc_extras_json_quality(struct isc_json *j, const struct isc_trace *t,
			     const struct isc_analysis *a)
{
	const struct isc_extras *x = a->extras;
	isc_json_key(j, "unmodelled_categories");
	isc_json_begin_array(j);
	for (size_t i = 0; x != NULL && i < x->n_unknown; i++) {
		const struct isc_unknown_cat *u = &x->unknown[i];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "category", isc_trace_str(t, u->name));
		isc_json_kv_uint(j, "events", u->count);
		isc_json_kv_uint(j, "device_events", u->device);
		isc_json_kv_double(j, "total_us", (double)u->ns / 1000.0, 3);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

void isc_extras_html(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	const struct isc_extras *x = a->extras;
	char b[4][ISC_FMT_LEN];
	if (x == NULL) {
		return;
	}
	if (x->steps.n > 0) {
		const struct isc_steps *s = &x->steps;
		fprintf(f, "<h2>Steps</h2>\n<p id=\"steps\">%llu steady steps (found by ",
			(unsigned long long)s->n);
		isc_html_text(f, s->how);
		fprintf(f,
			"), %llu warm-up; start-up %s.</p>\n<table><tr><th>per step</th>"
			"<th>count</th><th>mean</th><th>p50</th><th>p90</th><th>max</th></tr>\n",
			(unsigned long long)s->warmup, isc_fmt_dur(b[0], (double)s->startup_ns));
		for (int i = -1; i < ISC_CAT__COUNT; i++) {
			const struct isc_dist *d =
				i < 0 ? &s->step : &s->cat[isc_category_order[i]];
			fprintf(f,
				"<tr><td>%s</td><td class=\"n\">%llu</td><td class=\"n\">%s</td>"
				"<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s"
				"</td></tr>\n",
				i < 0 ? "step time" : isc_category_name(isc_category_order[i]),
				(unsigned long long)d->n, isc_fmt_dur(b[0], d->mean),
				isc_fmt_dur(b[1], d->p50), isc_fmt_dur(b[2], d->p90),
				isc_fmt_dur(b[3], d->max));
		}
		fprintf(f, "</table>\n");
	}
	if (x->n_ranks >= 2) {
		fprintf(f, "<h2>Ranks</h2>\n<table id=\"ranks\"><tr><th>rank</th><th>start offset"
			   "</th><th>window</th><th>verdict</th><th>NCCL kernels</th><th>hidden "
			   "behind compute</th></tr>\n");
		for (size_t k = 0; k < x->n_ranks; k++) {
			const struct isc_rank *r = &x->ranks[k];
			fprintf(f,
				"<tr><td>%d</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>"
				"%s (%s, %.2f)</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
				"</tr>\n",
				r->rank, isc_fmt_dur(b[0], (double)r->offset),
				isc_fmt_dur(b[1], (double)(r->end - r->start)),
				isc_bound_name(r->bound), r->cause, r->confidence,
				isc_fmt_dur(b[2], (double)r->comm_ns),
				isc_fmt_pct(b[3], r->comm_ns > 0 ? (double)r->overlap_ns /
									   (double)r->comm_ns
								 : 0));
		}
		fprintf(f, "</table>\n<ul>\n<li>");
		isc_html_text(f, x->slowest_why);
		fprintf(f, "</li>\n");
		for (int i = 0; i < x->n_clocks; i++) {
			fprintf(f, "<li>clock: ");
			isc_html_text(f, x->clocks[i]);
			fprintf(f, "</li>\n");
		}
		fprintf(f, "</ul>\n");
	}
	if (x->n_unknown > 0) {
		fprintf(f, "<h2>Data quality</h2>\n<ul id=\"unmodelled\">\n");
		for (size_t i = 0; i < x->n_unknown; i++) {
			const struct isc_unknown_cat *u = &x->unknown[i];
			fprintf(f, "<li>category not modelled: <code>");
			isc_html_text(f, isc_trace_str(t, u->name));
			fprintf(f, "</code>, %llu events, %s%s</li>\n",
				(unsigned long long)u->count, isc_fmt_dur(b[0], (double)u->ns),
				u->device
					? " (device work: not in the breakdown, confidence lowered)"
					: "");
		}
		fprintf(f, "</ul>\n");
	}
}
