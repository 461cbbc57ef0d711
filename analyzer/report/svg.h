/* SPDX-License-Identifier: MIT */
/* Inline SVG for the HTML report: the breakdown bar and the timeline lanes. */
#ifndef ISC_SVG_H
#define ISC_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/model/result.h"

#define ISC_SVG_WIDTH 1200
#define ISC_SVG_MAX_LANES 48
/* Marks are merged at 1/ISC_SVG_DETAIL of a pixel of the whole window, so that zooming
 * in that far still shows them apart; the page zooms up to ISC_SVG_MAX_ZOOM. */
#define ISC_SVG_DETAIL 4
#define ISC_SVG_MAX_ZOOM 64
/* About this many ticks on the time axis (a string for the page's script too). */
#define ISC_SVG_TICKS 8
#define ISC_SVG_TICKS_STR "8"

void isc_svg_breakdown(FILE *f, const struct isc_analysis *a);
/* Returns -ENOMEM or 0. */
int isc_svg_timeline(FILE *f, const struct isc_trace *t, const struct isc_analysis *a);

/* The time axis: a step of 1, 2 or 5 x 10^k ns for about ISC_SVG_TICKS ticks over
 * span_ns, labelled in the unit (ns, us, ms, s) of the step with as many decimals as
 * the step needs. */
struct isc_ticks {
	double step_ns, unit_ns;
	const char *unit;
	int decimals;
};
void isc_svg_ticks(double span_ns, struct isc_ticks *k);

/* The lanes as JSON (<script type="application/json" id="timeline-lanes">): begin, one
 * call per lane in the picture's order (first: no comma), end. */
void isc_html_lanes_begin(FILE *f, int64_t start_ns, int64_t span_ns);
void isc_html_lane_thread(FILE *f, bool first, long long pid, long long tid, const char *name);
void isc_html_lane_gpu(FILE *f, bool first, int device, int stream);
void isc_html_lanes_end(FILE *f);
/* The zoom buttons, and the script that zooms and pans #timeline (self-contained). */
void isc_html_zoom_controls(FILE *f);
const char *isc_html_zoom_script(void);

#endif /* ISC_SVG_H */
