/* SPDX-License-Identifier: MIT */
/* The critical path and the --what-if answers in every writer: markdown, JSON, HTML. */
#include "analyzer/report/causal.h"

#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/report/svg.h"
#include "format/json-writer.h"

static const char *const cp_color[ISC_CP__COUNT] = {
	[ISC_CP_KERNEL] = "#59a14f",	  [ISC_CP_COMM] = "#8cd17d",
	[ISC_CP_H2D] = "#e15759",	  [ISC_CP_D2H] = "#b07aa1",
	[ISC_CP_GPU_OTHER] = "#86bc86",	  [ISC_CP_GPU_GAP] = "#bab0ac",
	[ISC_CP_LAUNCH] = "#f1ce63",	  [ISC_CP_HOST] = "#4e79a7",
	[ISC_CP_RUNTIME] = "#f28e2b",	  [ISC_CP_SYNC] = "#ff9d9a",
	[ISC_CP_BLOCKED] = "#d37295",	  [ISC_CP_IO] = "#9d7660",
	[ISC_CP_HOST_WAIT] = "#d7b5a6",	  [ISC_CP_UNTRACED] = "#e8e8e8",
	[ISC_CP_STREAM_WAIT] = "#9c9c9c", [ISC_CP_COMM_WAIT] = "#b6d7a8",
};

static bool has_path(const struct isc_analysis *a)
{
	return a->causal != NULL && a->causal->path_ns > 0;
}

void isc_md_causal(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	const struct isc_causal *c = a->causal;
	if (!has_path(a)) {
		return;
	}
	if (!isc_has_gpu_work(a)) {
		fprintf(f,
			"## Critical path\n\n%s through %llu segments of the dependency graph "
			"(%llu host segments).\n\n",
			isc_fmt_dur(b1, (double)c->path_ns), (unsigned long long)c->path_nodes,
			(unsigned long long)c->host_nodes);
	} else {
		fprintf(f,
			"## Critical path\n\n%s through %llu operations and segments of the "
			"dependency "
			"graph (%llu nodes: %llu host segments, %llu GPU operations; %llu launch, "
			"%llu "
			"stream, %llu event and %llu wait edges, %llu of them a full launch "
			"queue).\n\n",
			isc_fmt_dur(b1, (double)c->path_ns), (unsigned long long)c->path_nodes,
			(unsigned long long)c->n, (unsigned long long)c->host_nodes,
			(unsigned long long)c->gpu_nodes, (unsigned long long)c->launch_edges,
			(unsigned long long)c->stream_edges, (unsigned long long)c->event_edges,
			(unsigned long long)c->wait_edges, (unsigned long long)c->queue_full);
	}
	if (c->event_assumed > 0 || c->event_refuted > 0) {
		fprintf(f,
			"Event edges assumed: %llu, tied to the last work launched onto the "
			"recorded "
			"stream before the wait call (a Kineto trace without the record's "
			"correlation: they may over-constrain); waits left out because the "
			"recorded "
			"times contradict them: %llu.\n\n",
			(unsigned long long)c->event_assumed, (unsigned long long)c->event_refuted);
	}
	fprintf(f, "| category | time | share of the path |\n|---|---:|---:|\n");
	for (int k = 0; k < ISC_CP__COUNT; k++) {
		if (c->cat[k] > 0) {
			fprintf(f, "| %s | %s | %s |\n", isc_cp_cat_name((enum isc_cp_cat)k),
				isc_fmt_dur(b1, (double)c->cat[k]),
				isc_fmt_pct(b2, (double)c->cat[k] / (double)c->path_ns));
		}
	}
	fprintf(f, "\n| on the path | kind | time | share |\n|---|---|---:|---:|\n");
	for (int i = 0; i < ISC_CP_TOP && c->top[i].ns > 0; i++) {
		fprintf(f, "| ");
		isc_md_cell(f, isc_trace_str(t, c->top[i].name));
		fprintf(f, " | %s | %s | %s |\n",
			isc_cp_kind_name((enum isc_cp_kind)c->top[i].kind),
			isc_fmt_dur(b1, (double)c->top[i].ns),
			isc_fmt_pct(b2, (double)c->top[i].ns / (double)c->path_ns));
	}
	fputc('\n', f);
	if (c->n_whatif == 0) {
		return;
	}
	fprintf(f,
		"## What-if\n\n| question | change simulated | window change |\n|---|---|---:|\n");
	for (size_t i = 0; i < c->n_whatif; i++) {
		const struct isc_whatif_result *w = &c->whatif[i];
		fprintf(f, "| `%s` | ", w->spec);
		isc_md_cell(f, w->ok ? w->what : w->error);
		if (w->ok) {
			fprintf(f, " | %s%s (%+.1f %%) |\n", w->before >= w->after ? "-" : "+",
				isc_fmt_dur(b1,
					    (double)(w->before >= w->after ? w->before - w->after
									   : w->after - w->before)),
				-w->gain_pct);
		} else {
			fprintf(f, " | |\n");
		}
	}
	fputc('\n', f);
}

