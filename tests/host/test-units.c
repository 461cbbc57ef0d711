/* SPDX-License-Identifier: MIT */
/* Pure parts of the host family: the sampler's arithmetic (no libm in the preload),
 * the host encoders with and without a symbol resolver, torn stacks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format/encode.h"
#include "preload/core/intern.h"
#include "preload/hooks/host/sampling.h"

Test(sampling, logarithm_and_exponential_match_libm)
{
	for (double x = 1e-300; x < 1e300; x *= 7.3) {
		cr_assert(fabs(isc_ln(x) - log(x)) <= 1e-12 * fmax(1, fabs(log(x))), "ln(%g)", x);
	}
	cr_assert(fabs(isc_ln(4.9e-320) - log(4.9e-320)) < 1e-9, "subnormal");
	for (double x = 0; x < 750; x += 0.37) {
		double want = exp(-x);
		cr_assert(fabs(isc_exp_neg(x) - want) <= 1e-12 * want + 1e-300, "exp(-%g)", x);
	}
}

Test(sampling, gaps_are_exponential_with_the_mean)
{
	uint64_t rng = isc_rand_seed(42, 7);
	double sum = 0, sq = 0;
	int n = 200000, small = 0;
	for (int i = 0; i < n; i++) {
		double g = (double)isc_sample_gap(&rng, 524288);
		cr_assert_gt(g, 0);
		sum += g;
		sq += g * g;
		small += g < 524288 * 0.6931471805599453; /* below the median */
	}
	double mean = sum / n, sd = sqrt(sq / n - mean * mean);
	/* the mean of 200k draws is within 1% (sd of the mean: 0.22%) */
	cr_assert(fabs(mean / 524288 - 1) < 0.01, "mean %.0f", mean);
	cr_assert(fabs(sd / mean - 1) < 0.02, "an exponential's sd equals its mean: %.3f",
		  sd / mean);
	cr_assert(fabs(small / (double)n - 0.5) < 0.01, "median at mean ln 2");
}

Test(sampling, weights_are_unbiased)
{
	cr_assert_eq(isc_sample_weight(1000, 0), 1000, "no sampling: a block stands for itself");
	cr_assert_eq(isc_sample_weight(64 << 20, 524288), 64 << 20, "far above the mean");
	for (uint64_t n = 1; n < (8u << 20); n = n * 3 + 1) {
		double want = n / -expm1(-(double)n / 524288);
		double got = (double)isc_sample_weight(n, 524288);
		cr_assert(fabs(got - want) <= 1 + want * 1e-9, "weight(%lu) %.1f vs %.1f",
			  (unsigned long)n, got, want);
	}
	/* the estimator itself: blocks of 100 bytes, mean 4096, summed over a million */
	uint64_t rng = isc_rand_seed(1, 2);
	int64_t countdown = isc_sample_gap(&rng, 4096);
	double est = 0;
	for (int i = 0; i < 1000000; i++) {
		if ((countdown -= 100) < 0) {
			est += (double)isc_sample_weight(100, 4096);
			while (countdown < 0) {
				countdown += isc_sample_gap(&rng, 4096);
			}
		}
	}
	cr_assert(fabs(est / 1e8 - 1) < 0.02, "estimate %.0f of 1e8 bytes", est);
}

/* ---- encoders ---- */

static char out[65536];
static size_t out_len;

static int sink(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	cr_assert_lt(out_len + len, sizeof(out));
	memcpy(out + out_len, buf, len);
	out_len += len;
	out[out_len] = '\0';
	return 0;
}

struct fixture {
	char jbuf[4096];
	struct isc_json j;
	struct isc_enc e;
	struct isc_strings st;
	char strings[256];
	uint32_t read_id;
};

static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	out_len = 0;
	/* a string table with one entry, laid out as the interner does */
	struct isc_intern_entry *en = (void *)(f->strings + ISC_INTERN_FIRST);
	en->len_ready = 4 | ISC_INTERN_READY;
	memcpy(en->s, "read", 5);
	f->read_id = ISC_INTERN_FIRST;
	f->st.base = f->strings;
	f->st.size = sizeof(f->strings);
	isc_json_init(&f->j, f->jbuf, sizeof(f->jbuf), sink, NULL);
	f->e.j = &f->j;
	f->e.strings = &f->st;
	isc_vec_init(&f->e.scopes, sizeof(struct isc_scope_rec));
	isc_json_begin_array(&f->j);
}

static void fixture_end(struct fixture *f)
{
	isc_json_end_array(&f->j);
	cr_assert_eq(isc_json_flush(&f->j), 0);
	isc_vec_finish(&f->e.scopes);
}

