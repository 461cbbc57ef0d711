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
	cr_assert(isc_num_is_int("12", 2));
	cr_assert_not(isc_num_is_int("1.0", 3));
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