void isc_md_causal_quality(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN];
	const struct isc_causal *c = a->causal;
	if (!has_path(a)) {
		return;
	}
	double w = (double)(a->window.end - a->window.start);
	fprintf(f,
		"- untraced: %s of the window (%s) on the busiest thread between recorded "
		"events, no CPU sample in them; %s of the critical path\n",
		isc_fmt_dur(b1, (double)c->untraced),
		isc_fmt_pct(b2, w > 0 ? (double)c->untraced / w : 0),
		isc_fmt_dur(b3, (double)c->cat[ISC_CP_UNTRACED]));
	if (c->n_pollers > 0) {
		fprintf(f, "- threads that only poll or tick (never where the run ends): %u (",
			c->n_pollers);
		for (uint32_t i = 0;
		     i < c->n_pollers && i < sizeof(c->poller) / sizeof(c->poller[0]); i++) {
			const struct isc_thread_info *th = &t->threads[c->poller[i]];
			fprintf(f, "%sthread %lld", i > 0 ? ", " : "", (long long)th->tid);
			if (th->name != 0) {
				fputs(" '", f);
				isc_md_cell(f, isc_trace_str(t, th->name));
				fputc('\'', f);
			}
		}
		fprintf(f, "%s)\n",
			c->n_pollers > sizeof(c->poller) / sizeof(c->poller[0]) ? ", ..." : "");
	}
	if (c->handoffs > 0 || c->inferred_waits > 0 || c->event_ordered > 0) {
		fprintf(f,
			"- inferred from times: %llu hand-offs between threads (%llu thread "
			"starts), %llu blocked calls and %llu stream waits of a Kineto trace\n",
			(unsigned long long)c->handoffs, (unsigned long long)c->wakes,
			(unsigned long long)c->inferred_waits,
			(unsigned long long)c->event_ordered);
	}
	if (c->child_waits > 0) {
		fprintf(f,
			"- inferred from times: %llu wait%s for a child tied to the child that "
			"ended %s\n",
			(unsigned long long)c->child_waits, c->child_waits == 1 ? "" : "s",
			c->child_waits == 1 ? "it" : "them");
	}
}

