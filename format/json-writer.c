/* SPDX-License-Identifier: MIT */
#include "format/json-writer.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

void isc_json_init(struct isc_json *j, char *buf, size_t cap, isc_json_sink sink, void *ctx)
{
	memset(j, 0, sizeof(*j));
	j->buf = buf;
	j->cap = cap;
	j->sink = sink;
	j->ctx = ctx;
}

int isc_json_flush(struct isc_json *j)
{
	if (j->len > 0 && j->err == 0) {
		int r = j->sink(j->ctx, j->buf, j->len);
		if (r < 0) {
			j->err = r;
		} else {
			j->written += j->len;
		}
	}
	j->len = 0;
	return j->err;
}

int isc_json_sink_fd(void *ctx, const char *buf, size_t len)
{
	int fd = *(int *)ctx;

	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int isc_json_sink_file(void *ctx, const char *buf, size_t len)
{
	FILE *f = ctx;

	if (fwrite(buf, 1, len, f) != len) {
		return ferror(f) ? -EIO : -ENOSPC;
	}
	return 0;
}

static void put_slow(struct isc_json *j, const char *s, size_t n)
{
	while (n > 0) {
		if (j->len == j->cap) {
			isc_json_flush(j);
		}
		size_t room = j->cap - j->len;
		size_t k = n < room ? n : room;
		memcpy(j->buf + j->len, s, k);
		j->len += k;
		s += k;
		n -= k;
	}
}

static inline void put(struct isc_json *j, const char *s, size_t n)
{
	if (__builtin_expect(n <= j->cap - j->len, 1)) {
		memcpy(j->buf + j->len, s, n);
		j->len += n;
		return;
	}
	put_slow(j, s, n);
}

static inline void putc_(struct isc_json *j, char c)
{
	if (j->len == j->cap) {
		isc_json_flush(j);
	}
	j->buf[j->len++] = c;
}

/* Called before every value and key: the comma between siblings. */
static void sep(struct isc_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0 && j->need_comma[j->depth]) {
		putc_(j, ',');
	}
	if (j->pretty && j->depth > 0) {
		putc_(j, '\n');
		for (int i = 0; i < j->depth; i++) {
			put(j, "  ", 2);
		}
	}
	if (j->depth > 0) {
		j->need_comma[j->depth] = true;
	}
}

static void open_(struct isc_json *j, char c)
{
	sep(j);
	putc_(j, c);
	if (j->depth + 1 < ISC_JSON_MAX_DEPTH) {
		j->depth++;
		j->need_comma[j->depth] = false;
	}
}

static void close_(struct isc_json *j, char c)
{
	bool had = j->need_comma[j->depth];
	if (j->depth > 0) {
		j->depth--;
	}
	if (j->pretty && had) {
		putc_(j, '\n');
		for (int i = 0; i < j->depth; i++) {
			put(j, "  ", 2);
		}
	}
	putc_(j, c);
}

void isc_json_begin_object(struct isc_json *j)
{
	open_(j, '{');
}
void isc_json_end_object(struct isc_json *j)
{
	close_(j, '}');
}
void isc_json_begin_array(struct isc_json *j)
{
	open_(j, '[');
}
void isc_json_end_array(struct isc_json *j)
{
	close_(j, ']');
}

static const char hexd[] = "0123456789abcdef";

/* Bytes that cannot appear raw inside a JSON string (we also escape DEL). */
static bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c == 0x7f;
}

