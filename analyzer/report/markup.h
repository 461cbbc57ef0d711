/* SPDX-License-Identifier: MIT */
/* Text of trace names made safe for the markup the writers produce. */
#ifndef ISC_MARKUP_H
#define ISC_MARKUP_H

#include <stdio.h>

/* A name fit for a markdown table cell: pipes, emphasis and '>' escaped, newlines
 * flattened, long names shortened (on a stream of isc_md_open, which escapes the rest). */
void isc_md_cell(FILE *f, const char *s);
/* The stream a markdown writer writes to, over f: markdown is shown on terminals and
 * rendered as HTML (GitHub, GitLab), and names from traces go into its cells and
 * sentences, so everything written through it has each control character but the
 * newline as \xNN and each '<' backslash-escaped, which opens no tag (the report itself
 * writes no HTML). fclose() it to write the rest to f; NULL when there is no memory. */
FILE *isc_md_open(FILE *f);
/* Text for an element or attribute of HTML, SVG or XML (JUnit), escaped. */
void isc_html_text(FILE *f, const char *s);

#endif /* ISC_MARKUP_H */
