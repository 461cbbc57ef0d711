/* SPDX-License-Identifier: MIT */
/* Small pieces: numbers, intervals, sorting, growable arrays, interning, thresholds. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/base/grow.h"
#include "analyzer/base/interval.h"
#include "analyzer/base/json-number.h"
#include "analyzer/base/sort.h"
#include "analyzer/model/model.h"
#include "analyzer/model/thresholds.h"
#include "analyzer/readers/json-sax.h"

Test(units, microseconds_convert_exactly)
{
	int64_t ns;
	cr_assert(isc_num_us_to_ns("1694039968955744", 16, &ns));
	cr_assert_eq(ns, 1694039968955744000LL, "16 digits must not go through a double");
	cr_assert(isc_num_us_to_ns("1000000.123", 11, &ns));
	cr_assert_eq(ns, 1000000123LL);
	cr_assert(isc_num_us_to_ns("2.5", 3, &ns));
	cr_assert_eq(ns, 2500);
	cr_assert(isc_num_us_to_ns("-3.0004", 7, &ns));
	cr_assert_eq(ns, -3000);
	cr_assert(isc_num_us_to_ns("1.5e3", 5, &ns));
	cr_assert_eq(ns, 1500000);
	cr_assert_not(isc_num_us_to_ns("99999999999999999999", 20, &ns), "overflow is refused");
}

Test(units, integers)
{
	int64_t v;
	cr_assert(isc_num_int("-42", 3, &v));
	cr_assert_eq(v, -42);
	cr_assert_not(isc_num_int("99999999999999999999", 20, &v));
}

/* What a fixed line cannot hold is cut before a whole character, never inside one. */
Test(units, append_cuts_whole_characters)
{
	char s[8] = "ab";
	cr_assert(isc_fmt_append(s, sizeof(s), "cd"));
	cr_assert_str_eq(s, "abcd");
	cr_assert_not(isc_fmt_append(s, sizeof(s), "\xc3\xa9\xc3\xa9"), "4 bytes, room for 3");
	cr_assert_str_eq(s, "abcd\xc3\xa9", "one e-acute, not half of the second");
	cr_assert_not(isc_fmt_append(s, sizeof(s), "\xe2\x82\xac"), "a 3-byte euro sign");
	cr_assert_str_eq(s, "abcd\xc3\xa9");
	cr_assert_not(isc_fmt_append(s, sizeof(s), "xyz"));
	cr_assert_str_eq(s, "abcd\xc3\xa9x");
	cr_assert(isc_fmt_append(s, sizeof(s), ""));
}

Test(units, interval_union_subtract_overlap)
{
	struct isc_ivec a = { 0 }, b = { 0 }, out = { 0 };
	isc_ivec_add(&a, 50, 60, 0, 1000);
	isc_ivec_add(&a, 0, 10, 0, 1000);
	isc_ivec_add(&a, 5, 20, 0, 1000);
	isc_ivec_add(&a, 900, 2000, 0, 1000);
	cr_assert_eq(isc_ivec_union(&a), 0);
	cr_assert_eq(a.n, 3);
	cr_assert_eq(isc_ivec_total(&a), 20 + 10 + 100);
	isc_ivec_add(&b, 8, 55, 0, 1000);
	isc_ivec_union(&b);
	cr_assert_eq(isc_ivec_subtract(&out, &a, &b), 0);
	cr_assert_eq(isc_ivec_total(&out), 8 + 5 + 100);
	cr_assert_eq(isc_ivec_overlap(&a, 0, 55), 20 + 5);
	cr_assert(isc_ivec_contains(&a, 950));
	cr_assert_not(isc_ivec_contains(&a, 30));
	isc_ivec_free(&a);
	isc_ivec_free(&b);
	isc_ivec_free(&out);
}

Test(units, growable_array_doubles_and_keeps_its_elements)
{
	int64_t *v = NULL;
	size_t n = 0, cap = 0;
	cr_assert_eq(ISC_GROW(v, cap, 1, 4), 0);
	cr_assert_eq(cap, 4, "the first capacity is the one asked for");
	for (int64_t i = 0; i < 1000; i++) {
		cr_assert_eq(ISC_GROW(v, cap, n + 1, 4), 0);
		v[n++] = i * 3;
	}
	cr_assert_eq(cap, 1024, "4 doubled until 1000 fit");
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(v[i], (int64_t)i * 3, "element %zu moved with the array", i);
	}
	int64_t *same = v;
	cr_assert_eq(ISC_GROW(v, cap, 1024, 4), 0);
	cr_assert_eq(v, same, "no reallocation while there is room");
	cr_assert_eq(ISC_GROW(v, cap, 5000, 4), 0);
	cr_assert_eq(cap, 8192, "a jump doubles as often as needed");
	free(v);
}

