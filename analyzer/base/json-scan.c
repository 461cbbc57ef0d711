/* SPDX-License-Identifier: MIT */
#include "analyzer/base/json-scan.h"

#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analyzer/base/grow.h"

enum { ST_VALUE, ST_VALUE_OR_CLOSE, ST_KEY_OR_CLOSE, ST_KEY, ST_COLON, ST_COMMA_OR_CLOSE, ST_DONE };

/* Byte classes inside strings: 0 plain, 1 quote, 2 backslash, 3 control, 4 non-ASCII. */
static const uint8_t str_class[256] = {
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};

/* What a token scanner says. */
enum { TOK_OK = 0, TOK_MORE = 1, TOK_BAD = 2 };

void isc_jscan_init(struct isc_jscan *s, const yajl_callbacks *cb, void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->cb = cb;
	s->ctx = ctx;
	s->st = ST_VALUE;
}

void isc_jscan_finish(struct isc_jscan *s)
{
	free(s->scratch);
	s->scratch = NULL;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static unsigned hex4(const unsigned char *p)
{
	return (unsigned)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 |
			  hexval(p[3]));
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decodes the escapes of a checked string body into s->scratch. */
static bool unescape(struct isc_jscan *s, const unsigned char *p, size_t n, size_t *out_len)
{
	if (s->scratch_cap < n + 1) {
		if (ISC_RESIZE(s->scratch, n + 1) < 0) {
			s->error = "out of memory";
			return false;
		}
		s->scratch_cap = n + 1;
	}
	char *o = s->scratch;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\\') {
			o[k++] = (char)p[i];
			continue;
		}
		unsigned char e = p[++i];
		static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
		const char *m = strchr(from, e);
		if (e != 'u') {
			o[k++] = to[m - from];
			continue;
		}
		unsigned cp = hex4(p + i + 1);
		i += 4;
		if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < n + 0 && p[i + 1] == '\\' &&
		    p[i + 2] == 'u') {
			unsigned lo = hex4(p + i + 3);
			if (lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			}
		}
		if (cp >= 0xd800 && cp < 0xe000) {
			cp = 0xfffd; /* a lone surrogate is not a character */
		}
		k += put_utf8(o + k, cp);
	}
	*out_len = k;
	return true;
}

/* Length of the UTF-8 sequence at p (lead byte >= 0x80), 0 when invalid, SIZE_MAX when cut. */
static size_t utf8_len(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0];
	size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (len == 0 || c == 0xc0 || c == 0xc1 || c > 0xf4) {
		return 0;
	}
	for (size_t k = 1; k < len; k++) {
		if (k >= avail) {
			return SIZE_MAX;
		}
		if ((p[k] & 0xc0) != 0x80) {
			return 0;
		}
	}
	return len;
}

/*
 * The first byte of buf[j..n) that is not plain string text (str_class 0): a quote, a
 * backslash, a control character or a byte of a multi-byte character; n when none is.
 * Strings are most of a trace's bytes, so they are scanned 16 bytes at a time where the
 * machine has SSE2 (every x86-64) and 8 at a time elsewhere.
 */
static size_t plain_run(const unsigned char *buf, size_t j, size_t n)
{
#if defined(__SSE2__)
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i space = _mm_set1_epi8(' ');
	for (; j + 16 <= n; j += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(buf + j));
		/* Signed: a byte >= 0x80 is negative, so below ' ' as a control byte is. */
		__m128i stop = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
			_mm_cmplt_epi8(v, space));
		unsigned m = (unsigned)_mm_movemask_epi8(stop);
		if (m != 0) {
			return j + (size_t)__builtin_ctz(m);
		}
	}
#else
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	for (; j + 8 <= n; j += 8) {
		uint64_t w;
		memcpy(&w, buf + j, 8);
		/* A zero byte of w ^ c where w has c; bytes below 0x20 or from 0x80 on. The
		 * lowest flag is exact (borrows only flag bytes above a true one). */
		uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
		uint64_t stop = ((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20) | w;
		stop &= high;
		if (stop != 0) {
			return j + (size_t)__builtin_ctzll(stop) / 8;
		}
	}
#endif
	while (j < n && str_class[buf[j]] == 0) {
		j++;
	}
	return j;
}

