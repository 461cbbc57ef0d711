/* SPDX-License-Identifier: MIT */
/*
 * xz and zlib for the symboliser (decompress.h). The libraries' structures are declared
 * here as their ABI is (liblzma's allocator, zlib's z_stream on LP64), so that neither
 * header is needed to build the preload: zlib's is optional in this project.
 */
#include <dlfcn.h>
#include <elf.h>
#include <stdbool.h>
#include <string.h>

#include "common/log.h"
#include "preload/samplers/decompress.h"
#include "format/scratch.h"

/* Both libraries' allocators: a mapping per block, its size in front. */
static void *block(size_t n)
{
	n += 16;
	uint64_t *p = isc_map(n);
	if (p == NULL) {
		return NULL;
	}
	p[0] = n;
	return p + 2;
}

static void unblock(void *ptr)
{
	if (ptr) {
		uint64_t *p = (uint64_t *)ptr - 2;
		isc_unmap(p, p[0]);
	}
}

static void *dl_sym(const char *lib, const char *name)
{
	void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	void *f = h ? dlsym(h, name) : NULL;
	if (f == NULL) {
		isc_info("symbols: %s not found, what it compresses is skipped", lib);
	}
	return f;
}

/* ---- xz (liblzma) ---- */

struct lzma_allocator_abi {
	void *(*alloc)(void *opaque, size_t nmemb, size_t size);
	void (*free)(void *opaque, void *ptr);
	void *opaque;
};

static void *lz_alloc(void *opaque, size_t nmemb, size_t size)
{
	(void)opaque;
	return block(nmemb * size);
}

static void lz_free(void *opaque, void *ptr)
{
	(void)opaque;
	unblock(ptr);
}

typedef int (*lzma_buf_fn)(uint64_t *memlimit, uint32_t flags,
			   const struct lzma_allocator_abi *allocator, const uint8_t *in,
			   size_t *in_pos, size_t in_size, uint8_t *out, size_t *out_pos,
			   size_t out_size);

const uint8_t *isc_unxz(const uint8_t *in, size_t n, size_t *out_n)
{
	static lzma_buf_fn decode;
	static bool tried;
	if (!tried) {
		tried = true;
		decode = (lzma_buf_fn)dl_sym("liblzma.so.5", "lzma_stream_buffer_decode");
	}
	if (decode == NULL) {
		return NULL;
	}
	static const struct lzma_allocator_abi a = { lz_alloc, lz_free, NULL };
	/* the stream does not say its size: grow the buffer until it fits */
	for (size_t cap = n * 8 + 65536; cap <= (256u << 20); cap *= 4) {
		uint8_t *out = isc_map(cap);
		uint64_t limit = UINT64_MAX;
		size_t ip = 0, op = 0;
		if (out == NULL) {
			return NULL;
		}
		int r = decode(&limit, 0, &a, in, &ip, n, out, &op, cap);
		if (r == 0) { /* LZMA_OK */
			*out_n = op;
			return out;
		}
		isc_unmap(out, cap);
		if (r != 10) { /* LZMA_BUF_ERROR: try a larger buffer */
			return NULL;
		}
	}
	return NULL;
}

/* ---- zlib ---- */

struct z_stream_abi {
	const uint8_t *next_in;
	unsigned avail_in;
	unsigned long total_in;
	uint8_t *next_out;
	unsigned avail_out;
	unsigned long total_out;
	const char *msg;
	void *state;
	void *(*zalloc)(void *opaque, unsigned items, unsigned size);
	void (*zfree)(void *opaque, void *ptr);
	void *opaque;
	int data_type;
	unsigned long adler, reserved;
};

static void *z_alloc(void *opaque, unsigned items, unsigned size)
{
	(void)opaque;
	return block((size_t)items * size);
}

static void z_free(void *opaque, void *ptr)
{
	(void)opaque;
	unblock(ptr);
}

static struct {
	int (*init2)(struct z_stream_abi *z, int window_bits, const char *version, int size);
	int (*inflate)(struct z_stream_abi *z, int flush);
	int (*end)(struct z_stream_abi *z);
} zl;

/* A section being inflated: the output mapped at its full size, written as far as asked. */
struct isc_inflate {
	struct z_stream_abi z;
	uint8_t *out;
	size_t size;
	bool open; /* zlib's state is live: more to inflate */
};

