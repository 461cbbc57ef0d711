/* SPDX-License-Identifier: MIT */
#include "analyzer/readers/json-sax.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/base/grow.h"

int isc_jsax_init(struct isc_jsax *j, const yajl_callbacks *cb, void *ctx, const char *label,
		  struct isc_diag *d)
{
	memset(j, 0, sizeof(*j));
	j->scan = malloc(sizeof(*j->scan));
	if (j->scan == NULL) {
		return -ENOMEM;
	}
	isc_jscan_init(j->scan, cb, ctx);
	j->label = label;
	j->diag = d;
	return 0;
}

void isc_jsax_finish(struct isc_jsax *j)
{
	if (j->scan != NULL) {
		isc_jscan_finish(j->scan);
		free(j->scan);
		j->scan = NULL;
	}
}

uint64_t isc_jsax_offset(const struct isc_jsax *j)
{
	return j->base + j->scan->pos;
}

static int problem(struct isc_jsax *j, int r)
{
	if (r == ISC_JSCAN_CANCELLED || j->failed) {
		return -EINVAL; /* the reader said why */
	}
	isc_diag_set(j->diag, "%s: byte %llu: not valid JSON: %s", j->label,
		     (unsigned long long)isc_jsax_offset(j), j->scan->error);
	return -EINVAL;
}

/* Room for more input: the cut token stays at the front; a huge one grows the buffer. */
static int make_room(struct isc_jsax *j, unsigned char **buf, size_t *cap, size_t have)
{
	if (have < *cap) {
		return 0;
	}
	if (*cap >= ISC_JSAX_MAX_TOKEN) {
		isc_diag_set(j->diag,
			     "%s: byte %llu: a single JSON value runs past %u MiB; "
			     "refusing it",
			     j->label, (unsigned long long)j->base, ISC_JSAX_MAX_TOKEN >> 20);
		return -EINVAL;
	}
	if (isc_resize(buf, *cap * 2, 1) < 0) {
		isc_diag_set(j->diag, "%s: out of memory", j->label);
		return -ENOMEM;
	}
	*cap *= 2;
	return 0;
}

int isc_jsax_run(struct isc_jsax *j, struct isc_source *src)
{
	size_t cap = 1 << 18, have = 0;
	unsigned char *buf = malloc(cap);
	if (buf == NULL) {
		isc_diag_set(j->diag, "%s: out of memory", j->label);
		return -ENOMEM;
	}
	int r = 0;
	for (;;) {
		ssize_t n = isc_source_read(src, buf + have, cap - have);
		if (n < 0) {
			isc_diag_set(j->diag, "%s: byte %llu: %s", j->label,
				     (unsigned long long)src->delivered, src->err);
			r = -EIO;
			break;
		}
		bool eof = n == 0;
		have += (size_t)n;
		size_t used = 0;
		int st = isc_jscan_feed(j->scan, buf, have, eof, &used);
		if (st != ISC_JSCAN_OK) {
			r = problem(j, st);
			break;
		}
		j->base += used;
		memmove(buf, buf + used, have - used);
		have -= used;
		if (eof) {
			break;
		}
		if ((r = make_room(j, &buf, &cap, have)) < 0) {
			break;
		}
	}
	if (r == 0 && isc_jscan_complete(j->scan) != ISC_JSCAN_OK) {
		isc_diag_set(j->diag, "%s: byte %llu: unexpected end of input (truncated file?)",
			     j->label, (unsigned long long)j->base);
		r = -EINVAL;
	}
	free(buf);
	return r;
}

/* n bytes at offset off of a file (fd) or of memory (mem when fd < 0). */
static ssize_t read_at(int fd, const unsigned char *mem, uint64_t off, unsigned char *buf, size_t n)
{
	if (fd < 0) {
		memcpy(buf, mem + off, n);
		return (ssize_t)n;
	}
	for (;;) {
		ssize_t r = pread(fd, buf, n, (off_t)off);
		if (r >= 0 || errno != EINTR) {
			return r;
		}
	}
}

int isc_jsax_run_at(struct isc_jsax *j, int fd, const unsigned char *mem, uint64_t *pos,
		    uint64_t end)
{
	size_t cap = 1 << 18, have = 0;
	unsigned char *buf = malloc(cap);
	if (buf == NULL) {
		isc_diag_set(j->diag, "%s: out of memory", j->label);
		return -ENOMEM;
	}
	uint64_t next = *pos; /* the next byte to read */
	int r = 0;
	for (;;) {
		size_t want = end - next < cap - have ? (size_t)(end - next) : cap - have;
		ssize_t n = want > 0 ? read_at(fd, mem, next, buf + have, want) : 0;
		if (n < 0) {
			isc_diag_set(j->diag, "%s: byte %llu: read failed: %s", j->label,
				     (unsigned long long)next, strerror(errno));
			r = -EIO;
			break;
		}
		next += (uint64_t)n;
		have += (size_t)n;
		bool eof = next >= end || n == 0; /* n == 0: the file shrank */
		size_t used = 0;
		j->base = *pos;
		int st = isc_jscan_feed(j->scan, buf, have, eof, &used);
		*pos += used;
		if (st == ISC_JSCAN_PAUSED) {
			r = 1;
			break;
		}
		if (st != ISC_JSCAN_OK) {
			r = problem(j, st);
			break;
		}
		memmove(buf, buf + used, have - used);
		have -= used;
		if (eof) {
			break;
		}
		j->base = *pos;
		if ((r = make_room(j, &buf, &cap, have)) < 0) {
			break;
		}
	}
	if (r == 0) {
		j->base = *pos;
	}
	free(buf);
	return r;
}
