/* SPDX-License-Identifier: MIT */
/*
 * The gate as JUnit XML, the format CI systems (GitLab `reports: junit`, Jenkins, the
 * GitHub test-report actions) show as test results: one testsuite, one testcase per
 * check and per budget, a <failure> with the reason for each that failed, and the op
 * diff as the suite's output. Deterministic: no timestamps, no host names.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "analyzer/gate/gate.h"
#include "analyzer/report/report.h"
#include "analyzer/report/markup.h"

static void property(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	isc_html_text(f, value);
	fprintf(f, "\"/>\n");
}

static void testcase(FILE *f, const struct isc_gate_item *it)
{
	bool budget = it->kind == ISC_GATE_BUDGET;
	fprintf(f, "    <testcase classname=\"inferscope.%s\" name=\"",
		budget ? "budget" : "check");
	isc_html_text(f, it->name);
	if (it->passed) {
		fprintf(f, "\" time=\"0\"/>\n");
		return;
	}
	fprintf(f, "\" time=\"0\">\n      <failure type=\"%s\" message=\"",
		budget ? "budget" : "check");
	isc_html_text(f, it->detail);
	fprintf(f, "\">");
	isc_html_text(f, it->detail);
	fprintf(f, "</failure>\n    </testcase>\n");
}

static void diff_output(FILE *f, const struct isc_gate_result *g)
{
	const struct isc_diff *d = &g->diff;
	fprintf(f, "    <system-out>op diff against ");
	isc_html_text(f, g->base->label);
	fprintf(f, ":");
	for (int c = 0; c < ISC_DIFF__COUNT; c++) {
		fprintf(f, " %zu %s", d->by_change[c], isc_diff_change_name(c));
	}
	fputc('\n', f);
	for (size_t i = 0; i < d->n && d->rows[i].change != ISC_DIFF_UNCHANGED; i++) {
		const struct isc_diff_row *r = &d->rows[i];
		fprintf(f, "%s %s ", isc_diff_change_name(r->change),
			isc_stat_group_name(r->group));
		isc_html_text(f, r->name);
		fprintf(f, ": count %llu -> %llu, total %.3f us -> %.3f us\n",
			(unsigned long long)r->base_count, (unsigned long long)r->count,
			r->base_total_us, r->total_us);
	}
	fprintf(f, "</system-out>\n");
}

int isc_report_junit(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		     const struct isc_report_opts *o)
{
	(void)t;
	(void)a;
	const struct isc_gate_result *g = o->gate;
	if (g == NULL) {
		return -EINVAL;
	}
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites name=\"inferscope\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n"
		"  <testsuite name=\"inferscope gate\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		"skipped=\"0\" time=\"0\">\n    <properties>\n",
		g->n, g->n_failed, g->n, g->n_failed);
	property(f, "trace", g->cur->label);
	property(f, "bottleneck", g->cur->bottleneck);
	if (g->base != NULL) {
		property(f, "baseline", g->base->label);
		property(f, "baseline_bottleneck", g->base->bottleneck);
	}
	fprintf(f, "    </properties>\n");
	for (size_t i = 0; i < g->n; i++) {
		testcase(f, &g->items[i]);
	}
	if (g->has_diff) {
		diff_output(f, g);
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	return ferror(f) ? -EIO : 0;
}
