/* SPDX-License-Identifier: MIT */
/* The markdown report: what a person reads first, and what a PR comment shows. */
#include <errno.h>
#include <string.h>

#include "analyzer/analysis/extras.h"
#include "analyzer/base/fmt.h"
#include "analyzer/report/report.h"
#include "analyzer/report/causal.h"

static void header(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		   const struct isc_report_opts *o)
{
	char b1[ISC_FMT_LEN];
	fprintf(f, "# InferScope report\n\n| | |\n|---|---|\n");
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_input *in = &t->inputs[i];
		fprintf(f, "| input | ");
		isc_md_cell(f, in->path);
		fprintf(f, " (%s %s, pid %lld, %llu events) |\n", in->format, in->format_version,
			(long long)in->pid, (unsigned long long)in->events);
	}
	fprintf(f, "| window | %s (%s) |\n",
		isc_fmt_dur(b1, (double)(a->window.end - a->window.start)), a->window.how);
	fprintf(f, "| analyzer | inferscope-analyze %s |\n\n", o->version);
}

static void verdict(FILE *f, const struct isc_analysis *a)
{
	const struct isc_verdict *v = &a->verdict;
	fprintf(f, "## Verdict: %s (confidence %.2f)\n\n", isc_bound_name(v->type), v->confidence);
	fprintf(f, "Primary cause: **%s**.\n\n", v->cause);
	for (int i = 0; i < v->n_evidence; i++) {
		fprintf(f, "- %s\n", v->evidence[i]);
	}
	fputc('\n', f);
}

static void breakdown(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	fprintf(f, "## Timeline breakdown\n\n| category | time | share | examples |\n"
		   "|---|---:|---:|---|\n");
	int64_t total = 0;
	bool gpu = isc_has_gpu_work(a);
	for (int k = 0; k < ISC_CAT__COUNT; k++) {
		enum isc_category c = isc_category_order[k];
		total += a->cat_ns[c];
		if (!gpu && a->cat_ns[c] == 0) {
			continue; /* no GPU category where no GPU works */
		}
		fprintf(f, "| %s | %s | %s | ", isc_category_name(c),
			isc_fmt_dur(b1, (double)a->cat_ns[c]),
			isc_fmt_pct(b2, isc_share(a, a->cat_ns[c])));
		for (int e = 0; e < ISC_EXAMPLES && a->examples[c][e].ns > 0; e++) {
			fprintf(f, "%s", e ? ", " : "");
			isc_md_cell(f, isc_trace_str(t, a->examples[c][e].name));
		}
		fprintf(f, " |\n");
	}
	fprintf(f, "| total | %s | %s | |\n\n", isc_fmt_dur(b1, (double)total),
		isc_fmt_pct(b2, isc_share(a, total)));
}

static void suggestions(FILE *f, const struct isc_analysis *a)
{
	fprintf(f, "## Suggestions\n\n");
	if (a->n_sugg == 0) {
		fprintf(f, "No rule fired.\n\n");
		return;
	}
	for (size_t i = 0; i < a->n_sugg; i++) {
		const struct isc_suggestion *s = &a->sugg[i];
		fprintf(f, "%zu. **%s** (%s", i + 1, s->rule_id, s->priority);
		if (s->improvement_pct > 0) {
			fprintf(f, ", est. %.1f %%", s->improvement_pct);
		}
		fprintf(f, "): %s\n", s->action);
		if (s->where[0] != '\0') {
			fprintf(f, "   - Where: %s\n", s->where);
		}
		fprintf(f, "   - Why: %s\n", s->rationale);
		for (int k = 0; k < s->n_evidence; k++) {
			fprintf(f, "   - Evidence: %s\n", s->evidence[k]);
		}
	}
	fputc('\n', f);
}