/* The mappings of this process that hold a byte of [p, p + n). */
static int mappings_over(const void *p, size_t n)
{
	FILE *f = fopen("/proc/self/maps", "r");
	cr_assert_not_null(f);
	unsigned long lo, hi;
	int count = 0;
	char line[512];
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo < (uintptr_t)p + n &&
		    hi > (uintptr_t)p) {
			count++;
		}
	}
	fclose(f);
	return count;
}

/* gcc says __SANITIZE_ADDRESS__, clang __has_feature(address_sanitizer). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* A big array freed goes back to the system, even after another was: glibc would
 * otherwise have raised its threshold to the first one's size and put the second in the
 * heap, where it stays part of the peak once freed. (Not under AddressSanitizer, whose
 * allocator keeps freed blocks in quarantine.) */
Test(units, big_array_freed_leaves_no_mapping)
{
#ifdef UNDER_ASAN
	cr_skip_test("AddressSanitizer keeps freed blocks");
#endif
	isc_mem_big_blocks();
	size_t n = ISC_BIG_BLOCK + ISC_BIG_BLOCK / 2; /* each smaller than the one before */
	for (int round = 0; round < 3; round++, n -= ISC_BIG_BLOCK / 8) {
		uint8_t *v = NULL;
		cr_assert_eq(ISC_RESIZE(v, n), 0);
		memset(v, round + 1, n);
		cr_assert_eq(mappings_over(v, n), 1);
		uintptr_t at = (uintptr_t)v;
		isc_mem_free(v);
		cr_assert_eq(mappings_over((const void *)at, n), 0,
			     "round %d: %zu bytes freed are unmapped", round, n);
	}
}

Test(units, growable_array_refuses_overflow_and_stays_as_it_was)
{
	char *v = NULL;
	size_t cap = 0;
	cr_assert_eq(ISC_GROW(v, cap, 10, 16), 0);
	memcpy(v, "kept", 5);
	char *before = v;
	cr_assert_eq(isc_grow(&v, &cap, SIZE_MAX / 2 + 2, 1, 16), -ENOMEM);
	cr_assert_eq(v, before);
	cr_assert_eq(cap, 16);
	cr_assert_eq(isc_grow(&v, &cap, SIZE_MAX / 8, 16, 16), -ENOMEM, "n * size overflows");
	cr_assert_eq(v, before);
	cr_assert_str_eq(v, "kept");
	cr_assert_eq(isc_grow_cap(0, 3, 0), 4, "no first capacity: from 1");
	cr_assert_eq(isc_grow_cap(8, 8, 1), 8, "enough already");
	cr_assert_eq(isc_grow_cap(SIZE_MAX / 2 + 1, SIZE_MAX, 1), SIZE_MAX);
	cr_assert_eq(ISC_RESIZE(v, 3), 0, "shrinking keeps the front");
	cr_assert_eq(memcmp(v, "kep", 3), 0);
	free(v);
}

Test(units, reader_frame_stack_counts_what_it_cannot_hold)
{
	struct isc_jframes f = { 0 };
	cr_assert_eq(isc_jframes_cur(&f, 99), -1, "top level");
	for (int i = 0; i < ISC_JSAX_FRAMES; i++) {
		cr_assert(isc_jframes_push(&f, i % 7));
	}
	cr_assert_eq(isc_jframes_cur(&f, 99), (ISC_JSAX_FRAMES - 1) % 7);
	cr_assert_not(isc_jframes_push(&f, 3), "past the limit: counted, not stored");
	cr_assert_not(isc_jframes_push(&f, 3));
	cr_assert_eq(isc_jframes_cur(&f, 99), 99, "inside a container to skip");
	cr_assert_eq(isc_jframes_pop(&f), -1);
	cr_assert_eq(isc_jframes_pop(&f), -1);
	for (int i = ISC_JSAX_FRAMES - 1; i >= 0; i--) {
		cr_assert_eq(isc_jframes_pop(&f), i % 7, "frame %d closes in order", i);
	}
	cr_assert_eq(isc_jframes_pop(&f), -1, "nothing open");
	cr_assert_eq(isc_jframes_cur(&f, 99), -1);
}