void isc_json_causal(struct isc_json *j, const struct isc_trace *t, const struct isc_analysis *a)
{
	const struct isc_causal *c = a->causal;
	if (!has_path(a)) {
		return;
	}
	isc_json_key(j, "critical_path");
	isc_json_begin_object(j);
	isc_json_kv_double(j, "length_ms", (double)c->path_ns / 1e6, 6);
	isc_json_kv_uint(j, "nodes", c->path_nodes);
	isc_json_key(j, "categories");
	isc_json_begin_object(j);
	for (int k = 0; k < ISC_CP__COUNT; k++) {
		isc_json_kv_double(j, isc_cp_cat_name((enum isc_cp_cat)k), (double)c->cat[k] / 1e6,
				   6);
	}
	isc_json_end_object(j);
	isc_json_key(j, "top");
	isc_json_begin_array(j);
	for (int i = 0; i < ISC_CP_TOP && c->top[i].ns > 0; i++) {
		isc_json_begin_object(j);
		isc_json_kv_string(j, "name", isc_trace_str(t, c->top[i].name));
		isc_json_kv_string(j, "kind", isc_cp_kind_name((enum isc_cp_kind)c->top[i].kind));
		isc_json_kv_double(j, "ms", (double)c->top[i].ns / 1e6, 6);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
	isc_json_key(j, "graph");
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "host_segments", c->host_nodes);
	isc_json_kv_uint(j, "gpu_operations", c->gpu_nodes);
	isc_json_kv_uint(j, "launch_edges", c->launch_edges);
	isc_json_kv_uint(j, "stream_edges", c->stream_edges);
	isc_json_kv_uint(j, "event_edges", c->event_edges);
	isc_json_kv_uint(j, "wait_edges", c->wait_edges);
	isc_json_kv_uint(j, "event_edges_assumed", c->event_assumed);
	isc_json_kv_uint(j, "event_waits_refuted", c->event_refuted);
	isc_json_kv_uint(j, "stream_waits_inferred", c->event_ordered);
	isc_json_kv_uint(j, "event_syncs", c->event_syncs);
	isc_json_kv_uint(j, "sync_waits", c->sync_waits);
	isc_json_kv_uint(j, "copy_waits", c->copy_waits);
	isc_json_kv_uint(j, "queue_full_launches", c->queue_full);
	isc_json_kv_int(j, "max_queue_depth", c->max_queue_depth);
	isc_json_kv_uint(j, "waits_inferred", c->inferred_waits);
	isc_json_kv_uint(j, "thread_handoffs", c->handoffs);
	isc_json_kv_uint(j, "thread_wakes", c->wakes);
	isc_json_kv_uint(j, "child_waits", c->child_waits);
	isc_json_end_object(j);
	isc_json_kv_double(j, "untraced_ms", (double)c->untraced / 1e6, 6);
	isc_json_key(j, "pollers");
	isc_json_begin_array(j);
	for (uint32_t i = 0; i < c->n_pollers && i < sizeof(c->poller) / sizeof(c->poller[0]);
	     i++) {
		isc_json_int(j, t->threads[c->poller[i]].tid);
	}
	isc_json_end_array(j);
	isc_json_end_object(j);
	if (c->n_whatif == 0) {
		return;
	}
	isc_json_key(j, "what_if");
	isc_json_begin_array(j);
	for (size_t i = 0; i < c->n_whatif; i++) {
		const struct isc_whatif_result *w = &c->whatif[i];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "question", w->spec);
		isc_json_kv_bool(j, "ok", w->ok);
		if (w->ok) {
			isc_json_kv_string(j, "change", w->what);
			isc_json_kv_double(j, "gain_percent", w->gain_pct, 3);
			isc_json_kv_double(j, "window_change_ms",
					   (double)(w->after - w->before) / 1e6, 6);
		} else {
			isc_json_kv_string(j, "error", w->error);
		}
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

void isc_html_causal(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	const struct isc_causal *c = a->causal;
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	if (!has_path(a)) {
		return;
	}
	fprintf(f,
		"<h2>Critical path</h2>\n<p>%s, highlighted above the timeline lanes.</p>\n"
		"<table "
		"id=\"critical-path\"><tr><th>category</th><th>time</th><th>share</th></tr>\n",
		isc_fmt_dur(b1, (double)c->path_ns));
	for (int k = 0; k < ISC_CP__COUNT; k++) {
		if (c->cat[k] > 0) {
			fprintf(f,
				"<tr><td><span style=\"color:%s\">&#9632;</span> %s</td><td "
				"class=\"n\">"
				"%s</td><td class=\"n\">%s</td></tr>\n",
				cp_color[k], isc_cp_cat_name((enum isc_cp_cat)k),
				isc_fmt_dur(b1, (double)c->cat[k]),
				isc_fmt_pct(b2, (double)c->cat[k] / (double)c->path_ns));
		}
	}
	fprintf(f, "</table>\n<table><tr><th>on the path</th><th>kind</th><th>time</th></tr>\n");
	for (int i = 0; i < ISC_CP_TOP && c->top[i].ns > 0; i++) {
		fprintf(f, "<tr><td>");
		isc_html_text(f, isc_trace_str(t, c->top[i].name));
		fprintf(f, "</td><td>%s</td><td class=\"n\">%s</td></tr>\n",
			isc_cp_kind_name((enum isc_cp_kind)c->top[i].kind),
			isc_fmt_dur(b1, (double)c->top[i].ns));
	}
	fprintf(f, "</table>\n");
	for (size_t i = 0; i < c->n_whatif; i++) {
		const struct isc_whatif_result *w = &c->whatif[i];
		fprintf(f, "<p class=\"what-if\"><code>");
		isc_html_text(f, w->spec);
		fprintf(f, "</code>: ");
		isc_html_text(f, w->ok ? w->what : w->error);
		if (w->ok) {
			fprintf(f, ": %+.1f %% of the window", -w->gain_pct);
		}
		fprintf(f, "</p>\n");
	}
}

static void band_rect(FILE *f, double x0, double x1, int cat)
{
	fprintf(f,
		"<rect class=\"cp\" data-category=\"%s\" x=\"%.1f\" y=\"26\" width=\"%.1f\" "
		"height=\"10\" fill=\"%s\"/>\n",
		isc_cp_cat_name((enum isc_cp_cat)cat), x0, x1 - x0 > 0.5 ? x1 - x0 : 0.5,
		cp_color[cat]);
}

/* The path as a band above the lanes, at the timeline's resolution: a piece narrower
 * than half a pixel of the deepest zoom (ISC_SVG_DETAIL) joins the run it starts in. */
bool isc_svg_causal(FILE *f, const struct isc_analysis *a, double scale)
{
	const struct isc_causal *c = a->causal;
	if (!has_path(a)) {
		return false;
	}
	/* its label is the timeline's (outside the zoomed marks) */
	fprintf(f, "<g id=\"critical-path-band\">\n");
	double x0 = -1, x1 = -1;
	int cat = -1;
	for (size_t i = 0; i < c->n_pieces; i++) {
		const struct isc_cp_piece *p = &c->pieces[i];
		double s = (double)(p->s - a->window.start) * scale;
		double e = (double)(isc_cp_piece_end(c, i) - a->window.start) * scale;
		if (cat >= 0 && s <= x1 + 0.5 / ISC_SVG_DETAIL &&
		    (p->cat == cat || e - s < 0.5 / ISC_SVG_DETAIL)) {
			x1 = e > x1 ? e : x1;
			continue;
		}
		if (cat >= 0) {
			band_rect(f, x0, x1, cat);
		}
		x0 = s;
		x1 = e;
		cat = p->cat;
	}
	if (cat >= 0) {
		band_rect(f, x0, x1, cat);
	}
	fprintf(f, "</g>\n");
	return true;
}
