/* SPDX-License-Identifier: MIT */
/* Text of trace names made safe for the markup the writers produce. */
#ifndef ISC_MARKUP_H
#define ISC_MARKUP_H

#include <stdio.h>

/* A name fit for a markdown table cell: pipes, emphasis and angle brackets escaped,
 * newlines flattened, long names shortened. */
void isc_md_cell(FILE *f, const char *s);
/* Text for an element or attribute of HTML, SVG or XML (JUnit), escaped. */
void isc_html_text(FILE *f, const char *s);

#endif /* ISC_MARKUP_H */
