/* SPDX-License-Identifier: MIT */
/*
 * One thread computes, one sleeps, for the same wall time: the CPU-time counters
 * must tell them apart. Threads are named so a test can find them in the trace.
 * Usage: wl-cputime [MS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long ms = 300;
static void *volatile sink; /* the allocations must happen: they attach the threads */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *spinner(void *arg)
{
	pthread_setname_np(pthread_self(), "spinner");
	sink = malloc(16);
	free(sink); /* the thread shows up in the trace */
	volatile unsigned long x = 0;
	double end = now_ms() + ms;
	while (now_ms() < end) {
		for (int i = 0; i < 10000; i++) {
			x += i;
		}
	}
	return arg;
}

static void *sleeper(void *arg)
{
	pthread_setname_np(pthread_self(), "sleeper");
	sink = malloc(16);
	free(sink);
	usleep((useconds_t)ms * 1000);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	ms = argc > 1 ? atol(argv[1]) : 300;
	pthread_create(&a, NULL, spinner, NULL);
	pthread_create(&b, NULL, sleeper, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("cputime done\n");
	return 0;
}
