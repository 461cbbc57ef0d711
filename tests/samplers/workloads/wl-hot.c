/* SPDX-License-Identifier: MIT */
/*
 * Known hot functions in a 6:3:1 split of CPU time: hot_six, hot_three and hot_one
 * spin on the thread's CPU clock for 60 %, 30 % and 10 % of the budget, interleaved
 * in slices so that a sampler sees all three throughout. With "threads", each
 * function runs in its own thread instead (the split is then across threads).
 *
 *	wl-hot [ms] [threads]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static unsigned long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

/* Spins for ns of this thread's CPU time. noinline and separate: each is a frame. */
#define HOT(name)                                                                      \
	__attribute__((noinline)) void name(unsigned long ns)                          \
	{                                                                              \
		unsigned long end = cpu_ns() + ns, x = sink;                           \
		while (cpu_ns() < end) {                                               \
			for (int i = 0; i < 20000; i++) {                              \
				x = x * 6364136223846793005ul + 1442695040888963407ul; \
			}                                                              \
		}                                                                      \
		sink = x;                                                              \
	}

void hot_six(unsigned long ns);
void hot_three(unsigned long ns);
void hot_one(unsigned long ns);

HOT(hot_six)
HOT(hot_three)
HOT(hot_one)

struct job {
	void (*fn)(unsigned long);
	unsigned long ns;
};

static void *run(void *arg)
{
	struct job *j = arg;
	for (int s = 0; s < 100; s++) {
		j->fn(j->ns / 100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long ms = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	unsigned long total = ms * 1000000ul;
	if (argc > 2 && strcmp(argv[2], "threads") == 0) {
		struct job jobs[3] = { { hot_six, total * 6 / 10 },
				       { hot_three, total * 3 / 10 },
				       { hot_one, total / 10 } };
		pthread_t t[3];
		for (int i = 0; i < 3; i++) {
			pthread_create(&t[i], NULL, run, &jobs[i]);
		}
		for (int i = 0; i < 3; i++) {
			pthread_join(t[i], NULL);
		}
	} else {
		for (int s = 0; s < 100; s++) { /* 100 slices of 6:3:1 */
			hot_six(total * 6 / 1000);
			hot_three(total * 3 / 1000);
			hot_one(total / 1000);
		}
	}
	printf("done %lu\n", (unsigned long)sink % 10);
	return 0;
}
