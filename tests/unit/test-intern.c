/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "preload/core/intern.h"

Test(intern, same_string_same_id)
{
	cr_assert_eq(isc_intern_init(1 << 20, 1 << 12), 0);
	uint32_t a = isc_intern_cstr("cudaLaunchKernel");
	uint32_t b = isc_intern_cstr("cudaMemcpyAsync");
	cr_assert_neq(a, 0);
	cr_assert_neq(a, b);
	cr_assert_eq(isc_intern("cudaLaunchKernel", 16), a);
	uint32_t len;
	cr_assert_str_eq(isc_intern_get(a, &len), "cudaLaunchKernel");
	cr_assert_eq(len, 16);
	cr_assert_eq(isc_intern_cstr(""), isc_intern("", 0));
	cr_assert_null(isc_intern_get(0, NULL));
}

Test(intern, published_prefix_covers_every_returned_id)
{
	cr_assert_eq(isc_intern_init(1 << 20, 1 << 12), 0);
	uint32_t id = 0;
	char name[32];
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "kernel_%d", i);
		id = isc_intern_cstr(name);
	}
	cr_assert_gt(isc_intern_published(), id);
}

Test(intern, full_table_returns_zero_and_counts)
{
	cr_assert_eq(isc_intern_init(1 << 16, 64), 0);
	char name[32];
	uint32_t zeros = 0;
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		zeros += isc_intern_cstr(name) == 0;
	}
	cr_assert_gt(zeros, 0);
	cr_assert_eq(isc_intern_overflows(), zeros);
	cr_assert_neq(isc_intern_cstr("n0"), 0, "names interned before stay found");
}

#define THREADS 8
static uint32_t ids[THREADS][500];

static void *intern_many(void *arg)
{
	long t = (long)arg;
	char name[32];
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "shared_%d", i);
		ids[t][i] = isc_intern_cstr(name);
	}
	return NULL;
}

Test(intern, concurrent_interning_agrees)
{
	cr_assert_eq(isc_intern_init(4 << 20, 1 << 14), 0);
	pthread_t th[THREADS];
	for (long i = 0; i < THREADS; i++) {
		pthread_create(&th[i], NULL, intern_many, (void *)i);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
	}
	for (int i = 0; i < 500; i++) {
		char name[32];
		snprintf(name, sizeof(name), "shared_%d", i);
		for (int t = 0; t < THREADS; t++) {
			cr_assert_eq(ids[t][i], ids[0][i], "one id per string");
		}
		cr_assert_str_eq(isc_intern_get(ids[0][i], NULL), name);
	}
}