/* Scans the string starting at buf[i] (a quote); *end is just past the closing quote. */
static int scan_string(struct isc_jscan *s, const unsigned char *buf, size_t i, size_t n,
		       size_t *end, bool *escaped)
{
	size_t j = i + 1;
	*escaped = false;
	for (;;) {
		j = plain_run(buf, j, n);
		if (j >= n) {
			return TOK_MORE;
		}
		switch (str_class[buf[j]]) {
		case 1:
			*end = j + 1;
			return TOK_OK;
		case 2:
			*escaped = true;
			if (j + 1 >= n) {
				return TOK_MORE;
			}
			if (buf[j + 1] == 'u') {
				if (j + 6 > n) {
					return TOK_MORE;
				}
				for (int k = 2; k < 6; k++) {
					if (hexval(buf[j + k]) < 0) {
						s->error = "invalid \\u escape in a string";
						return TOK_BAD;
					}
				}
				j += 6;
			} else if (strchr("\"\\/bfnrt", buf[j + 1]) != NULL && buf[j + 1] != 0) {
				j += 2;
			} else {
				s->error = "invalid escape in a string";
				return TOK_BAD;
			}
			break;
		case 3:
			s->error = "control character in a string";
			return TOK_BAD;
		default: {
			size_t len = utf8_len(buf + j, n - j);
			if (len == SIZE_MAX) {
				return TOK_MORE;
			}
			if (len == 0) {
				s->error = "invalid UTF-8 in a string";
				return TOK_BAD;
			}
			j += len;
		}
		}
	}
}

static bool digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(struct isc_jscan *s, const unsigned char *buf, size_t i, size_t n,
		       bool final, size_t *end)
{
	size_t j = i + (buf[i] == '-');
	int more = final ? TOK_BAD : TOK_MORE;
	s->error = "invalid number";
	if (j >= n) {
		return more;
	}
	if (buf[j] == '0') {
		j++;
	} else if (digit(buf[j])) {
		while (j < n && digit(buf[j])) {
			j++;
		}
	} else {
		return TOK_BAD;
	}
	size_t frac_at = 0, exp_at = 0;
	if (j < n && buf[j] == '.') {
		frac_at = j;
		size_t d = ++j;
		while (j < n && digit(buf[j])) {
			j++;
		}
		if (j == d) {
			return j >= n ? more : TOK_BAD;
		}
	}
	if (j < n && (buf[j] == 'e' || buf[j] == 'E')) {
		exp_at = j++;
		j += j < n && (buf[j] == '+' || buf[j] == '-');
		size_t d = j;
		while (j < n && digit(buf[j])) {
			j++;
		}
		if (j == d) {
			return j >= n ? more : TOK_BAD;
		}
	}
	if (j >= n && !final) {
		return TOK_MORE; /* the number may go on in the next buffer */
	}
	s->error = NULL;
	*end = j;
	s->num_int = frac_at == 0 && exp_at == 0;
	return TOK_OK;
}

static int scan_literal(struct isc_jscan *s, const unsigned char *buf, size_t i, size_t n,
			bool final, size_t *end, int *which)
{
	static const char *const words[3] = { "true", "false", "null" };
	int w = buf[i] == 't' ? 0 : buf[i] == 'f' ? 1 : 2;
	size_t len = strlen(words[w]), avail = n - i < len ? n - i : len;
	if (memcmp(buf + i, words[w], avail) != 0) {
		s->error = "invalid literal";
		return TOK_BAD;
	}
	if (avail < len) {
		s->error = "invalid literal";
		return final ? TOK_BAD : TOK_MORE;
	}
	*which = w;
	*end = i + len;
	return TOK_OK;
}

static int fail(struct isc_jscan *s, const char *why)
{
	s->error = why;
	return ISC_JSCAN_ERROR;
}

/* A value ended: in a container a comma or its end follows, at the top nothing does. */
static void after_value(struct isc_jscan *s)
{
	s->st = s->depth == 0 ? ST_DONE : ST_COMMA_OR_CLOSE;
}

