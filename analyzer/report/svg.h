/* SPDX-License-Identifier: MIT */
/* Inline SVG for the HTML report: the breakdown bar and the timeline lanes. */
#ifndef ISC_SVG_H
#define ISC_SVG_H

#include <stdio.h>

#include "analyzer/model/result.h"

#define ISC_SVG_WIDTH 1200
#define ISC_SVG_MAX_LANES 48

void isc_svg_breakdown(FILE *f, const struct isc_analysis *a);
/* Returns -ENOMEM or 0. */
int isc_svg_timeline(FILE *f, const struct isc_trace *t, const struct isc_analysis *a);

#endif /* ISC_SVG_H */