struct isc_inflate *isc_inflate_begin(const uint8_t *in, size_t n, size_t *size)
{
	static bool tried;
	if (!tried) {
		tried = true;
		zl.init2 = (__typeof__(zl.init2))dl_sym("libz.so.1", "inflateInit2_");
		zl.inflate = (__typeof__(zl.inflate))dl_sym("libz.so.1", "inflate");
		zl.end = (__typeof__(zl.end))dl_sym("libz.so.1", "inflateEnd");
	}
	Elf64_Chdr ch;
	if (zl.init2 == NULL || zl.inflate == NULL || zl.end == NULL || n < sizeof(ch) + 2) {
		return NULL;
	}
	memcpy(&ch, in, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size == 0 || ch.ch_size > (1ull << 32) ||
	    n - sizeof(ch) > UINT32_MAX) {
		return NULL;
	}
	/* The zlib header (deflate, no preset dictionary), then the deflate stream inflated raw:
	 * zlib's own end check, an Adler-32 of the output, cost as much as indexing libc's line
	 * table; the output's size, which the section header gives, is checked instead. */
	const uint8_t *zh = in + sizeof(ch);
	if ((zh[0] & 0x0f) != 8 || (zh[0] >> 4) > 7 || (zh[1] & 0x20) ||
	    (zh[0] << 8 | zh[1]) % 31) {
		return NULL;
	}
	struct isc_inflate *f = isc_map(sizeof(*f));
	uint8_t *out = f ? isc_map(ch.ch_size) : NULL;
	if (out == NULL) {
		isc_unmap(f, f ? sizeof(*f) : 0);
		return NULL;
	}
	f->out = out;
	f->size = ch.ch_size;
	f->z.next_in = zh + 2;
	f->z.avail_in = (unsigned)(n - sizeof(ch) - 2);
	f->z.next_out = out;
	f->z.zalloc = z_alloc;
	f->z.zfree = z_free;
	/* "1.2.11": inflateInit_ checks only the major version and the structure's size */
	if (zl.init2(&f->z, -15 /* raw deflate, 32 KiB window */, "1.2.11", (int)sizeof(f->z)) !=
	    0) {
		isc_unmap(out, ch.ch_size);
		isc_unmap(f, sizeof(*f));
		return NULL;
	}
	f->open = true;
	*size = ch.ch_size;
	return f;
}

const uint8_t *isc_inflate_data(const struct isc_inflate *f)
{
	return f->out;
}

size_t isc_inflate_to(struct isc_inflate *f, size_t want)
{
	if (!f->open || f->z.total_out >= want) {
		return f->z.total_out;
	}
	/* in steps of 64 KiB at least: each call into zlib has a cost of its own (want comes
	 * from the data: compared so that no sum can wrap) */
	size_t to = want >= f->size || f->size - want <= 65536 ? f->size : want + 65536;
	f->z.avail_out = (unsigned)(to - f->z.total_out);
	int r = zl.inflate(&f->z, to == f->size ? 4 /* Z_FINISH */ : 0 /* Z_NO_FLUSH */);
	bool done = r == 1 /* Z_STREAM_END */;
	if ((r != 0 && !done) || (done && f->z.total_out != f->size) ||
	    (!done && f->z.total_out != to)) {
		/* bad data: what came out before it stays, nothing more will */
		f->z.total_out = 0;
		done = true;
	}
	if (done) {
		zl.end(&f->z);
		f->open = false;
	}
	return f->z.total_out;
}

void isc_inflate_end(struct isc_inflate *f)
{
	if (f != NULL && f->open) {
		zl.end(&f->z);
	}
	isc_unmap(f, f ? sizeof(*f) : 0);
}

const uint8_t *isc_elf_section_inflate(const uint8_t *in, size_t n, size_t *out_n)
{
	size_t size = 0;
	struct isc_inflate *f = isc_inflate_begin(in, n, &size);
	if (f == NULL) {
		return NULL;
	}
	const uint8_t *out = f->out;
	bool whole = isc_inflate_to(f, size) == size;
	isc_inflate_end(f);
	if (!whole) {
		isc_unmap((void *)out, size);
		return NULL;
	}
	*out_n = size;
	return out;
}
