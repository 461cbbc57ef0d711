/* SPDX-License-Identifier: MIT */
#include "analyzer/base/sort.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/par.h"

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

/* Past this many keys the passes run on several threads. */
#define PAR_MIN (1u << 20)
#define PAR_MAX 16

/*
 * The passes on T threads: each counts the digits of its slice of the keys, the first
 * turns the counts into where each (digit, slice) begins, slice after slice, and each
 * scatters its slice there, so that equal digits keep their order as in one pass.
 */
struct psort {
	uint64_t *k[2];
	uint32_t *i[2];
	size_t n;
	unsigned shift0, bits, passes, threads;
	size_t *count; /* threads x (1 << bits) */
	pthread_barrier_t bar;
	pthread_mutex_t mu; /* threads wait for go: the count of those that started */
	pthread_cond_t cv;
	bool go;
};

struct pslice {
	struct psort *s;
	unsigned id;
};

static void *psort_run(void *arg)
{
	struct pslice *w = arg;
	struct psort *s = w->s;
	pthread_mutex_lock(&s->mu);
	while (!s->go) {
		pthread_cond_wait(&s->cv, &s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	size_t lo = s->n * w->id / s->threads, hi = s->n * (w->id + 1) / s->threads;
	size_t buckets = (size_t)1 << s->bits;
	const uint64_t mask = buckets - 1;
	size_t *c = s->count + (size_t)w->id * buckets;
	for (unsigned p = 0; p < s->passes; p++) {
		const uint64_t *ks = s->k[p & 1];
		const uint32_t *is = s->i[p & 1];
		uint64_t *kd = s->k[(p + 1) & 1];
		uint32_t *id = s->i[(p + 1) & 1];
		unsigned shift = p * s->bits;
		memset(c, 0, buckets * sizeof(*c));
		for (size_t i = lo; i < hi; i++) {
			c[(ks[i] >> shift) & mask]++;
		}
		pthread_barrier_wait(&s->bar);
		if (w->id == 0) {
			size_t sum = 0;
			for (size_t d = 0; d < buckets; d++) {
				for (unsigned t = 0; t < s->threads; t++) {
					size_t k = s->count[(size_t)t * buckets + d];
					s->count[(size_t)t * buckets + d] = sum;
					sum += k;
				}
			}
		}
		pthread_barrier_wait(&s->bar);
		for (size_t i = lo; i < hi; i++) {
			size_t at = c[(ks[i] >> shift) & mask]++;
			kd[at] = ks[i];
			id[at] = is[i];
		}
		pthread_barrier_wait(&s->bar);
	}
	return NULL;
}

/* The passes on several threads; false when they could not start (run them in one). */
static bool passes_parallel(uint64_t *k0, uint64_t *k1, uint32_t *idx, uint32_t *i1, size_t n,
			    unsigned bits, unsigned passes)
{
	unsigned t = isc_par_threads();
	t = t > PAR_MAX ? PAR_MAX : t;
	if (t < 2 || n < PAR_MIN) {
		return false;
	}
	struct psort s = { .k = { k0, k1 },
			   .i = { idx, i1 },
			   .n = n,
			   .bits = bits,
			   .passes = passes,
			   .threads = t };
	s.count = malloc((size_t)t << bits << 3);
	if (s.count == NULL) {
		return false;
	}
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	pthread_t tid[PAR_MAX];
	struct pslice w[PAR_MAX];
	unsigned started = 1;
	for (; started < t; started++) {
		w[started] = (struct pslice){ &s, started };
		if (pthread_create(&tid[started], NULL, psort_run, &w[started]) != 0) {
			break;
		}
	}
	pthread_mutex_lock(&s.mu);
	s.threads = started;
	pthread_barrier_init(&s.bar, NULL, started);
	s.go = true;
	pthread_cond_broadcast(&s.cv);
	pthread_mutex_unlock(&s.mu);
	w[0] = (struct pslice){ &s, 0 };
	psort_run(&w[0]);
	for (unsigned i = 1; i < started; i++) {
		pthread_join(tid[i], NULL);
	}
	pthread_barrier_destroy(&s.bar);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	free(s.count);
	return true;
}

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
	if (passes_parallel(k0, k1, idx, i1, n, bits, passes)) {
		is = passes % 2 == 0 ? idx : i1;
		passes = 0;
	}
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
