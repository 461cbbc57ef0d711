/* SPDX-License-Identifier: MIT */
/*
 * The HTML report's timeline: a time axis in round steps of one unit, a label per lane
 * with pid, thread name and tid (and the same lanes as JSON beside the picture), CPU
 * samples drawn in their threads' lanes, and the zoom: its script parses (node --check)
 * and, run against a minimal DOM (zoom-harness.js), zooms, pans and redraws the axis.
 * The node parts are skipped where node is not installed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "analyzer/report/report.h"
#include "analyzer/report/svg.h"
#include "helpers.h"

static char *html_of(const char *rel, size_t *len)
{
	struct isc_trace *t = load(rel);
	struct isc_analysis *a = analyse(t, NULL);
	char *buf = render(t, a, "html", len);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	return buf;
}

/* The text between after and the next end, malloc'd. */
static char *between(const char *s, const char *after, const char *end)
{
	const char *a = strstr(s, after);
	cr_assert_not_null(a, "no %s", after);
	a += strlen(after);
	const char *b = strstr(a, end);
	cr_assert_not_null(b);
	return strndup(a, (size_t)(b - a));
}

Test(html, ticks_are_one_two_five_of_one_unit)
{
	static const struct {
		double span, step;
		const char *unit;
	} want[] = {
		{ 5.29e9, 5e8, "ms" }, { 12.7e9, 2e9, "s" }, { 1500, 200, "ns" },
		{ 3.3e6, 5e5, "us" },  { 8e5, 1e5, "us" },   { 1e9, 1e8, "ms" },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct isc_ticks k;
		isc_svg_ticks(want[i].span, &k);
		cr_assert_float_eq(k.step_ns, want[i].step, 1e-6 * want[i].step, "span %g: %g",
				   want[i].span, k.step_ns);
		cr_assert_str_eq(k.unit, want[i].unit, "span %g", want[i].span);
		cr_assert_eq(k.decimals, 0);
	}
}

Test(html, lanes_name_pid_thread_and_tid)
{
	size_t len;
	char *html = html_of("stacks/stacks-threads.json", &len);
	/* The lanes as JSON: pid 1000, the main thread and PyTorch's two named workers. */
	char *json = between(html, "<script type=\"application/json\" id=\"timeline-lanes\">",
			     "</script>");
	char err[256];
	yajl_val d = yajl_tree_parse(json, err, sizeof(err));
	cr_assert_not_null(d, "%s: %s", err, json);
	const char *lp[] = { "lanes", NULL }, *sp[] = { "span_ns", NULL };
	yajl_val lanes = yajl_tree_get(d, lp, yajl_t_array);
	cr_assert_not_null(lanes);
	static const struct {
		long long tid;
		const char *name;
	} want[] = { { 4242, "python3" },
		     { 4252, "pt_data_worker_0" },
		     { 4253, "pt_data_worker_1" } };
	cr_assert_eq(YAJL_GET_ARRAY(lanes)->len, 3, "%s", json);
	for (size_t i = 0; i < 3; i++) {
		yajl_val l = YAJL_GET_ARRAY(lanes)->values[i];
		const char *kp[] = { "kind", NULL }, *pp[] = { "pid", NULL },
			   *tp[] = { "tid", NULL }, *np[] = { "name", NULL };
		cr_assert_str_eq(YAJL_GET_STRING(yajl_tree_get(l, kp, yajl_t_string)), "thread");
		cr_assert_eq(YAJL_GET_INTEGER(yajl_tree_get(l, pp, yajl_t_number)), 1000);
		cr_assert_eq(YAJL_GET_INTEGER(yajl_tree_get(l, tp, yajl_t_number)), want[i].tid);
		cr_assert_str_eq(YAJL_GET_STRING(yajl_tree_get(l, np, yajl_t_string)),
				 want[i].name);
		char label[128];
		snprintf(label, sizeof(label), ">pid 1000 %s tid %lld</text>", want[i].name,
			 want[i].tid);
		cr_assert_not_null(strstr(html, label), "a label %s", label);
	}
	/* The axis: every step of the tick rule from 0 to the window's span, in its unit. */
	double span = (double)YAJL_GET_INTEGER(yajl_tree_get(d, sp, yajl_t_number));
	cr_assert_gt(span, 0);
	struct isc_ticks k;
	isc_svg_ticks(span, &k);
	char *axis = between(html, "<g class=\"axis\" id=\"tl-axis\">", "</g>");
	int n = 0;
	for (int i = 0; i * k.step_ns <= span; i++, n++) {
		char tick[64];
		snprintf(tick, sizeof(tick), "font-size=\"9\">%.0f %s</text>",
			 i * k.step_ns / k.unit_ns, k.unit);
		cr_assert_not_null(strstr(axis, tick), "tick %s in %s", tick, axis);
	}
	cr_assert_geq(n, 5);
	int texts = 0;
	for (const char *p = axis; (p = strstr(p, "class=\"tick\"")) != NULL; p++) {
		texts++;
	}
	cr_assert_eq(texts, n, "no other tick");
	/* The workers' CPU samples are drawn in their lanes; zoom controls; no URL. */
	cr_assert_not_null(strstr(html, "CPU samples</title>"));
	cr_assert_not_null(strstr(html, "<g id=\"tl-view\">"));
	cr_assert_not_null(strstr(html, "id=\"tl-zoom-in\""));
	cr_assert_null(strstr(html, "src=\"http"));
	yajl_tree_free(d);
	free(axis);
	free(json);
	free(html);
}

