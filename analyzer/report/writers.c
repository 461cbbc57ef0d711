/* SPDX-License-Identifier: MIT */
#include "analyzer/report/report.h"

#include <string.h>

static const struct isc_writer md = { "md", "markdown report (default)", isc_report_md };
static const struct isc_writer json = { "json", "analysis result as JSON", isc_report_json };
static const struct isc_writer html = { "html", "self-contained HTML report with inline SVG",
					isc_report_html };
static const struct isc_writer chrome = { "chrome",
					  "Chrome/Kineto trace JSON for Perfetto "
					  "and HTA",
					  isc_export_chrome };

static const struct isc_writer folded = { "folded",
					  "CPU samples as folded stacks (flamegraph.pl, "
					  "speedscope), CPU microseconds",
					  isc_export_folded };
static const struct isc_writer pprof = { "pprof",
					 "CPU time and GPU kernel time by stack as a gzipped "
					 "pprof profile.proto (go tool pprof, Pyroscope, Parca)",
					 isc_export_pprof };

static const struct isc_writer gate_md = { "gate-md",
					   "the gate alone in markdown, for a "
					   "pull-request comment (with --check/--baseline)",
					   isc_report_gate_md };
static const struct isc_writer junit = { "junit",
					 "the gate as JUnit XML (with --check/"
					 "--baseline)",
					 isc_report_junit };

static const struct isc_writer *const writers[] = { &md,     &json,  &html,    &chrome,
						    &folded, &pprof, &gate_md, &junit };

const struct isc_writer *isc_writer_find(const char *name)
{
	if (strcmp(name, "markdown") == 0) {
		name = "md";
	}
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++) {
		if (strcmp(writers[i]->name, name) == 0) {
			return writers[i];
		}
	}
	return NULL;
}

const struct isc_writer *const *isc_writers(size_t *n)
{
	*n = sizeof(writers) / sizeof(writers[0]);
	return writers;
}

bool isc_writer_needs_gate(const struct isc_writer *w)
{
	return w == &gate_md || w == &junit;
}