/* Writes s escaped for a JSON string, without the quotes. */
static void escape_run(struct isc_json *j, const char *s, size_t n)
{
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		/* A C1 control (U+0080-U+009F) is valid JSON raw, but a terminal that shows
		 * the file acts on it: escaped like the C0 ones. */
		bool c1 = c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
			  (unsigned char)s[i + 1] <= 0x9f;
		if (!needs_escape(c) && !c1) {
			run++;
			continue;
		}
		put(j, s + i - run, run);
		run = 0;
		c = c1 ? (unsigned char)s[++i] : c;
		switch (c) {
		case '"':
			put(j, "\\\"", 2);
			break;
		case '\\':
			put(j, "\\\\", 2);
			break;
		case '\n':
			put(j, "\\n", 2);
			break;
		case '\r':
			put(j, "\\r", 2);
			break;
		case '\t':
			put(j, "\\t", 2);
			break;
		default: {
			char u[6] = { '\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15] };
			put(j, u, 6);
		}
		}
	}
	put(j, s + n - run, run);
}

/*
 * Length of the longest valid UTF-8 prefix of s. Strings from the traced process
 * are not guaranteed to be UTF-8 (a kernel name, a path, a user's scope name):
 * invalid bytes become U+FFFD so that the file stays valid JSON.
 */
static size_t utf8_valid_prefix(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len = (c & 0xe0) == 0xc0	  ? 2
			     : (c & 0xf0) == 0xe0 ? 3
			     : (c & 0xf8) == 0xf0 ? 4
						  : 0;
		if (len == 0 || c == 0xc0 || c == 0xc1 || c > 0xf4 || i + len > n) {
			return i;
		}
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80) {
				return i;
			}
		}
		i += len;
	}
	return i;
}

void isc_json_string_n(struct isc_json *j, const char *s, size_t n)
{
	sep(j);
	putc_(j, '"');
	while (n > 0) {
		size_t ok = utf8_valid_prefix((const unsigned char *)s, n);
		escape_run(j, s, ok);
		s += ok;
		n -= ok;
		if (n > 0) {
			put(j, "\xef\xbf\xbd", 3);
			s++;
			n--;
		}
	}
	putc_(j, '"');
}

void isc_json_string(struct isc_json *j, const char *s)
{
	if (s == NULL) {
		isc_json_null(j);
		return;
	}
	isc_json_string_n(j, s, strlen(s));
}

/* Keys are the writer's own ASCII literals: written as they are, no escaping (the
 * trace writer writes a dozen per event). */
void isc_json_key_n(struct isc_json *j, const char *key, size_t n)
{
	sep(j);
	if (n + 3 <= j->cap - j->len) {
		char *b = j->buf + j->len;
		b[0] = '"';
		memcpy(b + 1, key, n);
		b[n + 1] = '"';
		b[n + 2] = ':';
		j->len += n + 3;
	} else {
		putc_(j, '"');
		put(j, key, n);
		put(j, "\":", 2);
	}
	if (j->pretty) {
		putc_(j, ' ');
	}
	j->after_key = true;
}

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

size_t isc_fmt_uint(char *out, uint64_t v)
{
	char tmp[20];
	size_t i = sizeof(tmp);
	/* two digits per division: number formatting is most of the trace writer's work */
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;
		v /= 100;
		tmp[--i] = digit_pairs[d + 1];
		tmp[--i] = digit_pairs[d];
	}
	if (v >= 10) {
		unsigned d = (unsigned)v * 2;
		tmp[--i] = digit_pairs[d + 1];
		tmp[--i] = digit_pairs[d];
	} else {
		tmp[--i] = (char)('0' + v);
	}
	size_t n = sizeof(tmp) - i;
	memcpy(out, tmp + i, n);
	return n;
}

size_t isc_fmt_int(char *out, int64_t v)
{
	if (v < 0) {
		out[0] = '-';
		/* -(v + 1) + 1 avoids overflow on INT64_MIN */
		return 1 + isc_fmt_uint(out + 1, (uint64_t)(-(v + 1)) + 1);
	}
	return isc_fmt_uint(out, (uint64_t)v);
}

void isc_json_int(struct isc_json *j, int64_t v)
{
	char b[24];
	sep(j);
	put(j, b, isc_fmt_int(b, v));
}

void isc_json_uint(struct isc_json *j, uint64_t v)
{
	char b[24];
	sep(j);
	put(j, b, isc_fmt_uint(b, v));
}