/* The vertical extent of every mark (g.events rect) and of the path's band (rect.cp). */
struct band {
	double y0, y1;
};

static size_t marks_of(const char *svg, struct band *v, size_t cap)
{
	size_t n = 0;
	for (const char *p = svg; (p = strstr(p, "<rect ")) != NULL && n < cap; p++) {
		const char *end = strchr(p, '>'), *y = strstr(p, " y=\""),
			   *h = strstr(p, "height=\"");
		if (y == NULL || h == NULL || y > end || h > end) {
			continue;
		}
		v[n].y0 = atof(y + 4);
		v[n].y1 = v[n].y0 + atof(h + 8);
		n++;
	}
	return n;
}

/* Each lane's label sits in a strip of its own above the lane's rows, where no mark and
 * not the path's band is drawn: a 10 px label spans 9 px above its baseline to 2 below. */
static void labels_cover_nothing(const char *rel, size_t want_lanes)
{
	size_t len;
	char *html = html_of(rel, &len);
	char *svg = between(html, "<svg id=\"timeline\"", "</svg>");
	char *marks = between(svg, "<g id=\"tl-view\">", "<text");
	static struct band v[1 << 16];
	size_t nm = marks_of(marks, v, sizeof(v) / sizeof(v[0]));
	cr_assert_gt(nm, 0, "%s: marks", rel);
	size_t lanes = 0;
	double prev = 0;
	for (const char *p = svg; (p = strstr(p, "<text class=\"lane\"")) != NULL; p++) {
		char want[32];
		snprintf(want, sizeof(want), "data-lane=\"%zu\"", lanes);
		cr_assert_not_null(strstr(p, want), "%s: labels in lane order", rel);
		double base = atof(strstr(p, " y=\"") + 4);
		cr_assert_gt(base, prev, "%s: label %zu below the one before", rel, lanes);
		for (size_t i = 0; i < nm; i++) {
			cr_assert(v[i].y1 <= base - 9 || v[i].y0 >= base + 2,
				  "%s: label %zu (baseline %.0f) over a mark at %.1f-%.1f", rel,
				  lanes, base, v[i].y0, v[i].y1);
		}
		prev = base;
		lanes++;
	}
	cr_assert_eq(lanes, want_lanes, "%s: every lane labelled", rel);
	cr_assert_not_null(strstr(svg, "<g class=\"legend\">"), "%s: a legend", rel);
	free(marks);
	free(svg);
	free(html);
}

