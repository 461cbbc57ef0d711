/* SPDX-License-Identifier: MIT */
#include "analyzer/readers/descendants.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A descendant's own name (STEM.PID.json, STEM.PID.N.json): its stem's last dotted part
 * of the file name is a number. */
static bool numbered(const char *path, size_t stem)
{
	size_t i = stem;
	while (i > 0 && path[i - 1] >= '0' && path[i - 1] <= '9') {
		i--;
	}
	return i < stem && i > 0 && path[i - 1] == '.';
}

static bool listed(const struct isc_trace *t, const struct isc_path_list *l, const char *p)
{
	for (size_t i = 0; i < t->n_inputs; i++) {
		char a[PATH_MAX], b[PATH_MAX];
		if (strcmp(t->inputs[i].path, p) == 0 ||
		    (realpath(t->inputs[i].path, a) && realpath(p, b) && strcmp(a, b) == 0)) {
			return true;
		}
	}
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i], p) == 0) {
			return true;
		}
	}
	return false;
}

static int push(struct isc_path_list *l, const char *p)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (v == NULL) {
			return -ENOMEM;
		}
		l->v = v;
		l->cap = cap;
	}
	if ((l->v[l->n] = strdup(p)) == NULL) {
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

/* The files matching pattern, written at or after since_ns (0: any time). */
static int scan(const struct isc_trace *t, const char *pattern, int64_t since_ns,
		struct isc_path_list *out)
{
	glob_t g;
	int r = 0;
	if (glob(pattern, 0, NULL, &g) != 0) {
		return 0;
	}
	for (size_t i = 0; i < g.gl_pathc && r == 0; i++) {
		const char *p = g.gl_pathv[i];
		struct stat st;
		/* snapshots, capture windows and segments are taken during a run, on demand */
		if (strstr(p, ".snapshot-") || strstr(p, ".capture-") || strstr(p, ".seg-") ||
		    stat(p, &st) != 0 || !S_ISREG(st.st_mode) ||
		    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec < since_ns ||
		    listed(t, out, p)) {
			continue;
		}
		r = push(out, p);
	}
	globfree(&g);
	return r;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int isc_descendant_traces(const struct isc_trace *t, struct isc_path_list *out)
{
	int r = 0;
	for (size_t i = 0; i < t->n_inputs && r == 0; i++) {
		const struct isc_input *in = &t->inputs[i];
		size_t n = strlen(in->path);
		if (strcmp(in->format, "inferscope") != 0 || n <= 5 ||
		    strcmp(in->path + n - 5, ".json") != 0 || numbered(in->path, n - 5)) {
			continue;
		}
		/* since the process started, on the realtime clock: files a run before it
		 * left under the same name are not its descendants' */
		int64_t since =
			in->has_anchor && in->meta_start_ns
				? in->anchor_real_ns - (in->anchor_mono_ns - in->meta_start_ns)
				: 0;
		char pattern[PATH_MAX + 32];
		snprintf(pattern, sizeof(pattern), "%.*s.[0-9]*.json", (int)(n - 5), in->path);
		r = scan(t, pattern, since, out);
		snprintf(pattern, sizeof(pattern), "%.*s.[0-9]*.spill", (int)(n - 5), in->path);
		r = r == 0 ? scan(t, pattern, since, out) : r;
	}
	if (out->n > 1) {
		qsort(out->v, out->n, sizeof(*out->v), by_name);
	}
	return r;
}

void isc_path_list_finish(struct isc_path_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i]);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
