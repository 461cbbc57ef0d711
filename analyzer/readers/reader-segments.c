/* SPDX-License-Identifier: MIT */
/*
 * The segments of one process as one input. The flight recorder (INFERSCOPE_MODE=
 * continuous) leaves BASE.PID.seg-NNNNNN.spill files and the open .spill.part; after a
 * SIGKILL nothing froze them into a trace. Given together (a shell glob), they are
 * merged in segment order by the recorder's own merge (format/spill.h: the first header,
 * each segment's blocks, the repeated start blocks of one image dropped) into a memory
 * file, read as one spill: one process, one timeline, instead of one "rank" per
 * segment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/base/diag.h"
#include "analyzer/base/sort.h"
#include "analyzer/readers/reader.h"
#include "format/spill.h"

struct seg {
	const char *path;
	size_t key_len; /* path up to ".seg-": directory, base and pid */
	unsigned long index;
	bool part;
	bool used;
};

/* Parses "...seg-NNNNNN.spill" or "...seg-NNNNNN.spill.part"; false for other names. */
static bool parse(const char *path, struct seg *s)
{
	const char *p = NULL;
	for (const char *q = strstr(path, ".seg-"); q != NULL; q = strstr(q + 1, ".seg-")) {
		p = q;
	}
	if (p == NULL || strchr(p, '/') != NULL) {
		return false;
	}
	const char *d = p + 5;
	char *end;
	if (*d < '0' || *d > '9') {
		return false;
	}
	unsigned long i = strtoul(d, &end, 10);
	bool part = strcmp(end, ".spill.part") == 0;
	if (!part && strcmp(end, ".spill") != 0) {
		return false;
	}
	*s = (struct seg){ path, (size_t)(p - path), i, part, false };
	return true;
}

static bool same_process(const struct seg *a, const struct seg *b)
{
	return a->key_len == b->key_len && memcmp(a->path, b->path, a->key_len) == 0;
}

static int by_index(const void *x, const void *y)
{
	const struct seg *a = x, *b = y;
	if (a->index != b->index) {
		return a->index < b->index ? -1 : 1;
	}
	return (int)a->part - (int)b->part; /* closed before a stale .part of the same */
}

/* Merges the group (sorted) into a memory file and reads it as one input; each segment
 * that could not be merged is named on stderr with why. */
static int read_group(struct isc_trace *t, struct seg *g, size_t n, const struct isc_read_opts *o,
		      struct isc_diag *d)
{
	const char **paths = calloc(n, sizeof(*paths));
	int *errs = calloc(n, sizeof(*errs));
	char label[4200];
	snprintf(label, sizeof(label), "%.*s.seg-%06lu..%06lu (%zu segments)", (int)g[0].key_len,
		 g[0].path, g[0].index, g[n - 1].index, n);
	int fd = paths && errs ? memfd_create("inferscope-segments", MFD_CLOEXEC) : -1;
	if (fd < 0) {
		int e = paths && errs ? errno : ENOMEM;
		free(paths);
		free(errs);
		isc_diag_set(d, "%s: %s", label, strerror(e));
		return -e;
	}
	for (size_t i = 0; i < n; i++) {
		paths[i] = g[i].path;
	}
	int r = isc_spill_merge(paths, n, fd, errs);
	free(paths);
	unsigned skipped = 0;
	for (size_t i = 0; i < n; i++) {
		if (errs[i] != 0) {
			skipped++;
			fprintf(stderr, "inferscope-analyze: %s: skipped, %s\n", g[i].path,
				errs[i] == EINVAL ? "not a spill segment of this version"
						  : strerror(errs[i]));
		}
	}
	free(errs);
	if (r < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		isc_diag_set(d, "%s: cannot merge the segments: %s", label,
			     strerror(r < 0 ? -r : errno));
		return r < 0 ? r : -EIO;
	}
	if (skipped > 0) {
		fprintf(stderr, "inferscope-analyze: %s: %u segment(s) unreadable, skipped\n",
			label, skipped);
	}
	return isc_read_fd(t, label, fd, o, d);
}

/* An open segment that holds no byte: left by a recorder older than the staged creation
 * (recorder.c) killed between the .part's creation and its header. It reads as nothing. */
static bool empty_part(const char *path)
{
	struct seg s;
	struct stat st;
	return parse(path, &s) && s.part && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       st.st_size == 0;
}

/* Empty open segments among other inputs are left out with a warning (each named),
 * rather than refusing the whole glob; given alone, one is refused as empty. Sets
 * empty[i] for each left out. */
static void skip_empty_parts(const char *const *paths, size_t n, bool *empty)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		empty[i] = empty_part(paths[i]);
		k += empty[i];
	}
	if (k == 0 || k == n) {
		memset(empty, 0, n * sizeof(*empty));
		return;
	}
	fprintf(stderr,
		"inferscope-analyze: %zu empty open segment%s skipped (a process killed as it "
		"created %s):",
		k, k > 1 ? "s" : "", k > 1 ? "them" : "it");
	for (size_t i = 0; i < n; i++) {
		if (empty[i]) {
			fprintf(stderr, " %s", paths[i]);
		}
	}
	fputc('\n', stderr);
}

int isc_read_inputs(struct isc_trace *t, const char *const *paths, size_t n,
		    const struct isc_read_opts *o, struct isc_diag *d)
{
	bool merge = o == NULL || o->format == NULL || strcmp(o->format, "spill") == 0;
	struct seg *segs = calloc(n ? n : 1, sizeof(*segs));
	bool *is_seg = calloc(n ? n : 1, sizeof(*is_seg));
	bool *skip = calloc(n ? n : 1, sizeof(*skip));
	if (segs == NULL || is_seg == NULL || skip == NULL) {
		free(segs);
		free(is_seg);
		free(skip);
		isc_diag_set(d, "out of memory");
		return -ENOMEM;
	}
	skip_empty_parts(paths, n, skip);
	for (size_t i = 0; merge && i < n; i++) {
		is_seg[i] = !skip[i] && parse(paths[i], &segs[i]);
	}
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		if (skip[i]) {
			continue;
		}
		if (!is_seg[i]) {
			r = isc_read_file(t, paths[i], o, d);
			continue;
		}
		if (segs[i].used) {
			continue; /* read with its group */
		}
		/* the group of segs[i]: it and every later segment of the same process,
		 * read where its first segment was given */
		struct seg *g = calloc(n - i, sizeof(*g));
		if (g == NULL) {
			isc_diag_set(d, "out of memory");
			r = -ENOMEM;
			break;
		}
		size_t k = 0;
		for (size_t j = i; j < n; j++) {
			if (is_seg[j] && !segs[j].used && same_process(&segs[i], &segs[j])) {
				segs[j].used = true;
				g[k++] = segs[j];
			}
		}
		if (k == 1) {
			r = isc_read_file(t, paths[i], o, d);
		} else {
			isc_qsort(g, k, sizeof(*g), by_index);
			size_t m = 1; /* a .part beside the closed one of its index: the closed */
			for (size_t j = 1; j < k; j++) {
				if (g[j].index != g[m - 1].index) {
					g[m++] = g[j];
				}
			}
			r = read_group(t, g, m, o, d);
		}
		free(g);
	}
	free(segs);
	free(is_seg);
	free(skip);
	return r;
}
