/* SPDX-License-Identifier: MIT */
/*
 * Timeline lanes: one per GPU stream and one per host thread (four rows: scopes and
 * operators, CUDA calls, waits, and a thin strip of its CPU samples, each drawn over the
 * CPU time it stands for, ending at the sample). Events are drawn at pixel resolution: an event that
 * starts inside the current pixel run of its row joins it, so a row never holds more
 * rectangles than it has half-pixels, whatever the number of events.
 */
#include "analyzer/report/svg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/report/report.h"
#include "analyzer/report/causal.h"

static const char *const cat_color[ISC_CAT__COUNT] = {
	[ISC_CAT_CPU] = "#4e79a7", [ISC_CAT_H2D] = "#e15759",  [ISC_CAT_GPU] = "#59a14f",
	[ISC_CAT_D2H] = "#b07aa1", [ISC_CAT_IDLE] = "#d7d7d7", [ISC_CAT_FRAMEWORK] = "#f28e2b",
};

void isc_svg_breakdown(FILE *f, const struct isc_analysis *a)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	fprintf(f,
		"<svg id=\"breakdown\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"64\" role=\"img\">\n",
		ISC_SVG_WIDTH);
	double x = 0;
	/* Without GPU work a category with no time (the GPU's, the CUDA runtime's) is not
	 * named: no GPU word where no GPU works. */
	bool gpu = isc_has_gpu_work(a);
	for (int k = 0, key = 0; k < ISC_CAT__COUNT; k++) {
		enum isc_category c = isc_category_order[k];
		double w = isc_share(a, a->cat_ns[c]) * ISC_SVG_WIDTH;
		if (w > 0) {
			fprintf(f,
				"<rect class=\"seg\" data-category=\"%s\" x=\"%.2f\" y=\"0\" "
				"width=\"%.2f\" height=\"28\" fill=\"%s\"><title>%s %s (%s)</title>"
				"</rect>\n",
				isc_category_name(c), x, w, cat_color[c], isc_category_name(c),
				isc_fmt_dur(b1, (double)a->cat_ns[c]),
				isc_fmt_pct(b2, isc_share(a, a->cat_ns[c])));
		}
		x += w;
		if (!gpu && a->cat_ns[c] == 0) {
			continue;
		}
		fprintf(f,
			"<rect x=\"%d\" y=\"40\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"51\" font-size=\"12\">%s %s</text>\n",
			key * 200, cat_color[c], key * 200 + 16, isc_category_name(c),
			isc_fmt_pct(b1, isc_share(a, a->cat_ns[c])));
		key++;
	}
	fprintf(f, "</svg>\n");
}

enum { ROW_SCOPE, ROW_API, ROW_WAIT, ROW_CPU, ROWS };

/*
 * The picture from the top: the time axis (its labels end at y 11), the critical path's
 * label and band (causal.c: y 26 to 36), then the lanes from LANES_Y, each LANE_H high:
 * its label in a strip of its own, then its rows ROW_H apart; under the lanes the legend
 * of the marks. No label is drawn over anything but its own strip.
 */
enum { LANES_Y = 44, LANE_H = 36, LABEL_BASE = 10, ROWS_Y = 13, ROW_H = 7, LEGEND_H = 24 };

static size_t lane_top(size_t lane)
{
	return LANES_Y + lane * LANE_H;
}

struct run {
	double x0, x1;
	uint64_t n;
	uint32_t name;
	const char *color;
	bool open;
};

struct lane {
	bool gpu;
	int16_t device;
	int32_t stream;
	uint32_t thread;
	struct run row[ROWS];
};

struct timeline {
	FILE *f;
	const struct isc_trace *t;
	const struct isc_analysis *a;
	struct lane *lanes;
	size_t n;
	double scale;
	uint64_t rects;
};

static int lane_of(struct timeline *tl, const struct isc_ev *e)
{
	bool gpu = isc_type_is_gpu(e->type);
	for (size_t i = 0; i < tl->n; i++) {
		struct lane *l = &tl->lanes[i];
		if (l->gpu == gpu && (gpu ? l->device == e->device && l->stream == e->stream
					  : l->thread == e->thread)) {
			return (int)i;
		}
	}
	if (tl->n >= ISC_SVG_MAX_LANES) {
		return -1;
	}
	struct lane *l = &tl->lanes[tl->n];
	memset(l, 0, sizeof(*l));
	l->gpu = gpu;
	l->device = e->device;
	l->stream = e->stream;
	l->thread = e->thread;
	return (int)tl->n++;
}

static const char *color_of(const struct isc_ev *e, int *row)
{
	*row = ROW_SCOPE;
	switch (e->type) {
	case ISC_T_KERNEL:
		return cat_color[ISC_CAT_GPU];
	case ISC_T_H2D:
		return cat_color[ISC_CAT_H2D];
	case ISC_T_D2H:
		return cat_color[ISC_CAT_D2H];
	case ISC_T_D2D:
	case ISC_T_H2H:
	case ISC_T_MEMSET:
		return "#76b7b2";
	case ISC_T_GPU_SYNC:
		return "#edc948";
	case ISC_T_SCOPE:
	case ISC_T_CPU_OP:
		return cat_color[ISC_CAT_CPU];
	case ISC_T_CUDA_API:
		*row = ROW_API;
		return cat_color[ISC_CAT_FRAMEWORK];
	case ISC_T_SYSCALL:
		*row = ROW_WAIT;
		return "#9c755f";
	case ISC_T_CPU_SAMPLE:
		*row = ROW_CPU;
		return "#a0cbe8";
	default:
		return NULL;
	}
}

