/* SPDX-License-Identifier: MIT */
#include "watch/segments.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

bool isc_segment_name(const char *name, struct isc_segname *out)
{
	static const char tail[] = ".spill";
	size_t n = strlen(name), t = sizeof(tail) - 1;
	if (n <= t || strcmp(name + n - t, tail) != 0) {
		return false;
	}
	const char *seg = NULL;
	for (const char *p = strstr(name, ".seg-"); p != NULL; p = strstr(p + 1, ".seg-")) {
		seg = p;
	}
	if (seg == NULL) {
		return false;
	}
	const char *digits = seg + 5, *end = name + n - t;
	if (digits == end) {
		return false;
	}
	uint64_t seq = 0;
	for (const char *p = digits; p < end; p++) {
		if (*p < '0' || *p > '9' || seq > UINT64_MAX / 10 - 1) {
			return false;
		}
		seq = seq * 10 + (uint64_t)(*p - '0');
	}
	/* the pid: the dot-separated component before ".seg-" */
	const char *p = seg;
	int64_t pid = 0, scale = 1;
	while (p > name && p[-1] >= '0' && p[-1] <= '9' && scale < 10000000000LL) {
		pid += (p[-1] - '0') * scale;
		scale *= 10;
		p--;
	}
	if (p == seg || p == name || p[-1] != '.') {
		return false;
	}
	out->pid = pid;
	out->seq = seq;
	return true;
}

int isc_segdir_open(struct isc_segdir *s, const char *dir)
{
	memset(s, 0, sizeof(*s));
	s->ifd = -1;
	DIR *d = opendir(dir);
	if (d == NULL) {
		return -errno;
	}
	closedir(d);
	s->dir = strdup(dir);
	if (s->dir == NULL) {
		return -ENOMEM;
	}
	s->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->ifd >= 0 &&
	    inotify_add_watch(s->ifd, dir,
			      IN_MOVED_TO | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_DELETE) < 0) {
		close(s->ifd);
		s->ifd = -1;
	}
	return 0;
}

void isc_segdir_close(struct isc_segdir *s)
{
	for (size_t i = 0; i < s->n_seen; i++) {
		free(s->seen[i]);
	}
	free(s->seen);
	free(s->dir);
	if (s->ifd >= 0) {
		close(s->ifd);
	}
	memset(s, 0, sizeof(*s));
	s->ifd = -1;
}

/* Segments of one process in sequence order, processes by pid. */
static int by_segment(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	struct isc_segname sx, sy;
	if (isc_segment_name(x, &sx) && isc_segment_name(y, &sy) &&
	    (sx.pid != sy.pid || sx.seq != sy.seq)) {
		if (sx.pid != sy.pid) {
			return sx.pid < sy.pid ? -1 : 1;
		}
		return sx.seq < sy.seq ? -1 : 1;
	}
	return strcmp(x, y);
}

static ssize_t find(const struct isc_segdir *s, const char *name)
{
	size_t lo = 0, hi = s->n_seen;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = by_segment(&s->seen[mid], &name);
		if (c == 0) {
			return (ssize_t)mid;
		}
		if (c < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return -(ssize_t)lo - 1;
}

/* Remembers name; false when it was known already or memory ran out. */
static bool remember(struct isc_segdir *s, const char *name)
{
	ssize_t at = find(s, name);
	if (at >= 0) {
		return false;
	}
	size_t pos = (size_t)(-at - 1);
	if (s->n_seen == s->cap_seen) {
		size_t cap = s->cap_seen ? s->cap_seen * 2 : 64;
		char **v = realloc(s->seen, cap * sizeof(*v));
		if (v == NULL) {
			return false;
		}
		s->seen = v;
		s->cap_seen = cap;
	}
	char *copy = strdup(name);
	if (copy == NULL) {
		return false;
	}
	memmove(&s->seen[pos + 1], &s->seen[pos], (s->n_seen - pos) * sizeof(*s->seen));
	s->seen[pos] = copy;
	s->n_seen++;
	return true;
}

static void forget(struct isc_segdir *s, const char *name, const struct isc_segdir_ops *ops)
{
	ssize_t at = find(s, name);
	if (at < 0) {
		return;
	}
	ops->removed(ops->ctx, name);
	free(s->seen[at]);
	memmove(&s->seen[at], &s->seen[at + 1], (s->n_seen - (size_t)at - 1) * sizeof(*s->seen));
	s->n_seen--;
}

void isc_segdir_events(struct isc_segdir *s, const struct isc_segdir_ops *ops)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(s->ifd, buf, sizeof(buf));
		if (n <= 0) {
			return;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			struct isc_segname sn;
			if (ev->mask & IN_Q_OVERFLOW) {
				s->overflowed = true; /* the caller rescans */
			}
			if (ev->len == 0 || !isc_segment_name(ev->name, &sn)) {
				continue;
			}
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
				forget(s, ev->name, ops);
			} else if (remember(s, ev->name)) {
				ops->added(ops->ctx, ev->name);
			}
		}
	}
}

int isc_segdir_rescan(struct isc_segdir *s, const struct isc_segdir_ops *ops)
{
	DIR *d = opendir(s->dir);
	if (d == NULL) {
		return -errno;
	}
	char **now = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (struct dirent *de = readdir(d); de != NULL && rc == 0; de = readdir(d)) {
		struct isc_segname sn;
		if (!isc_segment_name(de->d_name, &sn)) {
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **v = realloc(now, cap * sizeof(*v));
			rc = v == NULL ? -ENOMEM : 0;
			now = v ? v : now;
		}
		if (rc == 0 && (now[n] = strdup(de->d_name)) != NULL) {
			n++;
		}
	}
	closedir(d);
	if (n > 1) {
		qsort(now, n, sizeof(*now), by_segment);
	}
	/* gone: known but not listed */
	for (size_t i = s->n_seen; rc == 0 && i-- > 0;) {
		if (bsearch(&s->seen[i], now, n, sizeof(*now), by_segment) == NULL) {
			char *name = strdup(s->seen[i]);
			if (name != NULL) {
				forget(s, name, ops);
				free(name);
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (rc == 0 && remember(s, now[i])) {
			ops->added(ops->ctx, now[i]);
		}
		free(now[i]);
	}
	free(now);
	s->overflowed = false;
	return rc;
}