Test(html, labels_sit_above_their_own_lanes)
{
	labels_cover_nothing("stacks/stacks-threads.json", 3);
	labels_cover_nothing("scenarios/sync-heavy.json", 2);
	labels_cover_nothing("stacks/stacks-gpu.json", 2);
}

static char *run_node(const char *args)
{
	char cmd[1024], *out = NULL;
	snprintf(cmd, sizeof(cmd), "/usr/bin/node %s", args);
	cr_assert_eq(run(cmd, &out, NULL), 0, "node %s: %s", args, out ? out : "");
	return out;
}

Test(html, zoom_script_parses_and_zooms)
{
	if (access("/usr/bin/node", X_OK) != 0) {
		cr_skip_test("/usr/bin/node is not installed: the zoom script is not run");
	}
	size_t len;
	char *html = html_of("stacks/stacks-threads.json", &len);
	char js[] = "/tmp/isc-zoom-XXXXXX.js";
	int fd = mkstemps(js, 3);
	cr_assert_geq(fd, 0);
	const char *z = isc_html_zoom_script();
	cr_assert_not_null(strstr(html, z), "the page carries the script");
	cr_assert_eq(write(fd, z, strlen(z)), (ssize_t)strlen(z));
	close(fd);
	char args[512];
	snprintf(args, sizeof(args), "--check %s", js);
	free(run_node(args));
	/* 5.29 s: 0 ... 5000 ms by 500; zoomed 2x about the middle the view is 1322.5 -
	 * 3967.5 ms, ticked by 200 ms; the wheel at x = 0 zooms 1.25x about the view's
	 * start; a drag of 100 pans by 100; reset is the first picture. */
	char *span = between(html, "data-span-ns=\"", "\"");
	cr_assert_str_eq(span, "5290000000");
	snprintf(args, sizeof(args), "'%s/tests/analyzer/zoom-harness.js' %s %s", getenv("ISC_SRC"),
		 js, span);
	char *out = run_node(args);
	unlink(js);
	char err[256];
	yajl_val d = yajl_tree_parse(out, err, sizeof(err));
	cr_assert_not_null(d, "%s: %s", err, out);
	const char *ip[] = { "initial", NULL }, *zp[] = { "zoom2", NULL },
		   *rp[] = { "reset", NULL };
	yajl_val initial = yajl_tree_get(d, ip, yajl_t_array),
		 zoom = yajl_tree_get(d, zp, yajl_t_array),
		 reset = yajl_tree_get(d, rp, yajl_t_array);
	cr_assert(initial && zoom && reset, "%s", out);
	cr_assert_eq(YAJL_GET_ARRAY(initial)->len, 11, "%s", out);
	cr_assert_str_eq(YAJL_GET_STRING(YAJL_GET_ARRAY(initial)->values[1]), "500 ms");
	cr_assert_str_eq(YAJL_GET_STRING(YAJL_GET_ARRAY(zoom)->values[0]), "1400 ms", "%s", out);
	cr_assert_str_eq(YAJL_GET_STRING(YAJL_GET_ARRAY(zoom)->values[1]), "1600 ms", "%s", out);
	cr_assert_eq(YAJL_GET_ARRAY(reset)->len, 11);
	static const char *const views[][2] = {
		{ "initial_view", "translate(0,0) scale(1,1)" },
		{ "zoom2_view", "translate(-600,0) scale(2,1)" },
		{ "wheel_view", "translate(-750,0) scale(2.5,1)" },
		{ "drag_view", "translate(-650,0) scale(2.5,1)" },
		{ "reset_view", "translate(0,0) scale(1,1)" },
	};
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		const char *p[] = { views[i][0], NULL };
		yajl_val v = yajl_tree_get(d, p, yajl_t_string);
		cr_assert_not_null(v, "%s", views[i][0]);
		cr_assert_str_eq(YAJL_GET_STRING(v), views[i][1], "%s", views[i][0]);
	}
	yajl_tree_free(d);
	free(out);
	free(span);
	free(html);
}