static void flush(struct timeline *tl, size_t lane, int row)
{
	struct run *r = &tl->lanes[lane].row[row];
	if (!r->open) {
		return;
	}
	double min = 0.5 / ISC_SVG_DETAIL, w = r->x1 - r->x0 < min ? min : r->x1 - r->x0;
	fprintf(tl->f,
		"<rect x=\"%.2f\" y=\"%zu\" width=\"%.2f\" height=\"%d\" fill=\"%s\">"
		"<title>",
		r->x0, lane_top(lane) + ROWS_Y + (size_t)row * ROW_H, w, row == ROW_CPU ? 2 : 6,
		r->color);
	if (row == ROW_CPU) {
		fprintf(tl->f, "%llu CPU samples</title></rect>\n", (unsigned long long)r->n);
	} else {
		isc_html_text(tl->f, isc_trace_str(tl->t, r->name));
		fprintf(tl->f, r->n > 1 ? " and %llu more</title></rect>\n" : "</title></rect>\n",
			(unsigned long long)(r->n - 1));
	}
	tl->rects++;
	r->open = false;
}

static void draw(struct timeline *tl, const struct isc_ev *e)
{
	int row;
	const char *color = color_of(e, &row);
	int lane = color != NULL ? lane_of(tl, e) : -1;
	if (lane < 0) {
		return;
	}
	/* a sample stands for the CPU time before it */
	int64_t back = e->type == ISC_T_CPU_SAMPLE ? (int64_t)e->v.bytes : 0;
	double x0 = (double)(e->ts - back - tl->a->window.start) * tl->scale;
	double x1 = (double)(e->ts + e->dur - tl->a->window.start) * tl->scale;
	x0 = x0 < 0 ? 0 : x0;
	x1 = x1 > ISC_SVG_WIDTH ? ISC_SVG_WIDTH : x1;
	struct run *r = &tl->lanes[lane].row[row];
	if (r->open && x0 <= r->x1 + 0.5 / ISC_SVG_DETAIL) {
		r->x1 = x1 > r->x1 ? x1 : r->x1;
		r->n++;
		return;
	}
	flush(tl, (size_t)lane, row);
	*r = (struct run){
		.x0 = x0, .x1 = x1, .n = 1, .name = e->name, .color = color, .open = true
	};
}

/* Lane labels in the strip above their lane's rows (a white halo keeps them readable
 * over marks zoomed under them), outside the zoomed group; then the same lanes as JSON
 * beside the picture. */
static void labels(struct timeline *tl, bool path)
{
	static const char halo[] = "font-size=\"10\" stroke=\"#fff\" stroke-width=\"3\" "
				   "paint-order=\"stroke\"";
	if (path) {
		fprintf(tl->f,
			"<text class=\"path-label\" x=\"2\" y=\"23\" %s>critical path</text>\n",
			halo);
	}
	for (size_t i = 0; i < tl->n; i++) {
		const struct lane *l = &tl->lanes[i];
		fprintf(tl->f, "<text class=\"lane\" data-lane=\"%zu\" x=\"2\" y=\"%zu\" %s>", i,
			lane_top(i) + LABEL_BASE, halo);
		if (l->gpu) {
			fprintf(tl->f, "GPU %d stream %d", l->device, l->stream);
		} else if (l->thread < tl->t->n_threads) {
			/* pid and name: nine workers are all called python3 */
			const struct isc_thread_info *th = &tl->t->threads[l->thread];
			fprintf(tl->f, "pid %lld ", (long long)tl->t->inputs[th->input].pid);
			if (th->name != 0) {
				isc_html_text(tl->f, isc_trace_str(tl->t, th->name));
				fputc(' ', tl->f);
			}
			fprintf(tl->f, "tid %lld", (long long)th->tid);
		}
		fprintf(tl->f, "</text>\n");
	}
}

/* What the marks' colours mean, under the lanes (the path's colours are in the critical
 * path's table). */