Test(units, radix_sort_is_stable)
{
	int64_t keys[6] = { 30, 10, 30, 20, 10, -5 };
	uint32_t idx[6] = { 0, 1, 2, 3, 4, 5 };
	cr_assert_eq(isc_sort_by_key(keys, sizeof(int64_t), idx, 6), 0);
	uint32_t want[6] = { 5, 1, 4, 3, 0, 2 };
	cr_assert_arr_eq(idx, want, sizeof(want));
	int64_t v[5000];
	for (int i = 0; i < 5000; i++) {
		v[i] = (i * 7919) % 5003;
	}
	isc_sort_i64(v, 5000);
	for (int i = 1; i < 5000; i++) {
		cr_assert_leq(v[i - 1], v[i]);
	}
}

Test(units, interning_and_threads)
{
	struct isc_trace *t = isc_trace_create();
	uint32_t a = isc_trace_intern(t, "gemm", 4), b = isc_trace_intern(t, "gemm", 4);
	cr_assert_eq(a, b);
	cr_assert_str_eq(isc_trace_str(t, a), "gemm");
	cr_assert_eq(isc_trace_find_str(t, "nope"), UINT32_MAX);
	for (int i = 0; i < 5000; i++) {
		char n[16];
		snprintf(n, sizeof(n), "k%d", i);
		isc_trace_intern(t, n, strlen(n));
	}
	cr_assert_str_eq(isc_trace_str(t, isc_trace_find_str(t, "k4999")), "k4999");
	uint32_t t1 = isc_trace_thread(t, 0, 140234234234LL);
	uint32_t t2 = isc_trace_thread(t, 1, 140234234234LL);
	cr_assert_neq(t1, t2, "the same tid in two inputs is two threads");
	cr_assert_eq(isc_trace_thread(t, 0, 140234234234LL), t1);
	isc_trace_destroy(t);
}

Test(units, thresholds_override_and_errors)
{
	struct isc_thresholds th;
	struct isc_diag d;
	isc_thresholds_init(&th);
	const char ok[] = "# comment\nverdict.gpu_bound_share = 0.75 # trailing\n\n";
	cr_assert_eq(isc_thresholds_parse(&th, "t", ok, sizeof(ok) - 1, &d), 0);
	cr_assert_float_eq(isc_thr(&th, ISC_THR_GPU_BOUND_SHARE), 0.75, 1e-12);
	const char bad[] = "verdict.gpu_bound_share = 0.5\nno.such.key = 1\n";
	cr_assert_lt(isc_thresholds_parse(&th, "t", bad, sizeof(bad) - 1, &d), 0);
	cr_assert(strstr(d.msg, "t:2:") != NULL, "names the line: %s", d.msg);
	const char range[] = "verdict.gpu_bound_share = 7\n";
	cr_assert_lt(isc_thresholds_parse(&th, "t", range, sizeof(range) - 1, &d), 0);
	cr_assert(strstr(d.msg, "out of range") != NULL);
}

/* The tokenizer's events as text, for comparing it with yajl's. */
struct tok_log {
	char s[4096];
	size_t n;
	const struct isc_jscan *scan; /* the tokenizer's, which types its numbers; NULL: yajl's */
};

static int tok_put(void *c, char tag, const void *p, size_t n)
{
	struct tok_log *l = c;
	if (l->n + n + 3 < sizeof(l->s)) {
		l->s[l->n++] = tag;
		memcpy(l->s + l->n, p, n);
		l->n += n;
		l->s[l->n++] = '|';
	}
	return 1;
}
static int tl_null(void *c)
{
	return tok_put(c, 'z', "", 0);
}
static int tl_bool(void *c, int b)
{
	return tok_put(c, 'b', b ? "1" : "0", 1);
}
/* A number tagged 'i' (an integer) or 'd': as the tokenizer typed it, or by its text. */
static int tl_num(void *c, const char *s, size_t n)
{
	const struct tok_log *l = c;
	bool is_int =
		memchr(s, '.', n) == NULL && memchr(s, 'e', n) == NULL && memchr(s, 'E', n) == NULL;
	return tok_put(c, (l->scan != NULL ? l->scan->num_int : is_int) ? 'i' : 'd', s, n);
}
static int tl_str(void *c, const unsigned char *s, size_t n)
{
	return tok_put(c, 's', s, n);
}
static int tl_key(void *c, const unsigned char *s, size_t n)
{
	return tok_put(c, 'k', s, n);
}
static int tl_sm(void *c)
{
	return tok_put(c, '{', "", 0);
}
static int tl_em(void *c)
{
	return tok_put(c, '}', "", 0);
}
static int tl_sa(void *c)
{
	return tok_put(c, '[', "", 0);
}
static int tl_ea(void *c)
{
	return tok_put(c, ']', "", 0);
}
static const yajl_callbacks tl_cbs = { tl_null, tl_bool, NULL,	NULL,  tl_num, tl_str,
				       tl_sm,	tl_key,	 tl_em, tl_sa, tl_ea };