/*
 * The separator that follows a token at once (a key's colon, a value's comma) is taken
 * with it: most tokens of a trace are such pairs, and each turn of the main loop costs
 * more than the byte. Not after a pause: the caller is to see the position just past the
 * token that paused.
 */
static void take_separator(struct isc_jscan *s, const unsigned char *buf, size_t *i, size_t n)
{
	if (*i >= n || s->pause) {
		return;
	}
	if (s->st == ST_COMMA_OR_CLOSE && buf[*i] == ',') {
		s->st = s->stack[s->depth - 1] == '{' ? ST_KEY : ST_VALUE;
		++*i;
	} else if (s->st == ST_COLON && buf[*i] == ':') {
		s->st = ST_VALUE;
		++*i;
	}
}

static int open_(struct isc_jscan *s, unsigned char c)
{
	if (s->st != ST_VALUE && s->st != ST_VALUE_OR_CLOSE) {
		return fail(s, c == '{' ? "unexpected '{'" : "unexpected '['");
	}
	if (s->depth >= ISC_JSCAN_MAX_DEPTH) {
		return fail(s, "nested too deeply");
	}
	s->stack[s->depth++] = c;
	s->st = c == '{' ? ST_KEY_OR_CLOSE : ST_VALUE_OR_CLOSE;
	int (*cb)(void *) = c == '{' ? s->cb->yajl_start_map : s->cb->yajl_start_array;
	return cb != NULL && !cb(s->ctx) ? ISC_JSCAN_CANCELLED : ISC_JSCAN_OK;
}

static int close_(struct isc_jscan *s, unsigned char c)
{
	unsigned char want = c == '}' ? '{' : '[';
	bool ok = s->depth > 0 && s->stack[s->depth - 1] == want &&
		  (s->st == ST_COMMA_OR_CLOSE ||
		   s->st == (c == '}' ? ST_KEY_OR_CLOSE : ST_VALUE_OR_CLOSE));
	if (!ok) {
		return fail(s, c == '}' ? "unexpected '}'" : "unexpected ']'");
	}
	s->depth--;
	after_value(s);
	int (*cb)(void *) = c == '}' ? s->cb->yajl_end_map : s->cb->yajl_end_array;
	return cb != NULL && !cb(s->ctx) ? ISC_JSCAN_CANCELLED : ISC_JSCAN_OK;
}

static int close_sep(struct isc_jscan *s, unsigned char c, const unsigned char *buf, size_t *i,
		     size_t n)
{
	int r = close_(s, c);
	if (r == ISC_JSCAN_OK) {
		take_separator(s, buf, i, n);
	}
	return r;
}

static int string_(struct isc_jscan *s, const unsigned char *buf, size_t *i, size_t n)
{
	bool key = s->st == ST_KEY_OR_CLOSE || s->st == ST_KEY;
	if (!key && s->st != ST_VALUE && s->st != ST_VALUE_OR_CLOSE) {
		return fail(s, "unexpected string");
	}
	size_t end;
	bool escaped;
	int r = scan_string(s, buf, *i, n, &end, &escaped);
	if (r != TOK_OK) {
		return r == TOK_MORE ? TOK_MORE + 10 : ISC_JSCAN_ERROR;
	}
	const unsigned char *p = buf + *i + 1;
	size_t len = end - *i - 2;
	if (escaped) {
		if (!unescape(s, p, len, &len)) {
			return ISC_JSCAN_ERROR;
		}
		p = (const unsigned char *)s->scratch;
	}
	*i = end;
	int (*cb)(void *, const unsigned char *, size_t) =
		key ? s->cb->yajl_map_key : s->cb->yajl_string;
	if (key) {
		s->st = ST_COLON;
	} else {
		after_value(s);
	}
	if (cb != NULL && !cb(s->ctx, p, len)) {
		return ISC_JSCAN_CANCELLED;
	}
	take_separator(s, buf, i, n);
	return ISC_JSCAN_OK;
}