static void gpu(FILE *f, const struct isc_analysis *a)
{
	char b[6][ISC_FMT_LEN];
	if (a->n_hta == 0 && a->n_streams == 0) {
		return;
	}
	fprintf(f, "## GPU (HTA definitions)\n\n| device | span | idle | compute | non-compute |\n"
		   "|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < a->n_hta; i++) {
		const struct isc_hta_temporal *h = &a->hta[i];
		double span = h->span > 0 ? (double)h->span : 1;
		fprintf(f, "| %d | %s | %.2f %% | %.2f %% | %.2f %% |\n", h->device,
			isc_fmt_dur(b[0], (double)h->span), 100.0 * (double)h->idle / span,
			100.0 * (double)h->compute / span, 100.0 * (double)h->non_compute / span);
	}
	fprintf(f, "\n| device | stream | operations | host wait | kernel wait | other |\n"
		   "|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < a->n_streams; i++) {
		const struct isc_stream_idle *s = &a->streams[i];
		fprintf(f, "| %d | %d | %llu | %s | %s | %s |\n", s->device, s->stream,
			(unsigned long long)s->ops, isc_fmt_dur(b[0], (double)s->host_wait),
			isc_fmt_dur(b[1], (double)s->kernel_wait),
			isc_fmt_dur(b[2], (double)s->other));
	}
	const struct isc_launch_stats *l = &a->launch;
	fprintf(f,
		"\nKernel launches: %llu correlated, %llu short kernels, %llu launch calls "
		"over %g us, %llu launch delays over %g us; medians: launch call %s, GPU time %s, "
		"launch delay %s.\n\n",
		(unsigned long long)l->pairs, (unsigned long long)l->short_kernels,
		(unsigned long long)l->slow_launches, isc_thr(&a->th, ISC_THR_LAUNCH_RUNTIME_US),
		(unsigned long long)l->delay_outliers, isc_thr(&a->th, ISC_THR_LAUNCH_DELAY_US),
		isc_fmt_dur(b[0], l->median_launch_ns), isc_fmt_dur(b[1], l->median_gpu_ns),
		isc_fmt_dur(b[2], l->median_delay_ns));
}

static void stat_table(FILE *f, const struct isc_trace *t, const struct isc_stat_table *tab,
		       const char *title, int top)
{
	char b[7][ISC_FMT_LEN];
	if (tab->n == 0) {
		return;
	}
	if (tab->exact) {
		fprintf(f,
			"### %s (%zu names, %llu calls counted by the hooks, %llu of them events; "
			"%s)\n\n",
			title, tab->n, (unsigned long long)tab->calls,
			(unsigned long long)tab->events,
			tab->pct_from_events
				? "min, CV and percentiles of the events only: the trace "
				  "has no latency histograms"
				: "percentiles from the hooks' latency histograms");
	} else {
		fprintf(f, "### %s (%zu names, %llu events)\n\n", title, tab->n,
			(unsigned long long)tab->events);
	}
	fprintf(f,
		"| name | count | total | mean | CV | min "
		"| p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < tab->n && (int)i < top; i++) {
		const struct isc_stat *s = &tab->rows[i];
		fprintf(f, "| ");
		isc_md_cell(f, isc_trace_str(t, s->name));
		fprintf(f, " | %llu | %s | %s | %.2f | %s | %s | %s | %s | %s |\n",
			(unsigned long long)s->count, isc_fmt_dur(b[0], (double)s->total),
			isc_fmt_dur(b[1], s->mean), s->cv, isc_fmt_dur(b[2], (double)s->min),
			isc_fmt_dur(b[3], s->pct[3]), isc_fmt_dur(b[4], s->pct[6]),
			isc_fmt_dur(b[5], s->pct[7]), isc_fmt_dur(b[6], (double)s->max));
	}
	if (tab->n > (size_t)top) {
		fprintf(f, "| (%zu more) | | | | | | | | | |\n", tab->n - (size_t)top);
	}
	fputc('\n', f);
}