/* The tokenizer over doc fed in two buffers cut at byte `cut`, as json-sax.c feeds it:
 * the bytes it did not use move to the front of the next. */
static bool tok_scan(const char *doc, size_t len, size_t cut, struct tok_log *l)
{
	struct isc_jscan s;
	isc_jscan_init(&s, &tl_cbs, l);
	l->scan = &s;
	size_t used = 0;
	bool ok = isc_jscan_feed(&s, (const unsigned char *)doc, cut, false, &used) == ISC_JSCAN_OK;
	if (ok) {
		size_t rest = len - used, more = 0;
		ok = isc_jscan_feed(&s, (const unsigned char *)doc + used, rest, true, &more) ==
			     ISC_JSCAN_OK &&
		     more == rest && isc_jscan_complete(&s) == ISC_JSCAN_OK;
	}
	isc_jscan_finish(&s);
	return ok;
}

static bool yajl_scan(const char *doc, size_t len, struct tok_log *l)
{
	yajl_handle h = yajl_alloc(&tl_cbs, NULL, l);
	bool ok = yajl_parse(h, (const unsigned char *)doc, len) == yajl_status_ok &&
		  yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	return ok;
}

static void tok_as_yajl(const char *doc)
{
	size_t len = strlen(doc);
	struct tok_log y = { .n = 0 };
	bool yok = yajl_scan(doc, len, &y);
	for (size_t cut = 0; cut <= len; cut++) {
		struct tok_log t = { .n = 0 };
		bool tok = tok_scan(doc, len, cut, &t);
		cr_assert_eq(tok, yok, "%s (cut at %zu): the tokenizer %s it, yajl %s it", doc, cut,
			     tok ? "accepts" : "refuses", yok ? "accepts" : "refuses");
		if (tok) {
			cr_assert(t.n == y.n && memcmp(t.s, y.s, t.n) == 0,
				  "%s (cut at %zu): the tokenizer reports %.*s, yajl %.*s", doc,
				  cut, (int)t.n, t.s, (int)y.n, y.s);
		}
	}
}

/* Strings are scanned 16 or 8 bytes at a time: a byte that ends the plain run (quote,
 * backslash, control, non-ASCII) at every offset of a block, and in the tail after the
 * last whole block, gives what yajl gives, with the input cut at every byte. */
Test(units, tokenizer_strings_as_yajl)
{
	static const char *const special[] = {
		"\\\"", "\\\\", "\\n",	"\\u00e9", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"\x01", "\xff", "\xc3", "\\x"
	};
	char str[96], doc[256];
	for (size_t k = 0; k < sizeof(special) / sizeof(special[0]); k++) {
		for (size_t len = 0; len <= 34; len += 1 + (len > 20)) {
			for (size_t at = 0; at <= len; at++) {
				snprintf(str, sizeof(str), "%.*s%s%.*s", (int)at,
					 "abcdefghijklmnopqrstuvwxyz0123456789", special[k],
					 (int)(len - at), "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
				snprintf(doc, sizeof(doc),
					 "{\"%s\":[\"%s\",-1.5e3,true],\"x\":null}", str, str);
				tok_as_yajl(doc);
			}
		}
	}
}

/* A key's colon and a value's comma are taken with the token before them: spaces, empty
 * containers and misplaced separators read as yajl reads them; a number is typed an
 * integer (isc_jscan.num_int) where its text has no fraction and no exponent. */
Test(units, tokenizer_separators_as_yajl)
{
	static const char *const docs[] = {
		"{\"a\":1,\"b\":[1,2,{}],\"c\":{\"d\":\"e\"}}",
		"{ \"a\" : 1 , \"b\" :\n[ 1 ,2 ] }",
		"[[],{},\"\",0,-0,1e5,true,false,null]",
		"[0,-1,2.5,-0.0,3E2,4e-1,12345678901234567890,1.5e+300]",
		"[1,,2]",
		"[1,]",
		"{\"a\"::1}",
		"{\"a\":1,}",
		"{\"a\",1}",
		"[\"a\":1]",
		"{\"a\":1 \"b\":2}",
		"[1 2]",
		"[1],",
		"{}:",
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		tok_as_yajl(docs[i]);
	}
}
