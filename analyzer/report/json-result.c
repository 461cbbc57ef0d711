/* SPDX-License-Identifier: MIT */
/*
 * The analysis-result model of the specification (analysis_version, summary,
 * timeline_breakdown, bottleneck, suggestions), extended additively with what a later
 * run needs to compare against this one: inputs, window, per-name statistics, HTA's GPU
 * numbers, data quality and the thresholds in force.
 */
#include <errno.h>

#include "analyzer/analysis/extras.h"
#include "analyzer/report/report.h"
#include "format/json-writer.h"
#include "analyzer/report/causal.h"

static void us(struct isc_json *j, const char *key, double ns)
{
	isc_json_kv_double(j, key, ns / 1000.0, 3);
}

static void strings(struct isc_json *j, const char *key, const char (*lines)[ISC_LINE], int n)
{
	isc_json_key(j, key);
	isc_json_begin_array(j);
	for (int i = 0; i < n; i++) {
		isc_json_string(j, lines[i]);
	}
	isc_json_end_array(j);
}

static void inputs(struct isc_json *j, const struct isc_trace *t)
{
	isc_json_key(j, "inputs");
	isc_json_begin_array(j);
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_input *in = &t->inputs[i];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "path", in->path);
		isc_json_kv_string(j, "format", in->format);
		isc_json_kv_string(j, "format_version", in->format_version);
		isc_json_kv_int(j, "pid", in->pid);
		isc_json_kv_uint(j, "events", in->events);
		isc_json_kv_uint(j, "skipped_events", in->skipped);
		isc_json_kv_uint(j, "dropped_events", in->dropped_total);
		isc_json_kv_string(j, "cupti_status", isc_trace_str(t, in->cupti_status));
		isc_json_kv_string(j, "cupti_reason", isc_trace_str(t, in->cupti_reason));
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

static void summary(struct isc_json *j, const struct isc_analysis *a)
{
	isc_json_key(j, "window");
	isc_json_begin_object(j);
	us(j, "start_us", (double)a->window.start);
	us(j, "end_us", (double)a->window.end);
	isc_json_kv_string(j, "how", a->window.how);
	isc_json_kv_bool(j, "trimmed", a->window.trimmed);
	isc_json_end_object(j);
	isc_json_key(j, "summary");
	isc_json_begin_object(j);
	us(j, "end_to_end_latency_us", (double)(a->window.end - a->window.start));
	us(j, "total_cpu_time_us", (double)a->cat_ns[ISC_CAT_CPU]);
	us(j, "total_gpu_time_us", (double)a->cat_ns[ISC_CAT_GPU]);
	us(j, "total_h2d_us", (double)a->cat_ns[ISC_CAT_H2D]);
	us(j, "total_d2h_us", (double)a->cat_ns[ISC_CAT_D2H]);
	us(j, "total_idle_us", (double)a->cat_ns[ISC_CAT_IDLE]);
	us(j, "framework_overhead_us", (double)a->cat_ns[ISC_CAT_FRAMEWORK]);
	us(j, "gpu_busy_us", (double)a->gpu_busy_ns);
	us(j, "host_busy_us", (double)a->host_busy_ns);
	isc_json_end_object(j);
}

static void breakdown(struct isc_json *j, const struct isc_trace *t, const struct isc_analysis *a)
{
	isc_json_key(j, "timeline_breakdown");
	isc_json_begin_array(j);
	for (int k = 0; k < ISC_CAT__COUNT; k++) {
		enum isc_category c = isc_category_order[k];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "category", isc_category_name(c));
		us(j, "duration_us", (double)a->cat_ns[c]);
		isc_json_kv_double(j, "percentage", 100.0 * isc_share(a, a->cat_ns[c]), 2);
		isc_json_key(j, "examples");
		isc_json_begin_array(j);
		for (int e = 0; e < ISC_EXAMPLES && a->examples[c][e].ns > 0; e++) {
			isc_json_string(j, isc_trace_str(t, a->examples[c][e].name));
		}
		isc_json_end_array(j);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
	isc_json_key(j, "gpu_idle");
	isc_json_begin_object(j);
	us(j, "host_wait_us", (double)a->idle.host_wait);
	us(j, "kernel_wait_us", (double)a->idle.kernel_wait);
	us(j, "other_us", (double)a->idle.other);
	isc_json_end_object(j);
}