static int scalar(struct isc_jscan *s, const unsigned char *buf, size_t *i, size_t n, bool final)
{
	if (s->st != ST_VALUE && s->st != ST_VALUE_OR_CLOSE) {
		return fail(s, "unexpected value");
	}
	size_t end;
	int which = 0, r, ok = 1;
	bool number = buf[*i] == '-' || digit(buf[*i]);
	r = number ? scan_number(s, buf, *i, n, final, &end)
		   : scan_literal(s, buf, *i, n, final, &end, &which);
	if (r != TOK_OK) {
		return r == TOK_MORE ? TOK_MORE + 10 : ISC_JSCAN_ERROR;
	}
	const yajl_callbacks *cb = s->cb;
	if (number) {
		ok = cb->yajl_number == NULL ||
		     cb->yajl_number(s->ctx, (const char *)buf + *i, end - *i);
	} else if (which < 2) {
		ok = cb->yajl_boolean == NULL || cb->yajl_boolean(s->ctx, which == 0);
	} else {
		ok = cb->yajl_null == NULL || cb->yajl_null(s->ctx);
	}
	*i = end;
	after_value(s);
	if (!ok) {
		return ISC_JSCAN_CANCELLED;
	}
	take_separator(s, buf, i, n);
	return ISC_JSCAN_OK;
}

/* One token at buf[*i]; TOK_MORE + 10 when it is cut by the end of the buffer. */
static int token(struct isc_jscan *s, const unsigned char *buf, size_t *i, size_t n, bool final)
{
	unsigned char c = buf[*i];
	switch (c) {
	case '{':
	case '[':
		++*i;
		return open_(s, c);
	case '}':
	case ']':
		++*i;
		return close_sep(s, c, buf, i, n);
	case ',':
		if (s->st != ST_COMMA_OR_CLOSE) {
			return fail(s, "unexpected ','");
		}
		s->st = s->stack[s->depth - 1] == '{' ? ST_KEY : ST_VALUE;
		++*i;
		return ISC_JSCAN_OK;
	case ':':
		if (s->st != ST_COLON) {
			return fail(s, "unexpected ':'");
		}
		s->st = ST_VALUE;
		++*i;
		return ISC_JSCAN_OK;
	case '"':
		return string_(s, buf, i, n);
	default:
		if (c == '-' || digit(c) || c == 't' || c == 'f' || c == 'n') {
			return scalar(s, buf, i, n, final);
		}
		return fail(s, s->st == ST_DONE ? "trailing garbage after the JSON value"
						: "invalid character");
	}
}

int isc_jscan_feed(struct isc_jscan *s, const unsigned char *buf, size_t n, bool final,
		   size_t *used)
{
	size_t i = 0;
	*used = 0;
	for (;;) {
		while (i < n && buf[i] <= ' ' &&
		       (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')) {
			i++;
		}
		*used = i;
		s->pos = i;
		if (i >= n) {
			return ISC_JSCAN_OK;
		}
		if (s->st == ST_DONE) {
			return fail(s, "trailing garbage after the JSON value");
		}
		s->error = NULL;
		int r = token(s, buf, &i, n, final);
		if (r == TOK_MORE + 10) {
			if (final) {
				s->error = s->error != NULL ? s->error : "unexpected end of input";
				return ISC_JSCAN_ERROR;
			}
			return ISC_JSCAN_OK; /* *used stops before the cut token */
		}
		if (r != ISC_JSCAN_OK) {
			return r;
		}
		if (s->pause) {
			s->pause = false;
			*used = i;
			s->pos = i;
			return ISC_JSCAN_PAUSED;
		}
	}
}

int isc_jscan_complete(struct isc_jscan *s)
{
	if (s->st != ST_DONE) {
		s->error = "unexpected end of input";
		return ISC_JSCAN_ERROR;
	}
	return ISC_JSCAN_OK;
}

void isc_jscan_pause(struct isc_jscan *s)
{
	s->pause = true;
}

void isc_jscan_enter_array(struct isc_jscan *s, bool first)
{
	s->depth = 1;
	s->stack[0] = '[';
	s->st = first ? ST_VALUE_OR_CLOSE : ST_VALUE;
}

bool isc_jscan_between_elements(const struct isc_jscan *s)
{
	return s->depth == 1 && s->stack[0] == '[' && s->st == ST_VALUE;
}

void isc_jscan_after_comma(struct isc_jscan *s)
{
	if (s->st == ST_VALUE_OR_CLOSE) {
		s->st = ST_VALUE;
	}
}
