/* SPDX-License-Identifier: MIT */
#include "analyzer/readers/input-source.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static ssize_t raw_read(struct isc_source *s, unsigned char *buf, size_t n)
{
	if (s->fd < 0) {
		size_t k = s->mem_len - s->mem_pos;
		k = k < n ? k : n;
		memcpy(buf, s->mem + s->mem_pos, k);
		s->mem_pos += k;
		return (ssize_t)k;
	}
	for (;;) {
		ssize_t r = read(s->fd, buf, n);
		if (r >= 0 || errno != EINTR) {
			if (r < 0) {
				snprintf(s->err, sizeof(s->err), "read failed: %s",
					 strerror(errno));
			}
			return r;
		}
	}
}

static ssize_t inflate_read(struct isc_source *s, unsigned char *buf, size_t n)
{
	s->z.next_out = buf;
	s->z.avail_out = (uInt)n;
	while (s->z.avail_out == n) {
		if (s->z_end) {
			/* Concatenated gzip members are one stream (gzip(1) reads them so). */
			if (s->z.avail_in == 0 && !s->raw_eof) {
				ssize_t r = raw_read(s, s->raw, ISC_SOURCE_RAW);
				if (r < 0) {
					return -1;
				}
				s->raw_eof = r == 0;
				s->z.next_in = s->raw;
				s->z.avail_in = (uInt)r;
			}
			if (s->z.avail_in == 0) {
				return 0;
			}
			inflateReset(&s->z);
			s->z_end = false;
		}
		if (s->z.avail_in == 0 && !s->raw_eof) {
			ssize_t r = raw_read(s, s->raw, ISC_SOURCE_RAW);
			if (r < 0) {
				return -1;
			}
			s->raw_eof = r == 0;
			s->z.next_in = s->raw;
			s->z.avail_in = (uInt)r;
		}
		int zr = inflate(&s->z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			s->z_end = true;
		} else if (zr == Z_BUF_ERROR && s->raw_eof && s->z.avail_in == 0) {
			snprintf(s->err, sizeof(s->err), "truncated gzip stream");
			return -1;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			snprintf(s->err, sizeof(s->err), "corrupt gzip data (%s)",
				 s->z.msg != NULL ? s->z.msg : "inflate failed");
			return -1;
		}
	}
	return (ssize_t)(n - s->z.avail_out);
}

static ssize_t fill(struct isc_source *s, unsigned char *buf, size_t n)
{
	return s->gz ? inflate_read(s, buf, n) : raw_read(s, buf, n);
}

/* Blocks read ahead: 4 of 1 MiB, the one being taken among them. */
#define PF_BLOCKS 4
#define PF_BLOCK (1u << 20)

struct pf_block {
	unsigned char *buf;
	size_t len, pos;
	bool full; /* written by the reading thread, not yet taken */
	bool end;  /* the input's last: len 0 at its end, or err set */
};

struct isc_prefetch {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pf_block b[PF_BLOCKS];
	size_t put, take; /* the next block to write, to read */
	bool stop;	  /* the source is closing */
	bool done;	  /* the thread wrote its last block */
	int err;	  /* -1 when the input failed (s->err says why) */
};

/* A block filled from the input, unless it ends first: false at the end or on failure. */
static bool pf_fill(struct isc_source *s, struct pf_block *b, int *err)
{
	b->len = 0;
	b->pos = 0;
	while (b->len < PF_BLOCK) {
		/* a pipe that neither ends nor writes may be cancelled here (close) */
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		ssize_t r = fill(s, b->buf + b->len, PF_BLOCK - b->len);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (r <= 0) {
			*err = r < 0 ? -1 : 0;
			return false;
		}
		b->len += (size_t)r;
	}
	return true;
}

