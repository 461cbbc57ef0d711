/* SPDX-License-Identifier: MIT */
/*
 * A self-contained HTML page: inline style, inline SVG, one small inline script that
 * records what the browser laid out (a test renders the page headless and reads it back).
 * No external URL of any kind.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/analysis/extras.h"
#include "analyzer/base/fmt.h"
#include "analyzer/report/report.h"
#include "analyzer/report/svg.h"
#include "analyzer/report/causal.h"

static const char style[] =
	"body{font:14px system-ui,sans-serif;margin:24px;color:#222}"
	"table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:2px 8px}"
	"th{background:#f3f3f3}td.n{text-align:right}.verdict{font-size:20px;font-weight:bold}"
	".note{color:#666;font-size:12px}code{background:#f6f6f6}";

/* What the browser laid out, for the test that renders the page: lanes labelled, marks,
 * the bar's width, the picture's height, and how many labels a mark or the path's band
 * lies under (their boxes as laid out, before any zoom). */
static const char script[] =
	"(function(){var t=document.getElementById('timeline'),b=document.getElementById("
	"'breakdown'),w=0,o=0;b.querySelectorAll('rect.seg').forEach(function(r){w+=r.getBBox()"
	".width});var m=t.querySelectorAll('g.events rect, rect.cp');t.querySelectorAll("
	"'text.lane, text.path-label').forEach(function(l){var a=l.getBBox();m.forEach("
	"function(r){var c=r.getBBox();if(c.y<a.y+a.height&&a.y<c.y+c.height&&c.x<a.x+a.width&&"
	"a.x<c.x+c.width)o++})});document.body.setAttribute('data-rendered','lanes='+"
	"t.querySelectorAll('text.lane').length+';marks='+t.querySelectorAll('g.events rect')"
	".length+';bar='+Math.round(w)+';height='+Math.round(t.getBBox().height)+';overlaps='+o)"
	"})();";

static void verdict(FILE *f, const struct isc_analysis *a)
{
	const struct isc_verdict *v = &a->verdict;
	fprintf(f,
		"<h2>Verdict</h2>\n<p class=\"verdict\" id=\"verdict\">%s</p>\n<p>Confidence "
		"%.2f, primary cause <code>%s</code>.</p>\n<ul>\n",
		isc_bound_name(v->type), v->confidence, v->cause);
	for (int i = 0; i < v->n_evidence; i++) {
		fprintf(f, "<li>");
		isc_html_text(f, v->evidence[i]);
		fprintf(f, "</li>\n");
	}
	fprintf(f, "</ul>\n");
}

static void suggestions(FILE *f, const struct isc_analysis *a)
{
	fprintf(f, "<h2>Suggestions</h2>\n");
	if (a->n_sugg == 0) {
		fprintf(f, "<p id=\"suggestions\">No rule fired.</p>\n");
		return;
	}
	fprintf(f, "<ol id=\"suggestions\">\n");
	for (size_t i = 0; i < a->n_sugg; i++) {
		const struct isc_suggestion *s = &a->sugg[i];
		fprintf(f, "<li><b>%s</b> (%s, est. %.1f %%): ", s->rule_id, s->priority,
			s->improvement_pct);
		isc_html_text(f, s->action);
		if (s->where[0] != '\0') {
			fprintf(f, "<br>Where: <code>");
			isc_html_text(f, s->where);
			fprintf(f, "</code>");
		}
		fprintf(f, "<br><i>");
		isc_html_text(f, s->rationale);
		fprintf(f, "</i><ul>");
		for (int k = 0; k < s->n_evidence; k++) {
			fprintf(f, "<li>");
			isc_html_text(f, s->evidence[k]);
			fprintf(f, "</li>");
		}
		fprintf(f, "</ul></li>\n");
	}
	fprintf(f, "</ol>\n");
}

