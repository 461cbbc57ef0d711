/* SPDX-License-Identifier: MIT */
/*
 * Writers turn an analysis into a document on a FILE *. They are deterministic (the same
 * trace gives the same bytes) and registered by name in one table.
 */
#ifndef ISC_REPORT_H
#define ISC_REPORT_H

#include <stdio.h>

#include "analysis.h"

struct isc_report_opts {
	int top;		/* rows per statistics table */
	const char *version;	/* analyzer version written into the output */
};

struct isc_writer {
	const char *name;
	const char *what;
	/* Returns 0, or -EIO when the stream failed. */
	int (*write)(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		     const struct isc_report_opts *o);
};

const struct isc_writer *isc_writer_find(const char *name);
const struct isc_writer *const *isc_writers(size_t *n);

int isc_report_md(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		  const struct isc_report_opts *o);
int isc_report_json(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		    const struct isc_report_opts *o);
int isc_report_html(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		    const struct isc_report_opts *o);
int isc_export_chrome(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		      const struct isc_report_opts *o);

/* Shared by writers: the order categories are shown in. */
extern const enum isc_category isc_report_cat_order[ISC_CAT__COUNT];

#endif /* ISC_REPORT_H */