/* A syscall head and the stack records for `frames` addresses 0x1000 + k. */
static unsigned syscall_records(struct isc_event *r, uint32_t name, unsigned frames)
{
	memset(r, 0, sizeof(*r) * 4);
	r[0].ts = 5000;
	r[0].dur = 25000;
	r[0].tid = 77;
	r[0].kind = ISC_EV_SYSCALL;
	r[0].flags = ISC_EVF_ERRNO | ISC_EVF_STACK_TEXT; /* INFERSCOPE_STACKS was set */
	r[0].name = name;
	r[0].u.syscall.ret = -1;
	r[0].u.syscall.bytes = 4096;
	r[0].u.syscall.fd = 5;
	r[0].u.syscall.err = 11;
	r[0].u.syscall.nr = 0;
	r[0].u.syscall.category = ISC_SYSCAT_IO;
	r[0].u.syscall.target = ISC_FD_PIPE;
	r[0].u.syscall.frames = (uint16_t)frames;
	unsigned recs = isc_stack_records(frames);
	for (unsigned k = 0; k < frames; k++) {
		uint64_t pc = 0x1000 + k;
		unsigned char *b = (unsigned char *)&r[1 + k / ISC_STACK_PER_RECORD];
		memcpy(b + isc_stack_offset(k % ISC_STACK_PER_RECORD), &pc, 8);
	}
	for (unsigned i = 0; i < recs; i++) {
		r[1 + i].tid = 77;
		r[1 + i].kind = ISC_EV_STACK;
	}
	return 1 + recs;
}

static const char *names(void *ctx, uint64_t addr, char *buf, size_t cap)
{
	(void)ctx;
	if (addr == 0x1003) {
		return NULL; /* unknown to the resolver: written raw */
	}
	snprintf(buf, cap, "fn%lx", (unsigned long)addr);
	return buf;
}

Test(encoders, syscall_with_symbolised_stack)
{
	struct fixture f;
	struct isc_event r[4];
	fixture_init(&f);
	f.e.resolve = names;
	unsigned n = syscall_records(r, f.read_id, 9);
	cr_assert_eq(n, 3, "9 frames take two stack records");
	cr_assert_eq(isc_encode_syscall(&f.e, r, n), 3);
	fixture_end(&f);
	cr_assert(strstr(out, "\"type\":\"cpu_syscall\",\"name\":\"read\""), "%s", out);
	cr_assert(strstr(out, "\"fd\":5,\"target\":\"pipe\",\"bytes\":4096,\"return_value\":-1,"
			      "\"errno\":11,\"category\":\"io\""),
		  "%s", out);
	cr_assert(strstr(out, "\"stack\":[\"fn1000\",\"fn1001\",\"fn1002\",\"0x1003\",\"fn1004\","
			      "\"fn1005\",\"fn1006\",\"fn1007\",\"fn1008\"]"),
		  "%s", out);
	cr_assert_eq(f.e.skipped, 0);
}

Test(encoders, offline_stacks_are_addresses)
{
	struct fixture f;
	struct isc_event r[4];
	fixture_init(&f);
	unsigned n = syscall_records(r, f.read_id, 2);
	cr_assert_eq(isc_encode_syscall(&f.e, r, n), 2);
	fixture_end(&f);
	cr_assert(strstr(out, "\"stack\":[\"0x1000\",\"0x1001\"]"), "%s", out);
}

Test(encoders, a_torn_stack_is_dropped_not_misread)
{
	struct fixture f;
	struct isc_event r[4];
	fixture_init(&f);
	syscall_records(r, f.read_id, 9);
	/* the second stack record is missing: the next record is another event */
	r[2].kind = ISC_EV_COUNTER;
	cr_assert_eq(isc_encode_syscall(&f.e, r, 3), 2, "the head and the one stack record");
	fixture_end(&f);
	cr_assert(strstr(out, "\"category\":\"io\"}}"), "written, without a stack: %s", out);
	cr_assert_null(strstr(out, "stack"));
	cr_assert_eq(f.e.skipped, 1);
}

Test(encoders, memory_events)
{
	struct fixture f;
	struct isc_event r[2];
	fixture_init(&f);
	memset(r, 0, sizeof(r));
	r[0].ts = 1000;
	r[0].tid = 9;
	r[0].kind = ISC_EV_MEMORY;
	r[0].u.memory.op = ISC_MEM_POSIX_MEMALIGN;
	r[0].u.memory.ptr = 0xdeadbeef0;
	r[0].u.memory.bytes = 4096;
	r[0].u.memory.weight = 528384;
	r[0].u.memory.numa_node = 1;
	r[1] = r[0];
	r[1].u.memory.op = ISC_MEM_NUMA_MIGRATION;
	r[1].u.memory.bytes = 12;
	r[1].u.memory.ptr = 0;
	r[1].u.memory.weight = 0;
	r[1].u.memory.numa_node = -1;
	cr_assert_eq(isc_encode_memory(&f.e, &r[0], 2), 1);
	cr_assert_eq(isc_encode_memory(&f.e, &r[1], 1), 1);
	fixture_end(&f);
	cr_assert(strstr(out, "\"name\":\"posix_memalign\""), "%s", out);
	cr_assert(strstr(out, "\"operation\":\"posix_memalign\",\"bytes\":4096,\"ptr\":"
			      "\"0xdeadbeef0\",\"weight\":528384,\"numa_node\":1}"),
		  "%s", out);
	cr_assert(strstr(out, "\"operation\":\"numa_migration\",\"bytes\":0,\"ptr\":\"0x0\","
			      "\"weight\":0,\"numa_pages_migrated\":12}"),
		  "%s", out);
}