static void bottleneck(struct isc_json *j, const struct isc_analysis *a)
{
	const struct isc_verdict *v = &a->verdict;
	isc_json_key(j, "bottleneck");
	isc_json_begin_object(j);
	isc_json_kv_string(j, "type", isc_bound_name(v->type));
	isc_json_kv_string(j, "primary_cause", v->cause);
	isc_json_kv_double(j, "confidence", v->confidence, 2);
	strings(j, "evidence", v->evidence, v->n_evidence);
	if (v->n_levers > 0) {
		/* The levers the verdict was read off: each twice as fast, its gain. */
		isc_json_kv_double(j, "gain_percent", v->gain_pct, 1);
		isc_json_key(j, "what_ifs");
		isc_json_begin_array(j);
		for (int i = 0; i < v->n_levers; i++) {
			isc_json_begin_object(j);
			isc_json_kv_string(j, "lever", v->levers[i].id);
			isc_json_kv_string(j, "verdict", isc_bound_name(v->levers[i].bound));
			isc_json_kv_double(j, "gain_percent", v->levers[i].gain_pct, 1);
			isc_json_end_object(j);
		}
		isc_json_end_array(j);
	}
	isc_json_end_object(j);
	isc_json_key(j, "suggestions");
	isc_json_begin_array(j);
	for (size_t i = 0; i < a->n_sugg; i++) {
		const struct isc_suggestion *s = &a->sugg[i];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "rule_id", s->rule_id);
		isc_json_kv_string(j, "priority", s->priority);
		isc_json_kv_string(j, "action", s->action);
		isc_json_kv_string(j, "rationale", s->rationale);
		isc_json_kv_double(j, "estimated_improvement_percent", s->improvement_pct, 1);
		if (s->where[0] != '\0') {
			isc_json_kv_string(j, "where", s->where);
		}
		strings(j, "evidence", s->evidence, s->n_evidence);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

static void hta(struct isc_json *j, const struct isc_analysis *a)
{
	isc_json_key(j, "hta");
	isc_json_begin_object(j);
	isc_json_key(j, "temporal_breakdown");
	isc_json_begin_array(j);
	for (size_t i = 0; i < a->n_hta; i++) {
		const struct isc_hta_temporal *h = &a->hta[i];
		double span = h->span > 0 ? (double)h->span : 1;
		isc_json_begin_object(j);
		isc_json_kv_int(j, "device", h->device);
		us(j, "span_us", (double)h->span);
		us(j, "idle_us", (double)h->idle);
		us(j, "compute_us", (double)h->compute);
		us(j, "non_compute_us", (double)h->non_compute);
		isc_json_kv_double(j, "idle_pct", 100.0 * (double)h->idle / span, 2);
		isc_json_kv_double(j, "compute_pct", 100.0 * (double)h->compute / span, 2);
		isc_json_kv_double(j, "non_compute_pct", 100.0 * (double)h->non_compute / span, 2);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
	isc_json_key(j, "idle_by_stream");
	isc_json_begin_array(j);
	for (size_t i = 0; i < a->n_streams; i++) {
		const struct isc_stream_idle *s = &a->streams[i];
		isc_json_begin_object(j);
		isc_json_kv_int(j, "device", s->device);
		isc_json_kv_int(j, "stream", s->stream);
		isc_json_kv_uint(j, "operations", s->ops);
		us(j, "host_wait_us", (double)s->host_wait);
		us(j, "kernel_wait_us", (double)s->kernel_wait);
		us(j, "other_us", (double)s->other);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
	const struct isc_launch_stats *l = &a->launch;
	isc_json_key(j, "kernel_launches");
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "correlated", l->pairs);
	isc_json_kv_uint(j, "short_kernels", l->short_kernels);
	isc_json_kv_uint(j, "slow_launch_calls", l->slow_launches);
	isc_json_kv_uint(j, "launch_delay_outliers", l->delay_outliers);
	us(j, "median_launch_call_us", l->median_launch_ns);
	us(j, "median_gpu_time_us", l->median_gpu_ns);
	us(j, "median_launch_delay_us", l->median_delay_ns);
	isc_json_end_object(j);
	isc_json_end_object(j);
}

static void stat_rows(struct isc_json *j, const struct isc_trace *t,
		      const struct isc_stat_table *tab)
{
	static const char *const pct[ISC_PCTS] = { "p5_us",  "p10_us", "p25_us", "p50_us",
						   "p75_us", "p90_us", "p95_us", "p99_us" };
	isc_json_begin_array(j);
	for (size_t i = 0; i < tab->n; i++) {
		const struct isc_stat *s = &tab->rows[i];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "name", isc_trace_str(t, s->name));
		isc_json_kv_uint(j, "count", s->count);
		us(j, "total_us", (double)s->total);
		us(j, "mean_us", s->mean);
		isc_json_kv_double(j, "cv", s->cv, 4);
		us(j, "min_us", (double)s->min);
		us(j, "max_us", (double)s->max);
		for (int k = 0; k < ISC_PCTS; k++) {
			us(j, pct[k], s->pct[k]);
		}
		isc_json_key(j, "histogram");
		isc_json_begin_array(j);
		for (int k = 0; k < ISC_HIST; k++) {
			isc_json_uint(j, s->hist[k]);
		}
		isc_json_end_array(j);
		if (s->bytes > 0) {
			isc_json_kv_uint(j, "bytes", s->bytes);
		}
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

static void statistics(struct isc_json *j, const struct isc_trace *t, const struct isc_analysis *a)
{
	static const double edges[ISC_HIST - 1] = { 1,	 2,   5,   10,	20,  50,  100,
						    200, 500, 1e3, 2e3, 5e3, 1e4, 2e4,
						    5e4, 1e5, 2e5, 5e5, 1e6 };
	isc_json_key(j, "statistics");
	isc_json_begin_object(j);
	isc_json_key(j, "histogram_upper_edges_us");
	isc_json_begin_array(j);
	for (int k = 0; k < ISC_HIST - 1; k++) {
		isc_json_double(j, edges[k], 0);
	}
	isc_json_end_array(j);
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		isc_json_key(j, isc_stat_group_name(g));
		stat_rows(j, t, &a->stats[g]);
	}
	const struct isc_alloc_stats *m = &a->allocs;
	if (m->present) {
		/* the malloc hooks' exact counters over the whole run */
		isc_json_key(j, "allocations");
		isc_json_begin_object(j);
		isc_json_kv_uint(j, "calls", m->calls);
		isc_json_kv_uint(j, "frees", m->frees);
		isc_json_kv_uint(j, "failed", m->failed);
		isc_json_kv_uint(j, "bytes_allocated", m->bytes);
		isc_json_kv_uint(j, "bytes_freed", m->bytes_freed);
		isc_json_kv_int(j, "live_bytes", m->live);
		isc_json_kv_uint(j, "sampled_events", m->sampled);
		isc_json_end_object(j);
	}
	/* where the syscall rows come from: the hooks' aggregates (every call) or the events */
	const struct isc_stat_table *sc = &a->stats[ISC_SG_SYSCALL];
	isc_json_kv_string(j, "syscalls_counted_from", sc->exact ? "aggregates" : "events");
	if (sc->exact) {
		isc_json_kv_string(j, "syscalls_percentiles_from",
				   sc->pct_from_events ? "events" : "latency_histograms");
	}
	isc_json_end_object(j);
	isc_json_key(j, "scopes_cpu");
	isc_json_begin_array(j);
	for (size_t i = 0; i < a->n_scopes; i++) {
		isc_json_begin_object(j);
		isc_json_kv_string(j, "name", isc_trace_str(t, a->scopes[i].name));
		isc_json_kv_uint(j, "count", a->scopes[i].count);
		us(j, "total_us", (double)a->scopes[i].total);
		us(j, "self_us", (double)a->scopes[i].self);
		us(j, "cpu_preprocessing_us", (double)a->scopes[i].cpu);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

static void quality(struct isc_json *j, const struct isc_trace *t, const struct isc_analysis *a)
{
	isc_json_key(j, "data_quality");
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "events", a->events_total);
	isc_json_kv_uint(j, "skipped_events", a->skipped);
	isc_json_kv_uint(j, "dropped_events", a->dropped);
	isc_json_kv_uint(j, "cupti_dropped_records", a->cupti_dropped);
	isc_json_kv_bool(j, "gpu_timeline", a->gpu_timeline);
	isc_json_kv_bool(j, "cupti_degraded", a->cupti_degraded);
	isc_json_kv_uint(j, "cpu_sampled_threads", a->sampled_threads);
	isc_json_kv_uint(j, "cpu_unsampled_threads", a->unsampled_threads);
	isc_json_kv_uint(j, "unwritten_events", a->unwritten);
	isc_extras_json_quality(j, t, a);
	isc_json_end_object(j);
	isc_json_key(j, "thresholds");
	isc_json_begin_object(j);
	const struct isc_thr_def *defs = isc_thr_defs();
	for (int i = 0; i < ISC_THR__COUNT; i++) {
		isc_json_kv_double(j, defs[i].key, a->th.v[i], 6);
	}
	isc_json_end_object(j);
}

int isc_report_json(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		    const struct isc_report_opts *o)
{
	char buf[16384];
	struct isc_json j;
	isc_json_init(&j, buf, sizeof(buf), isc_json_sink_file, f);
	j.pretty = true;
	isc_json_begin_object(&j);
	isc_json_kv_string(&j, "analysis_version", "1.0");
	isc_json_key(&j, "generator");
	isc_json_begin_object(&j);
	isc_json_kv_string(&j, "name", "inferscope-analyze");
	isc_json_kv_string(&j, "version", o->version);
	isc_json_end_object(&j);
	inputs(&j, t);
	summary(&j, a);
	breakdown(&j, t, a);
	bottleneck(&j, a);
	isc_json_causal(&j, t, a);
	hta(&j, a);
	statistics(&j, t, a);
	isc_extras_json(&j, t, a);
	isc_json_profile(&j, t, a, o->top);
	quality(&j, t, a);
	if (isc_json_rank_summary(&j, t, a) < 0) {
		return -ENOMEM;
	}
	if (o->gate != NULL) {
		isc_json_gate(&j, o->gate);
	}
	isc_json_end_object(&j);
	isc_json_raw(&j, "\n", 1);
	return isc_json_flush(&j) < 0 || ferror(f) ? -EIO : 0;
}
