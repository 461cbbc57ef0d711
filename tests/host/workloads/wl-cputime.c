/* SPDX-License-Identifier: MIT */
/*
 * One thread computes MS ms of its own CPU time (not of wall time: a loaded machine
 * stretches the wall time, not the work), one sleeps MS ms; each then reads its own
 * CPU time (CLOCK_THREAD_CPUTIME_ID, the kernel's account) and blocks until the
 * process exits, so the final sample at the flush sees them alive. The CPU-time
 * counters must tell them apart and agree with the threads' own figures, printed as
 * "spinner_cpu_ns=N sleeper_cpu_ns=N". Threads are named so a test can find them; the
 * main thread renames itself "main-renamed" at the end, long after its first record.
 * Usage: wl-cputime [MS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static long ms = 300;
static void *volatile sink; /* the allocations must happen: they attach the threads */

static long long own_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int finished;
static long long spin_ns, sleep_ns;

/* Publishes the thread's own CPU time and blocks for good (no CPU from here on). */
static void report_and_block(long long *out)
{
	pthread_mutex_lock(&lock);
	*out = own_cpu_ns();
	finished++;
	pthread_cond_broadcast(&cond);
	for (;;) {
		pthread_cond_wait(&cond, &lock);
	}
}

static void *spinner(void *arg)
{
	pthread_setname_np(pthread_self(), "spinner");
	sink = malloc(16);
	free(sink); /* the thread shows up in the trace */
	volatile unsigned long x = 0;
	while (own_cpu_ns() < ms * 1000000LL) {
		for (int i = 0; i < 10000; i++) {
			x += i;
		}
	}
	report_and_block(&spin_ns);
	return arg;
}

static void *sleeper(void *arg)
{
	pthread_setname_np(pthread_self(), "sleeper");
	sink = malloc(16);
	free(sink);
	usleep((useconds_t)ms * 1000);
	report_and_block(&sleep_ns);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	ms = argc > 1 ? atol(argv[1]) : 300;
	pthread_create(&a, NULL, spinner, NULL);
	pthread_create(&b, NULL, sleeper, NULL);
	pthread_mutex_lock(&lock);
	while (finished < 2) {
		pthread_cond_wait(&cond, &lock);
	}
	prctl(PR_SET_NAME, "main-renamed", 0, 0, 0);
	printf("spinner_cpu_ns=%lld sleeper_cpu_ns=%lld\n", spin_ns, sleep_ns);
	pthread_mutex_unlock(&lock);
	fflush(stdout);
	exit(0); /* with both threads alive and blocked: the flush samples them */
}