void isc_json_ns_as_us(struct isc_json *j, int64_t ns)
{
	char b[32];
	size_t n = 0;
	sep(j);
	uint64_t a;
	if (ns < 0) {
		b[n++] = '-';
		a = (uint64_t)(-(ns + 1)) + 1;
	} else {
		a = (uint64_t)ns;
	}
	n += isc_fmt_uint(b + n, a / 1000);
	unsigned frac = (unsigned)(a % 1000);
	b[n++] = '.';
	b[n++] = (char)('0' + frac / 100);
	b[n++] = (char)('0' + frac / 10 % 10);
	b[n++] = (char)('0' + frac % 10);
	put(j, b, n);
}

void isc_json_double(struct isc_json *j, double v, int decimals)
{
	if (!isfinite(v)) {
		isc_json_null(j);
		return;
	}
	if (decimals < 0) {
		decimals = 0;
	}
	if (decimals > 9) {
		decimals = 9;
	}
	double scale = 1.0;
	for (int i = 0; i < decimals; i++) {
		scale *= 10.0;
	}
	double a = fabs(v) * scale + 0.5;
	char b[48];
	size_t n = 0;
	sep(j);
	if (a >= 1.8e19) {
		/* Beyond uint64: rare (sizes in bytes as doubles); %g is exact enough. */
		n = (size_t)snprintf(b, sizeof(b), "%.17g", v);
		put(j, b, n);
		return;
	}
	uint64_t fixed = (uint64_t)a;
	uint64_t ip = fixed, fp = 0;
	uint64_t div = (uint64_t)scale;
	if (decimals > 0) {
		ip = fixed / div;
		fp = fixed % div;
	}
	if (v < 0 && fixed != 0) {
		b[n++] = '-';
	}
	n += isc_fmt_uint(b + n, ip);
	if (fp != 0) {
		char d[10];
		for (int i = decimals - 1; i >= 0; i--) {
			d[i] = (char)('0' + fp % 10);
			fp /= 10;
		}
		int last = decimals;
		while (last > 0 && d[last - 1] == '0') {
			last--;
		}
		b[n++] = '.';
		memcpy(b + n, d, (size_t)last);
		n += (size_t)last;
	}
	put(j, b, n);
}

void isc_json_bool(struct isc_json *j, bool v)
{
	sep(j);
	put(j, v ? "true" : "false", v ? 4 : 5);
}

void isc_json_null(struct isc_json *j)
{
	sep(j);
	put(j, "null", 4);
}

void isc_json_hex(struct isc_json *j, uint64_t v)
{
	char b[20];
	size_t n = 0;
	b[n++] = '"';
	b[n++] = '0';
	b[n++] = 'x';
	int shift = 60;
	while (shift > 0 && ((v >> shift) & 15) == 0) {
		shift -= 4;
	}
	for (; shift >= 0; shift -= 4) {
		b[n++] = hexd[(v >> shift) & 15];
	}
	b[n++] = '"';
	sep(j);
	put(j, b, n);
}

void isc_json_raw(struct isc_json *j, const char *text, size_t n)
{
	sep(j);
	put(j, text, n);
}

void isc_json_kv_string(struct isc_json *j, const char *key, const char *s)
{
	isc_json_key(j, key);
	isc_json_string(j, s);
}

void isc_json_kv_int(struct isc_json *j, const char *key, int64_t v)
{
	isc_json_key(j, key);
	isc_json_int(j, v);
}

void isc_json_kv_uint(struct isc_json *j, const char *key, uint64_t v)
{
	isc_json_key(j, key);
	isc_json_uint(j, v);
}

void isc_json_kv_double(struct isc_json *j, const char *key, double v, int decimals)
{
	isc_json_key(j, key);
	isc_json_double(j, v, decimals);
}

void isc_json_kv_bool(struct isc_json *j, const char *key, bool v)
{
	isc_json_key(j, key);
	isc_json_bool(j, v);
}
