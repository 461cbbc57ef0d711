/* SPDX-License-Identifier: MIT */
/*
 * The bytes of one input: a file or a memory buffer, gzip'd or not (detected by the gzip
 * magic, inflated as a stream). The first bytes are kept aside so that readers can be
 * chosen by looking at them before reading starts.
 */
#ifndef ISC_SOURCE_H
#define ISC_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

#define ISC_SOURCE_HEAD 65536
#define ISC_SOURCE_RAW 65536

struct isc_source {
	int fd;		 /* -1 for a memory source */
	bool whole_file; /* fd was opened at the file's first byte (isc_source_open_file) */
	const unsigned char *mem;
	size_t mem_len, mem_pos;
	bool gz, z_end, raw_eof;
	z_stream z;
	unsigned char *raw;  /* compressed input buffer (gz only) */
	unsigned char *head; /* first decompressed bytes */
	size_t head_len, head_pos;
	unsigned char raw_magic[16]; /* first raw bytes, for binary formats */
	size_t raw_magic_len;
	uint64_t delivered;	 /* decompressed bytes handed out */
	char err[200];		 /* set when a read fails */
	struct isc_prefetch *pf; /* reads ahead on a thread of its own (isc_source_prefetch) */
};

/* Returns 0, or a negative errno with s->err set. */
int isc_source_open_file(struct isc_source *s, const char *path);
int isc_source_open_mem(struct isc_source *s, const void *buf, size_t n);
/* Reads fd from its current position; the source owns fd from then on. */
int isc_source_open_fd(struct isc_source *s, int fd);
void isc_source_close(struct isc_source *s);
/*
 * From now on, the bytes past the head are inflated (gzip) or read (a pipe, a terminal) on
 * a thread of its own, a few blocks ahead of isc_source_read, which takes them in order:
 * the parser and the inflation run beside each other. Nothing for memory or an uncompressed
 * regular file, which are read as fast as they are copied. 0, or -1 when no thread could
 * start (the source reads on as before). The source's fd must then be read only through
 * isc_source_read.
 */
int isc_source_prefetch(struct isc_source *s);
/* Bytes read (0 at the end), or -1 with s->err set (corrupt or truncated gzip, I/O error). */
ssize_t isc_source_read(struct isc_source *s, unsigned char *buf, size_t n);

#endif /* ISC_SOURCE_H */
