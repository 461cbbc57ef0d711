/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the tokenizer against yajl's. Both see the same bytes (the tokenizer
 * in two chunks cut where the first byte says, to exercise tokens split across buffers);
 * when both accept the input they must report the same sequence of events.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "analyzer/base/json-scan.h"

struct rec {
	uint64_t h;
	size_t n;
};

static void mix(struct rec *r, int tag, const void *p, size_t n)
{
	const unsigned char *b = p;
	r->h = (r->h ^ (uint64_t)tag) * 1099511628211ull;
	for (size_t i = 0; i < n; i++) {
		r->h = (r->h ^ b[i]) * 1099511628211ull;
	}
	r->n++;
}

static int c_null(void *c)
{
	mix(c, 1, "", 0);
	return 1;
}
static int c_bool(void *c, int b)
{
	mix(c, 2, &b, sizeof(b));
	return 1;
}
static int c_num(void *c, const char *s, size_t n)
{
	mix(c, 3, s, n);
	return 1;
}
static int c_str(void *c, const unsigned char *s, size_t n)
{
	mix(c, 4, s, n);
	return 1;
}
static int c_sm(void *c)
{
	mix(c, 5, "", 0);
	return 1;
}
static int c_key(void *c, const unsigned char *s, size_t n)
{
	mix(c, 6, s, n);
	return 1;
}
static int c_em(void *c)
{
	mix(c, 7, "", 0);
	return 1;
}
static int c_sa(void *c)
{
	mix(c, 8, "", 0);
	return 1;
}
static int c_ea(void *c)
{
	mix(c, 9, "", 0);
	return 1;
}

static const yajl_callbacks cbs = { c_null, c_bool, NULL, NULL, c_num, c_str,
				    c_sm,   c_key,  c_em, c_sa, c_ea };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lone surrogates (\uD800-\uDFFF) are decoded differently on purpose: yajl writes
 * invalid UTF-8 or '?', the tokenizer U+FFFD. Such inputs are not compared. */
static bool has_surrogate_escape(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 3 < n; i++) {
		if (p[i] == '\\' && p[i + 1] == 'u' && (p[i + 2] | 0x20) == 'd' &&
		    strchr("89abcdefABCDEF", p[i + 3]) != NULL && p[i + 3] != 0) {
			return true;
		}
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	size_t cut = data[0] % (size);
	data++;
	size--;
	struct rec a = { 0 }, b = { 0 };
	yajl_handle h = yajl_alloc(&cbs, NULL, &a);
	bool ya = yajl_parse(h, data, size) == yajl_status_ok &&
		  yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	struct isc_jscan *s = malloc(sizeof(*s));
	isc_jscan_init(s, &cbs, &b);
	unsigned char *buf = malloc(size + 1);
	memcpy(buf, data, cut);
	size_t used = 0, have = cut;
	bool ok = isc_jscan_feed(s, buf, have, false, &used) == ISC_JSCAN_OK;
	if (ok) {
		memmove(buf, buf + used, have - used);
		have -= used;
		memcpy(buf + have, data + cut, size - cut);
		have += size - cut;
		ok = isc_jscan_feed(s, buf, have, true, &used) == ISC_JSCAN_OK &&
		     isc_jscan_complete(s) == ISC_JSCAN_OK;
	}
	isc_jscan_finish(s);
	free(s);
	free(buf);
	if (ok && ya && (a.h != b.h || a.n != b.n) && !has_surrogate_escape(data, size)) {
		abort(); /* both accept, different events */
	}
	return 0;
}
