/* SPDX-License-Identifier: MIT */
#include "analyzer/readers/reader.h"

#include <errno.h>
#include <string.h>

#include "analyzer/base/par.h"

static const struct isc_reader *const readers[] = {
	&isc_reader_spill,
	&isc_reader_inferscope,
	&isc_reader_kineto,
	&isc_reader_bare,
};

const struct isc_reader *const *isc_readers(size_t *n)
{
	*n = sizeof(readers) / sizeof(readers[0]);
	return readers;
}

const struct isc_reader *isc_reader_find(const char *name)
{
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		if (strcmp(readers[i]->name, name) == 0) {
			return readers[i];
		}
	}
	return NULL;
}

size_t isc_head_find(const struct isc_source *src, const char *needle)
{
	const void *p = memmem(src->head, src->head_len, needle, strlen(needle));
	return p == NULL ? SIZE_MAX : (size_t)((const unsigned char *)p - src->head);
}

size_t isc_head_first(const struct isc_source *src)
{
	for (size_t i = 0; i < src->head_len; i++) {
		unsigned char c = src->head[i];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return i;
		}
	}
	return SIZE_MAX;
}

static const struct isc_reader *detect(const struct isc_source *src)
{
	const struct isc_reader *best = NULL;
	size_t best_at = SIZE_MAX;
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		size_t at = readers[i]->detect(src);
		if (at < best_at) {
			best = readers[i];
			best_at = at;
		}
	}
	return best;
}

static int no_reader(const struct isc_source *src, const char *label, struct isc_diag *d)
{
	size_t first = isc_head_first(src);
	if (first == SIZE_MAX) {
		isc_diag_set(d, "%s: byte 0: empty input (no JSON value)", label);
	} else if (src->head[first] != '{' && src->head[first] != '[') {
		isc_diag_set(d, "%s: byte %zu: not JSON: expected '{' but found byte 0x%02x", label,
			     first, src->head[first]);
	} else {
		isc_diag_set(d,
			     "%s: byte %zu: not a trace: no \"format_version\", \"traceEvents\" "
			     "or \"events\" key in the first %zu bytes",
			     label, first, src->head_len);
	}
	return -EINVAL;
}

static int read_source(struct isc_trace *t, const char *label, struct isc_source *src,
		       const struct isc_read_opts *o, struct isc_diag *d)
{
	const struct isc_reader *r = NULL;
	if (o != NULL && o->format != NULL) {
		r = isc_reader_find(o->format);
		if (r == NULL) {
			isc_diag_set(d, "%s: unknown input format '%s'", label, o->format);
			return -EINVAL;
		}
	} else {
		r = detect(src);
	}
	if (r == NULL) {
		return no_reader(src, label, d);
	}
	bool validate = o != NULL && o->validate;
	if (validate && r != &isc_reader_inferscope) {
		isc_diag_set(d, "%s: byte 0: not the InferScope format: this is %s", label,
			     r->what);
		return -EINVAL;
	}
	int input = isc_trace_add_input(t, label);
	if (input < 0) {
		isc_diag_set(d, "%s: out of memory", label);
		return input;
	}
	t->inputs[input].format = r->name;
	struct isc_read_ctx rc = {
		.t = t,
		.input = (uint16_t)input,
		.src = src,
		.label = label,
		.diag = d,
		.validate = validate,
		.threads = o != NULL ? o->threads : 0,
		.split = o != NULL ? o->split : 0,
	};
	/* inflation and a pipe's reads beside the parse (the spill reader takes the fd) */
	if (r != &isc_reader_spill &&
	    (rc.threads > 1 || (rc.threads == 0 && isc_par_threads() > 1))) {
		isc_source_prefetch(src);
	}
	return r->read(&rc);
}

/* A source just opened (r: the open's result) is read, then closed. */
static int read_opened(struct isc_trace *t, const char *label, struct isc_source *src, int r,
		       const struct isc_read_opts *o, struct isc_diag *d)
{
	if (r < 0) {
		isc_diag_set(d, "%s: %s", label, src->err);
	} else {
		r = read_source(t, label, src, o, d);
	}
	isc_source_close(src);
	return r;
}

int isc_read_file(struct isc_trace *t, const char *path, const struct isc_read_opts *o,
		  struct isc_diag *d)
{
	struct isc_source src;
	int r = isc_source_open_file(&src, path);
	return read_opened(t, path, &src, r, o, d);
}

int isc_read_fd(struct isc_trace *t, const char *label, int fd, const struct isc_read_opts *o,
		struct isc_diag *d)
{
	struct isc_source src;
	int r = isc_source_open_fd(&src, fd);
	return read_opened(t, label, &src, r, o, d);
}

int isc_read_buffer(struct isc_trace *t, const char *label, const void *buf, size_t n,
		    const struct isc_read_opts *o, struct isc_diag *d)
{
	struct isc_source src;
	int r = isc_source_open_mem(&src, buf, n);
	if (r < 0) {
		isc_diag_set(d, "%s: %s", label, src.err);
	} else {
		r = read_source(t, label, &src, o, d);
	}
	isc_source_close(&src);
	return r;
}
