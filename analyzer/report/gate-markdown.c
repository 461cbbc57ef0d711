/* SPDX-License-Identifier: MIT */
/*
 * The gate in markdown: a section of the report, or on its own the body of a
 * pull-request comment or of $GITHUB_STEP_SUMMARY. Every check and budget is listed,
 * pass or fail, so a reviewer sees what was asked as well as what broke.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/gate/gate.h"
#include "analyzer/report/report.h"

static const char *const group_title[ISC_SG__COUNT] = {
	[ISC_SG_KERNEL] = "kernel", [ISC_SG_GPU_COPY] = "GPU copy", [ISC_SG_CUDA_API] = "CUDA API",
	[ISC_SG_SCOPE] = "scope",   [ISC_SG_CPU_OP] = "operator",   [ISC_SG_SYSCALL] = "syscall",
};

static void heading(FILE *f, const struct isc_gate_result *g, bool standalone)
{
	const char *word = g->passed ? "passed" : "FAILED";
	if (standalone) {
		fprintf(f, "## InferScope gate: %s\n\n", word);
	} else {
		fprintf(f, "## Gate: %s\n\n", word);
	}
	if (g->n_failed > 0) {
		fprintf(f, "**%zu of %zu checks failed**", g->n_failed, g->n);
	} else {
		fprintf(f, "All %zu checks passed", g->n);
	}
	if (standalone) {
		fprintf(f, " on `");
		isc_md_cell(f, g->cur->label);
		fputc('`', f);
	}
	if (g->base != NULL) {
		fprintf(f, " against the baseline `");
		isc_md_cell(f, g->base->label);
		fputc('`', f);
	}
	fprintf(f, ".\n\nVerdict: %s (confidence %.2f)", g->cur->bottleneck, g->cur->confidence);
	if (g->base != NULL) {
		fprintf(f, "; baseline: %s (confidence %.2f)", g->base->bottleneck,
			g->base->confidence);
	}
	fprintf(f, ".\n\n");
	if (g->base != NULL && strcmp(g->base->window_how, g->cur->window_how) != 0) {
		fprintf(f, "Note: the windows differ (baseline: %s; this run: %s).\n\n",
			g->base->window_how, g->cur->window_how);
	}
}

static void items(FILE *f, const struct isc_gate_result *g)
{
	if (g->n == 0) {
		return;
	}
	fprintf(f, "| result | check | value | expected |\n|---|---|---:|---|\n");
	for (size_t i = 0; i < g->n; i++) {
		const struct isc_gate_item *it = &g->items[i];
		fprintf(f, "| %s | ", it->passed ? "pass" : "**FAIL**");
		if (it->kind == ISC_GATE_BUDGET) {
			isc_md_cell(f, it->name);
			fprintf(f, " vs baseline | %.2f %% -> %.2f %% (%s) | %s |\n", it->base,
				it->cur, it->value, it->expected);
			continue;
		}
		isc_md_cell(f, it->name);
		fprintf(f, " | %s | ", it->value);
		isc_md_cell(f, it->expected);
		fprintf(f, " |\n");
	}
	fputc('\n', f);
}

static void diff_row(FILE *f, const struct isc_diff_row *r)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	fprintf(f, "| %s | %s | ", isc_diff_change_name(r->change), group_title[r->group]);
	isc_md_cell(f, r->name);
	/* a side without the op has no time, not a time of zero */
	fprintf(f, " | %llu -> %llu | %s -> %s |\n", (unsigned long long)r->base_count,
		(unsigned long long)r->count,
		r->base_count ? isc_fmt_dur(b1, r->base_total_us * 1000.0) : "-",
		r->count ? isc_fmt_dur(b2, r->total_us * 1000.0) : "-");
}

static void diff(FILE *f, const struct isc_diff *d, int top)
{
	fprintf(f, "### Op diff against the baseline\n\n");
	for (int c = 0; c < ISC_DIFF__COUNT; c++) {
		fprintf(f, "%s%zu %s",
			c == 0			   ? ""
			: c == ISC_DIFF__COUNT - 1 ? " and "
						   : ", ",
			d->by_change[c], isc_diff_change_name(c));
	}
	fprintf(f,
		" kernels, copies, CUDA API calls, scopes and operators (increased or "
		"decreased: the total time moved by more than %g %% and 0.1 %% of the window, "
		"else the count changed).\n\n",
		d->threshold_pct);
	if (d->n == d->by_change[ISC_DIFF_UNCHANGED]) {
		return;
	}
	fprintf(f, "| change | kind | name | count | total time |\n|---|---|---|---:|---:|\n");
	size_t shown[ISC_DIFF__COUNT] = { 0 };
	for (size_t i = 0; i < d->n; i++) {
		const struct isc_diff_row *r = &d->rows[i];
		if (r->change == ISC_DIFF_UNCHANGED) {
			break;
		}
		if (shown[r->change]++ < (size_t)top) {
			diff_row(f, r);
		} else if (shown[r->change] == (size_t)top + 1) {
			fprintf(f, "| %s | | (%zu more) | | |\n", isc_diff_change_name(r->change),
				d->by_change[r->change] - (size_t)top);
		}
	}
	fputc('\n', f);
}

void isc_md_gate(FILE *f, const struct isc_gate_result *g, int top, bool standalone)
{
	heading(f, g, standalone);
	items(f, g);
	if (g->has_diff) {
		diff(f, &g->diff, top);
	}
}

int isc_report_gate_md(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		       const struct isc_report_opts *o)
{
	(void)t;
	(void)a;
	if (o->gate == NULL) {
		return -EINVAL;
	}
	FILE *m = isc_md_open(f);
	if (m == NULL) {
		return -ENOMEM;
	}
	isc_md_gate(m, o->gate, o->top, true);
	bool bad = ferror(m) != 0;
	return fclose(m) != 0 || bad || ferror(f) ? -EIO : 0;
}