/* The malloc hooks' exact counters: every allocation of the run, not the sampled events. */
static void allocations(FILE *f, const struct isc_analysis *a)
{
	const struct isc_alloc_stats *m = &a->allocs;
	char b[4][ISC_FMT_LEN];
	if (!m->present) {
		return;
	}
	double s = (double)(a->window.end - a->window.start) / 1e9;
	fprintf(f,
		"### Host allocations (exact counts from the malloc hooks, whole run)\n\n"
		"| allocations | frees | failed | allocated | freed | live at the end | "
		"allocations/s | allocated/s |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n"
		"| %llu | %llu | %llu | %s | %s | %s | ",
		(unsigned long long)m->calls, (unsigned long long)m->frees,
		(unsigned long long)m->failed, isc_fmt_bytes(b[0], (double)m->bytes),
		isc_fmt_bytes(b[1], (double)m->bytes_freed), isc_fmt_bytes(b[2], (double)m->live));
	if (a->window.trimmed || s <= 0) {
		fprintf(f, "- | - |\n\n"); /* the counters are the whole run's, not a window's */
	} else {
		fprintf(f, "%.0f | %s |\n\n", (double)m->calls / s,
			isc_fmt_bytes(b[3], (double)m->bytes / s));
	}
}

static void quality(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	bool gpu = isc_has_gpu_work(a);
	fprintf(f,
		"## Data quality\n\n- events: %llu read, %llu of unknown types skipped\n"
		"- dropped events: %llu",
		(unsigned long long)a->events_total, (unsigned long long)a->skipped,
		(unsigned long long)a->dropped);
	if (gpu) {
		fprintf(f, " (CUPTI records dropped: %llu)", (unsigned long long)a->cupti_dropped);
	}
	fputc('\n', f);
	for (size_t i = 0; gpu && i < t->n_inputs; i++) {
		const struct isc_input *in = &t->inputs[i];
		const char *st = isc_trace_str(t, in->cupti_status);
		fprintf(f, "- CUPTI (input %zu): %s%s%s\n", i + 1, *st ? st : "not reported",
			in->cupti_reason ? ": " : "", isc_trace_str(t, in->cupti_reason));
	}
	if (gpu) {
		fprintf(f, "- GPU timeline: %s\n", a->gpu_timeline ? "present" : "absent");
	} else {
		fprintf(f, "- a host-only report: nothing in the window ran on an accelerator\n");
	}
	fprintf(f, "- CPU-time samples: %s",
		a->cpu_samples ? "used for " : "none (scopes stand for host computing)");
	if (a->cpu_samples) {
		fprintf(f, "%llu threads", (unsigned long long)a->sampled_threads);
	}
	fputc('\n', f);
	isc_md_causal_quality(f, t, a);
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_input *in = &t->inputs[i];
		if (in->unsampled_threads > 0) {
			fprintf(f, "- threads not sampled (input %zu): %llu (%s)\n", i + 1,
				(unsigned long long)in->unsampled_threads,
				in->unsampled_reason ? isc_trace_str(t, in->unsampled_reason)
						     : "no reason given");
		}
		if (in->unwritten_events > 0) {
			fprintf(f, "- data lost (input %zu): %llu events never written (%s)\n",
				i + 1, (unsigned long long)in->unwritten_events,
				in->unwritten_reason ? isc_trace_str(t, in->unwritten_reason)
						     : "no reason given");
		}
	}
	isc_extras_md_quality(f, t, a);
}

static void report(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		   const struct isc_report_opts *o)
{
	static const char *const titles[ISC_SG__COUNT] = {
		"Kernels", "GPU copies and memsets", "CUDA API",
		"Scopes",  "Framework operators",    "Syscalls",
	};
	header(f, t, a, o);
	if (o->gate != NULL) {
		isc_md_gate(f, o->gate, o->top, false);
	}
	verdict(f, a);
	isc_md_causal(f, t, a);
	breakdown(f, t, a);
	suggestions(f, a);
	isc_md_profile(f, t, a, o->top);
	gpu(f, a);
	isc_extras_md(f, t, a);
	fprintf(f, "## Statistics (top %d by total time)\n\n", o->top);
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		stat_table(f, t, &a->stats[g], titles[g], o->top);
	}
	allocations(f, a);
	quality(f, t, a);
}

int isc_report_md(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		  const struct isc_report_opts *o)
{
	FILE *m = isc_md_open(f);
	if (m == NULL) {
		return -ENOMEM;
	}
	report(m, t, a, o);
	bool bad = ferror(m) != 0;
	return fclose(m) != 0 || bad || ferror(f) ? -EIO : 0;
}