static void legend(struct timeline *tl)
{
	static const struct {
		enum isc_ev_type type;
		const char *what;
	} keys[] = {
		{ ISC_T_KERNEL, "kernel" },	      { ISC_T_H2D, "copy host to device" },
		{ ISC_T_D2H, "copy device to host" }, { ISC_T_MEMSET, "other copy, memset" },
		{ ISC_T_GPU_SYNC, "GPU-side sync" },  { ISC_T_SCOPE, "scope, operator" },
		{ ISC_T_CUDA_API, "CUDA call" },      { ISC_T_SYSCALL, "system call, wait" },
		{ ISC_T_CPU_SAMPLE, "CPU samples" },
	};
	size_t y = lane_top(tl->n) + 8;
	/* the GPU's marks and CUDA calls only where the window has GPU work */
	bool gpu = isc_has_gpu_work(tl->a);
	fprintf(tl->f, "<g class=\"legend\">\n");
	for (size_t i = 0, k = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int row;
		const struct isc_ev e = { .type = (uint8_t)keys[i].type };
		if (!gpu && (isc_type_is_gpu(e.type) || e.type == ISC_T_CUDA_API)) {
			continue;
		}
		double x = 2 + (double)k++ * (ISC_SVG_WIDTH / 9.0);
		fprintf(tl->f,
			"<rect x=\"%.1f\" y=\"%zu\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%.1f\" y=\"%zu\" font-size=\"10\">%s</text>\n",
			x, y, color_of(&e, &row), x + 14, y + 9, keys[i].what);
	}
	fprintf(tl->f, "</g>\n");
}

static void lanes_json(struct timeline *tl)
{
	isc_html_lanes_begin(tl->f, tl->a->window.start, tl->a->window.end - tl->a->window.start);
	size_t shown = 0;
	for (size_t i = 0; i < tl->n; i++) {
		const struct lane *l = &tl->lanes[i];
		if (l->gpu) {
			isc_html_lane_gpu(tl->f, shown++ == 0, l->device, l->stream);
		} else if (l->thread < tl->t->n_threads) {
			const struct isc_thread_info *th = &tl->t->threads[l->thread];
			isc_html_lane_thread(tl->f, shown++ == 0,
					     (long long)tl->t->inputs[th->input].pid,
					     (long long)th->tid,
					     th->name != 0 ? isc_trace_str(tl->t, th->name) : "");
		}
	}
	isc_html_lanes_end(tl->f);
}

/* A time axis over the lanes, from the window's start: ticks at 1, 2 or 5 x 10^k of one
 * unit (isc_svg_ticks); the page's script redraws them for the span in view. */
static void axis(struct timeline *tl)
{
	int64_t span = tl->a->window.end - tl->a->window.start;
	struct isc_ticks k;
	isc_svg_ticks((double)span, &k);
	fprintf(tl->f, "<g class=\"axis\" id=\"tl-axis\">\n");
	for (int i = 0; span > 0 && i * k.step_ns <= (double)span; i++) {
		double x = i * k.step_ns * tl->scale;
		fprintf(tl->f,
			"<line x1=\"%.2f\" y1=\"14\" x2=\"%.2f\" y2=\"%zu\" stroke=\"#ddd\"/>"
			"<text class=\"tick\" x=\"%.2f\" y=\"11\" font-size=\"9\">%.*f %s</text>\n",
			x, x, lane_top(tl->n), x + 1, k.decimals, i * k.step_ns / k.unit_ns,
			k.unit);
	}
	fprintf(tl->f, "</g>\n");
}

int isc_svg_timeline(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	struct timeline tl = { .f = f, .t = t, .a = a };
	tl.lanes = calloc(ISC_SVG_MAX_LANES, sizeof(*tl.lanes));
	if (tl.lanes == NULL) {
		return -ENOMEM;
	}
	int64_t span = a->window.end - a->window.start;
	tl.scale = span > 0 ? (double)ISC_SVG_WIDTH / (double)span : 0;
	/* Lanes first, so that the picture's height is known before it is drawn. */
	for (size_t i = 0; i < t->n; i++) {
		int row;
		if (color_of(&t->ev[i], &row) != NULL) {
			lane_of(&tl, &t->ev[i]);
		}
	}
	isc_html_zoom_controls(f);
	fprintf(f,
		"<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%zu\" data-start-ns=\"%lld\" data-span-ns=\"%lld\" "
		"data-max-zoom=\"%d\">\n",
		ISC_SVG_WIDTH, lane_top(tl.n) + LEGEND_H, (long long)a->window.start,
		(long long)span, ISC_SVG_MAX_ZOOM);
	axis(&tl);
	/* the marks and the critical path zoom and pan together (timeline-zoom.c) */
	fprintf(f, "<g id=\"tl-view\">\n<g class=\"events\">\n");
	for (size_t i = 0; i < t->n && span > 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->ts + e->dur >= a->window.start && e->ts <= a->window.end) {
			draw(&tl, e);
		}
	}
	for (size_t i = 0; i < tl.n; i++) {
		for (int r = 0; r < ROWS; r++) {
			flush(&tl, i, r);
		}
	}
	fprintf(f, "</g>\n");
	bool path = isc_svg_causal(f, a, tl.scale);
	fprintf(f, "</g>\n");
	labels(&tl, path);
	legend(&tl);
	fprintf(f, "</svg>\n");
	lanes_json(&tl);
	fprintf(f, "<p class=\"note\">%zu lanes, %llu marks%s</p>\n", tl.n,
		(unsigned long long)tl.rects,
		tl.n >= ISC_SVG_MAX_LANES ? " (lanes beyond the first 48 are not drawn)" : "");
	free(tl.lanes);
	return 0;
}
