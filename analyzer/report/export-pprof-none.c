/* SPDX-License-Identifier: MIT */
/* -f pprof in a build without libprotobuf-c (meson -Dpprof): says so, writes nothing. */
#include <errno.h>

#include "analyzer/report/report.h"

int isc_export_pprof(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		     const struct isc_report_opts *o)
{
	(void)f;
	(void)t;
	(void)a;
	(void)o;
	return -ENOTSUP;
}
