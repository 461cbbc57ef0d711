/* SPDX-License-Identifier: MIT */
#include "analyzer/base/sort.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DIGIT_BITS 11
#define DIGITS (1u << DIGIT_BITS)

/* One stable counting pass on `bits` bits at `shift` of (k - base). */
static void pass(const uint64_t *ks, const uint32_t *is, uint64_t *kd, uint32_t *id, size_t n,
		 unsigned shift, unsigned bits, size_t *count)
{
	const uint64_t mask = (1ull << bits) - 1;
	memset(count, 0, ((size_t)1 << bits) * sizeof(*count));
	for (size_t i = 0; i < n; i++) {
		count[(ks[i] >> shift) & mask]++;
	}
	size_t sum = 0;
	for (size_t d = 0; d <= mask; d++) {
		size_t c = count[d];
		count[d] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++) {
		size_t at = count[(ks[i] >> shift) & mask]++;
		kd[at] = ks[i];
		id[at] = is[i];
	}
}

#define KEY(i) (*(const int64_t *)((const char *)key + (size_t)(i)*stride))

int isc_sort_by_key(const int64_t *key, size_t stride, uint32_t *idx, size_t n)
{
	if (n < 2) {
		return 0;
	}
	int64_t lo = KEY(idx[0]), hi = lo;
	for (size_t i = 1; i < n; i++) {
		int64_t k = KEY(idx[i]);
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	/* Only the digits the range needs: a trace spans seconds, not 2^64 ns. Wide digits
	 * for millions of keys (fewer passes), narrow ones for short inputs. */
	uint64_t range = (uint64_t)hi - (uint64_t)lo;
	unsigned bits = n > (1u << 18) ? 16 : DIGIT_BITS, passes = 0;
	while (passes * bits < 64 && (range >> (passes * bits)) != 0) {
		passes++;
	}
	if (passes == 0) {
		return 0;
	}
	size_t *count = malloc(((size_t)1 << bits) * sizeof(*count));
	uint64_t *k0 = malloc(n * sizeof(*k0));
	uint64_t *k1 = malloc(n * sizeof(*k1));
	uint32_t *i1 = malloc(n * sizeof(*i1));
	if (k0 == NULL || k1 == NULL || i1 == NULL || count == NULL) {
		free(count);
		free(k0);
		free(k1);
		free(i1);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		k0[i] = (uint64_t)KEY(idx[i]) - (uint64_t)lo;
	}
	uint64_t *ks = k0, *kd = k1;
	uint32_t *is = idx, *id = i1;
	for (unsigned p = 0; p < passes; p++) {
		pass(ks, is, kd, id, n, p * bits, bits, count);
		uint64_t *tk = ks;
		ks = kd;
		kd = tk;
		uint32_t *ti = is;
		is = id;
		id = ti;
	}
	if (is != idx) {
		memcpy(idx, is, n * sizeof(*idx));
	}
	free(count);
	free(k0);
	free(k1);
	free(i1);
	return 0;
}

/* LSD radix for non-negative values; falls back to qsort for short or negative input. */
static bool radix_i64(int64_t *v, size_t n)
{
	int64_t hi = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < 0) {
			return false;
		}
		hi = v[i] > hi ? v[i] : hi;
	}
	uint64_t *tmp = malloc(n * sizeof(*tmp));
	if (tmp == NULL) {
		return false;
	}
	uint64_t *src = (uint64_t *)v, *dst = tmp;
	size_t count[DIGITS];
	for (unsigned shift = 0; shift < 64 && ((uint64_t)hi >> shift) != 0; shift += DIGIT_BITS) {
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++) {
			count[(src[i] >> shift) & (DIGITS - 1)]++;
		}
		size_t sum = 0;
		for (size_t d = 0; d < DIGITS; d++) {
			size_t k = count[d];
			count[d] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++) {
			dst[count[(src[i] >> shift) & (DIGITS - 1)]++] = src[i];
		}
		uint64_t *x = src;
		src = dst;
		dst = x;
	}
	if (src != (uint64_t *)v) {
		memcpy(v, src, n * sizeof(*v));
	}
	free(tmp);
	return true;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

void isc_sort_i64(int64_t *v, size_t n)
{
	if (n < 4096 || !radix_i64(v, n)) {
		isc_qsort(v, n, sizeof(*v), cmp_i64);
	}
}

void isc_qsort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1) {
		qsort(v, n, size, cmp);
	}
}
