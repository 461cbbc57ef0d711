/* SPDX-License-Identifier: MIT */
/* The critical path and the --what-if answers, for the writers (causal.c). */
#ifndef ISC_REPORT_PATH_H
#define ISC_REPORT_PATH_H

#include <stdio.h>

#include "analyzer/report/report.h"

void isc_md_causal(FILE *f, const struct isc_trace *t, const struct isc_analysis *a);
/* The graph's data-quality lines: untraced time, pollers, inferred edges. */
void isc_md_causal_quality(FILE *f, const struct isc_trace *t, const struct isc_analysis *a);
void isc_json_causal(struct isc_json *j, const struct isc_trace *t, const struct isc_analysis *a);
void isc_html_causal(FILE *f, const struct isc_trace *t, const struct isc_analysis *a);
/* The path as a band above the timeline's lanes (x = (time - window start) * scale);
 * false when there is no path (nothing drawn). */
bool isc_svg_causal(FILE *f, const struct isc_analysis *a, double scale);

#endif /* ISC_REPORT_PATH_H */