static void stats(FILE *f, const struct isc_trace *t, const struct isc_stat_table *tab,
		  const char *title, int top)
{
	char b[5][ISC_FMT_LEN];
	if (tab->n == 0) {
		return;
	}
	fprintf(f, "<h3>%s</h3>\n", title);
	if (tab->exact) {
		fprintf(f, "<p>%llu calls counted by the hooks, %llu of them events; %s.</p>\n",
			(unsigned long long)tab->calls, (unsigned long long)tab->events,
			tab->pct_from_events ? "percentiles of the events only: the trace has no "
					       "latency histograms"
					     : "percentiles from the hooks' latency histograms");
	}
	fprintf(f, "<table><tr><th>name</th><th>count</th><th>total</th><th>mean"
		   "</th><th>p50</th><th>p99</th><th>max</th></tr>\n");
	for (size_t i = 0; i < tab->n && (int)i < top; i++) {
		const struct isc_stat *s = &tab->rows[i];
		/* Kernel names run to hundreds of characters: shortened, whole in the title. */
		const char *name = isc_trace_str(t, s->name);
		char shown[84];
		snprintf(shown, sizeof(shown), "%s", name);
		if (strlen(name) > 80) {
			memcpy(shown + 77, "...", 4);
		}
		fprintf(f, "<tr><td title=\"");
		isc_html_text(f, name);
		fprintf(f, "\">");
		isc_html_text(f, shown);
		fprintf(f,
			"</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td class=\"n\">%s"
			"</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			"</tr>\n",
			(unsigned long long)s->count, isc_fmt_dur(b[0], (double)s->total),
			isc_fmt_dur(b[1], s->mean), isc_fmt_dur(b[2], s->pct[3]),
			isc_fmt_dur(b[3], s->pct[7]), isc_fmt_dur(b[4], (double)s->max));
	}
	fprintf(f, "</table>\n");
}

static void inputs(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		   const struct isc_report_opts *o)
{
	char b1[ISC_FMT_LEN];
	fprintf(f, "<table>\n");
	for (size_t i = 0; i < t->n_inputs; i++) {
		fprintf(f, "<tr><th>input</th><td><code>");
		isc_html_text(f, t->inputs[i].path);
		fprintf(f, "</code> (%s %s, %llu events, %llu dropped)</td></tr>\n",
			t->inputs[i].format, t->inputs[i].format_version,
			(unsigned long long)t->inputs[i].events,
			(unsigned long long)t->inputs[i].dropped_total);
	}
	fprintf(f, "<tr><th>window</th><td>%s (",
		isc_fmt_dur(b1, (double)(a->window.end - a->window.start)));
	isc_html_text(f, a->window.how);
	fprintf(f,
		")</td></tr>\n<tr><th>analyzer</th><td>inferscope-analyze %s</td></tr>\n"
		"</table>\n",
		o->version);
}

int isc_report_html(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		    const struct isc_report_opts *o)
{
	static const char *const titles[ISC_SG__COUNT] = {
		"Kernels", "GPU copies and memsets", "CUDA API",
		"Scopes",  "Framework operators",    "Syscalls",
	};
	fprintf(f,
		"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<title>InferScope report</title>\n<style>%s</style>\n</head>\n<body>\n"
		"<h1>InferScope report</h1>\n",
		style);
	inputs(f, t, a, o);
	verdict(f, a);
	fprintf(f, "<h2>Timeline breakdown</h2>\n");
	isc_svg_breakdown(f, a);
	fprintf(f, "<h2>Timeline</h2>\n");
	if (isc_svg_timeline(f, t, a) < 0) {
		return -ENOMEM;
	}
	isc_html_causal(f, t, a);
	suggestions(f, a);
	isc_extras_html(f, t, a);
	if (isc_html_flame(f, t, a) < 0) {
		return -ENOMEM;
	}
	fprintf(f, "<h2>Statistics</h2>\n");
	for (int g = 0; g < ISC_SG__COUNT; g++) {
		stats(f, t, &a->stats[g], titles[g], o->top);
	}
	if (a->allocs.present) {
		char b[3][ISC_FMT_LEN];
		const struct isc_alloc_stats *m = &a->allocs;
		fprintf(f,
			"<h3>Host allocations (exact, whole run)</h3>\n<table><tr><th>allocations"
			"</th><th>frees</th><th>failed</th><th>allocated</th><th>freed</"
			"th><th>live "
			"at the end</th></tr>\n<tr><td class=\"n\">%llu</td><td "
			"class=\"n\">%llu</td>"
			"<td class=\"n\">%llu</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			"<td class=\"n\">%s</td></tr>\n</table>\n",
			(unsigned long long)m->calls, (unsigned long long)m->frees,
			(unsigned long long)m->failed, isc_fmt_bytes(b[0], (double)m->bytes),
			isc_fmt_bytes(b[1], (double)m->bytes_freed),
			isc_fmt_bytes(b[2], (double)m->live));
	}
	fprintf(f, "<script>%s</script>\n<script>%s</script>\n</body>\n</html>\n", script,
		isc_html_zoom_script());
	return ferror(f) ? -EIO : 0;
}
