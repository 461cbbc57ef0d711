/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks (Brendan Gregg's flamegraph.pl input, which speedscope also opens): one
 * line per distinct stack, "pid 1000;python3 4242;outermost;...;innermost <CPU us>", the
 * CPU samples of the window summed by stack and sorted, so the output is deterministic
 * and its numbers add up to the samples' weights.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/escape.h"
#include "analyzer/base/sort.h"
#include "analyzer/model/profile.h"
#include "analyzer/report/report.h"

struct line {
	char *text;
	int64_t ns;
};

static int cmp_line(const void *x, const void *y)
{
	return strcmp(((const struct line *)x)->text, ((const struct line *)y)->text);
}

/* Appends s to buf without the folded format's separators, and with '?' for each
 * control character (names come from traces; the output goes to terminals). */
static size_t put(char *buf, size_t len, size_t cap, const char *s)
{
	while (*s && len + 1 < cap) {
		size_t c = isc_ctrl_len(s);
		buf[len++] = c > 0 ? '?' : *s == ';' ? ',' : *s;
		s += c > 0 ? c : 1;
	}
	buf[len] = '\0';
	return len;
}

void isc_folded_frame(const struct isc_trace *t, const struct isc_frame *f, char *buf, size_t n)
{
	char name[256];
	isc_frame_name(t, f, name, sizeof(name));
	const char *where = isc_trace_str(t, isc_frame_where(f));
	if (f->kind == ISC_FK_PYTHON && f->line > 0) {
		snprintf(buf, n, "%s (%s:%u)", name, where, f->line);
	} else if (f->function != 0 && *where) {
		const char *slash = strrchr(where, '/');
		snprintf(buf, n, "%s (%s)", name, slash ? slash + 1 : where);
	} else {
		snprintf(buf, n, "%s", name);
	}
}

static char *render(const struct isc_trace *t, const struct isc_ev *e,
		    const struct isc_stack_ref *r)
{
	size_t cap = 64 + r->n * 160, len = 0;
	char *buf = malloc(cap), fr[512];
	if (buf == NULL) {
		return NULL;
	}
	const struct isc_thread_info *ti = &t->threads[e->thread];
	const char *tname = isc_trace_str(t, ti->name);
	len = (size_t)snprintf(buf, cap, "pid %lld;", (long long)t->inputs[e->input].pid);
	snprintf(fr, sizeof(fr), "%s %lld", *tname ? tname : "thread", (long long)ti->tid);
	len = put(buf, len, cap, fr);
	for (size_t i = r->n; i-- > 0;) {
		isc_folded_frame(t, isc_stack_frame(r, i), fr, sizeof(fr));
		len = put(buf, len, cap, ";");
		buf[len - 1] = ';';
		len = put(buf, len, cap, fr);
	}
	return buf;
}

int isc_export_folded(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		      const struct isc_report_opts *o)
{
	(void)o;
	struct isc_wmap m = { 0 };
	struct line *v = NULL;
	size_t cap = 0;
	int r = 0;
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		struct isc_stack_ref st;
		if (e->type != ISC_T_CPU_SAMPLE || e->ts < a->window.start ||
		    e->ts > a->window.end || e->thread >= t->n_threads ||
		    !isc_stack_of(t, e, &st)) {
			continue;
		}
		bool added;
		size_t k = isc_wmap_get(&m, ((uint64_t)e->input << 32) | isc_ev_stack(e), e->thread,
					&added);
		if (k != SIZE_MAX && k >= cap) {
			cap = cap ? cap * 2 : 256;
			struct line *nv = realloc(v, cap * sizeof(*nv));
			v = nv != NULL ? nv : v;
			k = nv != NULL ? k : SIZE_MAX;
		}
		if (k == SIZE_MAX || (added && (v[k].text = render(t, e, &st)) == NULL)) {
			r = -ENOMEM;
			break;
		}
		v[k].ns = added ? 0 : v[k].ns;
		v[k].ns += (int64_t)e->v.bytes;
	}
	size_t n = r == 0 ? m.n : 0;
	isc_qsort(v, n, sizeof(*v), cmp_line);
	for (size_t i = 0; i < n; i++) {
		int64_t ns = v[i].ns;
		while (i + 1 < n && strcmp(v[i].text, v[i + 1].text) == 0) {
			ns += v[++i].ns; /* the same text from two stacks or inputs */
		}
		fprintf(f, "%s %lld\n", v[i].text, (long long)((ns + 500) / 1000));
	}
	for (size_t i = 0; i < m.n && v != NULL; i++) {
		free(v[i].text);
	}
	free(v);
	isc_wmap_free(&m);
	if (r < 0) {
		return r;
	}
	return ferror(f) ? -EIO : 0;
}