static void *pf_run(void *arg)
{
	struct isc_source *s = arg;
	struct isc_prefetch *p = s->pf;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (bool more = true; more;) {
		pthread_mutex_lock(&p->mu);
		struct pf_block *b = &p->b[p->put % PF_BLOCKS];
		while (b->full && !p->stop) {
			pthread_cond_wait(&p->cv, &p->mu);
		}
		bool stop = p->stop;
		pthread_mutex_unlock(&p->mu);
		if (stop) {
			break;
		}
		int err = 0;
		more = pf_fill(s, b, &err);
		pthread_mutex_lock(&p->mu);
		b->full = true;
		b->end = !more;
		p->err = err;
		p->done = !more;
		p->put++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

static void pf_free(struct isc_prefetch *p)
{
	for (size_t i = 0; i < PF_BLOCKS; i++) {
		free(p->b[i].buf);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

int isc_source_prefetch(struct isc_source *s)
{
	struct stat st;
	if (s->pf != NULL || s->fd < 0 ||
	    (!s->gz && fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode))) {
		return 0;
	}
	struct isc_prefetch *p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return -1;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (size_t i = 0; i < PF_BLOCKS; i++) {
		if ((p->b[i].buf = malloc(PF_BLOCK)) == NULL) {
			pf_free(p);
			return -1;
		}
	}
	s->pf = p;
	if (pthread_create(&p->th, NULL, pf_run, s) != 0) {
		s->pf = NULL;
		pf_free(p);
		return -1;
	}
	return 0;
}

/* Bytes of the blocks read ahead, in order (as fill). */
static ssize_t pf_read(struct isc_source *s, unsigned char *buf, size_t n)
{
	struct isc_prefetch *p = s->pf;
	pthread_mutex_lock(&p->mu);
	struct pf_block *b = &p->b[p->take % PF_BLOCKS];
	while (!b->full) {
		pthread_cond_wait(&p->cv, &p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	size_t k = b->len - b->pos < n ? b->len - b->pos : n;
	memcpy(buf, b->buf + b->pos, k);
	b->pos += k;
	if (k == 0 && b->end) {
		return p->err < 0 ? -1 : 0; /* the last block stays, saying so on every read */
	}
	if (b->pos == b->len && !b->end) {
		pthread_mutex_lock(&p->mu);
		b->full = false;
		p->take++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	return (ssize_t)k;
}

/* Stops the thread: it waits for room or reads; a pipe's read is cancelled. */
static void pf_stop(struct isc_source *s)
{
	struct isc_prefetch *p = s->pf;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	bool done = p->done;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (!done) {
		pthread_cancel(p->th);
	}
	pthread_join(p->th, NULL);
	pf_free(p);
	s->pf = NULL;
}

/* Reads the raw magic, sets up inflation when it is gzip, fills the head. */
static int start(struct isc_source *s)
{
	s->head = malloc(ISC_SOURCE_HEAD);
	if (s->head == NULL) {
		return -ENOMEM;
	}
	ssize_t r = raw_read(s, s->raw_magic, sizeof(s->raw_magic));
	if (r < 0) {
		return -EIO;
	}
	s->raw_magic_len = (size_t)r;
	if (r >= 2 && s->raw_magic[0] == 0x1f && s->raw_magic[1] == 0x8b) {
		s->gz = true;
		s->raw = malloc(ISC_SOURCE_RAW);
		if (s->raw == NULL || inflateInit2(&s->z, 16 + MAX_WBITS) != Z_OK) {
			return -ENOMEM;
		}
		memcpy(s->raw, s->raw_magic, (size_t)r);
		s->z.next_in = s->raw;
		s->z.avail_in = (uInt)r;
		s->raw_eof = false; /* raw_read says when the input ends */
	} else {
		memcpy(s->head, s->raw_magic, (size_t)r);
		s->head_len = (size_t)r;
	}
	while (s->head_len < ISC_SOURCE_HEAD) {
		r = fill(s, s->head + s->head_len, ISC_SOURCE_HEAD - s->head_len);
		if (r < 0) {
			return -EIO;
		}
		if (r == 0) {
			break;
		}
		s->head_len += (size_t)r;
	}
	return 0;
}

int isc_source_open_file(struct isc_source *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		int e = errno;
		snprintf(s->err, sizeof(s->err), "cannot open: %s", strerror(e));
		return -e;
	}
	s->whole_file = true;
	int r = start(s);
	if (r < 0 && s->err[0] == '\0') {
		snprintf(s->err, sizeof(s->err), "%s", strerror(-r));
	}
	return r;
}

int isc_source_open_fd(struct isc_source *s, int fd)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	int r = start(s);
	if (r < 0 && s->err[0] == '\0') {
		snprintf(s->err, sizeof(s->err), "%s", strerror(-r));
	}
	return r;
}

int isc_source_open_mem(struct isc_source *s, const void *buf, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->mem = buf;
	s->mem_len = n;
	int r = start(s);
	if (r < 0 && s->err[0] == '\0') {
		snprintf(s->err, sizeof(s->err), "%s", strerror(-r));
	}
	return r;
}

void isc_source_close(struct isc_source *s)
{
	if (s->pf != NULL) {
		pf_stop(s);
	}
	if (s->fd >= 0) {
		close(s->fd);
	}
	if (s->gz) {
		inflateEnd(&s->z);
	}
	free(s->raw);
	free(s->head);
	s->fd = -1;
	s->raw = NULL;
	s->head = NULL;
	s->gz = false;
}

ssize_t isc_source_read(struct isc_source *s, unsigned char *buf, size_t n)
{
	ssize_t r;
	if (s->head_pos < s->head_len) {
		size_t k = s->head_len - s->head_pos;
		k = k < n ? k : n;
		memcpy(buf, s->head + s->head_pos, k);
		s->head_pos += k;
		r = (ssize_t)k;
	} else {
		r = s->pf != NULL ? pf_read(s, buf, n) : fill(s, buf, n);
	}
	if (r > 0) {
		s->delivered += (uint64_t)r;
	}
	return r;
}
