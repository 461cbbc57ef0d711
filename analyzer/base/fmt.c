/* SPDX-License-Identifier: MIT */
#include "analyzer/base/fmt.h"

#include <math.h>
#include <stdio.h>

const char *isc_fmt_dur(char buf[ISC_FMT_LEN], double ns)
{
	double a = fabs(ns);
	if (a >= 1e9) {
		snprintf(buf, ISC_FMT_LEN, "%.3f s", ns / 1e9);
	} else if (a >= 1e6) {
		snprintf(buf, ISC_FMT_LEN, "%.3f ms", ns / 1e6);
	} else {
		snprintf(buf, ISC_FMT_LEN, "%.1f us", ns / 1e3);
	}
	return buf;
}

const char *isc_fmt_pct(char buf[ISC_FMT_LEN], double fraction)
{
	snprintf(buf, ISC_FMT_LEN, "%.1f %%", fraction * 100.0);
	return buf;
}

const char *isc_fmt_bytes(char buf[ISC_FMT_LEN], double bytes)
{
	if (bytes >= 1e9) {
		snprintf(buf, ISC_FMT_LEN, "%.2f GB", bytes / 1e9);
	} else if (bytes >= 1e6) {
		snprintf(buf, ISC_FMT_LEN, "%.2f MB", bytes / 1e6);
	} else if (bytes >= 1e3) {
		snprintf(buf, ISC_FMT_LEN, "%.2f kB", bytes / 1e3);
	} else {
		snprintf(buf, ISC_FMT_LEN, "%.0f B", bytes);
	}
	return buf;
}
