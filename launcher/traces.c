/* SPDX-License-Identifier: MIT */
/*
 * Which traces belong to this run: the files a run can write (the trace, those of
 * descendants, spill files of killed processes) are listed before the command starts
 * and after it ends; the run's are the new ones and those replaced or rewritten since.
 * Comparing the files themselves, not their times with a clock, leaves no window in
 * which a trace written in the same clock tick as the start is missed or an old one
 * taken.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "launcher/launcher.h"

static int add(struct isc_trace_set *s, const char *path, const struct stat *st)
{
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->v[i].path, path) == 0) {
			return 0;
		}
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct isc_trace_file *v = realloc(s->v, cap * sizeof(*v));
		if (v == NULL) {
			return -ENOMEM;
		}
		s->v = v;
		s->cap = cap;
	}
	struct isc_trace_file *f = &s->v[s->n];
	if ((f->path = strdup(path)) == NULL) {
		return -ENOMEM;
	}
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	f->ctime = st->st_ctim;
	s->n++;
	return 0;
}

static int scan_glob(struct isc_trace_set *s, const char *pattern)
{
	glob_t g;
	int r = 0;
	if (glob(pattern, 0, NULL, &g) != 0) {
		return 0;
	}
	for (size_t i = 0; i < g.gl_pathc && r == 0; i++) {
		struct stat st;
		/* snapshots and capture windows are taken on demand during the run, not at
		 * its end; a flight recorder's segments are in its frozen trace */
		const char *p = g.gl_pathv[i];
		if (strstr(p, ".snapshot-") == NULL && strstr(p, ".capture-") == NULL &&
		    strstr(p, ".seg-") == NULL && stat(g.gl_pathv[i], &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			r = add(s, g.gl_pathv[i], &st);
		}
	}
	globfree(&g);
	return r;
}

int isc_traces_scan(const char *output, struct isc_trace_set *s)
{
	char pattern[PATH_MAX + 32];
	size_t stem = strlen(output);
	struct stat st;
	int r = 0;
	if (stat(output, &st) == 0 && S_ISREG(st.st_mode)) {
		r = add(s, output, &st);
	}
	if (stem > 5 && strcmp(output + stem - 5, ".json") == 0) {
		stem -= 5;
	}
	snprintf(pattern, sizeof(pattern), "%.*s.[0-9]*.json", (int)stem, output);
	r = r == 0 ? scan_glob(s, pattern) : r;
	snprintf(pattern, sizeof(pattern), "%.*s.[0-9]*.spill", (int)stem, output);
	return r == 0 ? scan_glob(s, pattern) : r;
}

static bool same(const struct isc_trace_file *a, const struct isc_trace_file *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

size_t isc_traces_new(const struct isc_trace_set *before, const struct isc_trace_set *after,
		      const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < after->n && n < max; i++) {
		bool old = false;
		for (size_t j = 0; j < before->n && !old; j++) {
			old = strcmp(before->v[j].path, after->v[i].path) == 0 &&
			      same(&before->v[j], &after->v[i]);
		}
		if (!old) {
			out[n++] = after->v[i].path;
		}
	}
	return n;
}

void isc_traces_finish(struct isc_trace_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}
