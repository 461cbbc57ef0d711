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

#include "gate.h"
#include "report.h"

/* Length of the valid UTF-8 sequence at s, 0 when the byte does not start one
 * (overlong forms and surrogates included, which XML parsers refuse). */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	if (n == 0 || s[0] > 0xf4 || (s[0] == 0xe0 && s[1] < 0xa0) ||
	    (s[0] == 0xed && s[1] >= 0xa0) || (s[0] == 0xf0 && s[1] < 0x90) ||
	    (s[0] == 0xf4 && s[1] >= 0x90)) {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return 0;
		}
	}
	return n;
}

/* Text for an attribute or element: markup escaped, and what XML 1.0 cannot carry
 * (control characters, bytes that are not UTF-8 - names come from traces) as '?'. */
static void xml(FILE *f, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	while (*s != '\0') {
		if (*s >= 0x80) {
			size_t n = utf8_len(s);
			if (n == 0) {
				fputc('?', f);
				n = 1;
			} else {
				fwrite(s, 1, n, f);
			}
			s += n;
			continue;
		}
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		case '\t':
		case '\n':
			fputc(*s, f);
			break;
		default:
			fputc(*s < 0x20 ? '?' : *s, f);
			break;
		}
		s++;
	}
}

static void property(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	xml(f, value);
	fprintf(f, "\"/>\n");
}

static void testcase(FILE *f, const struct isc_gate_item *it)
{
	bool budget = it->kind == ISC_GATE_BUDGET;
	fprintf(f, "    <testcase classname=\"inferscope.%s\" name=\"",
		budget ? "budget" : "check");
	xml(f, it->name);
	if (it->passed) {
		fprintf(f, "\" time=\"0\"/>\n");
		return;
	}
	fprintf(f, "\" time=\"0\">\n      <failure type=\"%s\" message=\"",
		budget ? "budget" : "check");
	xml(f, it->detail);
	fprintf(f, "\">");
	xml(f, it->detail);
	fprintf(f, "</failure>\n    </testcase>\n");
}

static void diff_output(FILE *f, const struct isc_gate_result *g)
{
	const struct isc_diff *d = &g->diff;
	fprintf(f, "    <system-out>op diff against ");
	xml(f, g->base->label);
	fprintf(f, ":");
	for (int c = 0; c < ISC_DIFF__COUNT; c++) {
		fprintf(f, " %zu %s", d->by_change[c], isc_diff_change_name(c));
	}
	fputc('\n', f);
	for (size_t i = 0; i < d->n && d->rows[i].change != ISC_DIFF_UNCHANGED; i++) {
		const struct isc_diff_row *r = &d->rows[i];
		fprintf(f, "%s %s ", isc_diff_change_name(r->change),
			isc_stat_group_name(r->group));
		xml(f, r->name);
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
