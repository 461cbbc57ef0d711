/* SPDX-License-Identifier: MIT */
/*
 * Run under libsimgpu-vtime.so by test-vtime.c: sleeps, spins and reads the clocks, and
 * prints what it saw, one "name value" line each (nanoseconds).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static int64_t now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *other(void *arg)
{
	struct timespec d = { 0, 50000000 };
	int64_t r0 = now(CLOCK_REALTIME);
	nanosleep(&d, NULL);
	*(int64_t *)arg = now(CLOCK_REALTIME) - r0;
	return NULL;
}

int main(void)
{
	int64_t t0 = now(CLOCK_MONOTONIC), r0 = now(CLOCK_REALTIME);
	struct timespec ten = { 10, 0 };
	nanosleep(&ten, NULL);
	int64_t t1 = now(CLOCK_MONOTONIC), r1 = now(CLOCK_REALTIME);
	int64_t until = t1 + 5000000000;
	struct timespec abs = { (time_t)(until / 1000000000), (long)(until % 1000000000) };
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
	int64_t t2 = now(CLOCK_MONOTONIC);
	int64_t c0 = now(CLOCK_THREAD_CPUTIME_ID);
	while (now(CLOCK_THREAD_CPUTIME_ID) - c0 < 20000000) {
	}
	int64_t t3 = now(CLOCK_MONOTONIC);
	int64_t prev = t3, back = 0;
	for (int i = 0; i < 100000; i++) {
		int64_t t = now(CLOCK_MONOTONIC);
		back += t < prev;
		prev = t;
	}
	int64_t slept = 0;
	pthread_t th;
	pthread_create(&th, NULL, other, &slept);
	pthread_join(th, NULL);
	printf("sleep_virtual %lld\nsleep_real %lld\nabs_virtual %lld\nspin_virtual %lld\n"
	       "backwards %lld\nthread_real %lld\n",
	       (long long)(t1 - t0), (long long)(r1 - r0), (long long)(t2 - t1),
	       (long long)(t3 - t2), (long long)back, (long long)slept);
	return 0;
}
