/* SPDX-License-Identifier: MIT */
/*
 * Known hot functions in a 6:3:1 split of CPU time: hot_six, hot_three and hot_one
 * spin on the thread's CPU clock for 60 %, 30 % and 10 % of the budget, interleaved
 * in slices of random length and order (a fixed seed) so that a sampler sees all three
 * throughout. Not a fixed cycle: CPU timers fire at the kernel's tick, and a cycle of
 * slices in step with it (6+3+1 ms of 1.2 s against a 4 ms tick) would be sampled at
 * the same few phases every time, some functions never. With "threads", each
 * function runs in its own thread instead (the split is then across threads).
 *
 *	wl-hot [ms] [threads|fork|fork-thread]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* The three interleaved in slices of random length and order (see above). */
static void slices(unsigned long total)
{
	void (*fns[3])(unsigned long) = { hot_six, hot_three, hot_one };
	unsigned long left[3] = { total * 6 / 10, total * 3 / 10, total / 10 };
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	while (left[0] + left[1] + left[2] > 0) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		/* the function: in proportion to what it has left, so all end together */
		unsigned long pick = rng % (left[0] + left[1] + left[2]);
		int m = pick < left[0] ? 0 : pick < left[0] + left[1] ? 1 : 2;
		unsigned long len = 200000 + (rng >> 24) % 1600000; /* 0.2-1.8 ms */
		len = len < left[m] ? len : left[m];
		fns[m](len);
		left[m] -= len;
	}
}

/* "fork": the split runs in a child (from the main thread, or with "fork-thread" from a
 * second thread), which writes its own trace; the parent only waits. */
static void *fork_and_run(void *arg)
{
	unsigned long total = *(unsigned long *)arg;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		slices(total);
		exit(0);
	}
	printf("child %d\n", (int)pid);
	int status = 0;
	waitpid(pid, &status, 0);
	return status == 0 ? arg : NULL;
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
	} else if (argc > 2 && strcmp(argv[2], "fork") == 0) {
		if (fork_and_run(&total) == NULL) {
			return 1;
		}
	} else if (argc > 2 && strcmp(argv[2], "fork-thread") == 0) {
		pthread_t t;
		void *ok = NULL;
		pthread_create(&t, NULL, fork_and_run, &total);
		pthread_join(t, &ok);
		if (ok == NULL) {
			return 1;
		}
	} else {
		slices(total);
	}
	printf("done %lu\n", (unsigned long)sink % 10);
	return 0;
}
