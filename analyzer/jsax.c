/* SPDX-License-Identifier: MIT */
#include "jsax.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void isc_diag_set(struct isc_diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	/* One line, whatever the input put into the message. */
	for (char *p = d->msg; *p != '\0'; p++) {
		if (*p == '\n' || *p == '\r') {
			*p = ' ';
		}
	}
}

int isc_jsax_init(struct isc_jsax *j, const yajl_callbacks *cb, void *ctx, const char *label,
		  struct isc_diag *d)
{
	memset(j, 0, sizeof(*j));
	j->h = yajl_alloc(cb, NULL, ctx);
	if (j->h == NULL) {
		return -ENOMEM;
	}
	j->label = label;
	j->diag = d;
	return 0;
}

void isc_jsax_finish(struct isc_jsax *j)
{
	if (j->h != NULL) {
		yajl_free(j->h);
		j->h = NULL;
	}
}

uint64_t isc_jsax_offset(const struct isc_jsax *j)
{
	return j->base + yajl_get_bytes_consumed(j->h);
}

/* yajl's message minus its "parse error: " prefix and trailing newline. */
static void yajl_problem(struct isc_jsax *j, const unsigned char *buf, size_t n)
{
	unsigned char *m = yajl_get_error(j->h, 0, buf, n);
	const char *s = (const char *)m;
	if (strncmp(s, "parse error: ", 13) == 0) {
		s += 13;
	}
	char text[300];
	snprintf(text, sizeof(text), "%s", s);
	size_t len = strlen(text);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ')) {
		text[--len] = '\0';
	}
	isc_diag_set(j->diag, "%s: byte %llu: not valid JSON: %s", j->label,
		     (unsigned long long)isc_jsax_offset(j), text);
	yajl_free_error(j->h, m);
}

static int parse_chunk(struct isc_jsax *j, const unsigned char *buf, size_t n)
{
	uint64_t before = j->callbacks;
	yajl_status st = yajl_parse(j->h, buf, n);
	if (st == yajl_status_client_canceled || j->failed) {
		return -EINVAL;
	}
	if (st != yajl_status_ok) {
		yajl_problem(j, buf, n);
		return -EINVAL;
	}
	j->quiet = j->callbacks == before ? j->quiet + n : 0;
	if (j->quiet > ISC_JSAX_MAX_TOKEN) {
		isc_diag_set(j->diag, "%s: byte %llu: a single JSON value runs past %u MiB; refusing it",
			     j->label, (unsigned long long)(j->base + n), ISC_JSAX_MAX_TOKEN >> 20);
		return -EINVAL;
	}
	j->base += n;
	return 0;
}

int isc_jsax_run(struct isc_jsax *j, struct isc_source *src)
{
	enum { CHUNK = 1 << 18 };
	unsigned char *buf = malloc(CHUNK);
	if (buf == NULL) {
		isc_diag_set(j->diag, "%s: out of memory", j->label);
		return -ENOMEM;
	}
	int r = 0;
	for (;;) {
		ssize_t n = isc_source_read(src, buf, CHUNK);
		if (n < 0) {
			isc_diag_set(j->diag, "%s: byte %llu: %s", j->label,
				     (unsigned long long)src->delivered, src->err);
			r = -EIO;
			break;
		}
		if (n == 0) {
			break;
		}
		r = parse_chunk(j, buf, (size_t)n);
		if (r < 0) {
			break;
		}
	}
	if (r == 0) {
		yajl_status st = yajl_complete_parse(j->h);
		if (j->failed || st == yajl_status_client_canceled) {
			r = -EINVAL;
		} else if (st != yajl_status_ok) {
			isc_diag_set(j->diag, "%s: byte %llu: unexpected end of input (truncated file?)",
				     j->label, (unsigned long long)j->base);
			r = -EINVAL;
		}
	}
	free(buf);
	return r;
}
